/*
 * tracer.c - the session (tracer_run): outputs opened, the target launched
 * or attached to, the main loop (waiting, reports and detaches asked for
 * by signals), the final report and ptleak's exit status.
 *
 * One process is traced (the target); its threads are tasks.  Forked
 * children are not followed: they get their breakpoints removed and are
 * detached before they run.  vfork children share the target's memory, so
 * they stay traced until they exec or exit: their breakpoint hits are
 * stepped over but not recorded.
 *
 * Per allocation the budget is two stops (entry, return through the
 * trampoline) and one for free; see docs/design.md.  The other files of
 * the session are listed in session.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output/events_log.h"
#include "breakpoints/fdprobe.h"
#include "target/guard.h"
#include "output/outfile.h"
#include "session/proctree.h"
#include "recorder/recorder.h"
#include "session.h"
#include "tables/stacks.h"
#include "analysis/suppress.h"
#include "session/tracer.h"
#include "target/procstat.h"
#include "base/util.h"


/*
 * Open -o FILE now (or, named after a pid yet unknown, check it), and make
 * sure the JSON report can be created where it goes, so that an unwritable
 * output fails before the target runs.
 */
static int open_outputs(struct session *S)
{
	char *name;
	int ret;

	S->text = stderr;
	outfile_set_pid(S->o->pid);
	if (S->o->suppressions) {
		S->supp = supp_load_all(S->o->suppressions);
		if (!S->supp)
			return -1;
	}
	if (S->o->json && outfile_check(S->o->json))
		return -1;
	if (S->o->folded && outfile_check(S->o->folded))
		return -1;
	if (sampler_open(S))
		return -1;
	if (S->o->events) {
		/* named after a program not launched yet: opened at its start */
		if (!(name = outfile_expand(S->o->events, S->o->pid)))
			return -1;
		if (outfile_has_pid(S->o->events) && !S->o->pid)
			ret = outfile_check_name(name);
		else
			ret = (S->evlog = evlog_open(name)) ? 0 : -1;
		free(name);
		if (ret)
			return -1;
	}
	if (S->o->html && outfile_check(S->o->html))
		return -1;
	if ((S->o->xml && outfile_check(S->o->xml_file)) ||
	    (S->o->pprof && outfile_check(S->o->pprof)))
		return -1;
	if (!S->o->output)
		return 0;
	if (outfile_has_pid(S->o->output) && !S->o->pid)
		return outfile_check(S->o->output);	/* opened at launch */
	/* %q{VAR} expanded; %p checked as the pid of -p or 0 */
	if (!(name = outfile_expand(S->o->output, S->o->pid)))
		return -1;
	ret = outfile_check_name(name);
	if (!ret && !strstr(S->o->output, "%p")) {
		S->text = fopen(name, "we");	/* not the target's */
		if (!S->text) {
			S->text = stderr;
			ret = error("cannot write %s: %s", name, strerror(errno));
		}
	}
	/* else opened once the pid is known (proc_outputs) */
	free(name);
	return ret;
}

static void session_free(struct session *S)
{
	unsigned i;

	tasks_delete_all(S);
	while (S->procs)
		proc_free(S, S->procs);
	proctree_free(S->tree);
	sampler_free(S);
	evlog_close(S->evlog);
	for (i = 0; S->cmdline && S->cmdline[i]; i++)
		free(S->cmdline[i]);
	free(S->cmdline);
	if (S->text && S->text != stderr)
		fclose(S->text);
	supp_free(S->supp);
	free(S);
}

/* Launch or attach; the target's threads run when this returns 0. */
static int start(struct session *S)
{
	const struct options *o = S->o;
	struct proc *P = proc_new(S, o->pid);
	struct task *t;
	int status;
	pid_t pid;

	S->proc = S->first = P;
	if (o->follow_forks)
		S->tree = proctree_new();
	if (o->pid) {
		S->attached = 1;
		P->pid = o->pid;
		if (attach_check(o->pid))
			return -1;
		S->cmdline = procstat_cmdline(o->pid);
		P->argv = S->cmdline;
		if (proc_outputs(S, P, 0))
			return -1;
		report_vg_banner(S, P);
		if (S->tree)
			P->row = proctree_add(S->tree, P->pid, 0, P->argv);
		/* before the "attached" line: a SIGUSR1 may follow it at once */
		sigself_catch(S);
		S->start_ns = now_ns();
		if (attach_target(S)) {
			if (S->ntasks)
				detach_target(S, 0);
			return -1;
		}
		events_release_all(S);
		sigself_duration(S);
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
	outfile_set_pid(pid);
	if (S->tree)
		P->row = proctree_add(S->tree, P->pid, 0, P->argv);
	if (proc_outputs(S, P, 0)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, __WALL);
		return -1;
	}
	report_vg_banner(S, P);	/* before the program's own output */
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
	sigself_duration(S);
	tasks_resume_tid(pid, tasks_take_held_sig(S));
	return 0;
}

/* A launched program let go untraced (S->untraceable): its exit status
 * is still ptleak's, as if it had been traced. */
static void wait_untraced(struct session *S)
{
	pid_t w;

	do
		w = waitpid(S->first->pid, &S->status, 0);
	while (w < 0 && errno == EINTR && !detach_requested);
	if (w < 0)
		return;
	S->detached = 0;
	S->first->reported = 1;
}

/* Live reports of every process not reported yet (REASON signal), or of
 * those held at an execve (REASON exec), every thread held meanwhile. */
