/*
 * cfi.h - call frame information rows, and a one-pass interpreter of an
 * FDE's call frame instructions.
 *
 * A row says, for the addresses it covers, how the caller's frame is found:
 * the CFA and where each register of the caller is.  struct cfi_row is
 * what the unwind-table compiler (unwtab.c) hands to the arch half
 * (unwtab_arch.h); it comes either from libdw (cfi_frame_row, any CFI) or
 * from cfi_fde_rows, which runs an FDE's instructions once and emits each
 * row with the addresses it covers, where libdw re-runs them from the FDE's
 * start for every row.
 *
 * cfi_fde_rows gives exactly the rows dwarf_cfi_addrframe would give
 * (libdw's execute_cfi is the reference: the ABI's initial rules from
 * cfi_arch.h, the CIE's then the FDE's instructions, offsets truncated
 * to 61 bits as libdw stores them) or says it cannot: DW_CFA_expression,
 * def_cfa_expression, val_expression, set_loc, unknown opcodes, an
 * instruction libdw would refuse, truncated operands.  The caller then asks
 * libdw for that FDE.  An FDE's lookup (which FDE libdw finds for a pc) is
 * the caller's business.
 */
#ifndef PTLEAK_CFI_H
#define PTLEAK_CFI_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

#include "cfi_arch.h"		/* CFI_NREGS, arch_cfi_abi() */

/* Where the caller's value of a register is. */
enum cfi_where {
	CFI_UNDEFINED,		/* unknown (DW_CFA_undefined, unspecified) */
	CFI_SAME,		/* unchanged (DW_CFA_same_value) */
	CFI_AT_CFA,		/* saved at CFA + off */
	CFI_ELSEWHERE,		/* in another register, = CFA + N, or an
				 * expression's result */
	CFI_ERROR,		/* libdw failed to say (a bad expression) */
};

struct cfi_loc {
	int64_t off;		/* CFI_AT_CFA */
	uint8_t where;		/* enum cfi_where */
};

enum cfi_cfa {
	CFI_CFA_UNDEFINED,	/* no CFA rule */
	CFI_CFA_REG,		/* CFA = register cfa_reg + cfa_off */
	CFI_CFA_EXPR,		/* a DWARF expression: cfa_ops */
	CFI_CFA_INVALID,	/* the register or offset was redefined after
				 * an expression (libdw refuses the CFA) */
};

struct cfi_row {
	uint8_t cfa;		/* enum cfi_cfa */
	bool signal;		/* the CIE says signal frame ('S') */
	uint64_t cfa_reg;
	int64_t cfa_off;
	const Dwarf_Op *cfa_ops;	/* CFI_CFA_EXPR, libdw's (from libdw only) */
	size_t cfa_nops;
	struct cfi_loc regs[CFI_NREGS];	/* DWARF registers 0 .. CFI_NREGS-1 */
};

/* The row of libdw's FRAME (from dwarf_cfi_addrframe) into *ROW. */
void cfi_frame_row(Dwarf_Frame *frame, bool signalp, struct cfi_row *row);

/* What an FDE's rows need of its CIE, prepared once per CIE. */
struct cfi_cie {
	bool ok;		/* cfi_fde_rows can run its FDEs */
	uint64_t caf;		/* code alignment factor */
	int64_t daf;		/* data alignment factor */
	struct cfi_row init;	/* the state after its initial instructions */
};

/*
 * Prepare *CIE from libdw's parse of a CIE (dwarf_next_cfi); SIGNALP if
 * its augmentation has 'S'.  CIE->ok false if its initial instructions
 * are not interpreted here (or libdw would refuse them).
 */
void cfi_cie_init(struct cfi_cie *cie, const Dwarf_CIE *e, bool signalp);

/* Called with each row of an FDE and the addresses [START, END) it covers,
 * in order; non-zero stops the FDE and is returned. */
typedef int (*cfi_row_fn)(const struct cfi_row *row, uint64_t start,
			  uint64_t end, void *arg);

#define CFI_FALLBACK 1		/* not interpreted here: ask libdw */

/*
 * Run the FDE whose instructions are [INSNS, END) (after its augmentation
 * data) and which covers [LO, HI): FN for each row as compile_fde asks
 * libdw for them (a row from each pc on to the next advance past it, cut
 * at HI).  Returns 0, FN's non-zero value, or CFI_FALLBACK when the FDE
 * needs libdw: FN may have been called for its first rows already.
 */
int cfi_fde_rows(const struct cfi_cie *cie, const uint8_t *insns,
		 const uint8_t *end, uint64_t lo, uint64_t hi,
		 cfi_row_fn fn, void *arg);

/*
 * Which FDE libdw finds for a pc: with an .eh_frame_hdr table
 * (dwarf_getcfi_elf's), its binary search, mirrored here.
 */
struct cfi_hdr {
	const uint8_t *table;	/* NULL: libdw reads the FDEs in order */
	size_t n;
	uint64_t vaddr;		/* the .eh_frame_hdr's address */
	uint64_t frame_vaddr;	/* the .eh_frame's */
};

/*
 * The .eh_frame_hdr's SIZE bytes at DATA, linked at VADDR, for the
 * .eh_frame at EH_FRAME_ADDR: 1 if libdw searches its table, 0 if it
 * ignores it, -1 if its encodings are not the ones followed here.
 */
int cfi_hdr_open(struct cfi_hdr *h, const uint8_t *data, size_t size,
		 uint64_t vaddr, uint64_t eh_frame_addr);

/* The offset in .eh_frame of the FDE libdw's search gives for PC when no
 * FDE found before covers it, or (uint64_t)-1. */
uint64_t cfi_hdr_find(const struct cfi_hdr *h, uint64_t pc);

#endif
