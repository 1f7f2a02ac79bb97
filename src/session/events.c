/*
 * events.c - where a stop becomes an event: waitpid, then the stop
 * dispatcher (on_stop) sends each stop to its handler (a breakpoint or a
 * return, a clone/fork/vfork, an exec, an exit, a group-stop, a signal);
 * stopping every thread and holding them, and choosing a held thread to
 * run a system call for ptleak.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "arch/arch.h"
#include "session/jobctl.h"
#include "base/memio.h"
#include "session/seccomp.h"
#include "session.h"
#include "base/util.h"

static void on_trap(struct session *S, struct task *t)
{
	struct proc *P = S->proc;
	struct arch_regs r;
	struct wbuf wb = { .pid = t->tid };
	uint64_t addr;
	struct bp *bp;
	int exec = 0;

	if (arch_get_regs(t->tid, &r)) {
		task_resume(S, t, 0);
		return;
	}
	addr = arch_bp_addr_from_stop_pc(arch_pc(&r));
	if (P->bps.trampoline && addr == P->bps.trampoline) {
		if (heapprobe_return(S, t, &r)) {
			/* nowhere to return to: let the target see the trap */
			task_resume(S, t, SIGTRAP);
			return;
		}
	} else if ((bp = bp_find(&P->bps, addr))) {
		struct arch_regs orig;
		size_t npend = t->npend;

		/* the registers as they were at the breakpoint's address */
		arch_set_pc(&r, addr);
		orig = r;
		if (t->role == ROLE_THREAD) {
			if (bp->kind == BP_ALLOC || bp->kind == BP_FD)
				heapprobe_entry(S, t, bp, &r, &wb);
			else if (bp->kind == BP_RENDEZVOUS)
				image_rendezvous(S, t->tid);
			else if (bp->kind == BP_EXEC)
				exec = lifetime_execve(S, t, bp, &r);
		}
		if (wb_step_over(bp, &r, &wb) || wb_flush(&wb)) {
			/*
			 * Emulation could not read or write memory (a stack
			 * write below the mapped stack: the CPU would grow
			 * it, process_vm_writev does not).  Nothing of it is
			 * committed; the call is not recorded, its return not
			 * hijacked, and the instruction runs out of line.
			 */
			int dropped = t->npend > npend;

			while (t->npend > npend) {
				struct pending *q = &t->pend[t->npend - 1];

				mem_write(t->tid, q->slot, &q->real, sizeof(q->real));
				heapprobe_drop(P, t);
			}
			r = orig;
			if (!bp->fallback) {
				warning("cannot execute %s in thread %d: %s fails",
					bp->name, (int)t->tid, bp->insn.text);
				task_resume(S, t, SIGSEGV);
				return;
			}
			/* a call whose entry was recorded (a free, a close)
			 * or not seen at all (a read failed: counted) */
			if (dropped)
				heapprobe_lost(S, bp, 0, "cannot emulate %s in "
					       "thread %d at %s", bp->insn.text,
					       (int)t->tid, bp->name);
			arch_set_pc(&r, bp->fallback);
		}
	} else {
		task_resume(S, t, SIGTRAP);
		return;
	}
	if (arch_set_regs(t->tid, &r))
		warning("cannot set the registers of thread %d: %s",
			(int)t->tid, strerror(errno));
	if (exec) {
		/* held there: the main loop reports the image before it goes */
		t->held = 1;
		t->held_sig = tasks_take_held_sig(S);
		t->held_listen = 0;
		P->exec_due = 1;
		S->exec_due = 1;
		return;
	}
	/* a scratch page mapped near a library loaded now: a signal may
	 * have come meanwhile */
	task_resume(S, t, tasks_take_held_sig(S));
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* The signal TID stopped with was sent by a process (kill, tgkill,
 * sigqueue), not raised by the kernel for a fault. */
static int sent_by_user(pid_t tid)
{
	siginfo_t si;

	return !ptrace(PTRACE_GETSIGINFO, tid, 0, &si) && si.si_code <= 0;
}

/* Is every live thread of the target in a group-stop? */
static int all_group_stopped(struct session *S)
{
	unsigned i;
	struct task *t;

	for_each_task(S, i, t)
		if (t->role == ROLE_THREAD && t->proc == S->first && t->started &&
		    !t->exiting && !t->group_stopped)
			return 0;
	return 1;
}

/*
 * The launched program is in a group-stop for SIG (every thread reported
 * it: the kernel tells a parent then): ptleak stops itself with SIG too,
 * so that its parent (a shell) sees the job stop with that signal, as it
 * would without ptleak.  Not when the stop is over already (SIGCONT
 * pending: ptleak was stopped by the same terminal signal and both were
 * continued).
 */
