/*
 * cfi_arch.h - what the CFI interpreter (cfi.h) needs of the ABI, x86-64.
 *
 *   CFI_NREGS          DWARF registers a row tracks: 0-16, up to the
 *                      return address (rip); the rules of the others are
 *                      never asked
 *   arch_cfi_abi(row)  the rules before a CIE's initial instructions, as
 *                      libdw's backend sets them (backends/x86_64_cfi.c):
 *                      callee-saved registers and rip unchanged, rsp =
 *                      the CFA, the rest undefined
 */
#ifndef PTLEAK_CFI_ARCH_H
#define PTLEAK_CFI_ARCH_H

#define CFI_NREGS 17

struct cfi_row;
void arch_cfi_abi(struct cfi_row *row);

#endif
