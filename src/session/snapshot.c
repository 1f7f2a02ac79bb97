/*
 * snapshot.c - live reports from a copy-on-write snapshot of the target
 * (docs/design.md "Live reports from a snapshot").
 *
 * Every thread held (events_stop_all), the ring drained and the registers
 * read, one held thread runs an injected clone() with exit signal 0: its
 * child is a copy-on-write copy of the process's memory at that instant.
 * It never runs an instruction: traced at once (PTRACE_O_TRACECLONE), it
 * starts in its first stop and stays there, PTRACE_O_EXITKILL set, with
 * every signal blocked as its parent was during the injection.  Then
 * ptleak forks itself: the fork (the report child) has ptleak's tables as
 * they are at that instant and makes the report from them, reading the
 * clone's memory, while ptleak lets the threads go and keeps draining the
 * ring.  When the report child ends, ptleak takes its verdicts, kills the
 * clone, and has one held thread of the target reap its zombie (wait4
 * with __WALL): an exit-signal-0 child is never reaped by the kernel, and
 * is invisible to the target's own waits without __WALL or __WCLONE.
 *
 * No snapshot (the report is made the old way, its threads held for the
 * whole scan, and says why in one line): a seccomp filter that forbids
 * the clone or the wait4, a clone that fails (a pids or process limit,
 * strict overcommit), a userfaultfd (reading the copy could wait on its
 * monitor), a shared writable mapping holding a live block or a pointer
 * into one (not copied: it would be read as it is later; snap_shared.c),
 * a mapping a fork does not copy (MADV_DONTFORK), --events at a detach.
 * PTLEAK_DEBUG=no-snapshot refuses every snapshot (tests);
 * PTLEAK_DEBUG=snapshot-check has each report from a snapshot compared
 * with the held report of the same instant (check_held).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/arch.h"
#include "recorder/rechook.h"
#include "target/maps.h"
#include "target/seccomp.h"
#include "session.h"
#include "base/util.h"

/* What the report child tells ptleak of each report it made. */
struct snap_result {
	pid_t pid;
	int failed;
	struct report_result res;
};

static int no_snapshot(void)
{
	const char *v = getenv("PTLEAK_DEBUG");

	return v && strstr(v, "no-snapshot");
}

/* Mappings of PID; with SHARED, its shared writable ones not ptleak's
 * into *SHARED (*NSHARED of them, malloc'd).  -1: unreadable. */
static long count_maps(pid_t pid, struct shared_map **shared, size_t *nshared)
{
	struct maps_file *f = maps_open(pid);
	struct maps_entry e;
	size_t alloc = 0;
	long n = 0;

	if (shared) {
		*shared = NULL;
		*nshared = 0;
	}
	if (!f)
		return -1;
	while (maps_next(f, &e)) {
		struct shared_map *m;

		n++;
		/* (one not readable is not scanned) */
		if (!shared || e.perms[0] != 'r' || e.perms[1] != 'w' || e.perms[3] != 's' ||
		    !strncmp(e.name, REC_AREA_NAME_MAPS, strlen(REC_AREA_NAME_MAPS)))
			continue;
		grow_array((void **)shared, &alloc, *nshared + 1, sizeof(**shared));
		m = &(*shared)[(*nshared)++];
		m->start = e.start;
		m->end = e.end;
		snprintf(m->name, sizeof(m->name), "%s", e.name[0] ? e.name : "anonymous");
	}
	maps_close(f);
	return n;
}

/* Has process PID a userfaultfd open? */
static int has_userfaultfd(pid_t pid)
{
	char path[64], link[64];
	struct dirent *d;
	DIR *dir;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(dir = opendir(path)))
		return 0;
	while (!found && (d = readdir(dir))) {
		char fd[sizeof(path) + sizeof(d->d_name)];
		ssize_t n;

		if (d->d_name[0] == '.')
			continue;
		snprintf(fd, sizeof(fd), "%s/%s", path, d->d_name);
		n = readlink(fd, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		found = !strcmp(link, "anon_inode:[userfaultfd]");
	}
	closedir(dir);
	return found;
}

static void clone_args(uint64_t a[6])
{
	memset(a, 0, 6 * sizeof(*a));	/* flags 0: exit signal 0, a copy */
}

static void wait4_args(uint64_t a[6], pid_t vpid)
{
	memset(a, 0, 6 * sizeof(*a));
	a[0] = (uint64_t)(int64_t)vpid;
	a[2] = (uint64_t)(__WALL | WNOHANG);
}

/* Kill clone C (stopped, traced) and take its death as its tracer. */
static void kill_clone(pid_t c)
{
	int st;

	kill(c, SIGKILL);
	for (;;) {
		pid_t w = waitpid(c, &st, __WALL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st))
			break;
		ptrace(PTRACE_CONT, c, 0, 0);
	}
	waitq_forget(c);
}

