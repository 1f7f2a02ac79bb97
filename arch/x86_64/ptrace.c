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

/* What a wait of an injection is for (wait_stop). */
enum want {
	WANT_STEP,	/* the single-step trap */
	WANT_SYSCALL,	/* a syscall-entry or -exit stop: *OP says which */
	WANT_EVENT,	/* the PTRACE_INTERRUPT's stop */
};

static int stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* The syscall stop's kind (PTRACE_SYSCALL_INFO_*), or 0 if the stop is
 * not one (a SIGTRAP of its own).  The kernel only says for a thread
 * traced with PTRACE_O_TRACESYSGOOD (arch_inject's requirement): SYSGOOD,
 * the stop's signal says so. */
static int syscall_op(pid_t tid, int sysgood)
{
	struct __ptrace_syscall_info si;
	struct arch_regs r;

	memset(&si, 0, sizeof(si));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(si), &si) <= 0) {
		/* before Linux 5.3: a TRACESYSGOOD stop is a syscall stop,
		 * its entry's rax -ENOSYS (an exit's only for a call that
		 * does not exist, which ptleak never injects) */
		if (!sysgood || arch_get_regs(tid, &r))
			return 0;
		return (int64_t)r.r.rax == -ENOSYS ? PTRACE_SYSCALL_INFO_ENTRY
						   : PTRACE_SYSCALL_INFO_EXIT;
	}
	return si.op == PTRACE_SYSCALL_INFO_ENTRY || si.op == PTRACE_SYSCALL_INFO_EXIT
		? si.op : 0;
}

/*
 * Wait for the stop of TID that WANT says, resuming it with REQ
 * (PTRACE_SINGLESTEP, PTRACE_SYSCALL, PTRACE_CONT) past any other.  0
 * when it came (*OP: a syscall stop's kind); -1 with a message otherwise.
 * A group-stop met on the way (or in the interrupt's place) leaves its
 * signal in *GSTOP: the thread, resumed, is out of it.
 * Every signal but SIGTRAP is blocked meanwhile (see arch_inject), so
 * only SIGSTOP can stop the thread first: held back in *SIG with its
 * siginfo in *INFO (delivered later).  Nothing is ever queued again
 * while the signals are blocked: a signal queued again would stop the
 * thread again at once, forever.  *GONE is set if the thread died.
 */
static int wait_stop(pid_t tid, enum want want, int req, int *op, int *sig,
		     int *gstop, siginfo_t *info, int *gone, pid_t *child)
{
	int st;

	for (;;) {
		pid_t w = waitpid(tid, &st, __WALL);
		int event, trap;

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
		event = st >> 16;
		trap = event == 0 && (WSTOPSIG(st) & 0x7f) == SIGTRAP;
		if (trap && (WSTOPSIG(st) == (SIGTRAP | 0x80) || want == WANT_SYSCALL) &&
		    (*op = syscall_op(tid, WSTOPSIG(st) == (SIGTRAP | 0x80)))) {
			if (want == WANT_SYSCALL)
				return 0;
			/* (a syscall stop when none is asked for: none) */
		} else if (trap && want == WANT_STEP) {
			return 0;
		} else if (event == PTRACE_EVENT_STOP && want == WANT_EVENT) {
			/* (a group-stop may take the interrupt's place) */
			if (stop_signal(WSTOPSIG(st)))
				*gstop = WSTOPSIG(st);
			return 0;
		} else if (event == PTRACE_EVENT_STOP && stop_signal(WSTOPSIG(st))) {
			/* a group-stop the thread was to take part in: resumed,
			 * it leaves it (noted, made up for after) */
			*gstop = WSTOPSIG(st);
		} else if (event == PTRACE_EVENT_EXIT) {
			/* SIGKILL (or another thread's exec) */
			*gone = 1;
			ptrace(PTRACE_CONT, tid, NULL, NULL);
			return error("thread %d was killed during a system call "
				     "injection", (int)tid);
		} else if (event == 0 && !*sig) {
			/* a signal-delivery-stop: deliver it after */
			*sig = WSTOPSIG(st);
			if (ptrace(PTRACE_GETSIGINFO, tid, NULL, info) == -1)
				memset(info, 0, sizeof(*info));
		} else if (event == 0 && WSTOPSIG(st) != *sig) {
			error("signal %d of thread %d is lost", WSTOPSIG(st),
			      (int)tid);
		}
		if (child && (event == PTRACE_EVENT_CLONE ||
			      event == PTRACE_EVENT_FORK ||
			      event == PTRACE_EVENT_VFORK)) {
			unsigned long msg = 0;

			if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0)
				*child = (pid_t)msg;
		}
		/* else: seccomp let the tracer look at it, a PTRACE_INTERRUPT
		 * still pending stopped it first, or the same signal again
		 * (held once, as the kernel would): go on */
		if (ptrace(req, tid, NULL, NULL) == -1)
			return error("cannot resume thread %d: %s", (int)tid,
				     strerror(errno));
	}
}

