/*
 * procs.c - the traced processes: one struct proc each (its tables,
 * breakpoints, recorder, report files), the session's list of them.
 * Without -f there is one; with -f every child gets its own at its fork
 * (or, a vfork child, at its exec), and is forgotten once it is gone and
 * reported, its row in the tree summary (proctree.h) kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "breakpoints/fdprobe.h"
#include "target/guard.h"
#include "output/outfile.h"
#include "session/proctree.h"
#include "recorder/recorder.h"
#include "analysis/census.h"
#include "session.h"
#include "tables/stacks.h"
#include "base/util.h"

struct proc *proc_new(struct session *S, pid_t pid)
{
	struct proc *P = xcalloc(1, sizeof(*P));

	P->pid = P->mem_pid = pid;
	P->heap = heap_new();
	P->stacks = stacks_new();
	P->no_heap = S->o->fd_only;
	if (!S->o->heap_only)
		P->fdp = fdprobe_new();
	P->bps.memfd = -1;
	P->row = -1;
	P->text = S->text;
	P->next = S->procs;
	S->procs = P;
	S->nprocs++;
	return P;
}

int proc_outputs(struct session *S, struct proc *P, int child)
{
	const struct options *o = S->o;
	char *name;

	if (o->json) {
		free(P->json);
		P->json = outfile_pid_name(o->json, P->pid, child);
	}
	if (!o->output || (!child && !strstr(o->output, "%p")))
		return 0;	/* stderr, or the first one's -o, opened already */
	if (o->text == TEXT_VALGRIND && !strstr(o->output, "%p"))
		return 0;	/* valgrind's children write to its log */
	name = outfile_pid_name(o->output, P->pid, child);
	P->text = fopen(name, "we");	/* not the target's */
	if (!P->text) {
		P->text = S->text;
		error("cannot write %s: %s: the report of process %d goes to %s",
		      name, strerror(errno), (int)P->pid,
		      S->text == stderr ? "stderr" : o->output);
		free(name);
		return -1;
	}
	if (!child)
		S->text = P->text;
	free(name);
	return 0;
}

void proc_set_argv(struct session *S, struct proc *P, char **argv)
{
	size_t i;

	for (i = 0; P->own_argv && P->own_argv[i]; i++)
		free(P->own_argv[i]);
	free(P->own_argv);
	P->own_argv = argv;
	if (argv)
		P->argv = argv;
	if (S->tree)
		proctree_argv(S->tree, P->row, P->argv);
}

/* Its leaks, for the tree and --error-exitcode. */
static void count_leaks(struct session *S, struct proc *P)
{
	S->lost_total += P->lost_bytes + P->exec_lost_bytes;
	S->fds_total += P->leaked_fds + P->exec_leaked_fds;
	S->growing_total += P->growing + P->exec_growing;
	S->untracked_any |= P->untracked;
}

void proc_free(struct session *S, struct proc *P)
{
	struct proc **pp;
	size_t i;

	count_leaks(S, P);
	for (pp = &S->procs; *pp; pp = &(*pp)->next)
		if (*pp == P) {
			*pp = P->next;
			break;
		}
	S->nprocs--;
	if (S->proc == P)
		S->proc = S->first;
	guard_stop(P->bps.guard);	/* the process is gone or let go */
	P->bps.guard = NULL;
	if (P->bps.pid)
		bpset_release(&P->bps);
	unwinder_delete(P->unw);
	stacks_delete(P->stacks);
	heap_delete(P->heap);
	if (P->census)
		census_release(P->census);
	free(P->census);
	rec_delete(P->rec);
	fdprobe_delete(P->fdp);
	free(P->dead);
	free(P->snap_shared);
	unloaded_free(&P->unloaded);
	for (i = 0; P->own_argv && P->own_argv[i]; i++)
		free(P->own_argv[i]);
	free(P->own_argv);
	if (P->text && P->text != S->text && P->text != stderr)
		fclose(P->text);
	free(P->json);
	free(P);
}

/* A child process (not the first) is gone with wait STATUS: reported
 * if its exit event never came, then forgotten. */
void proc_gone(struct session *S, struct proc *P, int status)
{
	unsigned i;
	struct task *t;

	if (!P->reported) {
		P->exit_known = 1;
		if (WIFSIGNALED(status))
			P->exit_signal = WTERMSIG(status);
		else
			P->exit_code = WEXITSTATUS(status);
		P->reported = 1;
		S->proc = P;
		snap_finish(S, 1, 0);
		census_attach_step(S, P, 1, 0);
		report_make(S, REPORT_EXIT, P->mem_pid, NULL, 0, 0);
	}
	if (S->tree)
		proctree_exit(S->tree, P->row, status);
	/* a vfork child of its (the parent killed while it waited): the
	 * memory is the child's alone now, its breakpoints go; it runs as
	 * if untraced until its exec lets it go */
	for_each_task(S, i, t)
		if (t->proc == P && t->role == ROLE_VFORK_CHILD) {
			bpset_unplant_all(&P->bps, t->tid);
			t->proc = NULL;
			t->role = ROLE_FORK_CHILD;
		}
	proc_free(S, P);
}

void proc_drop(struct session *S, struct proc *P)
{
	if (S->tree)
		proctree_exit(S->tree, P->row, -1);
	proc_free(S, P);
}

/* Every process's leaks, the first one's included: --error-exitcode. */
void procs_count_all(struct session *S)
{
	struct proc *P;

	for (P = S->procs; P; P = P->next)
		count_leaks(S, P);
}