/* A signal that came to held thread T during an injection: it is
 * resumed with it (delivered once, its siginfo set). */
static void hold_sig(struct task *t, int sig)
{
	if (!sig)
		return;
	t->held_sig = sig;
	t->held_listen = 0;
}

int snap_clone(struct session *S, struct proc *P, char *why, size_t len)
{
	struct arch_inject_via via;
	struct shared_map *shared;
	size_t nshared;
	uint64_t a[6], ret;
	struct task *t;
	pid_t c = 0;
	long n, nc;
	int sig = 0, st, rc;

	why[0] = 0;
	if (no_snapshot())
		return snprintf(why, len, "PTLEAK_DEBUG=no-snapshot"), -1;
	S->proc = P;
	snap_reap(S, P, 0);	/* a census's snapshot's zombie */
	if (!(t = events_injection_thread(S, 0)))
		return snprintf(why, len, "no thread can run a system call now"), -1;
	n = count_maps(P->pid, &shared, &nshared);
	if (n < 0)
		return snprintf(why, len, "its maps cannot be read"), -1;
	/* not copied: only if they hold nothing the scan would use */
	rc = snap_shared_check(S, P, shared, nshared, why, len);
	free(shared);
	if (rc)
		return -1;
	if (has_userfaultfd(P->pid))
		return snprintf(why, len, "it has a userfaultfd"), -1;
	clone_args(a);
	if (!seccomp_allows(t->tid, "clone", arch_sys_clone, a, why, len))
		return -1;
	wait4_args(a, 1);
	if (!seccomp_allows(t->tid, "wait4", arch_sys_wait4, a, why, len))
		return -1;
	clone_args(a);
	if (!P->bps.trampoline)
		return snprintf(why, len, "ptleak's scratch page is not there"), -1;
	/* the instruction in ptleak's page: a vfork child, never held,
	 * may be running the code at the thread's pc */
	via = *bpset_via(&P->bps);
	via.insn = P->bps.trampoline + arch_trampoline_clone;
	via.end = P->bps.trampoline + arch_trampoline_len;
	rc = arch_inject(t->tid, &via, arch_sys_clone, a, &ret, &sig, &c);
	hold_sig(t, sig);
	if (rc)
		return snprintf(why, len, "the clone could not be injected"), -1;
	if ((int64_t)ret < 0 && (int64_t)ret > -4096) {
		int err = (int)-(int64_t)ret;

		return snprintf(why, len, "its clone failed: %s%s", strerror(err),
				err == EAGAIN ? " (a process or pids limit)" :
				err == ENOMEM ? " (no memory to commit a copy)" : ""), -1;
	}
	if (c <= 0)
		return snprintf(why, len, "its clone was not seen"), -1;
	/* its first stop (traced at birth), then only PTRACE_O_EXITKILL:
	 * ptleak's death kills it, it reports nothing else */
	while (waitpid(c, &st, __WALL) < 0 && errno == EINTR)
		;
	ptrace(PTRACE_SETOPTIONS, c, 0, (void *)(long)PTRACE_O_EXITKILL);
	P->snap_pid = c;
	P->snap_vpid = (pid_t)ret;
	nc = count_maps(c, NULL, NULL);
	if (nc != n) {
		snprintf(why, len, "a mapping is not copied to a child "
			 "(MADV_DONTFORK): %ld of %ld", nc, n);
		snap_kill(P);
		snap_reap(S, P, 0);
		return -1;
	}
	return 0;
}

/*
 * The snapshot of process P for a report REASON, every thread held:
 * P->snap_pid.  0; 1 when P's report needs none (nothing to scan; WHY
 * ""); -1 with WHY (LEN bytes) saying why none can be had.
 */
static int snap_take(struct session *S, struct proc *P,
		     enum report_reason reason, char *why, size_t len)
{
	why[0] = 0;
	if (P->no_heap || S->o->no_scan)
		return 1;
	if (S->evlog && P == S->first && reason != REPORT_SIGNAL)
		return snprintf(why, len, "--events is written at this report"), -1;
	return snap_clone(S, P, why, len);
}

void snap_kill(struct proc *P)
{
	if (P->snap_pid)
		kill_clone(P->snap_pid);
	P->snap_pid = 0;
}

