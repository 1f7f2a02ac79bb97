/*
 * lifetime.c - where an event changes the task table: a thread, fork or
 * vfork child is created (its role told), starts, or exits (the report at
 * the process's end, a dead thread's stack kept for the scan); a fork child
 * is given back its return addresses and let go, or with -f becomes a
 * traced process of its own; an execve is reported before it happens and
 * an exec starts the image over (a vfork child's, with -f, as a process).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/arch.h"
#include "breakpoints/fdprobe.h"
#include "target/guard.h"
#include "session/jobctl.h"
#include "target/memio.h"
#include "session/proctree.h"
#include "recorder/recorder.h"
#include "session.h"
#include "target/procstat.h"
#include "base/util.h"

/* Is every live thread of the target in a group-stop?  A thread that
 * has passed its exit event but is not reaped yet counts as running:
 * once ptleak stops itself nothing reaps it, and it would stay a zombie
 * for the whole stop (a zombie the kernel reaps at once untraced).  Not
 * the leader: it is reaped only after every other thread. */
static int all_group_stopped(struct session *S)
{
	unsigned i;
	struct task *t;

	for_each_task(S, i, t) {
		if (t->role != ROLE_THREAD || t->proc != S->first || !t->started)
			continue;
		if (t->exiting ? t->tid != S->first->pid : !t->group_stopped)
			return 0;
	}
	return 1;
}

/*
 * The launched program is in a group-stop for SIG (every thread reported
 * it: the kernel tells a parent then): ptleak stops itself with SIG too,
 * so that its parent (a shell) sees the job stop with that signal, as it
 * would without ptleak.  Not when the stop is over already (SIGCONT
 * pending: ptleak was stopped by the same terminal signal and both were
 * continued).
 */
void lifetime_group_stopped(struct session *S, int sig)
{
	if (S->attached || S->first->done)
		return;
	if (!all_group_stopped(S)) {
		S->stop_owed = sig;	/* the last stop or reap tells */
		return;
	}
	S->stop_owed = 0;
	if (!jobctl_cont_pending(S->first->pid))
		jobctl_stop_self(S->first->pid, sig);
}

/* The thread memory and /proc/PID/maps are read through is exiting:
 * read through another live thread from now on. */
static void move_mem_pid(struct session *S, struct task *self)
{
	struct proc *P = S->proc;
	unsigned i;
	struct task *t;

	for_each_proc_task(S, i, t) {
		if (t == self || t->role != ROLE_THREAD || t->exiting)
			continue;
		P->mem_pid = t->tid;
		unwinder_set_pid(P->unw, t->tid);
		rec_set_pid(P->rec, t->tid);
		return;
	}
}

void lifetime_exit(struct session *S, struct task *t)
{
	struct proc *P = S->proc;
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
	/* a live report still being made from a snapshot comes first, and
	 * the census (snapshot.c, census_attach.c) */
	snap_finish(S, 1, 0);
	census_attach_step(S, P, 1, 0);
	report_make_exit(S, t);
}

/* The creator's calls in progress at the fork, still hijacked in child
 * C's copy of the stack: given back their return addresses. */
static void restore_inherited(struct proc *P, struct task *c)
{
	size_t i;

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
}

/* A forked child: its own copy of the breakpoints and of its creator's
 * hijacked return addresses go, then it runs untraced. */
static void release_fork_child(struct session *S, struct task *c)
{
	struct proc *P = S->proc;

	bpset_unplant_all(&P->bps, c->tid);
	recs_fork_child(S, c->tid);
	restore_inherited(P, c);
	if (ptrace(PTRACE_DETACH, c->tid, 0, 0) < 0 && errno != ESRCH)
		warning("cannot detach child %d: %s", (int)c->tid, strerror(errno));
	task_delete(S, c);
}

/* Let a task go on from its first stop: a group-stop stays one, and a
 * thread's counts for the whole program's group-stop (a thread created
 * as the program stopped may be the last one to stop). */
static void start_resume(struct session *S, struct task *t, int sig)
{
	if (!t->first_group_stop) {
		task_resume(S, t, sig);
		return;
	}
	task_listen(S, t);
	if (t->role == ROLE_THREAD && t->proc == S->first) {
		t->group_stopped = 1;
		lifetime_group_stopped(S, t->first_group_stop);
	}
}

/* A thread's first stop: its stack told to the recorder; a new thread
 * on a cached stack makes that stack live again. */
static void thread_start(struct session *S, struct task *t)
{
	struct proc *P = S->proc;
	struct arch_regs r;
	size_t i;

	if (t->attached || arch_get_regs(t->tid, &r))
		return;
	recs_thread_start(S, t->tid, &r);
	t->first_sp = arch_sp(&r);
	for (i = 0; i < P->ndead; i++) {
		if (P->dead[i].first_sp == t->first_sp)
			P->dead[i--] = P->dead[--P->ndead];
	}
}

