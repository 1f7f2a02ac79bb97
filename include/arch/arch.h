/*
 * arch.h - the architecture contract.
 *
 * Generic code (src/) never names a register, an opcode or an ABI detail.
 * It calls the hooks below, implemented in arch/$(ARCH)/.  The build puts
 * arch/$(ARCH)/ on the include path; its arch_regs.h defines
 * struct arch_regs and these static inline accessors:
 *
 *   uint64_t arch_pc(const struct arch_regs *r);
 *   void     arch_set_pc(struct arch_regs *r, uint64_t pc);
 *   uint64_t arch_sp(const struct arch_regs *r);
 *   uint64_t arch_tp(const struct arch_regs *r);   thread pointer (TCB)
 *   uint64_t arch_arg(const struct arch_regs *r, int n);     n = 0..5
 *   uint64_t arch_retval(const struct arch_regs *r);
 *   long     arch_syscall_nr(const struct arch_regs *r);   -1: not in one
 *   void     arch_reg_values(const struct arch_regs *r, uint64_t *out);
 *            the ARCH_NREG_VALUES general registers (scan roots)
 *   ARCH_STACK_REDZONE: bytes below sp a leaf function may use
 *   uint64_t arch_bp_addr_from_stop_pc(uint64_t pc);         int3: pc - 1
 *   uint64_t arch_entry_ret_slot(const struct arch_regs *r); where the return
 *            address lies at a function's first instruction (x86-64: sp)
 *   ARCH_BP_LEN, ARCH_BP_INSN (initializer of the breakpoint bytes)
 *   ARCH_MAX_INSN_LEN
 *   ARCH_SYSCALL_INSN_LEN: bytes of the system call instruction
 *   ARCH_RELOC_TPOFF: the ELF relocation type filling a GOT slot with an
 *            initial-exec TLS offset from the thread pointer
 *
 * Modelled on the kernel's uprobes: a breakpoint's displaced instruction is
 * analysed once (arch_insn_analyse) into a struct arch_insn whose ops say
 * how it is executed while the breakpoint stays planted: emulated in the
 * tracer, or executed out of line (XOL) in a slot of a scratch page mapped
 * into the target, the slot ending with a jump back so no second stop is
 * needed.
 */
#ifndef PTLEAK_ARCH_H
#define PTLEAK_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch_regs.h"

/* Memory seen by the emulator.  Both return 0, or -1 when the access fails. */
struct arch_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	int (*write)(void *ctx, uint64_t addr, const void *buf, size_t len);
	void *ctx;
};

struct arch_insn;

/* One ops table per class of analysed instruction. */
struct arch_insn_ops {
	const char *name;	/* "push", "test", "cmp-rip", "ret", "xol", ... */
	/*
	 * Emulate INSN as if the CPU had executed it with registers R and
	 * memory MEM: on success R's pc is the address of the next
	 * instruction (or the branch target).  NULL for instructions that are
	 * executed out of line.  Returns 0, or -1 if a memory access failed.
	 */
	int (*emulate)(const struct arch_insn *insn, struct arch_regs *r,
		       const struct arch_mem *mem);
};

struct arch_insn {
	uint64_t addr;			/* where the instruction lives */
	uint8_t bytes[16];		/* the original bytes */
	uint8_t len;			/* its length */
	const struct arch_insn_ops *ops;
	/* decoded operands, private to the arch code */
	int reg, reg2;			/* arch register numbers */
	int size;			/* operand size in bytes */
	int64_t imm;
	int64_t disp;
	uint8_t disp_off, disp_size;	/* where a displacement sits in bytes[] */
	uint8_t rip_relative;
	char text[64];			/* "push %r12" style, for logs and errors */
};

static inline int arch_insn_is_xol(const struct arch_insn *i)
{
	return i->ops && !i->ops->emulate;
}

/*
 * Decode the instruction at ADDR from CODE (N bytes available, at least
 * ARCH_MAX_INSN_LEN when the mapping allows).  Returns 0 and fills INSN, or
 * -1 with a message in ERR when the instruction can neither be emulated
 * nor executed out of line (e.g. a relative call).
 */
int arch_insn_analyse(struct arch_insn *insn, uint64_t addr,
		      const uint8_t *code, size_t n, char *err, size_t errlen);

/* Size of one out-of-line slot in bytes. */
#define ARCH_XOL_SLOT_SIZE 32

/*
 * Build the out-of-line slot for INSN at target address SLOT into BUF
 * (ARCH_XOL_SLOT_SIZE bytes): the instruction with any pc-relative operand
 * rewritten for its new place, then a jump back to insn->addr + insn->len.
 * Returns 0, or -1 with a message in ERR (e.g. a rip-relative target out
 * of reach from SLOT).
 */
int arch_xol_build(const struct arch_insn *insn, uint64_t slot, uint8_t *buf,
		   char *err, size_t errlen);

/*
 * A thread stopped with pc inside an out-of-line slot built for INSN at
 * SLOT: the equivalent pc in the original code (used when detaching).
 */
uint64_t arch_xol_fixup_pc(const struct arch_insn *insn, uint64_t slot,
			   uint64_t pc);

