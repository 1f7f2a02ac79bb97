/*
 * fastdec.h - the x86-64 instructions functions usually open with,
 * decoded without capstone (arch-private; fastdec.c says why).
 */
#ifndef PTLEAK_X86_FASTDEC_H
#define PTLEAK_X86_FASTDEC_H

#include <stddef.h>
#include <stdint.h>

struct x86_fast {
	uint8_t len;		/* the instruction's bytes */
	uint8_t rip_off;	/* where its disp32(%rip) sits, 0: none */
	uint8_t endbr64;	/* it is endbr64 */
	uint8_t branch;		/* jcc/jmp rel8/rel32 (no prefix) */
	uint8_t cc;		/* a branch's condition 0-15, 16: jmp */
	int32_t rel;		/* its displacement (from its end) */
};

/*
 * 1 and *OUT if CODE[0 .. N) starts with an instruction of the list
 * fastdec.c decodes: never a call, return, trap or anything else the
 * patch planner's capstone analysis refuses, %rip only as a memory base;
 * jcc and jmp rel8/rel32 flagged as branches.
 * 0: not one of them (or X86_FAST_OFF set): ask capstone.
 */
int x86_fast_decode(const uint8_t *code, size_t n, struct x86_fast *out);

/*
 * The instructions the breakpoints of a launch displace (glibc 2.36:
 * _dl_debug_state's ret; execve, execveat, fexecve open with mov $imm,
 * mov %rcx,%r10 and push %r13) analysed without capstone: endbr64, ret,
 * push r64, mov between r32/r64 registers, mov $imm32 to r32.  Fills
 * INSN (addr, reg and reg2 set by the caller) exactly as capstone's
 * analysis would, its AT&T text included, and returns 1; 0: capstone
 * decides (insn.c; tests/unit/test_arch.c compares the two).
 */
struct arch_insn;
int x86_fast_analyse(struct arch_insn *insn, const uint8_t *code, size_t n);

/*
 * arch_main_from_entry for glibc's _start without capstone (entry.c):
 * every instruction before the first call decoded by fastdec, %rdi set
 * only by lea/mov disp32(%rip) or mov $imm32: its answer, else -2 (then
 * capstone decides).
 */
int x86_main_fast(const uint8_t *code, size_t len, uint64_t entry,
		  uint64_t *addr);

/* Non-zero: x86_fast_decode and x86_fast_analyse always say 0 (tests compare with capstone). */
extern int x86_fast_off;

#endif
