/*
 * launch.c - launching the program: found as execvp would, seized before
 * it runs, followed to its exec (a failed exec said); who else traces a
 * process.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target/seccomp.h"
#include "session.h"
#include "base/util.h"

/* The tracer of PID (0: none) and its name in COMM. */
int launch_tracer_of(pid_t pid, char *comm, size_t len)
{
	int tracer = tasks_status_field(pid, "TracerPid:");
	char path[64];
	FILE *f;

	comm[0] = '\0';
	if (tracer > 0) {
		snprintf(path, sizeof(path), "/proc/%d/comm", tracer);
		f = fopen(path, "r");
		if (f) {
			if (fgets(comm, (int)len, f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
	}
	return tracer;
}

/* PROG as execvp would find it, without its fallback to /bin/sh. */
static char *find_program(const char *prog)
{
	const char *path = getenv("PATH");
	char *dirs, *dir, *save = NULL, *found = NULL;

	if (strchr(prog, '/') || !*prog)
		return xstrdup(prog);
	dirs = xstrdup(path && *path ? path : "/usr/local/bin:/bin:/usr/bin");
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		size_t n = strlen(dir) + strlen(prog) + 2;
		char *cand = xmalloc(n);
		struct stat st;

		snprintf(cand, n, "%s/%s", *dir ? dir : ".", prog);
		if (!stat(cand, &st) && S_ISREG(st.st_mode)) {
			if (!access(cand, X_OK)) {
				free(found);
				found = cand;
				break;
			}
			if (!found) {
				found = cand;	/* EACCES unless a later one runs */
				continue;
			}
		}
		free(cand);
	}
	free(dirs);
	return found ? found : xstrdup(prog);
}

/*
 * A set-user-ID or set-group-ID program gains nothing when its tracer
 * lacks CAP_SYS_PTRACE (the kernel's LSM_UNSAFE_PTRACE): say so, it may
 * behave differently.  A warning: -q keeps it quiet.
 */
static void warn_setid(const char *path, const char *name)
{
	unsigned long long cap;
	struct stat st;
	struct passwd *pw;
	struct group *gr;

	if (!path || stat(path, &st) || !(st.st_mode & (S_ISUID | S_ISGID)))
		return;
	if (!proc_status_field(getpid(), "CapEff:", 16, &cap) &&
	    (cap >> CAP_SYS_PTRACE) & 1)
		return;
	if ((st.st_mode & S_ISUID) && st.st_uid != geteuid()) {
		pw = getpwuid(st.st_uid);
		warning("%s is set-user-ID (owner %s); under ptrace it runs "
			"without that privilege", name, pw ? pw->pw_name : "?");
	} else if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) &&
		   st.st_gid != getegid()) {
		gr = getgrgid(st.st_gid);
		warning("%s is set-group-ID (group %s); under ptrace it runs "
			"without that privilege", name, gr ? gr->gr_name : "?");
	}
}

/* What the child needs until its exec (launch_program). */
struct child {
	const char *path;
	char *const *argv;
	int go, err;		/* read end, write end */
	int go_w, err_r;	/* ptleak's ends, closed here */
	sigset_t mask;		/* ptleak's, given back before the exec */
};

#define CHILD_STACK (64u << 10)

/*
 * The child until its exec.  It shares ptleak's memory (CLONE_VM, as
 * posix_spawn does): no page table to copy, no copy-on-write fault for
 * ptleak afterwards (a fork cost 0.8 ms, and the faults as much again
 * where they are dear).  So it only reads, execs or reports the exec's
 * failure, with every signal blocked until its handlers are the
 * defaults (ptleak's would run here, on ptleak's data).
 */
static int child_main(void *arg)
{
	const struct child *c = arg;
	struct sigaction sa;
	char b;
	int e, sig;

	for (sig = 1; sig < NSIG; sig++) {
		if (sigaction(sig, NULL, &sa) || sa.sa_handler == SIG_DFL ||
		    (sa.sa_handler == SIG_IGN && sig != SIGPIPE))
			continue;
		sa.sa_handler = SIG_DFL;
		sa.sa_flags = 0;
		sigaction(sig, &sa, NULL);
	}
	sigprocmask(SIG_SETMASK, &c->mask, NULL);
	/* an fd table of its own: without ptleak's end, a ptleak gone
	 * is an end of file */
	close(c->go_w);
	close(c->err_r);
	/* wait until ptleak has seized us */
	while (read(c->go, &b, 1) < 0 && errno == EINTR)
		;
	execv(c->path, c->argv);
	e = errno;
	if (write(c->err, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

pid_t launch_program(struct session *S)
{
	char *const *argv = S->o->argv;
	char *path = find_program(argv[0]), *stack;
	int go[2], err[2], status, e;
	struct child c;
	sigset_t all;
	pid_t pid;

	warn_setid(path, argv[0]);

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		free(path);
		return error("cannot create a pipe: %s", strerror(errno));
	}
	/* the pipes' other ends are O_CLOEXEC: gone at the exec */
	memset(&c, 0, sizeof(c));
	c.path = path;
	c.argv = argv;
	c.go = go[0];
	c.err = err[1];
	c.go_w = go[1];
	c.err_r = err[0];
	stack = xmalloc(CHILD_STACK);
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &c.mask);
	pid = clone(child_main, stack + CHILD_STACK, CLONE_VM | SIGCHLD, &c);
	e = errno;
	sigprocmask(SIG_SETMASK, &c.mask, NULL);
	if (pid < 0) {
		free(stack);
		free(path);
		return error("cannot start a process: clone: %s", strerror(e));
	}
	close(go[0]);
	close(err[1]);
	if (ptrace(PTRACE_SEIZE, pid, 0, (long)TRACE_OPTIONS) < 0) {
		char comm[64];
		int tracer;

		e = errno;
		tracer = launch_tracer_of(pid, comm, sizeof(comm));
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(go[1]);
		close(err[0]);
		free(stack);
		free(path);
		if (tracer > 0)
			return error("cannot trace '%s': ptrace: it is already traced "
				     "by process %d (%s); a process has one tracer at a time",
				     argv[0], tracer, comm);
		if (e == EPERM)
			return error("cannot trace '%s': ptrace: %s (check "
				     "kernel.yama.ptrace_scope, or give ptleak CAP_SYS_PTRACE)",
				     argv[0], strerror(e));
		return error("cannot trace '%s': ptrace: %s", argv[0], strerror(e));
	}
	close(go[1]);

	/* until the exec: the child's exit means execv failed */
	for (;;) {
		if (waitpid(pid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			free(path);
			close(err[0]);
			return error("waiting for '%s': %s", argv[0], strerror(e));
		}
		seccomp_forget();
		if (WIFSTOPPED(status)) {
			int event = status >> 16;

			if (event == PTRACE_EVENT_EXEC)
				break;
			tasks_resume_tid(pid, event || WSTOPSIG(status) == SIGTRAP
					 ? 0 : WSTOPSIG(status));
			continue;
		}
		e = ENOEXEC;
		if (read(err[0], &e, sizeof(e)) != sizeof(e))
			e = ENOEXEC;
		close(err[0]);
		error("cannot execute '%s': %s", argv[0], strerror(e));
		free(stack);
		free(path);
		return -1;
	}
	close(err[0]);
	free(stack);	/* the child has its own memory now */
	free(path);
	return pid;
}
