/*
 * session.h - the tracing session's state, private to the tracer's files
 * (tracer.c and the modules it was split into); include/tracer.h is the
 * public entry.
 *
 * Where things are:
 *   tracer.c       tracer_run: outputs, launch or attach, the main loop, exit
 *   launch.c       launching the program, seized, up to its exec
 *   attach.c       -p PID: checks, seizing every thread
 *   detach.c       letting go of the target as it was
 *   events.c       where a stop becomes an event: waitpid, the dispatcher
 *                  (on_stop), stopping and holding every thread
 *   lifetime.c     where an event changes the task table: new tasks, exits
 *   tasks.c        the task table: one struct task per traced thread
 *   image.c        auxv, the dynamic linker's rendezvous, binding probes
 *   heapprobe.c    the allocator's breakpoint probes: entry/return events
 *                  to the heap table (heap.h) and the fd table (fdprobe.h)
 *   wbuf.c         a stop's memory writes; stepping over a breakpoint
 *   report_make.c  where a report is made (exit, signal, detach)
 *   sigself.c      signals to ptleak: report or detach requested
 *   recsession.c   the recorder engine in the session (recorder.h): where
 *                  the allocator is patched, the ring drained
 *   procs.c        the traced processes (-f: every child too), their
 *                  report files; the tree summary is proctree.h
 */
#ifndef PTLEAK_SESSION_H
#define PTLEAK_SESSION_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "breakpoints/breakpoint.h"
#include "tables/coverage.h"
#include "tables/heap.h"
#include "session/options.h"
#include "output/report.h"
#include "output/report_digest.h"
#include "output/report_html.h"
#include "symbols/unloaded.h"
#include "symbols/unwind.h"
#include "base/debug.h"

/* TRACESYSGOOD: the syscall stops of an injection (arch_inject) */
#define TRACE_OPTIONS (PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | \
		       PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | \
		       PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
		       PTRACE_O_TRACESYSGOOD)

#define MAX_DEPTH 256

enum role {
	ROLE_UNKNOWN,		/* stopped before its creator's event said what it is */
	ROLE_THREAD,		/* a thread of the target */
	ROLE_FORK_CHILD,	/* own memory: unplant and detach */
	ROLE_VFORK_CHILD,	/* shares the target's memory until exec/exit */
};

/* A hijacked return: the state of an allocator call in progress. */
struct pending {
	uint64_t slot;		/* stack address of the return address */
	uint64_t real;		/* the real return address */
	const struct bp *bp;
	uint64_t arg[4];
	uint32_t stack;
	uint64_t time;
	int held_live;		/* realloc: the old block was live */
	struct heap_block held;
};

struct task {
	pid_t tid;
	enum role role;
	int started;		/* its first stop has been seen */
	int parked;		/* stopped, waiting for its creator's event */
	int exiting;		/* reached PTRACE_EVENT_EXIT */
	int dying;		/* resumed from that stop: it never stops again */
	int attached;		/* seized by -p: its first sp is not its stack's top */
	int first_group_stop;	/* its first stop was a group-stop: its
				 * signal (0: it was not) */
	int group_stopped;	/* its last stop was a group-stop */
	/* vfork: the parent waits in the kernel, unstoppable, until its
	 * child (which never is held) execs or exits */
	pid_t vfork_child, vfork_parent;
	/* kept stopped by ptleak (session.hold) until events_release_all() */
	int held;
	int held_sig;		/* the signal to resume it with */
	int held_listen;	/* in a group-stop: resume with PTRACE_LISTEN */
	uint64_t first_sp;	/* at its first stop: identifies its stack */
	struct ret_fix *inherit; /* fork child: its creator's hijacked returns at the fork */
	size_t ninherit;
	struct pending *pend;
	size_t npend, apend;
	struct proc *proc;	/* the process it is a thread of (a vfork
				 * child: the one whose memory it runs in) */
	struct task *next;	/* hash chain */
};

