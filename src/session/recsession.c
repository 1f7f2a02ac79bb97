/*
 * recsession.c - the recorder engine in the session: where the image
 * binds the allocator, it is patched (or, where it cannot be, a
 * breakpoint planted with a notice); the ring is drained on a timer and
 * before every report, exec, exit and detach; threads' stacks are told to
 * the hooks when they start; a fork child is unpatched before it runs.
 */
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "recorder/recorder.h"
#include "recorder/rechook.h"
#include "session.h"
#include "base/util.h"

volatile sig_atomic_t drain_due;

/* The drain timer: every drain_ns while the recorder is in a target, so
 * that the ring never stays full for long and reports are fresh; paced
 * by how full its drains find the rings (rec_drain_pace). */
static long drain_ns = REC_DRAIN_MAX_NS;
static unsigned tick_fill;	/* the fullest ring of this tick, 256ths */
static timer_t drain_timer;
static int drain_timer_on;
/* the timer's signal, blocked but while waitpid waits (recs_waiting): it
 * interrupts nothing else of ptleak's (a write to a pipe, a read) */
static sigset_t drain_set;

static void on_drain_timer(int sig)
{
	(void)sig;
	drain_due = 1;
}

static void timer_every(long ns)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = its.it_interval.tv_nsec = ns;
	timer_settime(drain_timer, 0, &its, NULL);
}

void recs_pace(void)
{
	long ns = rec_drain_pace(drain_ns, tick_fill);

	tick_fill = 0;
	if (ns == drain_ns)
		return;
	drain_ns = ns;
	if (drain_timer_on)
		timer_every(ns);
}

/* How much the drain's thread is raised over the target's (nice). */
#define DRAIN_NICE	5

/*
 * The drain's thread a little above the target's threads (docs/usage.md,
 * "ptleak's own priority"): a drain waiting behind them for a CPU makes
 * them wait for room in their rings (4 busy threads on 2 CPUs: 20% of
 * their rate).  Only this thread (Linux's nice is a thread's), after the
 * target was forked; where ptleak may (root, CAP_SYS_NICE, RLIMIT_NICE),
 * else it stays as it is.  PTLEAK_DEBUG=no-nice: never (benchmarks).
 */
static void drain_priority(void)
{
	const char *v = getenv("PTLEAK_DEBUG");
	static int done;
	int cur;

	if (done++ || (v && strstr(v, "no-nice")))
		return;
	errno = 0;
	cur = getpriority(PRIO_PROCESS, 0);
	if (cur == -1 && errno)
		return;
	if (setpriority(PRIO_PROCESS, 0, cur - DRAIN_NICE < -20 ? -20 :
			cur - DRAIN_NICE) && debug_stats)
		fprintf(stderr, "ptleak-debug: nice %d kept: %s\n", cur,
			strerror(errno));
}

