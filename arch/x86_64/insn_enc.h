/*
 * insn_enc.h - the encoding of struct arch_insn's operand fields (insn.c's
 * comment): written by the instruction analysis (insn.c), read by the
 * emulation (emulate.c).  Below both.
 */
#ifndef PTLEAK_X86_INSN_ENC_H
#define PTLEAK_X86_INSN_ENC_H

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

#endif