struct proc {
	struct proc *next;	/* S->procs */
	pid_t pid;
	pid_t mem_pid;		/* a live thread: the leader may exit before the others */
	char *const *argv;
	struct bpset bps;
	struct heap *heap;
	struct stacks *stacks;
	struct unwinder *unw;
	struct fdprobe *fdp;	/* descriptors (NULL: --heap-only) */
	int no_heap;		/* --fd-only: no allocator breakpoints */
	unsigned nalive;	/* threads not yet at PTRACE_EVENT_EXIT */
	uint64_t r_debug;	/* the dynamic linker's struct r_debug, 0 if static */
	/* the recorder engine (recorder.h), NULL until injected */
	struct recorder *rec;
	int rec_off;		/* cannot be injected here: breakpoints */
	int rec_fatal;		/* --engine=recorder could not be had: end */
	int rec_fd_said;	/* the descriptor functions' notice was given */
	int rec_detaching;	/* the ring is disabled: no more drains */
	int rec_main_known;	/* the hooks know main's range */
	unsigned rec_main_tries;	/* drains that looked for it (at most 500) */
	uint64_t rec_lost;	/* records the target gave up, counted */
	uint64_t rec_tail, rec_stuck_ns;	/* the drain stuck at a hole since */
	int bound[AF_COUNT];
	int glibc;		/* malloc is glibc's (libc.so.6, or a static executable) */
	int allocator;		/* census.h's enum census_allocator of malloc */
	/* -p: the census of the heap at the attach (census.h; its blocks
	 * are in the heap table), NULL: launched */
	struct census *census;
	int reported;
	int exit_known, exit_code, exit_signal;
	/* stacks of threads that exited (glibc keeps them mapped): scanned
	 * only above the stack pointer they died with, as valgrind makes a
	 * dead thread's stack inaccessible */
	struct dead_stack {
		uint64_t first_sp, exit_sp, exit_ns;
	} *dead;
	size_t ndead, adead;
	/* what the process and its reports are (procs.c) */
	char **own_argv;	/* argv read from /proc (after an exec), freed */
	FILE *text;		/* its text report's stream (a child's own -o file) */
	char *json;		/* its --json file (%p and .PID applied), or NULL */
	int row;		/* its row in the tree summary (proctree.h), -1: none */
	int done;		/* its leader is gone: STATUS is its wait status */
	int status;
	int exec_due;		/* a thread is held at an execve: report first */
	int exec_reported;	/* that report was made (PTRACE_EVENT_EXEC next) */
	unsigned nreports;	/* its reports so far, its images' together */
	int vg_banner;		/* valgrind's text: its banner written */
	int vg_silent;		/* valgrind's text: a fork child that exec'd
				 * (valgrind does not follow it): no text,
				 * no errors */
	/* of its image's last report, and of its images before an exec */
	uint64_t lost_bytes, leaked_fds;
	uint64_t exec_lost_bytes, exec_leaked_fds;
	/* growth entries at or over --errors-for-growth, likewise */
	uint64_t growing, exec_growing;
	int untracked;
	struct coverage cov;	/* calls not recorded */
	struct unloaded *unloaded;	/* objects dlclose'd (unloaded.c) */
	/* a live report's copy-on-write snapshot (snapshot.c): the clone
	 * the report reads, numbered in ptleak's and in the process's pid
	 * namespace (0: none), and the registers of the threads at that
	 * instant */
	pid_t snap_pid, snap_vpid;
	struct arch_regs *snap_regs;
	unsigned snap_nregs;
	int snap_report;	/* the report child makes its report */
	/* its shared writable mappings, read while the threads were held
	 * and found to hold no pointer into a live block (snap_shared.c):
	 * the snapshot's scan leaves them out */
	struct scan_range *snap_shared;
	size_t snap_nshared;
	/* PTLEAK_DEBUG=snapshot-check: the report made held at the
	 * snapshot's instant (report_digest_held), and that instant */
	struct report_digest *check;
	uint64_t check_now;
	struct census_job *cjob;	/* a census from a snapshot being taken */
};

