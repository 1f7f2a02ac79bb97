/* arch_regs.h - x86-64 registers and the System V calling convention. */
#ifndef PTLEAK_ARCH_REGS_H
#define PTLEAK_ARCH_REGS_H

#include <stdint.h>
#include <sys/user.h>

struct arch_regs {
	struct user_regs_struct r;
	/* xmm0_set: arch_set_regs puts xmm0 back too (a thread taken out
	 * of the stub's scrub, which zeroes with %xmm0: rec_out.c);
	 * arch_get_regs clears it */
	int xmm0_set;
	uint64_t xmm0[2];
};

#define ARCH_NAME "x86_64"
#define ARCH_BP_LEN 1
#define ARCH_BP_INSN { 0xcc }
#define ARCH_MAX_INSN_LEN 15
#define ARCH_SYSCALL_INSN_LEN 2	/* syscall: 0f 05 */
/* The dynamic relocation that stores an initial-exec TLS variable's
 * offset from the thread pointer in a GOT slot (R_X86_64_TPOFF64). */
#define ARCH_RELOC_TPOFF 18

static inline uint64_t arch_pc(const struct arch_regs *r) { return r->r.rip; }
static inline void arch_set_pc(struct arch_regs *r, uint64_t pc) { r->r.rip = pc; }
static inline uint64_t arch_sp(const struct arch_regs *r) { return r->r.rsp; }
/* The thread pointer: glibc's TCB (struct pthread) is at the fs base. */
static inline uint64_t arch_tp(const struct arch_regs *r) { return r->r.fs_base; }
static inline uint64_t arch_retval(const struct arch_regs *r) { return r->r.rax; }
static inline uint64_t arch_entry_ret_slot(const struct arch_regs *r) { return r->r.rsp; }
/* The system call a thread is in (at a PTRACE_EVENT_EXIT stop: exit or
 * exit_group), -1 if none. */
static inline long arch_syscall_nr(const struct arch_regs *r) { return (long)r->r.orig_rax; }
/* After an int3 trap the pc is one past the breakpoint byte. */
static inline uint64_t arch_bp_addr_from_stop_pc(uint64_t pc) { return pc - 1; }

/* The general registers, roots of the reachability scan. */
#define ARCH_NREG_VALUES 16
static inline void arch_reg_values(const struct arch_regs *r, uint64_t *out)
{
	const uint64_t v[ARCH_NREG_VALUES] = {
		r->r.rax, r->r.rbx, r->r.rcx, r->r.rdx, r->r.rsi, r->r.rdi,
		r->r.rbp, r->r.rsp, r->r.r8, r->r.r9, r->r.r10, r->r.r11,
		r->r.r12, r->r.r13, r->r.r14, r->r.r15,
	};
	unsigned i;

	for (i = 0; i < ARCH_NREG_VALUES; i++)
		out[i] = v[i];
}
/* Bytes below the stack pointer a function may use without moving it. */
#define ARCH_STACK_REDZONE 128
/* Fewer bytes than a signal handler's call can be below the code it
 * interrupted: the kernel skips the red zone (128) and pushes an
 * rt_sigframe (440) and the FPU state (516 with fxsave only, more with
 * xsave) before the handler's own frame. */
#define ARCH_SIGFRAME_MIN 1024

static inline uint64_t arch_arg(const struct arch_regs *r, int n)
{
	switch (n) {
	case 0: return r->r.rdi;
	case 1: return r->r.rsi;
	case 2: return r->r.rdx;
	case 3: return r->r.rcx;
	case 4: return r->r.r8;
	case 5: return r->r.r9;
	}
	return 0;
}

#endif
