/*
 * insn_priv.h - what x86-64 instruction analysis (insn.c) and emulation
 * (emulate.c) share: the private encoding of struct arch_insn's operand
 * fields (insn.c's comment) and one ops table per emulated form.
 */
#ifndef PTLEAK_X86_INSN_PRIV_H
#define PTLEAK_X86_INSN_PRIV_H

#include <stdint.h>

#include "arch/arch.h"

#define REG_NONE	(-1)
#define REG_AH		16	/* ah, ch, dh, bh: REG_AH + 0..3 */
#define REG_RIP		32	/* base of a rip-relative memory operand */

/* reg2 of a memory operand: index | log2(scale) << 8 | segment << 12 */
#define MEM_NO_INDEX	0xff
#define MEM_SEG_FS	1
#define MEM_SEG_GS	2
#define MEM_PACK(index, shift, seg) \
	(((index) & 0xff) | ((shift) << 8) | ((seg) << 12))
#define MEM_INDEX(x)	((x) & 0xff)
#define MEM_SHIFT(x)	(((x) >> 8) & 0xf)
#define MEM_SEG(x)	(((x) >> 12) & 0xf)

/* The low SIZE bytes (1, 2, 4, 8) of a value. */
static inline uint64_t size_mask(int size)
{
	return size >= 8 ? ~0ULL : (1ULL << (8 * size)) - 1;
}

/* emulate.c: the emulated forms; x86_ops_xol has no emulation (the
 * instruction runs from an out-of-line slot). */
extern const struct arch_insn_ops x86_ops_nop;
extern const struct arch_insn_ops x86_ops_push;
extern const struct arch_insn_ops x86_ops_ret;
extern const struct arch_insn_ops x86_ops_jmp;
extern const struct arch_insn_ops x86_ops_jmp_reg;
extern const struct arch_insn_ops x86_ops_jmp_mem;
extern const struct arch_insn_ops x86_ops_mov_rr;
extern const struct arch_insn_ops x86_ops_mov_ri;
extern const struct arch_insn_ops x86_ops_test_rr;
extern const struct arch_insn_ops x86_ops_test_ri;
extern const struct arch_insn_ops x86_ops_test_mi;
extern const struct arch_insn_ops x86_ops_test_rip;
extern const struct arch_insn_ops x86_ops_cmp_rr;
extern const struct arch_insn_ops x86_ops_cmp_ri;
extern const struct arch_insn_ops x86_ops_cmp_mi;
extern const struct arch_insn_ops x86_ops_cmp_rip;
extern const struct arch_insn_ops x86_ops_xol;

/* An emulated control transfer: it cannot be copied to a slot. */
int x86_is_branch_ops(const struct arch_insn_ops *ops);

#endif