struct session {
	const struct options *o;
	FILE *text;		/* the text report's stream: stderr or -o FILE */
	int report_failed;
	/* the stopped threads' pcs in a binding pass (recs_bind_begin) */
	struct {
		uint64_t pc[256];
		unsigned n;
		int known;
	} bind_pcs;
	struct suppressions *supp;
	/* the process whose event is being handled: every function that
	 * works on one process works on this one (set by events.c) */
	struct proc *proc;
	struct proc *procs;	/* every traced process, the first one last */
	struct proc *first;	/* the launched or attached one */
	unsigned nprocs;	/* how many, live ones only */
	struct proctree *tree;	/* -f: the tree summary's rows */
	int procs_full;		/* -f: a child was let go (PROCS_MAX): said once */
	int exec_due;		/* a process has a thread held at an execve */
	/* the leaks of every process gone (procs.c), for --error-exitcode */
	uint64_t lost_total, fds_total, growing_total;
	uint64_t first_lost;	/* valgrind's text: the first process's errors
				 * (its status is the verdict, as valgrind's) */
	int first_untracked;	/* ... and what it could not see */
	int untracked_any;
	struct task *tasks[256];
	unsigned ntasks;
	int done;
	int status;		/* final wait status of the target */
	int hold;		/* threads that stop stay stopped (events_stop_all) */
	/* the launched program's group-stop signal while ptleak waits for
	 * its last threads to stop or for exiting ones to be reaped before
	 * stopping itself (lifetime_group_stopped); 0: none owed */
	int stop_owed;
	/* group-stops reported so far (events_release_all waits for one) */
	unsigned gstops;
	int attached;		/* -p: ptleak attached; a detach leaves it running */
	int detached;		/* ptleak let go of the target: exit 0 */
	/* its seccomp filter forbids what ptleak would inject after an
	 * exec: it is let go untraced (launched: ptleak waits for it) */
	int untraceable;
	char **cmdline;		/* -p: the target's argv, from /proc */
	uint64_t start_ns;	/* when tracing started (now_ns()) */
	struct sampler *smp;	/* memory over time (sampler.c) */
	struct evlog *evlog;	/* --events (events_log.h), NULL: none */
	/* what the wait loop calls with each stop (dispatch_ops) */
	const struct event_ops *ev;
	/* the report child (snapshot.c): a fork of ptleak making live
	 * reports from snapshots while the target runs on (0: none), the
	 * pipe of its results, the pipe that tells it the pause */
	pid_t rep_child;
	int rep_fd, rep_pause_fd;
	int rep_exited, rep_status;
	int in_rep_child;	/* this process is a report child */
	pid_t rep_parent;	/* ... whose parent is this tracer */
	enum report_reason rep_reason;	/* of its reports */
	struct report_result last_result;	/* report_make's last */
	/* the report being made: when its threads were stopped (now_ns(),
	 * 0: not known), the pause a report child was told (0: none), why
	 * no snapshot could be had (NULL: one was, or none asked) */
	uint64_t hold_t0, pause_ns;
	const char *snap_why;
};

/* Every task T of session S (I: the bucket); none may be deleted meanwhile. */
#define for_each_task(S, i, t) \
	for ((i) = 0; (i) < ARRAY_SIZE((S)->tasks); (i)++) \
		for ((t) = (S)->tasks[i]; (t); (t) = (t)->next)

/* The memory writes of one stop (wbuf.c), written at once. */
struct wbuf {
	pid_t pid;
	unsigned n;
	struct {
		uint64_t addr;
		uint8_t len;
		uint8_t data[16];
	} w[4];
};


/* Set by ptleak's signal handlers (sigself.c): a report or a detach is
 * asked for; WAKE_TID: while the loop waits, a thread the handler
 * interrupts so that waitpid returns (0: none). */
extern volatile sig_atomic_t report_requested, detach_requested;
extern volatile sig_atomic_t wake_tid;

/* ---- tasks.c ---------------------------------------------------------- */