static void timer_start(void)
{
	struct sigevent ev;
	struct sigaction sa;

	if (drain_timer_on)
		return;
	sigemptyset(&drain_set);
	sigaddset(&drain_set, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &drain_set, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_drain_timer;	/* no SA_RESTART: waitpid returns */
	sigfillset(&sa.sa_mask);
	sigaction(SIGRTMIN + 1, &sa, NULL);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGRTMIN + 1;
	if (timer_create(CLOCK_MONOTONIC, &ev, &drain_timer))
		return;
	drain_timer_on = 1;
	timer_every(drain_ns);
	drain_priority();
}

void recs_waiting(int waiting)
{
	if (drain_timer_on)
		sigprocmask(waiting ? SIG_UNBLOCK : SIG_BLOCK, &drain_set, NULL);
}

static void timer_stop(void)
{
	if (!drain_timer_on)
		return;
	timer_delete(drain_timer);
	drain_timer_on = 0;
	drain_ns = REC_DRAIN_MAX_NS;
	tick_fill = 0;
}

static unsigned threads_inside(struct session *S, int pc_only);

/* Let held thread T run on if it is inside the recorder's code (with the
 * signal it stopped for: it would have had it, stopped or not).  1 if it
 * was let go. */
static int settle_go(struct session *S, struct task *t)
{
	struct arch_regs r;
	int ret;

	if (t->role != ROLE_THREAD || !t->held || t->held_listen || t->exiting ||
	    t->dying || arch_get_regs(t->tid, &r) ||
	    !rec_pc_in_code(S->proc->rec, arch_pc(&r)))
		return 0;
	t->held = 0;
	ret = ptrace(PTRACE_CONT, t->tid, 0, (long)t->held_sig) == 0;
	t->held_sig = 0;
	return ret;
}

/* The threads settle() let run: their stops collected as they come, and
 * one that stopped still inside the recorder's code let go again (a
 * signal, or an interrupt left for its resume, stops it at once). */
static void settle_reap(struct session *S)
{
	struct proc *P = S->proc;
	unsigned i;
	struct task *t;

	for_each_proc_task(S, i, t)
		if (t->role == ROLE_THREAD && !t->held && !t->parked &&
		    !t->dying && events_reap(S, t->tid) > 0 &&
		    (S->proc = P) && (t = task_find(S, t->tid)))
			settle_go(S, t);
	S->proc = P;
}

static void drain(struct session *S, int quiet);

/* Every thread held: let those inside a hook (a record half written)
 * run until they are out, a few ms at most.  0 when none is. */
static unsigned settle(struct session *S)
{
	struct proc *P = S->proc;
	unsigned round, i, inside = 0;
	uint64_t t0;
	struct task *t;
	int ret;

	/*
	 * Every record reserved before now must be taken: a hole below
	 * HEAD is a thread stopped in the middle of its record.  Those
	 * threads alone run on (the others stay stopped, so that they
	 * finish rather than start new records) until the consumer is past
	 * HEAD: on a loaded machine a thread let run may not get a CPU for
	 * milliseconds, so the wait is for the ring, not a fixed time.
	 */
	rec_mark(P->rec);
	for (round = 0; round < 10 && !S->done && S->ntasks; round++) {
		recs_drain(S);
		if (rec_caught_up(P->rec))
			break;
		inside = 0;
		for_each_proc_task(S, i, t)
			inside += settle_go(S, t);
		if (!inside)
			break;		/* nobody can fill the hole now */
		t0 = now_ns();
		do {
			usleep(200);
			recs_drain(S);
			settle_reap(S);
		} while (!rec_caught_up(P->rec) &&
			 now_ns() - t0 < 200000000ull);
		/* stopped meanwhile: collected, not interrupted (events_reap) */
		for_each_proc_task(S, i, t)
			if (t->role == ROLE_THREAD && !t->held && !t->parked &&
			    !t->dying && !events_reap(S, t->tid) &&
			    ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0 &&
			    errno != ESRCH)
				break;
		ret = events_wait_all_stopped(S, 0);
		S->proc = P;	/* the events met on the way set it */
		if (ret)
			break;
	}
	if (rec_caught_up(P->rec))
		inside = 0;
	/* every thread stopped out of the hooks: nothing comes before
	 * what the rings hold */
	if (!inside)
		drain(S, 1);
	else
		recs_drain(S);
	if (debug_stats && !rec_caught_up(P->rec))
		fprintf(stderr, "ptleak-debug: recorder: settle left a hole "
			"after %u rounds (%u threads inside)\n", round, inside);
	return rec_caught_up(P->rec) ? 0 : inside ? inside : 1;
}

void recs_settle(struct session *S)
{
	if (S->proc->rec && rec_injected(S->proc->rec) && !S->proc->rec_detaching)
		settle(S);
}

/*
 * The ring has been stuck at a hole for a second: a thread left its
 * record half written (a signal handler that longjmp'ed out of a hook).
 * With every thread stopped out of the hooks, nobody can finish it: it
 * is given up (counted lost by the ring).
 */
static void unstick(struct session *S)
{
	struct proc *P = S->proc;

	if (events_stop_all(S)) {
		events_release_all(S);
		return;
	}
	settle(S);
	if (!threads_inside(S, 1)) {
		drain(S, 1);
		if (rec_blocked(P->rec) && rec_skip_holes(P->rec))
			drain(S, 1);
	}
	events_release_all(S);
}

void recs_drain_final(struct session *S)
{
	drain(S, 1);
	/* every thread is gone or dying: no hole will be filled */
	if (S->proc->rec && rec_skip_holes(S->proc->rec))
		drain(S, 1);
	if (debug_stats && S->proc->rec && rec_injected(S->proc->rec))
		rec_debug_ring(S->proc->rec);	/* its producers' sleeps */
}

void recs_poll(struct session *S)
{
	struct proc *P = S->proc;
	uint64_t now;
	unsigned fill;

	if (!P->rec || !rec_injected(P->rec)) {
		drain_due = 0;
		return;
	}
	fill = rec_fill(P->rec);
	if (fill > tick_fill)
		tick_fill = fill;
	recs_drain(S);
	if (!rec_blocked(P->rec)) {
		P->rec_stuck_ns = 0;
		return;
	}
	now = now_ns();
	if (P->rec_tail != rec_progress(P->rec) || !P->rec_stuck_ns) {
		P->rec_tail = rec_progress(P->rec);
		P->rec_stuck_ns = now;
	} else if (now - P->rec_stuck_ns > 1000000000ull && !S->hold) {
		unstick(S);
		P->rec_stuck_ns = 0;
	}
}

/*
 * The target wrote over the ring's header: its heap is not tracked from
 * now on (said once, and by every report); the hooks pass through.
 * Descriptors stay tracked through /proc/PID/fd.
 */
static void ring_overwritten(struct session *S)
{
	struct proc *P = S->proc;
	double t = (double)(now_ns() - S->start_ns) / 1e9;

	if (debug_stats)
		fprintf(stderr, "ptleak-debug: ring of process %d: %s\n",
			(int)P->pid, rec_why(P->rec));
	if (!util_quiet)
		fprintf(stderr, "ptleak: the target (process %d) wrote over ptleak's "
			"ring at %.3f s; heap events after %.3f s are not tracked\n",
			(int)P->pid, t, t);
	cov_stop(&P->cov, COV_HEAP, "the target (process %d) wrote over ptleak's "
		 "ring at %.3f s; heap events after %.3f s are not tracked",
		 (int)P->pid, t, t);
	rec_disable(P->rec);
	rec_unlink_code(P->rec);
}

static void drain(struct session *S, int quiet)
{
	struct proc *P = S->proc;
	uint64_t lo, hi, lost = 0, bad;
	long ret;

	drain_due = 0;
	/* detaching: drained before the ring was disabled; a producer that
	 * waited for room gives its record up now, it is not a loss */
	if (!P->rec || !rec_injected(P->rec) || P->rec_detaching)
		return;
	if (!P->rec_main_known && P->unw && P->rec_main_tries < 500) {
		int found;

		P->rec_main_tries++;

		/* a try at every drain until the executable is relocated:
		 * its failures (a non-dumpable process) say nothing */
		util_silent++;
		found = !unwinder_main_range(P->unw, P->mem_pid, &lo, &hi);
		util_silent--;
		if (found) {
			rec_set_main(P->rec, lo, hi);
			P->rec_main_known = 1;
		}
	}
	bad = rec_bad(P->rec);
	ret = quiet ? rec_drain_quiet(P->rec, P->heap, P->fdp, P->stacks, &lost) :
		      rec_drain(P->rec, P->heap, P->fdp, P->stacks, &lost);
	if (ret < 0)
		ring_overwritten(S);
	bad = rec_bad(P->rec) - bad;
	if (bad)
		cov_lost(&P->cov, COV_HEAP, 0, "%llu record%s of the recorder's ring in "
			 "process %d failed %s checks (skipped)", (unsigned long long)bad,
			 bad == 1 ? "" : "s", (int)P->pid, bad == 1 ? "its" : "their");
	if (lost > P->rec_lost && debug_stats)
		rec_debug_ring(P->rec);
	if (lost > P->rec_lost) {
		cov_lost(&S->proc->cov, COV_HEAP, 0, "%llu allocator calls were given up "
			 "by the target's recorder", (unsigned long long)(lost - P->rec_lost));
		P->rec_lost = lost;
	}
}

void recs_drain(struct session *S)
{
	drain(S, 0);
}

/* What an allocator function's arguments mean to the hooks. */
static unsigned kind_of(int fn)
{
	switch (fn) {
	case AF_CALLOC:
		return REC_FN_CALLOC;
	case AF_REALLOC:
		return REC_FN_REALLOC;
	case AF_REALLOCARRAY:
		return REC_FN_REALLOCARRAY;
	case AF_FREE:
		return REC_FN_FREE;
	case AF_POSIX_MEMALIGN:
		return REC_FN_POSIX_MEMALIGN;
	case AF_ALIGNED_ALLOC:
	case AF_MEMALIGN:
		return REC_FN_MEMALIGN;
	default:
		return REC_FN_MALLOC;
	}
}

/* Every thread but TID is stopped (held or parked), or there is none. */
static int others_stopped(struct session *S, pid_t tid)
{
	unsigned i;
	struct task *t;

	for_each_proc_task(S, i, t)
		if (t->tid != tid && t->role == ROLE_THREAD && !t->dying &&
		    !t->held && !t->parked)
			return 0;
	return 1;
}

/* The pcs of the stopped threads, for rec_patch: read once a binding
 * pass (a PTRACE_GETREGS a thread for each of the ~50 functions). */
static void stopped_pcs(struct session *S)
{
	unsigned i, n = 0;
	struct task *t;
	struct arch_regs r;

	if (S->bind_pcs.known)
		return;
	for_each_proc_task(S, i, t)
		if (n < ARRAY_SIZE(S->bind_pcs.pc) && t->role == ROLE_THREAD &&
		    !arch_get_regs(t->tid, &r))
			S->bind_pcs.pc[n++] = arch_pc(&r);
	S->bind_pcs.n = n;
	S->bind_pcs.known = 1;
}

void recs_bind_begin(struct session *S)
{
	S->bind_pcs.known = 0;
}

/* The recorder could not be injected: say why once; --engine=recorder
 * makes it an error. */
static int inject_failed(struct session *S, const char *why)
{
	struct proc *P = S->proc;

	P->rec_off = 1;
	if (S->o->engine == ENGINE_RECORDER)
		return error("cannot use the recorder in process %d: %s "
			     "(--engine=breakpoints would trace it with breakpoints)",
			     (int)P->pid, why);
	if (!util_quiet)
		fprintf(stderr, "ptleak: the recorder cannot be injected into "
			"process %d (%s): allocator calls are seen with breakpoints\n",
			(int)P->pid, why);
	return 0;
}

/* The recorder in the target: injected now if it is not yet (every
 * thread stopped).  1 if it is there, 0 if not (breakpoints), -1 if
 * --engine=recorder cannot have it. */
static int ensure(struct session *S, pid_t tid, uint64_t near)
{
	struct proc *P = S->proc;
	char why[256];
	struct arch_regs r;
	int sig = 0;

	if (P->rec_off || S->o->engine == ENGINE_BREAKPOINTS)
		return 0;
	if (P->rec && rec_injected(P->rec))
		return 1;
	if (!others_stopped(S, tid))
		return inject_failed(S, "its threads run (a library loaded "
				     "later defines the allocator)") ? -1 : 0;
	if (!rec_allowed(tid, why, sizeof(why)))
		return inject_failed(S, why) ? -1 : 0;
	if (!P->rec)
		P->rec = rec_new(P->pid, S->o->depth);
	rec_set_via(P->rec, bpset_via(&P->bps));
	if (rec_inject(P->rec, tid, near, near + 1, &sig, why, sizeof(why))) {
		if (sig)
			P->bps.held_sig = sig;
		return inject_failed(S, why) ? -1 : 0;
	}
	if (sig)
		P->bps.held_sig = sig;
	/* the threads' stacks first: the main one's is among them */
	recs_threads_all(S);
	if (!arch_get_regs(P->mem_pid, &r))
		rec_main_stack(P->rec, P->mem_pid, arch_sp(&r));
	rec_set_trampoline(P->rec, P->bps.trampoline);
	timer_start();
	return 1;
}

/* Patch function NAME defined by D (rechook.h KIND, TAG, object OBJ). */
static int bind_fn(struct session *S, pid_t tid, const struct sym_def *d,
		   const char *name, unsigned kind, unsigned tag, unsigned obj)
{
	struct proc *P = S->proc;
	char why[256];
	int sig = 0, ret;

	ret = ensure(S, tid, d->addr);
	if (ret <= 0)
		return ret;
	stopped_pcs(S);
	ret = rec_patch(P->rec, tid, name, d->addr, d->size, obj, kind, tag,
			S->bind_pcs.pc, S->bind_pcs.n, &sig, why, sizeof(why));
	if (sig)
		P->bps.held_sig = sig;
	if (ret >= 0) {
		if (debug_stats)
			fprintf(stderr, "ptleak-debug: recorder: %s at %#llx patched\n",
				name, (unsigned long long)d->addr);
		return 1;
	}
	/* even under --engine=recorder: the engine is there, this one
	 * function's entry cannot take the jump; the calls an allocator
	 * makes are its own (nesting rule), its breakpoint records it */
	if (!REC_FN_IS_FD(kind))
		rec_nest_range(P->rec, d->addr, d->size, obj);
	if (!util_quiet)
		fprintf(stderr, "ptleak: %s in %s is seen with a breakpoint: %s\n",
			name, d->module, why);
	return 0;
}

int recs_bind(struct session *S, pid_t tid, const struct sym_def *d, int fn,
	      const char *name, unsigned obj)
{
	return bind_fn(S, tid, d, name, kind_of(fn), (unsigned)fn, obj);
}

int recs_bind_fd(struct session *S, pid_t tid, const struct sym_def *d,
		 const char *name, unsigned kind, unsigned idx, unsigned obj,
		 uint64_t lo, uint64_t hi)
{
	struct proc *P = S->proc;
	int ret;

	if (obj >= REC_MAX_OBJS)
		return 0;
	ret = ensure(S, tid, d->addr);
	if (ret <= 0)
		return ret;
	if (!rec_fd_hooks(P->rec)) {
		if (!P->rec_fd_said++ && !util_quiet)
			fprintf(stderr, "ptleak: the descriptor functions of process "
				"%d are seen with breakpoints: its seccomp filters "
				"refuse getpid, which their hooks need\n", (int)P->pid);
		return 0;
	}
	if (rec_obj_text(P->rec, obj, lo, hi))
		return 0;
	return bind_fn(S, tid, d, name, kind, idx, obj);
}

void recs_thread_start(struct session *S, pid_t tid, const struct arch_regs *r)
{
	struct proc *P = S->proc;

	if (P->rec && rec_injected(P->rec))
		rec_thread_set(P->rec, tid, arch_tp(r), arch_sp(r));
}

void recs_threads_all(struct session *S)
{
	unsigned i;
	struct task *t;
	struct arch_regs r;

	for_each_proc_task(S, i, t)
		if (t->role == ROLE_THREAD && !t->dying && !arch_get_regs(t->tid, &r))
			recs_thread_start(S, t->tid, &r);
}

void recs_many_threads(struct session *S)
{
	if (S->proc->rec)
		rec_need_times(S->proc->rec);
}

void recs_thread_exit(struct session *S, pid_t tid)
{
	if (S->proc->rec)
		rec_thread_gone(S->proc->rec, tid);
}

void recs_fork_child(struct session *S, pid_t child)
{
	struct proc *P = S->proc;
	int sig = 0;

	if (!P->rec || !rec_injected(P->rec))
		return;
	/* its own copy of the code: restored; its mapping of ptleak's
	 * ring and the code pages: gone, before it runs */
	rec_unpatch(P->rec, child);
	rec_unmap_copy(P->rec, child, &sig);
	if (sig)
		warning("signal %d to child %d during ptleak's clean-up is "
			"delivered late", sig, (int)child);
}

void recs_forget(struct session *S)
{
	struct proc *P = S->proc;

	rec_delete(P->rec);
	P->rec = NULL;
	P->rec_off = 0;
	P->rec_main_known = 0;
	P->rec_main_tries = 0;
	P->rec_lost = 0;
	P->rec_detaching = 0;
	for (P = S->procs; P; P = P->next)
		if (P->rec)
			return;		/* another process still records */
	timer_stop();
}

/*
 * Does thread T (held, registers R) run the recorder's code: its pc in
 * it or, unless PC_ONLY, a frame of its stack (a stub that called the
 * allocator, a hook a signal interrupted)?  Its stack is unwound (the
 * walk stops at the stub: it has no unwind table for libunwind) rather
 * than searched, so that a stale return address in a dead slot does not
 * count.
 */
static int runs_recorder(struct session *S, struct task *t,
			 const struct arch_regs *r, int pc_only)
{
	struct proc *P = S->proc;
	uint64_t pcs[MAX_DEPTH];
	unsigned n, i;

	if (rec_pc_in_code(P->rec, arch_pc(r))) {
		if (debug_stats)
			fprintf(stderr, "ptleak-debug: thread %d at %#llx in the "
				"recorder's code\n", (int)t->tid,
				(unsigned long long)arch_pc(r));
		return 1;
	}
	if (pc_only)
		return 0;
	n = unwind_stack(P->unw, t->tid, r, NULL, 0, pcs, MAX_DEPTH);
	for (i = 0; i < n; i++)
		if (rec_pc_in_code(P->rec, pcs[i])) {
			if (debug_stats)
				for (i = 0; i < n; i++)
					fprintf(stderr, "ptleak-debug: thread %d inside "
						"the recorder: #%u %#llx\n", (int)t->tid,
						i, (unsigned long long)pcs[i]);
			return 1;
		}
	return 0;
}

/* How many held threads run the recorder's code (runs_recorder). */
static unsigned threads_inside(struct session *S, int pc_only)
{
	unsigned i, n = 0;
	struct task *t;
	struct arch_regs r;

	for_each_proc_task(S, i, t)
		if (t->role == ROLE_THREAD && !t->dying && t->held &&
		    !arch_get_regs(t->tid, &r) && runs_recorder(S, t, &r, pc_only))
			n++;
	return n;
}


/* Take every held thread out of the recorder's code and its stubs'
 * frames off their stacks.  The number that could not be. */
static unsigned take_all_out(struct session *S)
{
	struct proc *P = S->proc;
	unsigned i, stuck = 0;
	struct task *t;
	struct arch_regs r;
	int ret;

	for_each_proc_task(S, i, t) {
		if (t->role != ROLE_THREAD || !t->held || t->dying ||
		    arch_get_regs(t->tid, &r))
			continue;
		ret = rec_take_out(P->rec, t->tid, &r);
		if (ret > 0 && arch_set_regs(t->tid, &r))
			ret = -1;
		if (ret < 0 || rec_unwind_stubs(P->rec, t->tid, arch_sp(&r)) < 0)
			stuck++;
	}
	return stuck;
}

int recs_detach(struct session *S)
{
	struct proc *P = S->proc;
	unsigned round, stuck = 0, inside = 0;
	struct task *inj;
	int ret, sig = 0;

	if (!P->rec || !rec_injected(P->rec))
		return 0;
	recs_drain(S);
	if (debug_stats)
		rec_debug_ring(P->rec);		/* its producers' sleeps */
	rec_disable(P->rec);
	P->rec_detaching = 1;
	ret = rec_unpatch(P->rec, P->mem_pid);
	/* no thread in the recorder's code, no stub frame on a stack; one
	 * whose state is not known runs a little (not in a group-stop) */
	for (round = 0; round < 20 && !S->done && S->ntasks; round++) {
		stuck = take_all_out(S);
		if (!stuck)
			break;
		events_release_all(S);
		usleep(1000);
		if (events_stop_all(S) || events_wait_all_stopped(S, 1))
			break;
	}
	if (S->done || !S->ntasks)
		return ret;
	inside = stuck ? stuck : threads_inside(S, 0);
	if (inside) {
		/* a signal frame over a hook, a stub that cannot be left: the
		 * code and the ring stay, inert */
		rec_unlink_code(P->rec);
		warning("ptleak's code and ring stay mapped in process %d, "
			"unused: %u thread%s still inside an allocator call",
			(int)P->pid, inside, inside == 1 ? " is" : "s are");
		return ret;
	}
	inj = events_injection_thread(S, 1);
	if (!inj) {
		warning("no thread of process %d can unmap ptleak's code and ring "
			"now: they stay mapped, unused", (int)P->pid);
		return ret;
	}
	if (rec_unmap(P->rec, inj->tid, &sig, 1))
		ret = -1;
	if (sig) {
		inj->held_sig = sig;
		inj->held_listen = 0;
	}
	return ret;
}
