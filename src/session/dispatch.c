/*
 * dispatch.c - the stop dispatcher: what the wait loop (events.c)
 * collects, sent to its handler (the session's event_ops, session.h): a
 * breakpoint or a return (the breakpoint engine's probes, the image's
 * rendezvous, an execve), a clone/fork/vfork, an exec, an exit, a
 * group-stop, a signal (lifetime.c); a death (procs.c); the timers'
 * work (the recorder's drain, the sampler).  Nothing below calls back
 * into this file but through those operations.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "arch/arch.h"
#include "base/debug.h"
#include "target/memio.h"
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

/* The signal TID stopped with was sent by a process (kill, tgkill,
 * sigqueue), not raised by the kernel for a fault. */
static int sent_by_user(pid_t tid)
{
	siginfo_t si;

	return !ptrace(PTRACE_GETSIGINFO, tid, 0, &si) && si.si_code <= 0;
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
				      stop_signal(sig) ? sig : 0;
		return;
	}
	if (!t->started) {
		t->first_group_stop = event == PTRACE_EVENT_STOP &&
				      stop_signal(sig) ? sig : 0;
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
		if (stop_signal(sig)) {
			/* group-stop: stay stopped until SIGCONT */
			S->gstops++;
			task_listen(S, t);
			t->group_stopped = 1;
			if (t->role == ROLE_THREAD && t->proc == S->first)
				lifetime_group_stopped(S, sig);
			return;
		}
		/* the group-stop is over (SIGCONT): no stop owed */
		if (t->proc == S->first)
			S->stop_owed = 0;
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

	if (!t && snap_gone(S, tid, status))
		return;

	if (t) {
		int thread = t->role == ROLE_THREAD;

		if (thread && !t->exiting && P)
			P->nalive--;
		task_delete(S, t);
		/* the exiting thread the group-stop waited for */
		if (thread && P == S->first && tid != P->pid && S->stop_owed)
			lifetime_group_stopped(S, S->stop_owed);
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

static void waiting(int on)
{
	if (on) {
		recs_waiting(1);
		sampler_waiting(1);
	} else {
		sampler_waiting(0);
		recs_waiting(0);
	}
}

static int due(void)
{
	return drain_due || sample_due;
}

static int tick(struct session *S)
{
	if (sample_due)
		sampler_tick(S);
	if (!drain_due)
		return 0;
	/* the recorder's timer: the ring drained, and the caller's loop
	 * sees what it was waiting for */
	drain_all(S);
	recs_pace();
	return 1;
}

const struct event_ops dispatch_ops = {
	.stop = on_stop,
	.gone = on_gone,
	.waiting = waiting,
	.due = due,
	.tick = tick,
};