/* The task of thread TID, or NULL. */
struct task *task_find(struct session *S, pid_t tid);
/* A new task for thread TID, in the table. */
struct task *task_new(struct session *S, pid_t tid, enum role role);
/* Forget task T (its vfork parent's link too) and free it. */
void task_delete(struct session *S, struct task *t);
/* Forget every task. */
void tasks_delete_all(struct session *S);
/* Forget every thread task of KEEP's process (NULL: of S->proc) but
 * KEEP: they are gone. */
void tasks_forget_threads(struct session *S, const struct task *keep);
/* The number after FIELD ("Tgid:", "TracerPid:") in /proc/PID/status, or -1. */
int tasks_status_field(pid_t pid, const char *field);
/* PTRACE_CONT thread TID with SIG; only a vanished thread is not warned about. */
void tasks_resume_tid(pid_t tid, int sig);
/* The signal held while an injected system call ran (0: none); taken once. */
int tasks_take_held_sig(struct session *S);
/* Let T run on (delivering SIG), or keep it stopped while the session holds. */
void task_resume(struct session *S, struct task *t, int sig);
/* T is in a group-stop: PTRACE_LISTEN, or keep it held. */
void task_listen(struct session *S, struct task *t);

/* ---- procs.c --------------------------------------------------------- */

/* -f: live traced processes at most; a child forked beyond runs untraced,
 * its breakpoints removed (a notice says so once). */
#define PROCS_MAX 256

/* Every task T of the process being handled (S->proc). */
#define for_each_proc_task(S, i, t) \
	for_each_task(S, i, t) if ((t)->proc == (S)->proc)

/* A new process PID in the list: empty tables, its text report on the
 * session's stream. */
struct proc *proc_new(struct session *S, pid_t pid);
/* Its report files: --json's name for its pid; -o's own file for a CHILD
 * (or the first one's when the name has %p).  0, or -1 (message: its text
 * report goes to the session's stream). */
int proc_outputs(struct session *S, struct proc *P, int child);
/* P runs ARGV (read from /proc, owned by P from now on; NULL: unknown). */
void proc_set_argv(struct session *S, struct proc *P, char **argv);
/* Forget P (the target untouched), its leaks counted for the exit status. */
void proc_free(struct session *S, struct proc *P);
/* A child process is gone with wait STATUS: its report if none was made,
 * its row's status, then forgotten. */
void proc_gone(struct session *S, struct proc *P, int status);
/* A child process ptleak could not trace after all (it is let go):
 * its row says so, P forgotten. */
void proc_drop(struct session *S, struct proc *P);
/* Count the leaks of every process still listed (at the end). */
void procs_count_all(struct session *S);

/* ---- wbuf.c ----------------------------------------------------------- */

/* Buffer a write of LEN <= 16 bytes at ADDR; -1 when the buffer is full. */
int wb_write(void *ctx, uint64_t addr, const void *buf, size_t len);
/* Write what was buffered: one write when contiguous, else one each. */
int wb_flush(struct wbuf *wb);
/* Execute BP's displaced instruction for a thread stopped on it: emulated
 * into R (memory writes into WB), or the thread sent out of line. */
int wb_step_over(const struct bp *bp, struct arch_regs *r, struct wbuf *wb);

/* ---- image.c ---------------------------------------------------------- */

/* The dynamic linker's rendezvous hit (thread TID stopped): bind the
 * probes in the objects loaded now. */
int image_rendezvous(struct session *S, pid_t tid);
/* Map the scratch page (thread TID runs the mmap), then catch the
 * rendezvous, or bind a static executable now.  Every thread is stopped. */
int image_setup(struct session *S, pid_t tid);
/* After exec (the launch's included): a new image, nothing in it yet. */
int image_exec(struct session *S, struct task *t);
/* -f: a fork child (S->proc, its breakpoints cloned from its parent's,
 * the recorder's copy removed): its probes bound again, the recorder
 * injected afresh.  Thread TID, its only one, is stopped. */
int image_fork(struct session *S, pid_t tid);

