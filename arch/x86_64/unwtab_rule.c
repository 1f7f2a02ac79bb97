/* unwtab_rule.c - x86-64 CFI rows as unwind-table rules. */
#include <dwarf.h>
#include <stddef.h>
#include <sys/ucontext.h>

#include "arch/unwtab_arch.h"

/* DWARF register numbers (the x86-64 psABI) */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RIP 16

/*
 * The kernel's rt_sigframe at __restore_rt's sp: the return address slot
 * was popped, so sp points at the ucontext_t.  Its mcontext's gregs hold
 * the interrupted registers.
 */
#define SIG_GREG(n) (offsetof(ucontext_t, uc_mcontext.gregs) + 8 * (n))

/* op = "register REG + offset": DW_OP_bregx or DW_OP_bregN */
static int op_breg(const Dwarf_Op *op, unsigned reg, int64_t *off)
{
	if (op->atom == DW_OP_bregx && op->number == reg) {
		*off = (int64_t)op->number2;
		return 1;
	}
	if (op->atom == DW_OP_breg0 + reg) {
		*off = (int64_t)op->number;
		return 1;
	}
	return 0;
}

/*
 * GCC's and binutils' PLT entries: rsp + 8, plus 8 once the entry has
 * pushed its relocation index (byte 11 of 16, or 10 with IBT/BND):
 *   breg7 8; breg16 0; lit15; and; litN; ge; lit3; shl; plus
 */
static int plt_expr(const Dwarf_Op *ops, size_t n, struct unwtab_rule *r)
{
	static const uint8_t tail[] = { DW_OP_lit15, DW_OP_and, 0, DW_OP_ge,
					DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	int64_t base, zero;
	size_t i;

	if (n != 9 || !op_breg(&ops[0], DW_RSP, &base) ||
	    !op_breg(&ops[1], DW_RIP, &zero) || zero != 0 || base != 8)
		return 0;
	for (i = 0; i < sizeof(tail); i++) {
		if (tail[i] == 0) {
			if (ops[2 + i].atom < DW_OP_lit0 ||
			    ops[2 + i].atom > DW_OP_lit15)
				return 0;
			r->plt_split = ops[2 + i].atom - DW_OP_lit0;
		} else if (ops[2 + i].atom != tail[i]) {
			return 0;
		}
	}
	r->kind = UNWTAB_PLT;
	r->cfa_off = (int32_t)base;
	return 1;
}

/* The CFA rule of a normal frame into R; 0 if the table cannot say it. */
static int cfa_rule(const struct cfi_row *row, struct unwtab_rule *r)
{
	int64_t off = row->cfa_off;

	if (row->cfa == CFI_CFA_INVALID)
		return -1;
	if (row->cfa == CFI_CFA_REG && row->cfa_reg == DW_RSP)
		r->kind = UNWTAB_CFA_SP;
	else if (row->cfa == CFI_CFA_REG && row->cfa_reg == DW_RBP)
		r->kind = UNWTAB_CFA_FP;
	else if (row->cfa == CFI_CFA_EXPR)
		return plt_expr(row->cfa_ops, row->cfa_nops, r);
	else
		return 0;
	if (off != (int32_t)off)
		return 0;
	r->cfa_off = (int32_t)off;
	return 1;
}

/*
 * Where register REGNO of the caller is: *OFF = its offset from the CFA
 * (1), unchanged (2, *OFF = 0), undefined (3), or elsewhere (0); -1 if
 * libdw failed to say.
 */
static int saved_at(const struct cfi_row *row, int regno, int64_t *off)
{
	const struct cfi_loc *l = &row->regs[regno];

	*off = l->where == CFI_AT_CFA ? l->off : 0;
	switch (l->where) {
	case CFI_AT_CFA: return 1;
	case CFI_SAME: return 2;
	case CFI_UNDEFINED: return 3;
	case CFI_ERROR: return -1;
	default: return 0;
	}
}

int arch_unwtab_rule(const struct cfi_row *row, struct unwtab_rule *r)
{
	const Dwarf_Op *ops = row->cfa_ops;
	int64_t ra, fp, off;
	int how, c;

	*r = (struct unwtab_rule){ .kind = UNWTAB_INVALID };
	if (row->signal) {
		/* glibc's __restore_rt: CFA = *(rsp + saved rsp's offset) */
		if (row->cfa == CFI_CFA_INVALID)
			return -1;
		if (row->cfa == CFI_CFA_EXPR && row->cfa_nops == 2 &&
		    op_breg(&ops[0], DW_RSP, &off) &&
		    off == SIG_GREG(REG_RSP) && ops[1].atom == DW_OP_deref)
			*r = (struct unwtab_rule){
				.kind = UNWTAB_SIGNAL,
				.cfa_off = SIG_GREG(REG_RSP),
				.ra_off = SIG_GREG(REG_RIP),
				.fp_off = SIG_GREG(REG_RBP),
			};
		return 0;
	}
	how = saved_at(row, DW_RIP, &ra);
	if (how < 0)
		return -1;
	if (how == 3) {
		r->kind = UNWTAB_STOP;
		return 0;
	}
	if (how != 1 || ra != -8)
		return 0;
	how = saved_at(row, DW_RBP, &fp);
	if (how < 0)
		return -1;
	if ((how == 1 && (fp == 0 || fp != (int16_t)fp)) || how == 0)
		return 0;
	c = cfa_rule(row, r);
	if (c <= 0) {
		*r = (struct unwtab_rule){ .kind = UNWTAB_INVALID };
		return c;
	}
	r->ra_off = (int32_t)ra;
	r->fp_off = (int16_t)fp;
	return 0;
}
