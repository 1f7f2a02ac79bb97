/*
 * tracer.c - the session: launch, event loop, per-thread state, probes.
 *
 * One process is traced (the target); its threads are tasks.  Forked
 * children are not followed: they get their breakpoints removed and are
 * detached before they run.  vfork children share the target's memory, so
 * they stay traced until they exec or exit: their breakpoint hits are
 * stepped over but not recorded.
 *
 * Per allocation the budget is two stops (entry, return through the
 * trampoline) and one for free; see docs/design.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <dirent.h>
#include <elf.h>
#include <unistd.h>

#include "arch.h"
#include "breakpoint.h"
#include "coverage.h"
#include "fdprobe.h"
#include "heap.h"
#include "jobctl.h"
#include "memio.h"
#include "outfile.h"
#include "report.h"
#include "roots.h"
#include "stacks.h"
#include "symbols.h"
#include "tracer.h"
#include "unwind.h"
#include "util.h"
#include "session.h"

/* PTLEAK_DEBUG (session.h) */
int debug_events, debug_stops, debug_stats;
int debug_die_on_report;

/* ---- attach ------------------------------------------------------------ */

/* The state letter of thread TID of PID ('R', 'S', 'T', 'Z', ...), 0 if
 * it is gone. */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[96], buf[512], *p;
	char state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		state = p[2];
	fclose(f);
	return state;
}

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
static int check_attachable(pid_t pid)
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
		live += thread_state(pid, tids[i]) != 'Z' &&
			thread_state(pid, tids[i]) != 'X';
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
	struct proc *P = &S->proc;
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
			st = thread_state(P->pid, tids[i]);
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
static int attach(struct session *S)
{
	struct proc *P = &S->proc;
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
	inj = events_injection_thread(S, 0);
	if (!inj)
		return error("cannot attach to process %d: it is stopped (SIGSTOP); "
			     "continue it first (kill -CONT %d)", (int)P->pid,
			     (int)P->pid);
	if (!bpset_scratch_allowed(inj->tid, why, sizeof(why)))
		return error("cannot attach to process %d: %s; start the program "
			     "under ptleak instead (it then maps its page before "
			     "the filter is installed)", (int)P->pid, why);
	P->unw = unwinder_new(P->mem_pid);
	if (!P->unw || bpset_init(&P->bps, P->mem_pid))
		return -1;
	P->bps.pid = P->pid;
	/* descriptors open now are the program's own business */
	if (P->fdp)
		fdprobe_attach(P->fdp, P->mem_pid);
	if (image_setup(S, inj->tid) || (P->r_debug && image_rendezvous(P, inj->tid))) {
		inj->held_sig = tasks_take_held_sig(S);
		return -1;
	}
	inj->held_sig = tasks_take_held_sig(S);
	return 0;
}

/*
 * Open -o FILE now, and make sure the JSON report can be created where it
 * goes, so that an unwritable output fails before the target runs.
 */
static int open_outputs(struct session *S)
{
	S->text = stderr;
	if (S->o->suppressions) {
		S->supp = supp_load(S->o->suppressions);
		if (!S->supp)
			return -1;
	}
	if (S->o->json && outfile_check(S->o->json))
		return -1;
	if (S->o->output) {
		if (outfile_check_name(S->o->output))
			return -1;
		S->text = fopen(S->o->output, "we");	/* not the target's */
		if (!S->text)
			return error("cannot write %s: %s", S->o->output, strerror(errno));
	}
	return 0;
}

static void session_free(struct session *S)
{
	struct proc *P = &S->proc;
	unsigned i;

	tasks_delete_all(S);
	if (P->bps.pid)
		bpset_release(&P->bps);
	unwinder_delete(P->unw);
	stacks_delete(P->stacks);
	heap_delete(P->heap);
	fdprobe_delete(P->fdp);
	free(P->dead);
	for (i = 0; S->cmdline && S->cmdline[i]; i++)
		free(S->cmdline[i]);
	free(S->cmdline);
	if (S->text && S->text != stderr)
		fclose(S->text);
	supp_free(S->supp);
	free(S);
}

/* /proc/PID/cmdline as a NULL-terminated argv (the caller frees it and
 * its strings), or NULL. */
static char **read_cmdline(pid_t pid)
{
	char path[64], buf[4096];
	size_t n = 0, i, k = 0;
	char **argv;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return NULL;
	buf[len] = '\0';
	for (i = 0; i < (size_t)len; i++)
		n += !buf[i];
	if (buf[len - 1])
		n++;		/* cut short */
	argv = xcalloc(n + 1, sizeof(*argv));
	for (i = 0; i < (size_t)len && k < n; i += strlen(buf + i) + 1)
		argv[k++] = xstrdup(buf + i);
	return argv;
}