/* The trampoline code a hijacked return lands on (a breakpoint). */
extern const uint8_t arch_trampoline_code[];
extern const size_t arch_trampoline_len;
/* Where in the trampoline's code a system call instruction is, followed
 * by a spin (struct arch_inject_via), up to the clone's, whose child
 * leaves (exit_group) if it ever runs on from there; the clone's up to
 * arch_trampoline_len. */
extern const size_t arch_trampoline_syscall;
extern const size_t arch_trampoline_clone;

/* Register I/O of a stopped thread.  0 or -1 (errno set). */
int arch_get_regs(pid_t tid, struct arch_regs *r);
int arch_set_regs(pid_t tid, const struct arch_regs *r);

/*
 * What a thread left in an injection by ptleak's death needs to be given
 * back (guard.h): its registers and signal mask before it, where its pc
 * is while it runs the call and after (CODE_LO to CODE_HI), and the code
 * bytes ptleak changed at its pc for it (CODE_LEN 0: none, the call in
 * ptleak's page).
 */
struct arch_inject_note {
	const struct arch_regs *saved;
	uint64_t mask;
	uint64_t code_lo, code_hi;	/* the call and what follows it */
	uint64_t code_at;
	uint8_t code[8];
	size_t code_len;
};

/*
 * How an injection runs.  INSN: the address of a system call instruction
 * followed by a spin (arch_trampoline_syscall in ptleak's page), the
 * thread's own code left alone: a vfork child, which shares the memory
 * and is never stopped, may be running the bytes at a held thread's pc;
 * END: the end of the code that follows it there; with WRITE, the call
 * is written at INSN for the time of it (a place no thread runs: the
 * program's entry point, long run; another thread blocked at the same
 * pc as the injected one would run bytes written at that pc if ptleak
 * died meanwhile); INSN 0: the instruction written at the thread's pc
 * for the time of it (set-up, every other thread stopped).  NOTE(CTX, TID, N) is told before the
 * thread runs anything, NOTE(CTX, TID, NULL) once it has its registers
 * and mask back (NOTE NULL: nobody).
 */
struct arch_inject_via {
	uint64_t insn, end;
	int write;		/* the call written at INSN for the time of it */
	void (*note)(void *ctx, pid_t tid, const struct arch_inject_note *n);
	void *ctx;
};

/*
 * Make stopped thread TID execute system call NR with ARGS as VIA says
 * (NULL: at its pc, nobody told), under PTRACE_SYSCALL: TID must be
 * traced with PTRACE_O_TRACESYSGOOD, and seized (else it is left in its
 * syscall-exit stop, see ptrace.c).  Returns 0 and the
 * raw result in *RET, or -1.  A signal that arrived meanwhile (every
 * other is blocked for the time of it: SIGSTOP, a SIGTRAP sent) is
 * queued to TID again at the end, and a group-stop it was to take part
 * in made up for the same way: resumed, it gets them.  Not seized, TID
 * is left in a stop a signal can be given at: *HELD_SIG (0: none) is the
 * signal to resume it with.  A process or thread the call created
 * (clone, fork: its PTRACE_EVENT_*) in *CHILD (NULL: not asked), as
 * ptleak's pid namespace numbers it.
 */
int arch_inject(pid_t tid, const struct arch_inject_via *via, long nr,
		const uint64_t args[6], uint64_t *ret, int *held_sig,
		pid_t *child);

/*
 * Single-step stopped thread TID while MORE(CTX, its registers) says so,
 * at most MAX steps, its signals blocked meanwhile (as for an injection:
 * a signal that came is held in *HELD_SIG, 0: none).  Used at detach to
 * let a thread stopped inside the recorder's code leave it, no other
 * code of the program running.  0 when MORE said no, 1 after MAX steps,
 * -1 (message) on error or if the thread died.
 */
int arch_step_while(pid_t tid, int (*more)(void *ctx, const struct arch_regs *r),
		    void *ctx, unsigned max, int *held_sig);

/* System call numbers the generic code injects. */
extern const long arch_sys_mmap, arch_sys_munmap;
/* ... and the recorder's data area (recorder.h) */
extern const long arch_sys_memfd_create, arch_sys_ftruncate, arch_sys_close;
/* ... and the recorder's hooks of descriptor functions (rec_arch.h) */
extern const long arch_sys_getpid;
/* ... and a live report's snapshot (snapshot.h) */
extern const long arch_sys_clone, arch_sys_wait4;
/* seccomp_data.arch of this ABI (AUDIT_ARCH_*); the injected system call
 * instruction is ARCH_SYSCALL_INSN_LEN bytes (arch_regs.h) */
extern const uint32_t arch_audit_arch;

/*
 * Where main is, from CODE (LEN bytes at address ENTRY, the executable's
 * entry point): glibc's _start hands main to __libc_start_main in the
 * first argument.  Returns 0 with *ADDR = main, 1 with *ADDR = the address
 * of a pointer to main (a GOT slot, valid once the dynamic linker has
 * relocated the executable), or -1 if the code is not recognised.
 */
int arch_main_from_entry(const uint8_t *code, size_t len, uint64_t entry,
			 uint64_t *addr);

/*
 * libunwind register REGNUM (UNW_* of this arch) from R.  0, or -1 if the
 * register is not kept in struct arch_regs.
 */
int arch_unw_reg(const struct arch_regs *r, int regnum, uint64_t *val);

#endif
