/*
 * ptrace.c - x86-64 register I/O, system call injection and the libunwind
 * register map.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/audit.h>

#include <libunwind-x86_64.h>

#include "arch/arch.h"
#include "base/util.h"

const long arch_sys_mmap = SYS_mmap;
const long arch_sys_munmap = SYS_munmap;
const long arch_sys_memfd_create = SYS_memfd_create;
const long arch_sys_ftruncate = SYS_ftruncate;
const long arch_sys_close = SYS_close;
const long arch_sys_getpid = SYS_getpid;
const long arch_sys_clone = SYS_clone;
const long arch_sys_wait4 = SYS_wait4;
const uint32_t arch_audit_arch = AUDIT_ARCH_X86_64;

int arch_get_regs(pid_t tid, struct arch_regs *r)
{
	memset(r, 0, sizeof(*r));	/* xmm0_set 0; copies compare equal */
	return ptrace(PTRACE_GETREGS, tid, NULL, &r->r) == -1 ? -1 : 0;
}

int arch_set_regs(pid_t tid, const struct arch_regs *r)
{
	struct user_fpregs_struct fp;

	if (r->xmm0_set) {
		if (ptrace(PTRACE_GETFPREGS, tid, NULL, &fp) == -1)
			return -1;
		memcpy(&fp.xmm_space[0], r->xmm0, sizeof(r->xmm0));
		if (ptrace(PTRACE_SETFPREGS, tid, NULL, &fp) == -1)
			return -1;
	}
	return ptrace(PTRACE_SETREGS, tid, NULL, &r->r) == -1 ? -1 : 0;
}

/*
 * Wait for the single-step trap of TID.  0 when it came; -1 with a message
 * otherwise.  Every signal but SIGTRAP is blocked meanwhile (see
 * arch_inject_syscall), so only SIGSTOP can stop the thread first: held
 * back in *SIG with its siginfo in *INFO (delivered later), the step made
 * again.  Nothing is ever queued again: a signal queued again would stop
 * the thread again at once, forever.  *GONE is set if the thread died.
 */
static int wait_step(pid_t tid, int *sig, siginfo_t *info, int *gone,
		     pid_t *child)
{
	int st;

	for (;;) {
		pid_t w = waitpid(tid, &st, __WALL);

		if (w == -1) {
			if (errno == EINTR)
				continue;
			return error("cannot wait for thread %d: %s", (int)tid,
				     strerror(errno));
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			*gone = 1;
			return error("thread %d exited during a system call "
				     "injection", (int)tid);
		}
		if (!WIFSTOPPED(st))
			continue;
		if (WSTOPSIG(st) == SIGTRAP && (st >> 16) == 0)
			return 0;
		if ((st >> 16) == PTRACE_EVENT_EXIT) {
			/* SIGKILL (or another thread's exec) */
			*gone = 1;
			ptrace(PTRACE_CONT, tid, NULL, NULL);
			return error("thread %d was killed during a system call "
				     "injection", (int)tid);
		}
		if ((st >> 16) == 0 && !*sig) {
			/* a signal-delivery-stop: deliver it after */
			*sig = WSTOPSIG(st);
			if (ptrace(PTRACE_GETSIGINFO, tid, NULL, info) == -1)
				memset(info, 0, sizeof(*info));
		} else if ((st >> 16) == 0 && WSTOPSIG(st) != *sig) {
			error("signal %d of thread %d is lost", WSTOPSIG(st),
			      (int)tid);
		}
		if (child && ((st >> 16) == PTRACE_EVENT_CLONE ||
			      (st >> 16) == PTRACE_EVENT_FORK ||
			      (st >> 16) == PTRACE_EVENT_VFORK)) {
			unsigned long msg = 0;

			if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0)
				*child = (pid_t)msg;
		}
		/* else: seccomp let the tracer look at it, a PTRACE_INTERRUPT
		 * still pending stopped it before the step, or the same
		 * signal again (held once, as the kernel would): go on */
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) == -1)
			return error("cannot single-step thread %d: %s",
				     (int)tid, strerror(errno));
	}
}

/* Write the instruction and registers of the injection, step until the
 * system call has run; its result in *RET.  START: where the injected
 * instruction is.  SAVED: the registers the thread gets back, whose rax
 * becomes the result of a system call the thread was stopped inside (an
 * event stop: fork, clone, exec) if the first step only finishes it. */
