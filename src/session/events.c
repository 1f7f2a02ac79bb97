/*
 * events.c - the wait loop: waitpid, each stop or death collected handed
 * to the session's event_ops (S->ev: the stop dispatcher, dispatch.c,
 * which knows the handlers; this file knows none of them); stopping
 * every thread and holding them, and choosing a held thread to run a
 * system call for ptleak.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "base/debug.h"
#include "target/seccomp.h"
#include "session.h"
#include "base/util.h"

static void handle(struct session *S, pid_t tid, int status)
{
	if (debug_stops)
		fprintf(stderr, "ptleak-debug: wait %d status %#x\n", (int)tid, status);
	if (WIFSTOPPED(status))
		S->ev->stop(S, tid, status);
	else if (WIFEXITED(status) || WIFSIGNALED(status))
		S->ev->gone(S, tid, status);
}

/* Wait for one stop or death and handle it.  0, or -1 when there is
 * nothing left to wait for (or waitpid failed: message). */
int events_wait_one(struct session *S)
{
	int status;
	pid_t tid;

	while (waitq_empty()) {
		/* stops already waiting come before another drain: a drain
		 * that lasts longer than the timer's period (a consumer slower
		 * than the program's threads) would otherwise be followed by
		 * the next at once, and no stop would ever be handled */
		while (!waitq_full() &&
		       (tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
			waitq_push(tid, status);
		if (!waitq_empty())
			break;
		S->ev->waiting(1);
		tid = S->ev->due() ? (errno = EINTR, -1) :
		      waitpid(-1, &status, __WALL);
		S->ev->waiting(0);
		if (tid >= 0) {
			waitq_push(tid, status);
			while (!waitq_full() &&
			       (tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
				waitq_push(tid, status);
			break;
		}
		if (errno == EINTR) {
			/* a timer: its work done; the recorder's drain is
			 * for the caller's loop to see (it may be what it
			 * waits for) */
			if (S->ev->tick(S))
				return 0;
			continue;
		}
		if (errno == ECHILD)
			return -1;
		return error("waitpid: %s", strerror(errno));
	}
	waitq_pop(&tid, &status);
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

	if (waitq_take(tid, &status)) {
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

/*
 * After events_release_all resumed the threads holding a stop signal:
 * the events until one of them reports the group-stop it starts (or
 * 50 ms pass: a handler for SIGTSTP, a SIGCONT or SIGKILL first).
 */
static void wait_gstop(struct session *S, unsigned g0)
{
	uint64_t end = now_ns() + 50000000ull;
	int status;
	pid_t tid;

	while (S->gstops == g0 && now_ns() < end) {
		if (waitq_empty()) {
			tid = waitpid(-1, &status, WNOHANG | __WALL);
			if (tid > 0)
				waitq_push(tid, status);
			else if (tid < 0 && errno != EINTR)
				return;
			else
				usleep(100);
			continue;
		}
		waitq_pop(&tid, &status);
		handle(S, tid, status);
	}
}

/*
 * Let every held task go on as it would have.  A stop signal a thread
 * holds goes first: the others wait for the group-stop it starts (they
 * join it at once), else they would run the program until that thread
 * is scheduled, where untraced every thread stops within microseconds.
 */
void events_release_all(struct session *S)
{
	unsigned i, n = 0, g0 = S->gstops;
	struct task *t;

	S->hold = 0;
	for_each_task(S, i, t) {
		if (!t->held || t->held_listen || !stop_signal(t->held_sig))
			continue;
		t->held = 0;
		task_resume(S, t, t->held_sig);
		n++;
	}
	if (n)
		wait_gstop(S, g0);
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

/* Has thread TID a SIGTRAP pending (/proc/TID/status SigPnd)? */
int sigtrap_pending(pid_t tid)
{
	unsigned long long mask;

	return !proc_status_field(tid, "SigPnd:", 16, &mask) &&
	       ((mask >> (SIGTRAP - 1)) & 1);
}

/* A held thread that can run a system call for ptleak, or NULL.  A
 * thread in a group-stop only if LISTENING_OK: it leaves the group-stop
 * (which a detach makes it enter again). */
static struct task *injectable(struct session *S, int listening_ok)
{
	unsigned i;
	struct task *t;

	/* not a vfork parent: resumed for the injection's step, it would
	 * wait in the kernel for its child (never held, maybe stopped);
	 * not one with a SIGTRAP pending (an int3 it executed as it was
	 * interrupted: the step would take that trap for its own, and the
	 * breakpoint's hit would be lost, the thread sent on from the
	 * middle of the displaced instruction or the trampoline) */
	for_each_proc_task(S, i, t)
		if (t->role == ROLE_THREAD && t->held && !t->held_sig &&
		    (listening_ok || !t->held_listen) && !t->exiting &&
		    !t->vfork_child && !sigtrap_pending(t->tid))
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
			    !t->held_listen && !t->exiting && !t->vfork_child)
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
		w = waitq_take(c->tid, &status) ? c->tid :
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
				      stop_signal(WSTOPSIG(status)) ?
				      WSTOPSIG(status) : 0;
		return 0;
	}
}