void events_group_stopped(struct session *S, int sig)
{
	if (!S->attached && !S->first->done && all_group_stopped(S) &&
	    !jobctl_cont_pending(S->first->pid))
		jobctl_stop_self(S->first->pid, sig);
}

static void on_stop(struct session *S, pid_t tid, int status)
{
	struct task *t = task_find(S, tid);
	int sig = WSTOPSIG(status), event = status >> 16;

	if (t && t->proc)
		S->proc = t->proc;
	if (t && !t->proc && t->role == ROLE_FORK_CHILD &&
	    event != PTRACE_EVENT_EXEC) {
		/* a vfork child whose parent process is gone (proc_gone):
		 * its memory has no breakpoint left, it is let go at its
		 * exec; meanwhile it runs as if untraced */
		task_resume(S, t, event ? 0 : sig);
		return;
	}
	if ((!t || t->role == ROLE_UNKNOWN) && event == PTRACE_EVENT_EXIT) {
		/* a new task killed (its process dying) before its creator's
		 * event came, if it ever comes: let it go */
		if (t) {
			t->parked = 0;
			t->exiting = t->dying = 1;
		}
		tasks_resume_tid(tid, 0);
		return;
	}
	if (!t) {
		/* a new task stopped before its creator's event: park it */
		t = task_new(S, tid, ROLE_UNKNOWN);
		t->proc = NULL;		/* its creator's event tells */
		t->parked = 1;
		t->first_group_stop = event == PTRACE_EVENT_STOP &&
				      is_stop_signal(sig) ? sig : 0;
		return;
	}
	if (!t->started) {
		t->first_group_stop = event == PTRACE_EVENT_STOP &&
				      is_stop_signal(sig) ? sig : 0;
		if (!t->attached || event == PTRACE_EVENT_STOP) {
			lifetime_start(S, t);
			return;
		}
		/* seized while something else stopped it first (in the
		 * middle of a clone or vfork, or a signal): handled as any
		 * stop; the interrupt's own stop comes later */
		t->started = 1;
	}
	t->group_stopped = 0;
	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		lifetime_new_task(S, t, event);
		task_resume(S, t, 0);
		return;
	case PTRACE_EVENT_EXEC:
		lifetime_exec(S, t);
		return;
	case PTRACE_EVENT_EXIT:
		lifetime_exit(S, t);
		task_resume(S, t, 0);
		return;
	case PTRACE_EVENT_STOP:
		if (is_stop_signal(sig)) {
			/* group-stop: stay stopped until SIGCONT */
			task_listen(S, t);
			t->group_stopped = 1;
			if (t->role == ROLE_THREAD && t->proc == S->first)
				events_group_stopped(S, sig);
			return;
		}
		task_resume(S, t, 0);
		return;
	case 0:
		if (sig == SIGTRAP) {
			on_trap(S, t);
			return;
		}
		if (sig == S->o->report_signal && t->role == ROLE_THREAD &&
		    sent_by_user(tid)) {
			/* --report-on-signal: the target never sees it */
			report_requested = 1;
			task_resume(S, t, 0);
			return;
		}
		if (debug_stops && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL)) {
			struct arch_regs r;

			if (!arch_get_regs(tid, &r))
				fprintf(stderr, "ptleak-debug: %d signal %d at pc %#llx sp %#llx rdi %#llx\n",
					(int)tid, sig, (unsigned long long)arch_pc(&r),
					(unsigned long long)arch_sp(&r), (unsigned long long)arch_arg(&r, 0));
		}
		task_resume(S, t, sig);
		return;
	default:
		task_resume(S, t, 0);
	}
}

static void on_gone(struct session *S, pid_t tid, int status)
{
	struct task *t = task_find(S, tid);
	struct proc *P = t ? t->proc : NULL;

	if (t) {
		if (t->role == ROLE_THREAD && !t->exiting && P)
			P->nalive--;
		task_delete(S, t);
	}
	if (!P || tid != P->pid)
		return;
	/* the leader is reported last: every thread is gone too */
	S->proc = P;
	P->done = 1;
	P->status = status;
	tasks_forget_threads(S, NULL);
	if (P == S->first) {
		S->status = status;
		S->done = 1;
	} else {
		proc_gone(S, P, status);
	}
}

/* The recorder's timer: every process's ring drained. */
static void drain_all(struct session *S)
{
	struct proc *P, *next;

	for (P = S->procs; P; P = next) {
		next = P->next;
		S->proc = P;
		if (S->hold)
			recs_drain(S);
		else
			recs_poll(S);
	}
}