void snap_reap(struct session *S, struct proc *P, int last)
{
	uint64_t a[6], ret = 0;
	struct task *t;
	int sig = 0;

	if (!P->snap_vpid || P->snap_pid || P->done)
		return;	/* none, alive, or an exiting process's: init's */
	S->proc = P;
	wait4_args(a, P->snap_vpid);
	/* a thread in a group-stop would leave it: only at the last chance
	 * (a detach, which makes it enter it again) */
	t = events_injection_thread(S, last);
	if (!t && !last)
		return;	/* at the next stop of every thread */
	if (!t || !P->bps.trampoline ||
	    arch_inject(t->tid, bpset_via(&P->bps), arch_sys_wait4, a, &ret,
			&sig, NULL))
		warning("the snapshot's process %d stays a zombie child of "
			"process %d until it waits for it", (int)P->snap_vpid,
			(int)P->pid);
	if (t)
		hold_sig(t, sig);
	P->snap_vpid = 0;
}

/* Kill P's clone; with REAP (every thread held), its zombie reaped by a
 * held thread of P. */
static void snap_drop(struct session *S, struct proc *P, int reap)
{
	snap_kill(P);
	free(P->snap_regs);
	P->snap_regs = NULL;
	P->snap_nregs = 0;
	free(P->snap_shared);
	P->snap_shared = NULL;
	P->snap_nshared = 0;
	if (P->check)
		digest_free(P->check);
	free(P->check);
	P->check = NULL;
	if (reap)
		snap_reap(S, P, 0);
}

/* The registers of P's held threads, for the snapshot's report. */
static void snap_regs(struct session *S, struct proc *P)
{
	const struct task *t;
	unsigned i;

	P->snap_regs = xcalloc(S->ntasks + 1, sizeof(*P->snap_regs));
	P->snap_nregs = 0;
	for_each_proc_task(S, i, t)
		if (t->role == ROLE_THREAD && t->held &&
		    !arch_get_regs(t->tid, &P->snap_regs[P->snap_nregs]))
			P->snap_nregs++;
}

/*
 * PTLEAK_DEBUG=snapshot-check: P's report made held, now, at the
 * snapshot's instant (no thread ran since the clone), kept for the report
 * child, which compares the report it makes from the snapshot with it.
 */
static void check_held(struct session *S, struct proc *P)
{
	P->check = xcalloc(1, sizeof(*P->check));
	P->check_now = now_ns();
	if (report_digest_held(S, P->snap_regs, P->snap_nregs, P->check_now,
			       P->check)) {
		digest_free(P->check);
		free(P->check);
		P->check = NULL;
	}
}