static void reports_live(struct session *S, enum report_reason reason)
{
	uint64_t t0;
	struct proc *P;

	snap_finish(S, 0, 1);	/* the last one's first */
	census_attach_steps(S, 1, 1);
	t0 = now_ns();
	if (!events_stop_all(S)) {
		for (P = S->procs; P; P = P->next)
			snap_reap(S, P, 0);	/* a census's snapshot */
		if (reason == REPORT_SIGNAL) {
			snap_reports(S, reason, t0);
		} else for (P = S->procs; P; P = P->next) {
			if ((reason == REPORT_EXEC && !P->exec_due) ||
			    P->reported || P->done)
				continue;
			S->proc = P;
			report_make_live(S, reason);
			if (reason == REPORT_EXEC)
				P->exec_reported = 1;
		}
	}
	for (P = S->procs; P; P = P->next)
		P->exec_due = 0;
	S->exec_due = 0;
	events_release_all(S);
	snap_released(S);
}

/* A thread the signal handlers may interrupt to end the wait: one of a
 * live process (the first one may be gone before its children). */
static pid_t wake_thread(struct session *S)
{
	struct proc *P;

	if (!S->first->done)
		return S->first->mem_pid;
	for (P = S->procs; P; P = P->next)
		if (!P->done && P->nalive)
			return P->mem_pid;
	return 0;
}

/* --engine=recorder could not have the recorder in a process (said
 * why): it ends (launched), or ptleak lets go of every one (-p).  1 when
 * ptleak detached. */
static int recorder_fatal(struct session *S)
{
	struct proc *P;

	for (P = S->procs; P; P = P->next) {
		if (!P->rec_fatal)
			continue;
		S->report_failed = 1;
		P->reported = 1;
		if (S->attached) {
			detach_target(S, 0);
			return 1;
		}
		P->rec_fatal = 0;
		kill(P->pid, SIGKILL);
	}
	return 0;
}

int tracer_run(const struct options *o)
{
	struct session *S = xcalloc(1, sizeof(*S));
	struct proc *P;
	int ret;

	S->o = o;
	S->ev = &dispatch_ops;
	if (open_outputs(S)) {
		session_free(S);
		return -1;
	}
	debug_init();
	debug_time("tracing starts");
	signal(SIGPIPE, SIG_IGN);
	die_session = S;
	die_hook = detach_on_die;
	if (start(S)) {
		die_hook = NULL;
		session_free(S);
		return -1;
	}
	P = S->first;
	sampler_start(S);
	if (S->o->events && !S->evlog) {
		char *name = outfile_expand(S->o->events, P->pid);

		if (!name || !(S->evlog = evlog_open(name)))
			warning("no events written");
		free(name);
	}
	if (S->evlog)
		evlog_attach(S->evlog, P->heap, P->stacks, S->start_ns);

	/*
	 * After the target, its children still traced (a fork child not yet
	 * released, a vfork child before its exec, with -f every child) are
	 * seen through: ptleak's exit would kill them (PTRACE_O_EXITKILL).
	 */
	while (!S->done || S->ntasks) {
		if (detach_requested || S->untraceable) {
			detach_target(S, !S->untraceable);
			break;
		}
		if (S->rep_exited)
			snap_finish(S, 0, 1);
		census_attach_steps(S, 0, 1);
		/* one report child at a time: a request waits for it */
		if (report_requested && !snap_busy(S)) {
			report_requested = 0;
			reports_live(S, REPORT_SIGNAL);
		}
		if (S->exec_due)
			reports_live(S, REPORT_EXEC);
		/* a signal from now on interrupts a thread to end the wait */
		wake_tid = wake_thread(S);
		if (detach_requested || (report_requested && !snap_busy(S)) ||
		    S->rep_exited) {
			wake_tid = 0;
			continue;
		}
		if (recorder_fatal(S))
			break;
		ret = events_wait_one(S);
		wake_tid = 0;
		if (ret)
			break;
	}
	snap_finish(S, 1, 0);
	census_attach_steps(S, 1, 0);
	die_hook = NULL;
	debug_time("the event loop ends");

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
			S->proc = P;
			report_make(S, REPORT_EXIT, P->mem_pid, NULL, 0, 0);
		}
		if (WIFSIGNALED(S->status))
			ret = 128 + WTERMSIG(S->status);
		else
			ret = WEXITSTATUS(S->status);
	}
	if (S->tree) {
		if (!S->detached)
			proctree_exit(S->tree, P->row, S->status);
		report_tree(S, P);
	}
	procs_count_all(S);
	/* valgrind's text: the first process's verdict, as valgrind's status
	 * is its own (a child's errors change the child's status); a stack
	 * growing past --errors-for-growth counts in both */
	if (o->error_exitcode &&
	    (S->growing_total ||
	     (o->text == TEXT_VALGRIND ? S->first_lost || S->first_untracked :
	      S->lost_total || S->fds_total || S->untracked_any)))
		ret = o->error_exitcode;
	if (S->report_failed)
		ret = -1;
	session_free(S);
	debug_time("session freed");
	if (debug_stats) {
		struct rusage ru;

		if (!getrusage(RUSAGE_SELF, &ru))
			fprintf(stderr, "ptleak-debug: ptleak's peak RSS: %ld KiB, "
				"CPU %.3f s user %.3f s system, %ld page faults\n", ru.ru_maxrss,
				ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
				ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
				ru.ru_minflt);
		/* the largest of its children: report children (snapshot.c)
		 * share its tables' pages, the guardian is small */
		if (!getrusage(RUSAGE_CHILDREN, &ru))
			fprintf(stderr, "ptleak-debug: its children's peak RSS: %ld KiB, "
				"CPU %.4f s user %.4f s system, %ld page faults\n", ru.ru_maxrss,
				ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
				ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
				ru.ru_minflt);
	}
	return ret;
}