/*
 * Stops and deaths collected by waitpid but not handled yet.  waitpid(-1)
 * returns the first waiting tracee of the kernel's list, newest first: a
 * thread late in it waits as long as any earlier one has a stop to
 * report, and under the breakpoint engine busy threads always have one
 * (a thread calling malloc every 2 ms was not seen for 0.3 s).  So
 * everything waiting is collected at once and handled in that order
 * before waitpid is asked again: every thread that stopped is handled
 * once per round.  A collected stop stays valid: its thread waits for
 * ptleak (or is gone, and its death is still to be collected).
 */
#define QUEUE_MAX 256
static struct {
	pid_t tid;
	int status;
} queue[QUEUE_MAX];
static unsigned qhead, qlen;

static void queue_push(pid_t tid, int status)
{
	seccomp_forget();
	queue[(qhead + qlen) % QUEUE_MAX].tid = tid;
	queue[(qhead + qlen) % QUEUE_MAX].status = status;
	qlen++;
}

/* Take TID's collected stop out of the queue into *STATUS: 1, or 0 if
 * there is none. */
static int queue_take(pid_t tid, int *status)
{
	unsigned i, j;

	for (i = 0; i < qlen; i++) {
		if (queue[(qhead + i) % QUEUE_MAX].tid != tid)
			continue;
		*status = queue[(qhead + i) % QUEUE_MAX].status;
		for (j = i; j + 1 < qlen; j++)
			queue[(qhead + j) % QUEUE_MAX] = queue[(qhead + j + 1) % QUEUE_MAX];
		qlen--;
		return 1;
	}
	return 0;
}

void events_forget(pid_t tid)
{
	int status;

	while (queue_take(tid, &status))
		;
}

static void handle(struct session *S, pid_t tid, int status)
{
	if (debug_stops)
		fprintf(stderr, "ptleak-debug: wait %d status %#x\n", (int)tid, status);
	if (WIFSTOPPED(status))
		on_stop(S, tid, status);
	else if (WIFEXITED(status) || WIFSIGNALED(status))
		on_gone(S, tid, status);
}

/* Wait for one stop or death and handle it.  0, or -1 when there is
 * nothing left to wait for (or waitpid failed: message). */