/* The report child: the reports of the snapshots, results to FD. */
static void __attribute__((noreturn))
report_child(struct session *S, enum report_reason reason, pid_t parent,
	     int fd, int pause_fd)
{
	struct proc *P;
	uint64_t pause = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	S->rep_parent = parent;
	if (getppid() != parent)
		_exit(1);
	/* a fatal error here is the tracer's to handle: it detaches */
	die_hook = NULL;
	S->in_rep_child = 1;
	/* the threads run again: how long they were held */
	if (read(pause_fd, &pause, sizeof(pause)) != sizeof(pause))
		_exit(1);
	S->pause_ns = pause ? pause : 1;
	S->hold_t0 = 0;
	S->snap_why = NULL;
	for (P = S->procs; P; P = P->next) {
		struct snap_result r;

		if (!P->snap_report)
			continue;
		S->proc = P;
		memset(&r, 0, sizeof(r));
		r.pid = P->pid;
		r.failed = report_make(S, reason, P->snap_pid, P->snap_regs,
				       P->snap_nregs, 1) != 0;
		r.res = S->last_result;
		if (write(fd, &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
	fflush(NULL);
	_exit(0);
}

int snap_reports(struct session *S, enum report_reason reason, uint64_t hold_t0)
{
	int fds[2], pfds[2], ret = 0;
	unsigned n = 0;
	struct proc *P;
	char why[320];
	pid_t pid;

	S->hold_t0 = hold_t0;
	for (P = S->procs; P; P = P->next) {
		int r;

		if (P->reported || P->done)
			continue;
		S->proc = P;
		recs_settle(S);		/* no record half written */
		r = snap_take(S, P, reason, why, sizeof(why));
		/* both may have let a thread take a fatal signal: the
		 * process's exit, reported */
		if (P->reported || P->done) {
			if (!r)
				snap_drop(S, P, 0);
			continue;
		}
		if (!r) {
			/* exact at the snapshot's instant */
			recs_drain(S);
			sampler_report(S, reason != REPORT_SIGNAL);
			snap_regs(S, P);
			if (debug_snapshot_check)
				check_held(S, P);
			P->snap_report = 1;
			n++;
			continue;
		}
		S->snap_why = why[0] ? why : NULL;
		if (report_make_live(S, reason))
			ret = -1;
		S->snap_why = NULL;
	}
	if (!n)
		return ret;
	if (pipe2(fds, O_CLOEXEC) || pipe2(pfds, O_CLOEXEC)) {
		error("cannot make a pipe for the report child: %s", strerror(errno));
		goto here;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		error("cannot fork a report child: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		close(pfds[0]);
		close(pfds[1]);
		goto here;
	}
	if (!pid) {
		close(fds[0]);
		close(pfds[1]);
		report_child(S, reason, getppid(), fds[1], pfds[0]);
	}
	close(fds[1]);
	close(pfds[0]);
	S->rep_child = pid;
	S->rep_fd = fds[0];
	S->rep_pause_fd = pfds[1];
	S->rep_reason = reason;
	S->rep_exited = 0;
	for (P = S->procs; P; P = P->next)
		if (P->snap_report)
			P->nreports++;	/* the child's number */
	return ret;

here:
	/* no report child: every report made here, held */
	for (P = S->procs; P; P = P->next) {
		if (!P->snap_report)
			continue;
		P->snap_report = 0;
		S->proc = P;
		S->snap_why = "no report child";
		if (report_make_live(S, reason))
			ret = -1;
		S->snap_why = NULL;
		snap_drop(S, P, 1);
	}
	return ret;
}

void snap_released(struct session *S)
{
	uint64_t pause = S->hold_t0 ? now_ns() - S->hold_t0 : 0;

	S->hold_t0 = 0;
	if (!S->rep_child || S->rep_pause_fd < 0)
		return;
	if (write(S->rep_pause_fd, &pause, sizeof(pause)) != sizeof(pause))
		warning("cannot tell the report child the pause: %s",
			strerror(errno));
	close(S->rep_pause_fd);
	S->rep_pause_fd = -1;
}

int snap_busy(const struct session *S)
{
	return S->rep_child != 0;
}

int snap_gone(struct session *S, pid_t pid, int status)
{
	if (!S->rep_child || pid != S->rep_child)
		return 0;
	S->rep_exited = 1;
	S->rep_status = status;
	return 1;
}

/* The report child's results, taken as report_make would have.  0, or
 * -1 if it died before making them all (it said why, or here). */
static int take_results(struct session *S)
{
	struct snap_result r;
	struct proc *P;
	unsigned got = 0, want = 0;

	for (P = S->procs; P; P = P->next)
		want += P->snap_report;
	while (read(S->rep_fd, &r, sizeof(r)) == sizeof(r)) {
		for (P = S->procs; P; P = P->next)
			if (P->snap_report && P->pid == r.pid)
				break;
		if (!P)
			continue;
		report_result_take(S, P, S->rep_reason, &r.res, r.failed);
		got++;
	}
	if (WIFSIGNALED(S->rep_status))
		error("ptleak's report child died of signal %d after %u of %u "
		      "reports", WTERMSIG(S->rep_status), got, want);
	/* else its exit status says it died (die(): its message given) */
	if (got < want || !WIFEXITED(S->rep_status) ||
	    WEXITSTATUS(S->rep_status))
		return -1;
	return 0;
}

void snap_finish(struct session *S, int block, int reap)
{
	struct proc *P;
	int stopped = 0, failed;

	if (!S->rep_child)
		return;
	snap_released(S);	/* (already told, but for an error path) */
	while (S->rep_child && !S->rep_exited) {
		int st;

		if (block) {
			pid_t w;

			if (waitq_take(S->rep_child, &st)) {
				snap_gone(S, S->rep_child, st);
				break;
			}
			w = waitpid(S->rep_child, &st, 0);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				st = 0xff00;	/* exit status 255 */
			snap_gone(S, S->rep_child, st);
		} else if (events_wait_one(S)) {
			block = 1;	/* nothing left to trace: wait */
		}
	}
	if (!S->rep_child)
		return;	/* finished meanwhile (an exit report) */
	failed = take_results(S);
	close(S->rep_fd);
	S->rep_fd = -1;
	S->rep_child = 0;
	S->rep_exited = 0;
	/* the clones killed first, the threads running: the end of a big
	 * copy takes a while */
	for (P = S->procs; P; P = P->next)
		if (P->snap_report)
			snap_kill(P);
	/* a thread held at an execve: its report first, a release of
	 * every thread would let it go (the reap waits for that stop) */
	if (S->exec_due)
		reap = 0;
	if (reap && !S->hold) {
		stopped = 1;
		if (events_stop_all(S))
			reap = 0;
	}
	for (P = S->procs; P; P = P->next) {
		if (!P->snap_report)
			continue;
		P->snap_report = 0;
		snap_drop(S, P, reap);
	}
	if (stopped)
		events_release_all(S);
	if (failed)
		die_said();	/* ptleak's fatal error, in its report */
}