/* ---- heapprobe.c ------------------------------------------------------ */

/* A probed function's entry (BP_ALLOC, BP_FD) hit by thread T with
 * registers R: a free or a close is done; any other call is recorded
 * and its return hijacked (the write buffered in WB). */
void heapprobe_entry(struct session *S, struct task *t, const struct bp *bp,
		     struct arch_regs *r, struct wbuf *wb);
/* T returned to the trampoline: the call's result to the heap or fd
 * table, R's pc set to the real return address; -1 if none was pending. */
int heapprobe_return(struct session *S, struct task *t, struct arch_regs *r);
/* Forget the call in progress on top of T's stack (longjmp, exception). */
void heapprobe_drop(struct proc *P, struct task *t);
/* A call of BP (BP_ALLOC, BP_FD) that is not recorded: counted for the
 * report, only the session's first one warned about. */
void heapprobe_lost(struct session *S, const struct bp *bp, int err,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- report_make.c ---------------------------------------------------- */

/* Make a report.  REGS[0..NREGS-1]: the registers of the stopped threads
 * (roots too if REG_ROOTS); NREGS 0: no scan.  Memory is read through
 * thread VIA, stopped meanwhile. */
int report_make(struct session *S, enum report_reason reason, pid_t via,
		const struct arch_regs *regs, unsigned nregs, int reg_roots);
/* What report_make does after writing P's report R (REASON; FAILED:
 * it could not be written whole): P's and S's verdicts (leaks, what
 * could not be seen) for the exit status.  A report child's results are
 * taken so too. */
void report_result_take(struct session *S, struct proc *P,
			enum report_reason reason,
			const struct report_result *r, int failed);
/* The report at exit: THREAD is stopped at its exit event. */
int report_make_exit(struct session *S, const struct task *thread);
/* valgrind's text: memcheck's banner in P's text now, as valgrind writes
 * it when the program starts (nothing with -q, or once written). */
void report_vg_banner(struct session *S, struct proc *P);
/* -f: the PROCESS TREE at the end, in P's text (valgrind's text: in
 * memcheck's prefix, nothing with -q). */
void report_tree(struct session *S, struct proc *P);
/* A report while every thread is held (events_stop_all): their registers. */
int report_make_live(struct session *S, enum report_reason reason);
/* PTLEAK_DEBUG=snapshot-check: what S->proc's live report finds, made
 * held (every thread held, REGS theirs), its ages at NOW, into *D, and
 * written nowhere; the report made from the snapshot of that instant
 * compares itself with it.  0 or -1. */
int report_digest_held(struct session *S, const struct arch_regs *regs,
		       unsigned nregs, uint64_t now, struct report_digest *d);

/* ---- snapshot.c ------------------------------------------------------ */

/* Reports REASON (signal, detach) of every process not reported yet,
 * every thread held since HOLD_T0: each process whose snapshot can be
 * had is reported by a report child from it once the threads run again
 * (snap_released), the others here and now.  0, or -1 (every report
 * made here). */
int snap_reports(struct session *S, enum report_reason reason, uint64_t hold_t0);
/* The threads run again: the report child is told how long they were
 * held. */
void snap_released(struct session *S);
/* The wait loop saw process PID gone: 1 if it was the report child. */
int snap_gone(struct session *S, pid_t pid, int status);
/* A copy-on-write snapshot of process P, every thread held: a clone of
 * it that never runs (P->snap_pid, its pid in P's namespace snap_vpid).
 * 0, or -1 and WHY (LEN bytes): none can be had. */
int snap_clone(struct session *S, struct proc *P, char *why, size_t len);
/* P's snapshot killed (its zombie left to snap_reap). */
void snap_kill(struct proc *P);
/* The zombie of P's killed snapshot reaped by a held thread of P (every
 * thread held); nothing if there is none.  No thread that can run it
 * outside a group-stop: later, but at the LAST chance (a detach). */
void snap_reap(struct session *S, struct proc *P, int last);
/* A report child is at work. */
int snap_busy(const struct session *S);
/* Wait for the report child to end and take its results (BLOCK: in
 * waitpid; else in the wait loop, the target running and its ring
 * drained), then let go of the snapshots: killed, and, with REAP, their
 * zombies taken out of the target (every thread stopped for that).
 * Nothing if there is no report child. */
void snap_finish(struct session *S, int block, int reap);

/* ---- snap_shared.c ---------------------------------------------------- */

/* Can process P (every thread held) have a snapshot with its shared
 * writable mappings (not ptleak's ring) SHARED[0..N)?  Not copied by a
 * clone, they are read now, in chunks: none may hold a live block of
 * P's table or a word pointing at or into one (the scan's candidate
 * lookup); then they are P->snap_shared, left out of the snapshot's
 * scan.  0; -1 with WHY (LEN bytes) naming the mapping. */
struct shared_map {
	uint64_t start, end;
	char name[200];
};
int snap_shared_check(struct session *S, struct proc *P,
		      const struct shared_map *shared, size_t n,
		      char *why, size_t len);

/* ---- sigself.c -------------------------------------------------------- */

/* Install ptleak's signal handlers. */
void sigself_catch(const struct session *S);
/* Start --duration's timer (tracing has begun). */
void sigself_duration(const struct session *S);

/* ---- lifetime.c ------------------------------------------------------- */

/* T stopped at PTRACE_EVENT_EXIT: the report if the process ends with it,
 * else its stack is dead from now on. */
void lifetime_exit(struct session *S, struct task *t);
/* The first stop of task T whose role is known (unknown: it is parked). */
void lifetime_start(struct session *S, struct task *t);
/* T's clone, fork or vfork EVENT: the new task, its role told; with -f a
 * fork child is a new process, traced from its first instruction. */
void lifetime_new_task(struct session *S, struct task *t, int event);
/* T hit BP (BP_EXEC) with registers R: 1 if the exec will most likely
 * succeed (its file is an executable file), so the image is reported
 * first; T is then held by the caller. */
int lifetime_execve(struct session *S, struct task *t, const struct bp *bp,
		    const struct arch_regs *r);
/* T's PTRACE_EVENT_EXEC: the new image traced (with -f a vfork child's
 * too, as a new process), or let go; T resumed. */
void lifetime_exec(struct session *S, struct task *t);
/* A thread of the launched program reported a group-stop for SIG: once
 * every thread has, ptleak stops itself with SIG (jobctl.h). */
void lifetime_group_stopped(struct session *S, int sig);

/* ---- dispatch.c ------------------------------------------------------- */

/*
 * What the wait loop (events.c) does with what it collects, and how it
 * waits: the only way it calls up.  The stop dispatcher (dispatch.c)
 * implements it with the handlers (lifetime, image, the probes, procs,
 * the recorder's drain, the sampler); tracer_run sets S->ev to it.
 */
struct event_ops {
	/* TID stopped (a wait STATUS, WIFSTOPPED) */
	void (*stop)(struct session *S, pid_t tid, int status);
	/* TID exited or was killed (STATUS) */
	void (*gone)(struct session *S, pid_t tid, int status);
	/* waitpid is about to block (ON 1) or is back (ON 0): the timers'
	 * signals may interrupt it meanwhile, and nothing else of ptleak */
	void (*waiting)(int on);
	/* a timer fired: waitpid is not entered */
	int (*due)(void);
	/* after waitpid was interrupted: the timers' work done; 1 if the
	 * caller's loop is to look (the rings were drained), 0 to wait on */
	int (*tick)(struct session *S);
};
extern const struct event_ops dispatch_ops;

/* Does SIG stop a process (a group-stop's signal)? */
static inline int stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* ---- waitq.c ---------------------------------------------------------- */

/* Stops and deaths collected by waitpid, not handled yet, in the order
 * collected (waitq.c says why).  Pushing one forgets the seccomp modes
 * read (seccomp.h): a thread that stopped may have changed it. */
void waitq_push(pid_t tid, int status);
/* The first one collected into *TID, *STATUS: 1, or 0 if there is none. */
int waitq_pop(pid_t *tid, int *status);
/* TID's first one, taken out of the queue into *STATUS: 1, or 0. */
int waitq_take(pid_t tid, int *status);
/* TID is no longer traced: its collected ones are dropped (task_delete). */
void waitq_forget(pid_t tid);
int waitq_full(void);
int waitq_empty(void);

/* ---- events.c --------------------------------------------------------- */

/* Wait for one stop or death and handle it.  0, or -1 when there is
 * nothing left to wait for (or waitpid failed: message). */
int events_wait_one(struct session *S);
/* TID's waiting stop or death handled, without blocking: 1 if there was
 * one, 0 if it runs, -1 on error.  Call it before interrupting a thread
 * that may have stopped meanwhile (events.c says why). */
int events_reap(struct session *S, pid_t tid);
/* Wait until every task is stopped, handling the events on the way; a
 * vfork child and its parent count as stopped unless STRICT. */
int events_wait_all_stopped(struct session *S, int strict);
/* Stop every thread and hold it (S->hold) until events_release_all(). */
int events_stop_all(struct session *S);
/* Let every held task go on as it would have. */
void events_release_all(struct session *S);
/* -f: wait for the first stop of fork child C (its parent stopped at
 * its event).  0: stopped; -1: it died (C deleted). */
int events_wait_new(struct session *S, struct task *c);
/* Has thread TID a SIGTRAP pending (an int3 it executed as it stopped
 * for something else: its hit is still to be reported)? */
int sigtrap_pending(pid_t tid);
/* A held thread to run a system call for ptleak (one in a group-stop
 * only if LISTENING_OK), or NULL. */
struct task *events_injection_thread(struct session *S, int listening_ok);

/* ---- recsession.c ---------------------------------------------------- */

struct sym_def;
/* Set by the drain timer: the loop drains the ring (recs_drain). */
extern volatile sig_atomic_t drain_due;
/* The drain timer may interrupt (WAITING: waitpid is next) or not. */
void recs_waiting(int waiting);
/* Take every record of the target's ring into the tables. */
void recs_drain(struct session *S);
/* The timer's drain, in the main loop: a hole that blocks the ring for a
 * second is given up (its thread will never finish it). */
void recs_poll(struct session *S);
/* After a tick's recs_poll()s: the timer paced by how full they found
 * the rings (every 0.25-2 ms). */
void recs_pace(void);
/* Every thread held: those inside a hook finish their record first. */
void recs_settle(struct session *S);
/* The last drain (the process is exiting): holes given up. */
void recs_drain_final(struct session *S);
/* Bind allocator function FN (enum alloc_fn) NAME defined by D (object
 * index OBJ) with the recorder, injected first if needed (thread TID
 * stopped; injected only when every thread is).  1: patched; 0: the
 * caller plants a breakpoint (a notice said why); -1: --engine=recorder
 * and it cannot be (message). */
int recs_bind(struct session *S, pid_t tid, const struct sym_def *d, int fn,
	      const char *name, unsigned obj);
/* A binding pass begins (every thread stopped until it ends): the
 * threads' pcs, which no patch may cover, are read once in it. */
void recs_bind_begin(struct session *S);
/* The same for descriptor function NAME (fdprobe_patch_fn: its KIND,
 * fdprobe's index IDX, object OBJ spanning [LO, HI)); 0 also without a
 * heap (--fd-only: breakpoints). */
int recs_bind_fd(struct session *S, pid_t tid, const struct sym_def *d,
		 const char *name, unsigned kind, unsigned idx, unsigned obj,
		 uint64_t lo, uint64_t hi);
/* Thread TID starts (or is seized): its stack told to the hooks. */
void recs_thread_start(struct session *S, pid_t tid, const struct arch_regs *r);
/* Every stopped thread's stack told to the hooks. */
void recs_threads_all(struct session *S);
/* Thread TID exited. */
void recs_thread_exit(struct session *S, pid_t tid);
/* The process has, or is about to have, a second thread of execution in
 * its memory (a thread, a vfork or CLONE_VM child): records carry times. */
void recs_many_threads(struct session *S);
/* A fork child, stopped before it runs: its inherited patches undone. */
void recs_fork_child(struct session *S, pid_t child);
/* The image is gone (exec): forget the recorder. */
void recs_forget(struct session *S);
/* Detach, every thread held: drain, stop recording, restore the
 * entries, move threads out of relocated prologues.  0 or -1. */
int recs_detach(struct session *S);

/* ---- sampler.c ------------------------------------------------------ */

/* Set by the sample timer: the loop takes a sample (sampler_tick). */
extern volatile sig_atomic_t sample_due;
/* The sample store, --timeline's CSV (checked, opened and its header
 * written before the target runs), --live.  0, or -1 (message). */
int sampler_open(struct session *S);
/* The timer, every --interval from now on. */
void sampler_start(struct session *S);
/* The sample timer may interrupt (WAITING: waitpid is next) or not. */
void sampler_waiting(int waiting);
/* The timer's sample: the store, the CSV, the live line. */
void sampler_tick(struct session *S);
/* A report is being made: the live line erased, the threads named, a
 * sample taken (FINAL: the last one, always kept). */
void sampler_report(struct session *S, int final);
/* Thread TID is exiting: its name as it is now. */
void sampler_thread_exit(struct session *S, pid_t tid);
/* The samples so far (for the HTML report), NULL without a sampler. */
const struct timeline *sampler_timeline(const struct session *S);
/* Timer stopped, CSV closed, the store freed. */
void sampler_free(struct session *S);

/* ---- launch.c --------------------------------------------------------- */

/* The tracer of PID (0: none) and its name in COMM. */
int launch_tracer_of(pid_t pid, char *comm, size_t len);
/* Run S->o->argv seized, up to its exec: its pid, or -1 (message). */
pid_t launch_program(struct session *S);

/* ---- detach.c --------------------------------------------------------- */

/* Let go of the target, left as it was (REPORT: the final report first). */
int detach_target(struct session *S, int report);
/* The session detach_on_die() lets go of. */
extern struct session *die_session;
/* die_hook while tracing: leave the target as it was. */
void detach_on_die(void);

/* ---- census_attach.c ------------------------------------------------ */

/* -p, every thread held, nothing planted yet: hold them where none is
 * inside glibc's malloc and no arena is locked (threads inside are let
 * run out, bounded; else the census will say so).  0, or -1 (message). */
int census_attach_quiesce(struct session *S);
/* -p, every thread still held, the allocator bound: the census of the
 * heap (S->proc->census says what was found), read from a snapshot by a
 * thread of ptleak while the program runs on (census_attach_step puts it
 * into the heap table), or, without a snapshot, here and into the table
 * at once. */
void census_attach_take(struct session *S);
/* P's census from a snapshot, if one is being taken: once read, its
 * blocks into the table, a batch per call (BLOCK: wait for the read and
 * put them all), then the snapshot's zombie reaped if REAP (every thread
 * stopped for that if they were not).  Before a report, an exec, a fork's
 * inheritance or a detach: BLOCK. */
void census_attach_step(struct session *S, struct proc *P, int block, int reap);
/* census_attach_step of every process. */
void census_attach_steps(struct session *S, int block, int reap);
/* -f: fork child P starts with its parent PP's table as it is at the
 * fork (the parent's ring drained first): its blocks keep their stacks,
 * no allocation counted (valgrind's --trace-children does the same). */
void census_inherit(struct session *S, struct proc *P, struct proc *Pp);

/* ---- attach.c --------------------------------------------------------- */

/* Why PID cannot be traced, before trying: one message, -1; else 0. */
int attach_check(pid_t pid);
/* -p: seize every thread, set the image up with all of them stopped
 * (held: the caller releases them).  0, or -1 with a message. */
int attach_target(struct session *S);

#endif
