/*
 * recsession.c - the recorder engine in the session: where the image
 * binds the allocator, it is patched (or, where it cannot be, a
 * breakpoint planted with a notice); the ring is drained on a timer and
 * before every report, exec, exit and detach; threads' stacks are told to
 * the hooks when they start; a fork child is unpatched before it runs.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "arch.h"
#include "recorder.h"
#include "rechook.h"
#include "session.h"
#include "util.h"

volatile sig_atomic_t drain_due;

/* The drain timer: every DRAIN_MS while the recorder is in a target, so
 * that the ring never stays full for long and reports are fresh. */
#define DRAIN_MS 2
static timer_t drain_timer;
static int drain_timer_on;

static void on_drain_timer(int sig)
{
	(void)sig;
	drain_due = 1;
}

static void timer_start(void)
{
	struct sigevent ev;
	struct itimerspec its;
	struct sigaction sa;

	if (drain_timer_on)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_drain_timer;	/* no SA_RESTART: waitpid returns */
	sigfillset(&sa.sa_mask);
	sigaction(SIGRTMIN + 1, &sa, NULL);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGRTMIN + 1;
	if (timer_create(CLOCK_MONOTONIC, &ev, &drain_timer))
		return;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = its.it_interval.tv_nsec = DRAIN_MS * 1000000l;
	timer_settime(drain_timer, 0, &its, NULL);
	drain_timer_on = 1;
}

static void timer_stop(void)
{
	if (!drain_timer_on)
		return;
	timer_delete(drain_timer);
	drain_timer_on = 0;
}

void recs_drain(struct session *S)
{
	struct proc *P = &S->proc;
	uint64_t lo, hi, lost = 0;

	drain_due = 0;
	if (!P->rec || !rec_injected(P->rec))
		return;
	if (!P->rec_main_known && P->unw &&
	    !unwinder_main_range(P->unw, P->mem_pid, &lo, &hi)) {
		rec_set_main(P->rec, lo, hi);
		P->rec_main_known = 1;
	}
	if (rec_drain(P->rec, P->heap, P->stacks, &lost) < 0) {
		cov_lost(&S->cov, COV_HEAP, 0, "the recorder's ring in process %d "
			 "is corrupt: recording stopped", (int)P->pid);
		rec_disable(P->rec);
	}
	if (lost > P->rec_lost) {
		cov_lost(&S->cov, COV_HEAP, 0, "%llu allocator calls were given up "
			 "by the target's recorder", (unsigned long long)(lost - P->rec_lost));
		P->rec_lost = lost;
	}
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

	for_each_task(S, i, t)
		if (t->tid != tid && t->role == ROLE_THREAD && !t->dying &&
		    !t->held && !t->parked)
			return 0;
	return 1;
}

/* The pcs of the stopped threads, for rec_patch. */
static unsigned stopped_pcs(struct session *S, uint64_t *pcs, unsigned max)
{
	unsigned i, n = 0;
	struct task *t;
	struct arch_regs r;

	for_each_task(S, i, t)
		if (n < max && t->role == ROLE_THREAD && !arch_get_regs(t->tid, &r))
			pcs[n++] = arch_pc(&r);
	return n;
}

/* The recorder could not be injected: say why once; --engine=recorder
 * makes it an error. */
static int inject_failed(struct session *S, const char *why)
{
	struct proc *P = &S->proc;

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
	struct proc *P = &S->proc;
	char why[256];
	struct arch_regs r;
	int sig = 0;

	/* auto is breakpoints until the hooks walk stacks (issue 10) */
	if (P->rec_off || S->o->engine != ENGINE_RECORDER || P->no_heap)
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
	if (rec_inject(P->rec, tid, near, near + 1, &sig, why, sizeof(why))) {
		if (sig)
			P->bps.held_sig = sig;
		return inject_failed(S, why) ? -1 : 0;
	}
	if (sig)
		P->bps.held_sig = sig;
	if (!arch_get_regs(P->mem_pid, &r))
		rec_main_stack(P->rec, P->mem_pid, arch_sp(&r));
	recs_threads_all(S);
	timer_start();
	return 1;
}

int recs_bind(struct session *S, pid_t tid, const struct sym_def *d, int fn,
	      const char *name, unsigned obj)
{
	struct proc *P = &S->proc;
	uint64_t pcs[256];
	char why[256];
	unsigned n;
	int sig = 0, ret;

	ret = ensure(S, tid, d->addr);
	if (ret <= 0)
		return ret;
	n = stopped_pcs(S, pcs, 256);
	ret = rec_patch(P->rec, tid, name, d->addr, d->size, obj, kind_of(fn),
			(unsigned)fn, pcs, n, &sig, why, sizeof(why));
	if (sig)
		P->bps.held_sig = sig;
	if (ret >= 0)
		return 1;
	if (S->o->engine == ENGINE_RECORDER)
		return error("cannot patch %s in %s: %s (--engine=breakpoints "
			     "would trace it with a breakpoint)", name, d->module, why);
	if (!util_quiet)
		fprintf(stderr, "ptleak: %s in %s is seen with a breakpoint: %s\n",
			name, d->module, why);
	return 0;
}

void recs_thread_start(struct session *S, pid_t tid, const struct arch_regs *r)
{
	struct proc *P = &S->proc;

	if (P->rec && rec_injected(P->rec))
		rec_thread_set(P->rec, tid, arch_tp(r), arch_sp(r));
}

void recs_threads_all(struct session *S)
{
	unsigned i;
	struct task *t;
	struct arch_regs r;

	for_each_task(S, i, t)
		if (t->role == ROLE_THREAD && !t->dying && !arch_get_regs(t->tid, &r))
			recs_thread_start(S, t->tid, &r);
}

void recs_thread_exit(struct session *S, pid_t tid)
{
	if (S->proc.rec)
		rec_thread_gone(S->proc.rec, tid);
}

void recs_fork_child(struct session *S, pid_t child)
{
	struct proc *P = &S->proc;

	if (P->rec && rec_injected(P->rec))
		rec_unpatch(P->rec, child);
}

void recs_forget(struct session *S)
{
	struct proc *P = &S->proc;

	rec_delete(P->rec);
	P->rec = NULL;
	P->rec_off = 0;
	P->rec_main_known = 0;
	P->rec_lost = 0;
	timer_stop();
}

int recs_detach(struct session *S)
{
	struct proc *P = &S->proc;
	unsigned i;
	struct task *t;
	struct arch_regs r;
	int ret;

	if (!P->rec || !rec_injected(P->rec))
		return 0;
	recs_drain(S);
	rec_disable(P->rec);
	ret = rec_unpatch(P->rec, P->mem_pid);
	/* a thread stopped in a relocated prologue goes back to the
	 * function; one inside a hook finishes it there (the code page
	 * stays mapped, inert) */
	for_each_task(S, i, t) {
		uint64_t pc;

		if (t->role != ROLE_THREAD || arch_get_regs(t->tid, &r))
			continue;
		pc = rec_fixup_pc(P->rec, arch_pc(&r));
		if (pc != arch_pc(&r)) {
			arch_set_pc(&r, pc);
			if (arch_set_regs(t->tid, &r))
				ret = error("cannot move thread %d out of ptleak's code",
					    (int)t->tid);
		}
	}
	timer_stop();
	return ret;
}
