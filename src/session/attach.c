/*
 * attach.c - -p PID: whether the process can be traced (one message
 * saying why not), seizing every thread, and the image set up with all of
 * them stopped; its command line from /proc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "analysis/census.h"
#include "breakpoints/fdprobe.h"
#include "target/guard.h"
#include "target/procstat.h"
#include "session.h"
#include "base/util.h"

/* The threads of PID in /proc, into *TIDS (the caller frees); -1 if the
 * process is gone. */
static int list_threads(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	struct dirent *d;
	size_t alloc = 0;
	DIR *dir;

	*tids = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		grow_array((void **)tids, &alloc, *n + 1, sizeof(**tids));
		(*tids)[(*n)++] = (pid_t)atoi(d->d_name);
	}
	closedir(dir);
	return 0;
}

/* Why seizing PID failed with errno E: one message, -1. */
static int seize_error(pid_t pid, int e)
{
	char comm[64];
	int tracer = launch_tracer_of(pid, comm, sizeof(comm));

	if (tracer > 0)
		return error("cannot attach to process %d: it is already traced by "
			     "process %d (%s); a process has one tracer at a time",
			     (int)pid, tracer, comm);
	if (e == EPERM)
		return error("cannot attach to process %d: ptrace: %s (check "
			     "kernel.yama.ptrace_scope, the process's owner, or give "
			     "ptleak CAP_SYS_PTRACE)", (int)pid, strerror(e));
	if (e == ESRCH)
		return error("cannot attach to process %d: no such process", (int)pid);
	return error("cannot attach to process %d: ptrace: %s", (int)pid,
		     strerror(e));
}

/* Why PID cannot be traced, before trying: one message, -1. */
int attach_check(pid_t pid)
{
	int tgid;
	pid_t *tids;
	size_t n, i, live = 0;

	tgid = tasks_status_field(pid, "Tgid:");
	if (tgid < 0)
		return error("cannot attach to process %d: no such process", (int)pid);
	if (tgid != pid)
		return error("cannot attach to %d: it is a thread of process %d "
			     "(use -p %d)", (int)pid, tgid, tgid);
	if (pid == getpid())
		return error("cannot attach to process %d: it is ptleak itself",
			     (int)pid);
	if (tasks_status_field(pid, "TracerPid:") > 0)
		return seize_error(pid, EPERM);	/* says by whom */
	if (list_threads(pid, &tids, &n))
		return error("cannot attach to process %d: no such process", (int)pid);
	for (i = 0; i < n; i++)
		live += procstat_state(pid, tids[i]) != 'Z' &&
			procstat_state(pid, tids[i]) != 'X';
	free(tids);
	if (!live)
		return error("cannot attach to process %d: it is a zombie (it has "
			     "exited; its parent has not reaped it yet)", (int)pid);
	return 0;
}

/*
 * Seize every thread of the target and stop them: /proc/PID/task is
 * read again until a pass finds no new thread (threads created by
 * seized threads are attached by the kernel and reported as clones).
 * Zombie threads (a leader that called pthread_exit) are left alone.
 */
static int seize_all(struct session *S)
{
	struct proc *P = S->proc;
	int changed = 1, pass;

	for (pass = 0; changed && pass < 1000; pass++) {
		pid_t *tids;
		size_t n, i;

		changed = 0;
		if (list_threads(P->pid, &tids, &n))
			return error("cannot attach to process %d: it is gone",
				     (int)P->pid);
		for (i = 0; i < n; i++) {
			char st;
			struct task *t;

			if (task_find(S, tids[i]))
				continue;
			st = procstat_state(P->pid, tids[i]);
			if (!st || st == 'Z' || st == 'X')
				continue;
			if (ptrace(PTRACE_SEIZE, tids[i], 0,
				   (long)(TRACE_OPTIONS & ~PTRACE_O_EXITKILL)) < 0) {
				int e = errno;

				if (e == ESRCH)
					continue;	/* exited meanwhile */
				/*
				 * Once one thread is seized the permission is
				 * there: EPERM then means the kernel attached
				 * this one (created by a seized thread; its
				 * first stop is to come) or it is exiting.
				 */
				if (e == EPERM && S->ntasks)
					continue;
				free(tids);
				return seize_error(P->pid, e);
			}
			if (ptrace(PTRACE_INTERRUPT, tids[i], 0, 0) < 0 &&
			    errno != ESRCH)
				warning("cannot stop thread %d: %s", (int)tids[i],
					strerror(errno));
			t = task_new(S, tids[i], ROLE_THREAD);
			t->attached = 1;
			P->nalive++;
			changed = 1;
		}
		free(tids);
	}
	if (!S->ntasks)
		return error("cannot attach to process %d: it has no live thread",
			     (int)P->pid);
	return 0;
}

/*
 * -p PID: seize every thread, and with all of them stopped map the
 * scratch page, catch the rendezvous and bind the allocator in the
 * objects loaded already; then let them go.
 */
int attach_target(struct session *S)
{
	struct proc *P = S->proc;
	struct task *t, *inj;
	char why[256];
	unsigned i;

	S->hold = 1;
	if (seize_all(S) || events_wait_all_stopped(S, 1))
		return -1;
	if (S->done || !S->ntasks)
		return error("process %d exited while ptleak attached", (int)P->pid);
	/* memory through a live thread: the leader may be a zombie */
	P->mem_pid = 0;
	for_each_task(S, i, t)
		if (t->role == ROLE_THREAD)
			P->mem_pid = t->tid;
	if (task_find(S, P->pid))
		P->mem_pid = P->pid;
	P->unw = unwinder_new(P->mem_pid);
	if (!P->unw)
		return -1;
	/* the census and the start of recording: one stop, no thread
	 * inside the allocator */
	if (!P->no_heap)
		P->census = xcalloc(1, sizeof(*P->census));
	if (census_attach_quiesce(S))
		return -1;
	inj = events_injection_thread(S, 0);
	if (!inj)
		return error("cannot attach to process %d: it is stopped (SIGSTOP); "
			     "continue it first (kill -CONT %d)", (int)P->pid,
			     (int)P->pid);
	if (!bpset_scratch_allowed(inj->tid, why, sizeof(why)))
		return error("cannot attach to process %d: %s; start the program "
			     "under ptleak instead (it then maps its page before "
			     "the filter is installed)", (int)P->pid, why);
	if (bpset_init(&P->bps, P->mem_pid))
		return -1;
	P->bps.pid = P->pid;
	/* before any byte is changed: if ptleak dies, they go back */
	P->bps.guard = guard_start(P->pid);
	/* descriptors open now are the program's own business */
	if (P->fdp)
		fdprobe_attach(P->fdp, P->mem_pid);
	if (image_setup(S, inj->tid) || (P->r_debug && image_rendezvous(S, inj->tid))) {
		inj->held_sig = tasks_take_held_sig(S);
		return -1;
	}
	inj->held_sig = tasks_take_held_sig(S);
	census_attach_take(S);
	return 0;
}