static int run_syscall(pid_t tid, uint64_t start, struct arch_regs *saved,
		       const struct arch_regs *regs, uint64_t *ret, int *sig,
		       siginfo_t *info, int *gone, pid_t *child)
{
	struct arch_regs after;
	int step;

	if (arch_set_regs(tid, regs))
		return error("cannot set the registers of thread %d: %s",
			     (int)tid, strerror(errno));
	/*
	 * A thread stopped on the way out of a system call (an exec event
	 * stop, for one) reports the single-step trap at that system call's
	 * exit before executing anything: step again while the pc has not
	 * moved, with the registers set again.
	 */
	for (step = 0; step < 3; step++) {
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) == -1)
			return error("cannot single-step thread %d: %s",
				     (int)tid, strerror(errno));
		if (wait_step(tid, sig, info, gone, child))
			return -1;
		if (arch_get_regs(tid, &after))
			return error("cannot read the registers of thread %d: %s",
				     (int)tid, strerror(errno));
		if (after.r.rip != start)
			break;
		/* that exit wrote the system call's result into rax: the
		 * thread's own (a fork event's child pid: the thread was
		 * stopped inside the call, rax still its entry's -ENOSYS),
		 * given back to it after; and again */
		if ((int64_t)saved->r.rax == -ENOSYS && after.r.rax != regs->r.rax)
			saved->r.rax = after.r.rax;
		if (arch_set_regs(tid, regs))
			return error("cannot set the registers of thread %d: %s",
				     (int)tid, strerror(errno));
	}
	if (after.r.rip != start + 2)
		return error("system call injection in thread %d ended at "
			     "%#llx, not %#llx", (int)tid, after.r.rip,
			     (unsigned long long)start + 2);
	*ret = after.r.rax;
	return 0;
}

/*
 * Block every signal of stopped thread TID but SIGTRAP, its mask saved
 * in *OLD: no signal-delivery-stop during the injection, pending signals
 * stay pending and are delivered once, after.  SIGTRAP stays unblocked:
 * the single-step trap is forced, and a forced signal that is blocked
 * resets its handler to SIG_DFL.
 */
static int block_signals(pid_t tid, uint64_t *old)
{
	uint64_t all = ~(1ULL << (SIGTRAP - 1));

	if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(*old), old) == -1 ||
	    ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(all), &all) == -1)
		return error("cannot block the signals of thread %d: %s",
			     (int)tid, strerror(errno));
	return 0;
}

/*
 * The end of a stop ptleak made a thread take (an injection, steps): a
 * signal that came meanwhile held back (its siginfo set again, *HELD_SIG)
 * and the thread's signal mask MASK given back.  RC, or -1 if that fails.
 */
static int unblock(pid_t tid, int sig, const siginfo_t *info, uint64_t mask,
		   int *held_sig, int rc)
{
	if (sig) {
		if (ptrace(PTRACE_SETSIGINFO, tid, NULL, info) == -1)
			warning("the siginfo of signal %d of thread %d is lost",
				sig, (int)tid);
		*held_sig = sig;
	}
	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask) == -1)
		rc = error("cannot restore the signal mask of thread %d: %s",
			   (int)tid, strerror(errno));
	return rc;
}

/*
 * System call NR with ARGS run by stopped thread TID: the instruction at
 * INSN, or (INSN 0) written at the thread's pc for the time of the step.
 */
