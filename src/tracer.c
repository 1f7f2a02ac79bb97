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
#include <sys/wait.h>

#include "events_log.h"
#include "fdprobe.h"
#include "guard.h"
#include "outfile.h"
#include "recorder.h"
#include "session.h"
#include "stacks.h"
#include "suppress.h"
#include "tracer.h"
#include "util.h"

/* PTLEAK_DEBUG (session.h) */
int debug_events, debug_stops, debug_stats;
int debug_die_on_report;

/* -o FILE (%p, %q{VAR} expanded: outfile.h) opened: 0, or -1 (message). */
static int open_text(struct session *S)
{
	char *path;

	if (!S->o->output || S->text != stderr)
		return 0;
	path = outfile_expand(S->o->output, S->o->pid ? S->o->pid : S->proc.pid);
	if (!path || outfile_check_name(path)) {
		free(path);
		return -1;
	}
	S->text = fopen(path, "we");	/* not the target's */
	if (!S->text) {
		S->text = stderr;
		error("cannot write %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	free(path);
	return 0;
}

/*
 * Open -o FILE now (or, named after a pid yet unknown, check it), and make
 * sure the JSON report can be created where it goes, so that an unwritable
 * output fails before the target runs.
 */
static int open_outputs(struct session *S)
{
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
	if (S->o->events && !(S->evlog = evlog_open(S->o->events)))
		return -1;
	if (S->o->html && outfile_check(S->o->html))
		return -1;
	if ((S->o->xml && outfile_check(S->o->xml_file)) ||
	    (S->o->pprof && outfile_check(S->o->pprof)))
		return -1;
	if (S->o->output && outfile_has_pid(S->o->output) && !S->o->pid)
		return outfile_check(S->o->output);	/* opened at launch */
	return open_text(S);
}

static void session_free(struct session *S)
{
	struct proc *P = &S->proc;
	unsigned i;

	tasks_delete_all(S);
	guard_stop(P->bps.guard);	/* the target is gone or let go */
	P->bps.guard = NULL;
	if (P->bps.pid)
		bpset_release(&P->bps);
	unwinder_delete(P->unw);
	stacks_delete(P->stacks);
	heap_delete(P->heap);
	rec_delete(P->rec);
	fdprobe_delete(P->fdp);
	sampler_free(S);
	evlog_close(S->evlog);
	free(P->dead);
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
		if (attach_check(o->pid))
			return -1;
		S->cmdline = attach_read_cmdline(o->pid);
		P->argv = S->cmdline;
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
	if (open_text(S)) {	/* -o named after the pid: it is stopped at exec */
		kill(pid, SIGKILL);
		waitpid(pid, &status, __WALL);
		return -1;
	}
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
	sampler_start(S);
	if (S->evlog)
		evlog_attach(S->evlog, P->heap, P->stacks, S->start_ns);

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
		if (P->rec_fatal) {
			/* --engine=recorder without the recorder: said why */
			S->report_failed = 1;
			P->reported = 1;
			if (S->attached) {
				detach_target(S, 0);
				break;
			}
			P->rec_fatal = 0;
			kill(P->pid, SIGKILL);
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