/*
 * PTLEAK_DEBUG=die-inject=NAME[:trap]: ptleak SIGKILLs itself in the
 * first injection of system call NAME (mmap, munmap, clone, wait4),
 * once the thread runs it, or (":trap") once it is stopped after it:
 * what the guardian must then mend (tests).
 */
static void die_inject(long nr, int trap)
{
	static const struct { const char *name; const long *nr; } names[] = {
		{ "mmap", &arch_sys_mmap }, { "munmap", &arch_sys_munmap },
		{ "clone", &arch_sys_clone }, { "wait4", &arch_sys_wait4 },
	};
	const char *v = getenv("PTLEAK_DEBUG"), *p;
	unsigned i;

	if (!v || !(p = strstr(v, "die-inject=")))
		return;
	p += strlen("die-inject=");
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		size_t n = strlen(names[i].name);

		if (!strncmp(p, names[i].name, n) && *names[i].nr == nr &&
		    !strncmp(p + n, ":trap", 5) == !!trap)
			kill(getpid(), SIGKILL);
	}
}

/*
 * Write the registers of the injection, run until the system call has
 * run; its result in *RET.  START: where the injected instruction is.
 * SAVED: the registers the thread gets back, whose rax becomes the result
 * of a system call the thread was stopped inside (an event stop: fork,
 * clone, exec) if the first stop is only that call's exit.
 *
 * The call runs under PTRACE_SYSCALL, not a single step: if ptleak dies
 * meanwhile the kernel drops a syscall trace, but a step's trap flag
 * stays and its SIGTRAP would kill the thread; and the thread ends in
 * the PTRACE_INTERRUPT's stop, which gives nothing to deliver if ptleak
 * dies before resuming it (a step's trap stop gives SIGTRAP).  A thread
 * not seized (no PTRACE_INTERRUPT: ptleak seizes every thread; tests)
 * stays in the syscall-exit stop: a system call it was interrupted in
 * is not restarted, and a signal to resume it with is sent without its
 * siginfo.
 */
static int run_syscall(pid_t tid, uint64_t start, struct arch_regs *saved,
		       const struct arch_regs *regs, uint64_t *ret, int *sig,
		       siginfo_t *info, int *gone, pid_t *child, int *interrupted,
		       int *gstop)
{
	struct arch_regs after;
	int n, op = 0, entered = 0;

	if (arch_set_regs(tid, regs))
		return error("cannot set the registers of thread %d: %s",
			     (int)tid, strerror(errno));
	for (n = 0; n < 8; n++) {
		if (ptrace(PTRACE_SYSCALL, tid, NULL, NULL) == -1)
			return error("cannot resume thread %d: %s", (int)tid,
				     strerror(errno));
		if (!n)
			die_inject((long)regs->r.rax, 0);
		if (wait_stop(tid, WANT_SYSCALL, PTRACE_SYSCALL, &op, sig, gstop,
			      info, gone, child))
			return -1;
		if (arch_get_regs(tid, &after))
			return error("cannot read the registers of thread %d: %s",
				     (int)tid, strerror(errno));
		if (op == PTRACE_SYSCALL_INFO_ENTRY) {
			entered = after.r.rip == start + 2;
			continue;
		}
		if (entered)
			break;
		/*
		 * The exit of a system call the thread was stopped inside
		 * (an exec or fork event stop): it wrote that call's result
		 * into rax, the thread's own (a fork event's child pid: rax
		 * was still its entry's -ENOSYS), given back to it after;
		 * the registers again.
		 */
		if ((int64_t)saved->r.rax == -ENOSYS && after.r.rax != regs->r.rax)
			saved->r.rax = after.r.rax;
		if (arch_set_regs(tid, regs))
			return error("cannot set the registers of thread %d: %s",
				     (int)tid, strerror(errno));
	}
	if (!entered || after.r.rip != start + 2)
		return error("system call injection in thread %d ended at "
			     "%#llx, not %#llx", (int)tid, after.r.rip,
			     (unsigned long long)start + 2);
	*ret = after.r.rax;
	/* out of the syscall-exit stop into the interrupt's, before the
	 * return to user space (the pc stays) */
	*interrupted = ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) == 0;
	if (*interrupted) {
		if (ptrace(PTRACE_CONT, tid, NULL, NULL) == -1)
			return error("cannot resume thread %d: %s", (int)tid,
				     strerror(errno));
		if (wait_stop(tid, WANT_EVENT, PTRACE_CONT, &op, sig, gstop, info,
			      gone, child))
			return -1;
	}
	die_inject((long)regs->r.rax, 1);
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
 * System call NR with ARGS run by stopped thread TID as VIA says: at
 * VIA->insn (written there for the time of it with VIA->write), or
 * (none) written at the thread's pc for the time of it, with a spin after
 * it where the word holds one (0f 05 eb fe).
 */
