/*
 * detach.c - letting go of the target as it was: every thread stopped,
 * moved out of ptleak's code, its return addresses restored; every
 * breakpoint removed, the scratch page unmapped; every thread detached with
 * its signal.  Also when ptleak dies (die_hook).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include "arch/arch.h"
#include "target/memio.h"
#include "target/guard.h"
#include "session/proctree.h"
#include "session.h"
#include "base/util.h"

/* Is SIGTRAP pending for thread TID alone (an int3 it executed but has not
 * reported yet)? */

/*
 * Put held thread T back where it would be untraced: out of an
 * out-of-line slot or the trampoline, every hijacked return address of
 * its calls in progress restored.  Returns 1 if something was fixed.
 */
static int untrace_thread(struct session *S, struct task *t)
{
	struct proc *P = S->proc;
	const struct bp *bp;
	struct arch_regs r;
	uint64_t pc, fixed, slot;
	int n = 0;
	size_t k;

	if (!arch_get_regs(t->tid, &r)) {
		pc = fixed = arch_pc(&r);
		if (P->bps.trampoline && pc == P->bps.trampoline) {
			/* returned there, the int3 not executed yet */
			for (k = t->npend; k > 0; k--)
				if (t->pend[k - 1].slot == arch_sp(&r) - 8) {
					fixed = t->pend[k - 1].real;
					t->npend = k - 1;
					break;
				}
		} else if ((bp = bp_find_slot(&P->bps, pc, &slot))) {
			fixed = arch_xol_fixup_pc(&bp->insn, slot, pc);
		}
		if (fixed != pc) {
			arch_set_pc(&r, fixed);
			if (arch_set_regs(t->tid, &r))
				warning("cannot move thread %d out of ptleak's code: %s",
					(int)t->tid, strerror(errno));
			n++;
		}
	}
	for (k = t->npend; k > 0; k--) {
		const struct pending *q = &t->pend[k - 1];
		uint64_t v;

		if (mem_read_all(t->tid, q->slot, &v, sizeof(v)) ||
		    v != P->bps.trampoline)
			continue;	/* left by longjmp, reused */
		if (mem_write(t->tid, q->slot, &q->real, sizeof(q->real)))
			warning("cannot restore a return address of thread %d",
				(int)t->tid);
		n++;
	}
	t->npend = 0;
	return n;
}

/*
 * Let go of the target: every thread stopped; threads that executed an
 * int3 without reporting it yet made to report it (else the pending
 * SIGTRAP would kill them once untraced); every thread moved out of
 * ptleak's code and its returns restored; every breakpoint removed, the
 * scratch area unmapped; every thread detached with the signal it was
 * stopped with.  REPORT: make the final report first.
 */
/* Process S->proc, every thread held, let go of (detach_target). */
static int detach_proc(struct session *S)
{
	struct proc *P = S->proc;
	unsigned i, moved = 0;
	struct task *t, *inj;
	int ret = 0;

	/* the recorder's entries first: no call enters a hook from now on */
	if (recs_detach(S))
		ret = -1;
	for_each_proc_task(S, i, t)
		if (t->held && t->role != ROLE_FORK_CHILD)
			moved += untrace_thread(S, t) > 0;
	if (P->bps.pid && bpset_unplant_all(&P->bps, P->bps.pid))
		ret = -1;
	inj = P->bps.npages ? events_injection_thread(S, 1) : NULL;
	if (P->bps.npages) {
		if (!inj)
			warning("no thread of process %d can unmap ptleak's scratch "
				"page now (all stopped or exiting): it stays mapped, unused",
				(int)P->pid);
		else if (bpset_unmap_scratch(&P->bps, inj->tid))
			ret = -1;
		if (inj && (inj->held_sig = tasks_take_held_sig(S)))
			inj->held_listen = 0;
	}
	if (debug_stops)
		fprintf(stderr, "ptleak-debug: detach: %u threads of process %d "
			"moved out of ptleak's code or given back their returns\n",
			moved, (int)P->pid);
	guard_stop(P->bps.guard);
	P->bps.guard = NULL;
	if (S->tree && P != S->first && !P->done)
		proctree_exit(S->tree, P->row, -1);
	return ret;
}

int detach_target(struct session *S, int report)
{
	struct proc *P;
	unsigned i, round;
	struct task *t;
	int ret = 0;

	/* a live report being made first; the detach's own from a
	 * snapshot while the threads run on (snapshot.c) */
	snap_finish(S, !report, 1);
	census_attach_steps(S, 1, 0);
	if (report) {
		uint64_t t0 = now_ns();

		if (events_stop_all(S))
			ret = -1;
		else if (snap_reports(S, REPORT_DETACH, t0))
			ret = -1;
		if (snap_busy(S)) {
			events_release_all(S);
			snap_released(S);
			snap_finish(S, 0, 1);
		}
	}
	if (events_stop_all(S))
		ret = -1;
	for (P = S->procs; P; P = P->next)
		snap_reap(S, P, 1);	/* a census's snapshot */
	/* vfork children run in the target's memory, on its breakpoints:
	 * wait until they have exec'ed or exited, their parents held */
	if (events_wait_all_stopped(S, 1))
		ret = -1;
	for (round = 0; round < 16; round++) {
		unsigned n = 0;

		for_each_task(S, i, t) {
			if (!t->held || t->held_sig || t->exiting ||
			    !sigtrap_pending(t->tid))
				continue;
			t->held = 0;
			if (ptrace(PTRACE_CONT, t->tid, 0, 0) == 0)
				n++;
		}
		if (!n)
			break;
		if (events_wait_all_stopped(S, 1))
			ret = -1;
	}
	for (P = S->procs; P; P = P->next) {
		S->proc = P;
		if (detach_proc(S))
			ret = -1;
	}
	for_each_task(S, i, t) {
		if (!t->held && !t->parked)
			continue;
		if (ptrace(PTRACE_DETACH, t->tid, 0,
			   (long)(t->held_listen ? 0 : t->held_sig)) < 0 &&
		    errno != ESRCH)
			ret = error("cannot detach from thread %d: %s",
				    (int)t->tid, strerror(errno));
	}
	tasks_delete_all(S);
	S->proc = S->first;
	S->hold = 0;
	S->detached = 1;
	wake_tid = 0;
	return ret;
}

struct session *die_session;

/* die() (out of memory) while tracing: leave the target as it was. */
void detach_on_die(void)
{
	struct session *S = die_session;

	if (S && !S->detached && S->ntasks && S->first && S->first->bps.pid)
		detach_target(S, 0);
}
