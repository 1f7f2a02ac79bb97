/*
 * tasks.c - the task table: one struct task per traced thread (or child
 * not yet let go), found by tid; resuming a task, or holding it stopped while
 * the session holds every thread (events_stop_all).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "session.h"
#include "base/util.h"

static struct task **task_bucket(struct session *S, pid_t tid)
{
	return &S->tasks[(unsigned)tid % ARRAY_SIZE(S->tasks)];
}

struct task *task_find(struct session *S, pid_t tid)
{
	struct task *t;

	for (t = *task_bucket(S, tid); t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

struct task *task_new(struct session *S, pid_t tid, enum role role)
{
	struct task *t = xcalloc(1, sizeof(*t));
	struct task **b = task_bucket(S, tid);

	t->tid = tid;
	t->role = role;
	t->proc = S->proc;
	t->next = *b;
	*b = t;
	S->ntasks++;
	return t;
}

void task_delete(struct session *S, struct task *t)
{
	struct task **p;

	if (t->vfork_parent) {
		struct task *parent = task_find(S, t->vfork_parent);

		if (parent && parent->vfork_child == t->tid)
			parent->vfork_child = 0;
	}

	for (p = task_bucket(S, t->tid); *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			break;
		}
	}
	S->ntasks--;
	waitq_forget(t->tid);
	free(t->inherit);
	free(t->pend);
	free(t);
}

/* Forget every task. */
void tasks_delete_all(struct session *S)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(S->tasks); i++)
		while (S->tasks[i])
			task_delete(S, S->tasks[i]);
}

/* Forget every thread task of KEEP's process (NULL: of S->proc) but
 * KEEP: they are gone. */
void tasks_forget_threads(struct session *S, const struct task *keep)
{
	const struct proc *P = keep ? keep->proc : S->proc;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(S->tasks); i++) {
		struct task *o, *next;

		for (o = S->tasks[i]; o; o = next) {
			next = o->next;
			if (o != keep && o->role == ROLE_THREAD && o->proc == P)
				task_delete(S, o);
		}
	}
}

/* The number after FIELD ("Tgid:", "TracerPid:") in /proc/PID/status,
 * or -1. */
int tasks_status_field(pid_t pid, const char *field)
{
	unsigned long long v;

	return proc_status_field(pid, field, 10, &v) ? -1 : (int)v;
}

void tasks_resume_tid(pid_t tid, int sig)
{
	if (ptrace(PTRACE_CONT, tid, 0, (long)sig) < 0 && errno != ESRCH)
		warning("cannot resume thread %d: %s", (int)tid, strerror(errno));
}

/* A signal a thread got while running an injected system call (0: none),
 * to resume that thread with; taken once. */
int tasks_take_held_sig(struct session *S)
{
	int sig = S->proc->bps.held_sig;

	S->proc->bps.held_sig = 0;
	return sig;
}

/* Let T run on (delivering SIG), or keep it stopped while the session
 * holds its threads. */
void task_resume(struct session *S, struct task *t, int sig)
{
	/* a vfork child is never held: its parent, unstoppable until the
	 * child execs or exits, would keep events_stop_all() waiting */
	if (S->hold && t->role != ROLE_VFORK_CHILD) {
		t->held = 1;
		t->held_sig = sig;
		t->held_listen = 0;
		return;
	}
	if (t->exiting)
		t->dying = 1;
	tasks_resume_tid(t->tid, sig);
}

/* T is in a group-stop: it stays stopped until SIGCONT, yet reports
 * events (PTRACE_LISTEN). */
void task_listen(struct session *S, struct task *t)
{
	if (S->hold && t->role != ROLE_VFORK_CHILD) {
		t->held = 1;
		t->held_sig = 0;
		t->held_listen = 1;
		return;
	}
	if (ptrace(PTRACE_LISTEN, t->tid, 0, 0) < 0 && errno != ESRCH)
		warning("cannot keep thread %d in its group-stop: %s", (int)t->tid,
			strerror(errno));
}