/* A copy of ARGV (the parent's may go before the child). */
static char **argv_dup(char *const *argv)
{
	size_t n = 0, i;
	char **v;

	while (argv && argv[n])
		n++;
	v = xcalloc(n + 1, sizeof(*v));
	for (i = 0; i < n; i++)
		v[i] = xstrdup(argv[i]);
	return v;
}

/* -f: room for one more process?  Beyond PROCS_MAX a child runs
 * untraced (said once). */
static int room_for_proc(struct session *S, pid_t pid)
{
	if (S->nprocs < PROCS_MAX)
		return 1;
	if (!S->procs_full && !util_quiet)
		fprintf(stderr, "ptleak: %u processes are traced: process %d runs "
			"untraced, as will any child created until some end\n",
			S->nprocs, (int)pid);
	S->procs_full = 1;
	return 0;
}

/* A new process for child TID of PP, running ARGV (owned from now on). */
static struct proc *child_proc(struct session *S, struct proc *Pp, pid_t tid,
			       char **argv)
{
	struct proc *P = proc_new(S, tid);

	if (S->tree)
		P->row = proctree_add(S->tree, tid, Pp ? Pp->pid : 0, NULL);
	proc_set_argv(S, P, argv);
	proc_outputs(S, P, 1);
	P->vg_banner = 1;	/* valgrind's fork child writes none */
	P->unw = unwinder_new(tid);
	P->nalive = 1;
	return P;
}

/*
 * -f: fork child C of process PP (stopped at the fork event) is a
 * process of its own, traced from its first instruction: its copy of
 * PP's breakpoints is taken over (a copy of PP's set), the recorder's
 * copy removed (its ring is PP's, shared) and a fresh one injected when
 * the probes are bound again.  It starts with its parent's heap table
 * (census_inherit); descriptors it had at the fork are its parent's:
 * inherited, never its leaks.  0, or -1: let go.
 */
static int follow_fork_child(struct session *S, struct task *c)
{
	struct proc *Pp = c->proc, *P;
	uint64_t t0 = now_ns();
	int sig = 0;

	if (!room_for_proc(S, c->tid))
		return -1;
	restore_inherited(Pp, c);
	recs_fork_child(S, c->tid);
	P = child_proc(S, Pp, c->tid, argv_dup(Pp->argv));
	if (!P->unw || bpset_clone(&P->bps, &Pp->bps, c->tid)) {
		proc_drop(S, P);
		S->proc = Pp;
		return -1;
	}
	/* attached: if ptleak dies, its copy of the int3s goes too */
	if (S->attached)
		bpset_guard(&P->bps, guard_start(c->tid));
	P->r_debug = Pp->r_debug;
	P->glibc = Pp->glibc;
	P->allocator = Pp->allocator;
	census_inherit(S, P, Pp);
	if (P->fdp)
		fdprobe_attach(P->fdp, c->tid);
	c->proc = P;
	c->role = ROLE_THREAD;
	S->proc = P;
	if (image_fork(S, c->tid))
		warning("process %d is traced partly: its probes could not all "
			"be bound", (int)c->tid);
	sig = tasks_take_held_sig(S);
	thread_start(S, c);
	start_resume(S, c, sig);
	S->proc = Pp;
	if (debug_stats)
		fprintf(stderr, "ptleak-debug: process %d followed in %.1f ms\n",
			(int)c->tid, (double)(now_ns() - t0) / 1e6);
	return 0;
}

/* The first stop of a task whose role is known. */
void lifetime_start(struct session *S, struct task *t)
{
	t->started = 1;
	t->parked = 0;
	switch (t->role) {
	case ROLE_THREAD:
		thread_start(S, t);
		start_resume(S, t, 0);
		break;
	case ROLE_FORK_CHILD:
		if (!S->o->follow_forks || follow_fork_child(S, t))
			release_fork_child(S, t);
		break;
	case ROLE_VFORK_CHILD:
		start_resume(S, t, 0);
		break;
	case ROLE_UNKNOWN:
		t->parked = 1;
		break;
	}
}

void lifetime_new_task(struct session *S, struct task *t, int event)
{
	struct proc *P = S->proc;
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
	c->proc = P;
	/* a second producer of records in this memory, before it runs */
	if (role != ROLE_FORK_CHILD)
		recs_many_threads(S);
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
	else if (role == ROLE_FORK_CHILD && S->o->follow_forks &&
		 !events_wait_new(S, c))
		lifetime_start(S, c);
}

/* Is the file thread TID asks to execute (PATH relative to directory
 * descriptor DIRFD, AT_FDCWD for the working directory) an executable
 * file?  Then the exec will most likely succeed: execvp tries every
 * directory of PATH, only one is reported. */