/* Launch or attach; the target's threads run when this returns 0. */
static int start(struct session *S)
{
	const struct options *o = S->o;
	struct proc *P = &S->proc;
	struct task *t;
	int status;
	pid_t pid;

	P->heap = heap_new();
	P->no_heap = o->fd_only;
	if (!o->heap_only)
		P->fdp = fdprobe_new();
	P->stacks = stacks_new();
	if (o->pid) {
		S->attached = 1;
		P->pid = o->pid;
		if (check_attachable(o->pid))
			return -1;
		S->cmdline = read_cmdline(o->pid);
		P->argv = S->cmdline;
		/* before the "attached" line: a SIGUSR1 may follow it at once */
		sigself_catch(S);
		S->start_ns = now_ns();
		if (attach(S)) {
			if (S->ntasks)
				detach_target(S, 0);
			return -1;
		}
		events_release_all(S);
		if (!util_quiet)
			fprintf(stderr, "ptleak: attached to process %d (%u thread%s)\n",
				(int)P->pid, S->ntasks, S->ntasks == 1 ? "" : "s");
		return 0;
	}
	pid = launch_program(S);
	if (pid < 0)
		return -1;
	S->start_ns = now_ns();
	P->pid = pid;
	P->mem_pid = pid;
	P->argv = o->argv;
	P->unw = unwinder_new(pid);
	t = task_new(S, pid, ROLE_THREAD);
	t->started = 1;
	P->nalive = 1;
	if (!P->unw || bpset_init(&P->bps, pid) || image_exec(S, t)) {
		if (S->untraceable) {
			/* said why: it runs untraced, ptleak waits for it */
			ptrace(PTRACE_DETACH, pid, 0, 0);
			task_delete(S, t);
			S->detached = 1;
			return 0;
		}
		kill(pid, SIGKILL);
		waitpid(pid, &status, __WALL);
		task_delete(S, t);
		return -1;
	}
	sigself_catch(S);
	tasks_resume_tid(pid, tasks_take_held_sig(S));
	return 0;
}

/* A launched program let go untraced (S->untraceable): its exit status
 * is still ptleak's, as if it had been traced. */
static void wait_untraced(struct session *S)
{
	pid_t w;

	do
		w = waitpid(S->proc.pid, &S->status, 0);
	while (w < 0 && errno == EINTR && !detach_requested);
	if (w < 0)
		return;
	S->detached = 0;
	S->proc.reported = 1;
}

int tracer_run(const struct options *o)
{
	struct session *S = xcalloc(1, sizeof(*S));
	struct proc *P = &S->proc;
	int ret;

	S->o = o;
	if (open_outputs(S)) {
		session_free(S);
		return -1;
	}
	debug_events = getenv("PTLEAK_DEBUG") && strstr(getenv("PTLEAK_DEBUG"), "events");
	debug_stops = getenv("PTLEAK_DEBUG") && strstr(getenv("PTLEAK_DEBUG"), "stops");
	debug_stats = getenv("PTLEAK_DEBUG") && strstr(getenv("PTLEAK_DEBUG"), "stats");
	debug_die_on_report = getenv("PTLEAK_DEBUG") &&
			      strstr(getenv("PTLEAK_DEBUG"), "die-on-report");
	signal(SIGPIPE, SIG_IGN);
	die_session = S;
	die_hook = detach_on_die;
	if (start(S)) {
		die_hook = NULL;
		session_free(S);
		return -1;
	}

	/*
	 * After the target, its children still traced (a fork child not yet
	 * released, a vfork child before its exec) are seen through: ptleak's
	 * exit would kill them (PTRACE_O_EXITKILL).
	 */
	while (!S->done || S->ntasks) {
		if (detach_requested || S->untraceable) {
			detach_target(S, !S->untraceable);
			break;
		}
		if (report_requested) {
			report_requested = 0;
			if (!events_stop_all(S) && !P->reported && !S->done)
				report_make_live(S, REPORT_SIGNAL);
			events_release_all(S);
		}
		/* a signal from now on interrupts a thread to end the wait */
		wake_tid = P->mem_pid;
		if (detach_requested || report_requested) {
			wake_tid = 0;
			continue;
		}
		ret = events_wait_one(S);
		wake_tid = 0;
		if (ret)
			break;
	}
	die_hook = NULL;

	if (S->untraceable && !S->attached)
		wait_untraced(S);
	if (S->detached) {
		ret = 0;
	} else {
		if (!P->reported) {
			/* never saw the exit event: report what is known */
			P->exit_known = S->done;
			if (WIFSIGNALED(S->status))
				P->exit_signal = WTERMSIG(S->status);
			else
				P->exit_code = WEXITSTATUS(S->status);
			report_make(S, REPORT_EXIT, P->mem_pid, NULL, 0, 0);
		}
		if (WIFSIGNALED(S->status))
			ret = 128 + WTERMSIG(S->status);
		else
			ret = WEXITSTATUS(S->status);
	}
	if (o->error_exitcode && (S->lost_bytes || S->leaked_fds || S->untracked))
		ret = o->error_exitcode;
	if (S->report_failed)
		ret = -1;
	session_free(S);
	return ret;
}
