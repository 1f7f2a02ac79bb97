/*
 * emulate.h - x86-64 emulation of the instructions under a breakpoint
 * (emulate.c): one ops table per emulated form, chosen by the analysis
 * (insn.c).
 */
#ifndef PTLEAK_X86_EMULATE_H
#define PTLEAK_X86_EMULATE_H

#include "arch/arch.h"

/* The emulated forms; x86_ops_xol has no emulation (the
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