int arch_inject(pid_t tid, const struct arch_inject_via *via, long nr,
		const uint64_t args[6], uint64_t *ret, int *held_sig,
		pid_t *child)
{
	struct arch_regs saved, regs;
	struct arch_inject_note note;
	unsigned long long at = 0;
	unsigned long word = 0, patched;
	uint64_t mask, insn = via ? via->insn : 0;
	int shift = 0, sig = 0, gone = 0, rc, interrupted = 0, gstop = 0;
	siginfo_t info;

	*held_sig = 0;
	if (arch_get_regs(tid, &saved))
		return error("cannot read the registers of thread %d: %s",
			     (int)tid, strerror(errno));
	memset(&note, 0, sizeof(note));
	if (insn && via->write) {
		/* written at INSN (the program's entry point); not mapped
		 * any more: at the pc */
		errno = 0;
		word = ptrace(PTRACE_PEEKTEXT, tid, (void *)insn, NULL);
		if (errno) {
			insn = 0;
		} else {
			at = insn;
			note.code_at = at;
			memcpy(note.code, &word, sizeof(word));
			note.code_len = sizeof(word);
		}
	}
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
		note.code_at = at;
		memcpy(note.code, &word, sizeof(word));
		note.code_len = sizeof(word);
	}
	/* the guardian told before the mask changes: dead between the two,
	 * ptleak leaves no thread with every signal blocked */
	if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(mask), &mask) == -1)
		return error("cannot read the signal mask of thread %d: %s",
			     (int)tid, strerror(errno));
	note.saved = &saved;
	note.mask = mask;
	note.code_lo = insn;
	if (at)
		note.code_hi = insn + (shift || !via || !via->note ? 2 : 4);
	else
		note.code_hi = via->end > insn ? via->end : insn + 2;
	if (via && via->note)
		via->note(via->ctx, tid, &note);
	if (block_signals(tid, &mask)) {
		if (via && via->note)
			via->note(via->ctx, tid, NULL);
		return -1;
	}
	if (at) {
		/* syscall; jmp . for the guardian to find the thread in if
		 * ptleak dies; the syscall alone at a mapping's end, or with
		 * nobody told (a fork's child: nobody would take it out) */
		patched = shift || !via || !via->note
			  ? (word & ~(0xffffUL << shift)) | (0x050fUL << shift)
			  : (word & ~0xffffffffUL) | 0xfeeb050fUL;
		if (ptrace(PTRACE_POKETEXT, tid, (void *)at, (void *)patched) == -1) {
			rc = unblock(tid, 0, NULL, mask, held_sig,
				     error("cannot write the code of thread %d at %#llx: %s",
					   (int)tid, at, strerror(errno)));
			if (via && via->note)
				via->note(via->ctx, tid, NULL);
			return rc;
		}
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
	rc = run_syscall(tid, insn, &saved, &regs, ret, &sig, &info, &gone, child,
			 &interrupted, &gstop);
	/* (its rax may be the result of a call it was stopped inside now) */
	if (!gone && via && via->note)
		via->note(via->ctx, tid, &note);
	if (gone) {
		if (via && via->note)
			via->note(via->ctx, tid, NULL);
		return -1;
	}
	if (at && ptrace(PTRACE_POKETEXT, tid, (void *)at, (void *)word) == -1)
		rc = error("cannot restore the code of thread %d at %#llx: %s",
			   (int)tid, at, strerror(errno));
	if (arch_set_regs(tid, &saved))
		rc = error("cannot restore the registers of thread %d: %s",
			   (int)tid, strerror(errno));
	/*
	 * In a signal-delivery-stop (the step's trap), resumed with SIG, the
	 * thread gets the signal with its siginfo.  In the interrupt's stop
	 * a signal to resume with is ignored: SIG (SIGSTOP, or a SIGTRAP
	 * another sent: every other was blocked) is queued again, the
	 * thread's own mask back first.
	 */
	if (interrupted) {
		rc = unblock(tid, 0, NULL, mask, held_sig, rc);
		if (sig && syscall(SYS_tkill, tid, sig) == -1)
			rc = error("signal %d of thread %d is lost: %s", sig,
				   (int)tid, strerror(errno));
		/* a group-stop the thread left for the call, or entered in
		 * the interrupt's place (resumed as from the interrupt's,
		 * as ptleak's callers will, it would leave it): its signal
		 * again makes it take part */
		if (gstop && gstop != sig && syscall(SYS_tkill, tid, gstop) == -1)
			rc = error("signal %d of thread %d is lost: %s", gstop,
				   (int)tid, strerror(errno));
	} else {
		rc = unblock(tid, sig, &info, mask, held_sig, rc);
	}
	if (via && via->note)
		via->note(via->ctx, tid, NULL);
	return rc;
}

int arch_step_while(pid_t tid, int (*more)(void *ctx, const struct arch_regs *r),
		    void *ctx, unsigned max, int *held_sig)
{
	struct arch_regs r;
	uint64_t mask;
	int sig = 0, gone = 0, rc = -1, op, gstop = 0;
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
		if (wait_stop(tid, WANT_STEP, PTRACE_SINGLESTEP, &op, &sig, &gstop,
			      &info, &gone, NULL))
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
