/*
 * lifetime.c - where an event changes the task table: a thread, fork or
 * vfork child is created (its role told), starts, or exits (the report at
 * the process's end, a dead thread's stack kept for the scan); a fork child
 * is given back its return addresses and let go.
 */
#include <errno.h>
#include <linux/kcmp.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch.h"
#include "memio.h"
#include "recorder.h"
#include "session.h"
#include "util.h"

/* The thread memory and /proc/PID/maps are read through is exiting:
 * read through another live thread from now on. */
static void move_mem_pid(struct session *S, struct task *self)
{
	struct proc *P = &S->proc;
	unsigned i;
	struct task *t;

	for_each_task(S, i, t) {
		if (t == self || t->role != ROLE_THREAD || t->exiting)
			continue;
		P->mem_pid = t->tid;
		unwinder_set_pid(P->unw, t->tid);
		return;
	}
}

void lifetime_exit(struct session *S, struct task *t)
{
	struct proc *P = &S->proc;
	unsigned long msg = 0;

	if (t->role != ROLE_THREAD || t->exiting)
		return;
	t->exiting = 1;
	P->nalive--;
	/* what it and the others recorded so far is older than its death
	 * (dead stacks are roots for older blocks only) */
	recs_drain(S);
	recs_thread_exit(S, t->tid);
	sampler_thread_exit(S, t->tid);
	if (P->reported)
		return;
	if (t->tid == P->mem_pid && P->nalive)
		move_mem_pid(S, t);
	/*
	 * The process ends with this thread if it is the last one, if it dies
	 * of a signal (fatal signals kill every thread), or if it is in
	 * exit_group: the threads that call kills then may never stop at
	 * PTRACE_EVENT_EXIT (they do not on Linux 6.x), so this stop, with
	 * the memory intact, is the one to report at.
	 */
	ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg);
	if (P->nalive && !(msg & 0x7f)) {
		struct arch_regs r;

		if (arch_get_regs(t->tid, &r))
			return;
		if (arch_syscall_nr(&r) != SYS_exit_group) {
			/* this thread alone: its stack is dead from now on
			 * (the leader's too: it is never reused) */
			if (t->first_sp || t->tid == P->pid) {
				grow_array((void **)&P->dead, &P->adead, P->ndead + 1,
					   sizeof(*P->dead));
				P->dead[P->ndead].first_sp = t->first_sp;
				P->dead[P->ndead].exit_sp = arch_sp(&r);
				/* records reserved before now are older
				 * (their time is at most the checkpoint's) */
				P->dead[P->ndead].exit_ns = P->rec ?
					rec_checkpoint(P->rec) + 1 : now_ns();
				P->ndead++;
			}
			return;
		}
	}
	P->exit_known = 1;
	if (msg & 0x7f)
		P->exit_signal = (int)(msg & 0x7f);
	else
		P->exit_code = (int)((msg >> 8) & 0xff);
	P->reported = 1;
	report_make_exit(S, t);
}

/* A forked child: its own copy of the breakpoints and of its creator's
 * hijacked return addresses go, then it runs untraced. */
static void release_fork_child(struct session *S, struct task *c)
{
	struct proc *P = &S->proc;
	size_t i;

	bpset_unplant_all(&P->bps, c->tid);
	recs_fork_child(S, c->tid);
	/* the creator's calls in progress at the fork, still hijacked in the
	 * child's copy of the stack */
	for (i = 0; i < c->ninherit; i++) {
		uint64_t v;

		if (mem_read_all(c->tid, c->inherit[i].slot, &v, sizeof(v)) ||
		    v != P->bps.trampoline)
			continue;
		if (mem_write(c->tid, c->inherit[i].slot, &c->inherit[i].real,
			      sizeof(c->inherit[i].real)))
			warning("cannot restore a return address in child %d",
				(int)c->tid);
	}
	if (ptrace(PTRACE_DETACH, c->tid, 0, 0) < 0 && errno != ESRCH)
		warning("cannot detach child %d: %s", (int)c->tid, strerror(errno));
	task_delete(S, c);
}

/* Let a task go on from its first stop: a group-stop stays one, and a
 * thread's counts for the whole program's group-stop (a thread created
 * as the program stopped may be the last one to stop). */
static void start_resume(struct session *S, struct task *t)
{
	if (!t->first_group_stop) {
		task_resume(S, t, 0);
		return;
	}
	task_listen(S, t);
	if (t->role == ROLE_THREAD) {
		t->group_stopped = 1;
		events_group_stopped(S, t->first_group_stop);
	}
}

/* The first stop of a task whose role is known. */
void lifetime_start(struct session *S, struct task *t)
{
	t->started = 1;
	t->parked = 0;
	switch (t->role) {
	case ROLE_THREAD: {
		struct proc *P = &S->proc;
		struct arch_regs r;
		size_t i;

		/* a new thread on a cached stack: that stack is live again */
		if (!t->attached && !arch_get_regs(t->tid, &r)) {
			recs_thread_start(S, t->tid, &r);
			t->first_sp = arch_sp(&r);
			for (i = 0; i < P->ndead; i++) {
				if (P->dead[i].first_sp == t->first_sp)
					P->dead[i--] = P->dead[--P->ndead];
			}
		}
		start_resume(S, t);
		break;
	}
	case ROLE_FORK_CHILD:
		release_fork_child(S, t);
		break;
	case ROLE_VFORK_CHILD:
		start_resume(S, t);
		break;
	case ROLE_UNKNOWN:
		t->parked = 1;
		break;
	}
}

void lifetime_new_task(struct session *S, struct task *t, int event)
{
	struct proc *P = &S->proc;
	unsigned long msg = 0;
	enum role role;
	struct task *c;
	pid_t tid;

	if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) < 0)
		return;
	tid = (pid_t)msg;
	/*
	 * What the event says is not enough: clone(CLONE_VM | SIGCHLD) is
	 * reported as a fork and vfork() without CLONE_VM is possible.  A
	 * thread is in the target's thread group; any other child shares its
	 * memory or has a copy, which kcmp tells.
	 */
	if (event == PTRACE_EVENT_CLONE && t->role == ROLE_THREAD &&
	    tasks_status_field(tid, "Tgid:") == P->pid) {
		role = ROLE_THREAD;
	} else {
		long same = syscall(SYS_kcmp, P->mem_pid, tid, KCMP_VM, 0, 0);

		if (same < 0)
			same = event == PTRACE_EVENT_VFORK ? 0 : 1;
		role = same == 0 ? ROLE_VFORK_CHILD : ROLE_FORK_CHILD;
	}

	c = task_find(S, tid);
	if (!c)
		c = task_new(S, tid, role);
	c->role = role;
	if (role == ROLE_FORK_CHILD && t->npend) {
		size_t i;

		c->inherit = xcalloc(t->npend, sizeof(*c->inherit));
		for (i = 0; i < t->npend; i++) {
			c->inherit[i].slot = t->pend[i].slot;
			c->inherit[i].real = t->pend[i].real;
		}
		c->ninherit = t->npend;
	}
	if (c->role == ROLE_THREAD)
		P->nalive++;
	if (c->role == ROLE_VFORK_CHILD && event == PTRACE_EVENT_VFORK) {
		t->vfork_child = c->tid;
		c->vfork_parent = t->tid;
	}
	if (c->parked)
		lifetime_start(S, c);
}
