/* cfi_abi.c - the x86-64 ABI's CFI rules before any CIE instruction. */
#include "recorder/cfi.h"

/* DWARF register numbers (the x86-64 psABI) */
#define DW_RBX 0
#define DW_RBP 6
#define DW_RSP 7
#define DW_R12 12
#define DW_RIP 16

/*
 * libdw's backend: same_value for rbx, rbp, r12-r15 and rip (16), and
 * rsp = CFA + 0 (a value: elsewhere for the table); nothing else.
 */
void arch_cfi_abi(struct cfi_row *row)
{
	int i;

	*row = (struct cfi_row){ .cfa = CFI_CFA_UNDEFINED };
	for (i = 0; i < CFI_NREGS; i++)
		row->regs[i].where = CFI_UNDEFINED;
	row->regs[DW_RBX].where = CFI_SAME;
	row->regs[DW_RBP].where = CFI_SAME;
	for (i = DW_R12; i <= DW_RIP; i++)
		row->regs[i].where = CFI_SAME;
	row->regs[DW_RSP].where = CFI_ELSEWHERE;
}