static int exec_plausible(pid_t tid, long dirfd, uint64_t path)
{
	char name[4096], full[4200];
	struct stat st;
	ssize_t got;

	got = mem_read(tid, path, name, sizeof(name) - 1);
	if (got <= 0)
		return 0;
	name[got] = '\0';
	if (strnlen(name, sizeof(name)) == (size_t)got)
		return 0;	/* cut short: too long to execute */
	if (name[0] == '/')
		snprintf(full, sizeof(full), "/proc/%d/root%s", (int)tid, name);
	else if (dirfd == AT_FDCWD)
		snprintf(full, sizeof(full), "/proc/%d/cwd/%s", (int)tid, name);
	else
		snprintf(full, sizeof(full), "/proc/%d/fd/%d/%s", (int)tid,
			 (int)dirfd, name);
	return !stat(full, &st) && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

int lifetime_execve(struct session *S, struct task *t, const struct bp *bp,
		    const struct arch_regs *r)
{
	if (S->proc->reported || t->proc != S->proc)
		return 0;
	switch (bp->fn) {
	case 0:		/* execve(path, argv, envp) */
		return exec_plausible(t->tid, AT_FDCWD, arch_arg(r, 0));
	case 1:		/* execveat(dirfd, path, argv, envp, flags) */
		if (arch_arg(r, 4) & AT_EMPTY_PATH)
			return 1;
		return exec_plausible(t->tid, (long)(int)arch_arg(r, 0),
				      arch_arg(r, 1));
	default:	/* fexecve(fd, argv, envp) */
		return 1;
	}
}

/* -f: vfork child T execs: a process of its own from now on. */
static struct proc *follow_vfork_child(struct session *S, struct task *t)
{
	struct task *parent = t->vfork_parent ? task_find(S, t->vfork_parent) : NULL;
	struct proc *P;

	if (!room_for_proc(S, t->tid))
		return NULL;
	if (parent && parent->vfork_child == t->tid)
		parent->vfork_child = 0;
	t->vfork_parent = 0;
	P = child_proc(S, t->proc, t->tid, procstat_cmdline(t->tid));
	if (!P->unw || bpset_init(&P->bps, t->tid)) {
		proc_drop(S, P);
		return NULL;
	}
	if (S->attached)
		P->bps.guard = guard_start(t->tid);
	t->proc = P;
	t->role = ROLE_THREAD;
	S->proc = P;
	return P;
}

void lifetime_exec(struct session *S, struct task *t)
{
	struct proc *P = t->proc;

	if (t->role == ROLE_VFORK_CHILD || t->role == ROLE_FORK_CHILD) {
		if (!S->o->follow_forks || S->o->vg_exec_untraced || !P ||
		    !(P = follow_vfork_child(S, t))) {
			/* its own memory now, no breakpoints in it */
			ptrace(PTRACE_DETACH, t->tid, 0, 0);
			task_delete(S, t);
			return;
		}
	} else {
		if (!P->exec_reported && !P->reported) {
			/* no breakpoint saw it coming: the old image's tables,
			 * its memory gone; a live report still being made
			 * from a snapshot comes first, and the census */
			snap_finish(S, 1, 0);
			census_attach_step(S, P, 1, 0);
			report_make(S, REPORT_EXEC, t->tid, NULL, 0, 0);
		}
		proc_set_argv(S, P, procstat_cmdline(P->pid));
	}
	P->exec_reported = 0;
	P->reported = 0;
	P->exit_known = P->exit_code = P->exit_signal = 0;
	/*
	 * valgrind's text without -f: valgrind does not follow an exec (the
	 * new image runs natively, unchecked), so ptleak lets the launched
	 * process go once the new image is set up (the usual detach, no
	 * report) and waits for its status.  Otherwise valgrind starts
	 * anew on the new image: a new banner.
	 */
	if (S->o->vg_exec_untraced && P == S->first && !S->attached)
		S->untraceable = 1;
	else if (S->o->vg_exec_untraced)
		P->vg_silent = 1;	/* a fork child: traced on, unreported */
	else if (S->o->text == TEXT_VALGRIND) {
		P->vg_banner = 0;
		report_vg_banner(S, P);
	}
	if (image_exec(S, t)) {
		if (P != S->first) {
			/* -f: this child alone runs on untraced */
			bpset_unplant_all(&P->bps, t->tid);
			if (ptrace(PTRACE_DETACH, t->tid, 0,
				   (long)tasks_take_held_sig(S)) < 0 && errno != ESRCH)
				warning("cannot detach process %d: %s", (int)t->tid,
					strerror(errno));
			task_delete(S, t);
			proc_drop(S, P);
			return;
		}
		if (!S->untraceable)
			warning("process %d is no longer traced after its exec",
				(int)P->pid);
	}
	task_resume(S, t, tasks_take_held_sig(S));
}