static int inject(pid_t tid, uint64_t insn, long nr, const uint64_t args[6],
		  uint64_t *ret, int *held_sig, pid_t *child)
{
	struct arch_regs saved, regs;
	unsigned long long at = 0;
	unsigned long word = 0, patched;
	uint64_t mask;
	int shift = 0, sig = 0, gone = 0, rc;
	siginfo_t info;

	*held_sig = 0;
	if (arch_get_regs(tid, &saved))
		return error("cannot read the registers of thread %d: %s",
			     (int)tid, strerror(errno));
	if (!insn) {
		/* the syscall instruction (0f 05) goes at the pc */
		insn = at = saved.r.rip;
		errno = 0;
		word = ptrace(PTRACE_PEEKTEXT, tid, (void *)at, NULL);
		if (errno) {
			/* the pc may be 2 bytes from the end of its mapping */
			at = saved.r.rip - 6;
			shift = 48;
			errno = 0;
			word = ptrace(PTRACE_PEEKTEXT, tid, (void *)at, NULL);
			if (errno)
				return error("cannot read the code of thread %d at %#llx: "
					     "%s", (int)tid, saved.r.rip, strerror(errno));
		}
	}
	if (block_signals(tid, &mask))
		return -1;
	if (at) {
		patched = (word & ~(0xffffUL << shift)) | (0x050fUL << shift);
		if (ptrace(PTRACE_POKETEXT, tid, (void *)at, (void *)patched) == -1)
			return unblock(tid, 0, NULL, mask, held_sig,
				       error("cannot write the code of thread %d at %#llx: %s",
					     (int)tid, at, strerror(errno)));
	}
	regs = saved;
	regs.r.rip = insn;
	regs.r.rax = (unsigned long long)nr;
	regs.r.rdi = args[0];
	regs.r.rsi = args[1];
	regs.r.rdx = args[2];
	regs.r.r10 = args[3];
	regs.r.r8 = args[4];
	regs.r.r9 = args[5];
	/* no system call restart if the thread was stopped inside one */
	regs.r.orig_rax = ~0ULL;
	rc = run_syscall(tid, insn, &saved, &regs, ret, &sig, &info, &gone, child);
	if (gone)
		return -1;
	if (at && ptrace(PTRACE_POKETEXT, tid, (void *)at, (void *)word) == -1)
		rc = error("cannot restore the code of thread %d at %#llx: %s",
			   (int)tid, at, strerror(errno));
	if (arch_set_regs(tid, &saved))
		rc = error("cannot restore the registers of thread %d: %s",
			   (int)tid, strerror(errno));
	/* the thread is in a signal-delivery-stop (the step's trap, or the
	 * signal's own): resumed with SIG, it gets the signal with its
	 * siginfo */
	return unblock(tid, sig, &info, mask, held_sig, rc);
}

int arch_inject_syscall(pid_t tid, long nr, const uint64_t args[6],
			uint64_t *ret, int *held_sig)
{
	return inject(tid, 0, nr, args, ret, held_sig, NULL);
}

int arch_inject_syscall_at(pid_t tid, uint64_t insn, long nr,
			   const uint64_t args[6], uint64_t *ret, int *held_sig,
			   pid_t *child)
{
	return inject(tid, insn, nr, args, ret, held_sig, child);
}

int arch_step_while(pid_t tid, int (*more)(void *ctx, const struct arch_regs *r),
		    void *ctx, unsigned max, int *held_sig)
{
	struct arch_regs r;
	uint64_t mask;
	int sig = 0, gone = 0, rc = -1;
	unsigned n;
	siginfo_t info;

	*held_sig = 0;
	if (block_signals(tid, &mask))
		return -1;
	for (n = 0; n < max; n++) {
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) == -1) {
			error("cannot single-step thread %d: %s", (int)tid,
			      strerror(errno));
			break;
		}
		if (wait_step(tid, &sig, &info, &gone, NULL))
			break;
		if (arch_get_regs(tid, &r)) {
			error("cannot read the registers of thread %d: %s",
			      (int)tid, strerror(errno));
			break;
		}
		if (!more(ctx, &r)) {
			rc = 0;
			break;
		}
	}
	if (gone)
		return -1;
	if (n == max)
		rc = 1;
	return unblock(tid, sig, &info, mask, held_sig, rc);
}

int arch_unw_reg(const struct arch_regs *r, int regnum, uint64_t *val)
{
	const struct user_regs_struct *u = &r->r;

	switch (regnum) {
	case UNW_X86_64_RAX: *val = u->rax; break;
	case UNW_X86_64_RDX: *val = u->rdx; break;
	case UNW_X86_64_RCX: *val = u->rcx; break;
	case UNW_X86_64_RBX: *val = u->rbx; break;
	case UNW_X86_64_RSI: *val = u->rsi; break;
	case UNW_X86_64_RDI: *val = u->rdi; break;
	case UNW_X86_64_RBP: *val = u->rbp; break;
	case UNW_X86_64_RSP: *val = u->rsp; break;
	case UNW_X86_64_R8: *val = u->r8; break;
	case UNW_X86_64_R9: *val = u->r9; break;
	case UNW_X86_64_R10: *val = u->r10; break;
	case UNW_X86_64_R11: *val = u->r11; break;
	case UNW_X86_64_R12: *val = u->r12; break;
	case UNW_X86_64_R13: *val = u->r13; break;
	case UNW_X86_64_R14: *val = u->r14; break;
	case UNW_X86_64_R15: *val = u->r15; break;
	case UNW_X86_64_RIP: *val = u->rip; break;
	default:
		return -1;
	}
	return 0;
}