int events_wait_one(struct session *S)
{
	int status;
	pid_t tid;

	while (!qlen) {
		/* stops already waiting come before another drain: a drain
		 * that lasts longer than the timer's period (a consumer slower
		 * than the program's threads) would otherwise be followed by
		 * the next at once, and no stop would ever be handled */
		while (qlen < QUEUE_MAX &&
		       (tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
			queue_push(tid, status);
		if (qlen)
			break;
		recs_waiting(1);
		sampler_waiting(1);
		tid = drain_due || sample_due ? (errno = EINTR, -1) :
		      waitpid(-1, &status, __WALL);
		sampler_waiting(0);
		recs_waiting(0);
		if (tid >= 0) {
			queue_push(tid, status);
			while (qlen < QUEUE_MAX &&
			       (tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
				queue_push(tid, status);
			break;
		}
		if (errno == EINTR) {
			if (sample_due)
				sampler_tick(S);
			if (!drain_due)
				continue;
			/* the recorder's timer: the ring drained, and the
			 * caller's loop sees what it was waiting for */
			drain_all(S);
			return 0;
		}
		if (errno == ECHILD)
			return -1;
		return error("waitpid: %s", strerror(errno));
	}
	tid = queue[qhead].tid;
	status = queue[qhead].status;
	qhead = (qhead + 1) % QUEUE_MAX;
	qlen--;
	handle(S, tid, status);
	return 0;
}

/*
 * TID's stop or death handled if one is waiting (collected already, or
 * waitpid on TID alone, not blocking).  1 if one was, 0 if TID runs on,
 * -1 if waitpid failed.
 *
 * Before a PTRACE_INTERRUPT to a thread thought running: an interrupt
 * that reaches a thread already stopped (its stop not yet collected) is
 * kept by the kernel for the next resume, which then stops at once, where
 * it was.  A loop that lets a thread run, then interrupts it, would stop
 * it again and again without a single instruction run.
 */
int events_reap(struct session *S, pid_t tid)
{
	int status;
	pid_t got;

	if (queue_take(tid, &status)) {
		handle(S, tid, status);
		return 1;
	}
	got = waitpid(tid, &status, WNOHANG | __WALL);
	if (got < 0)
		return errno == ECHILD ? 0 : -1;
	if (!got)
		return 0;
	seccomp_forget();
	handle(S, tid, status);
	return 1;
}

/* Every task is stopped: held, parked, or never to stop again; a vfork
 * child runs on and its parent waits for it in the kernel, which counts as
 * stopped unless STRICT (a detach must wait until the child has gone). */
static int all_stopped(struct session *S, int strict)
{
	unsigned i;
	const struct task *t;

	for_each_task(S, i, t) {
		if (t->dying)
			continue;
		/* a task parked before its creator's event: that
		 * event (and the creator's stop) is still to come */
		if (t->role == ROLE_UNKNOWN)
			return 0;
		if (t->role == ROLE_VFORK_CHILD) {
			if (strict)
				return 0;
			continue;
		}
		if (t->vfork_child && !strict)
			continue;
		if (!t->held && !t->parked)
			return 0;
	}
	return 1;
}

/* Wait until every task is stopped (all_stopped), handling the events on
 * the way. */
int events_wait_all_stopped(struct session *S, int strict)
{
	while (!all_stopped(S, strict))
		if (events_wait_one(S))
			return S->ntasks ? -1 : 0;
	return 0;
}

/*
 * Stop every thread (PTRACE_INTERRUPT) and keep them stopped: from now on
 * a thread that stops for any reason is handled and held there, until
 * events_release_all().  Events that arrive meanwhile (breakpoint hits, new
 * threads, exits) are handled as usual.  0, or -1 with a message.
 */
int events_stop_all(struct session *S)
{
	unsigned i;
	struct task *t;

	S->hold = 1;
	for_each_task(S, i, t) {
		if (t->held || t->parked || t->dying || !t->started ||
		    t->role == ROLE_VFORK_CHILD)
			continue;
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0 && errno != ESRCH)
			warning("cannot stop thread %d: %s", (int)t->tid,
				strerror(errno));
	}
	return events_wait_all_stopped(S, 0);
}

/* Let every held task go on as it would have. */
void events_release_all(struct session *S)
{
	unsigned i;
	struct task *t;

	S->hold = 0;
	for_each_task(S, i, t) {
		if (!t->held)
			continue;
		t->held = 0;
		if (t->held_listen)
			task_listen(S, t);
		else
			task_resume(S, t, t->held_sig);
	}
}

/* A held thread that can run a system call for ptleak, or NULL.  A
 * thread in a group-stop only if LISTENING_OK: it leaves the group-stop
 * (which a detach makes it enter again). */
static struct task *injectable(struct session *S, int listening_ok)
{
	unsigned i;
	struct task *t;

	for_each_proc_task(S, i, t)
		if (t->role == ROLE_THREAD && t->held && !t->held_sig &&
		    (listening_ok || !t->held_listen) && !t->exiting)
			return t;
	return NULL;
}

/*
 * A held thread to run a system call for ptleak (injectable()).  When
 * every candidate is held in a signal-delivery-stop (a storm of signals
 * meets every stop), one is let go with its signal and interrupted again:
 * the kernel reports the interrupt before it takes the next signal, so
 * this ends.  NULL if there is none.
 */
struct task *events_injection_thread(struct session *S, int listening_ok)
{
	unsigned i, round;
	struct task *t, *sig;

	for (round = 0; round < 64; round++) {
		if ((t = injectable(S, listening_ok)))
			return t;
		sig = NULL;
		for_each_proc_task(S, i, t)
			if (t->role == ROLE_THREAD && t->held && t->held_sig &&
			    !t->held_listen && !t->exiting)
				sig = t;
		if (!sig)
			return NULL;
		sig->held = 0;
		if (ptrace(PTRACE_CONT, sig->tid, 0, (long)sig->held_sig) < 0 ||
		    ptrace(PTRACE_INTERRUPT, sig->tid, 0, 0) < 0)
			return NULL;
		sig->held_sig = 0;
		if (events_wait_all_stopped(S, 1))
			return NULL;
	}
	return NULL;
}

/* -f: the first stop of fork child C, its parent stopped at its fork
 * event (the parent's process may be gone by the time it would come).
 * 0: C is stopped (its group-stop signal noted); -1: it died first. */
int events_wait_new(struct session *S, struct task *c)
{
	int status, event;
	pid_t w;

	for (;;) {
		/* collected already with its creator's event (events_wait_one) */
		w = queue_take(c->tid, &status) ? c->tid :
		    waitpid(c->tid, &status, __WALL);
		seccomp_forget();
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			task_delete(S, c);
			return -1;
		}
		if (debug_stops)
			fprintf(stderr, "ptleak-debug: wait %d status %#x\n", (int)w, status);
		event = status >> 16;
		if (!WIFSTOPPED(status)) {
			task_delete(S, c);
			return -1;
		}
		if (event == PTRACE_EVENT_EXIT) {
			/* killed before it ran */
			c->exiting = c->dying = 1;
			tasks_resume_tid(c->tid, 0);
			continue;
		}
		c->first_group_stop = event == PTRACE_EVENT_STOP &&
				      is_stop_signal(WSTOPSIG(status)) ?
				      WSTOPSIG(status) : 0;
		return 0;
	}
}
