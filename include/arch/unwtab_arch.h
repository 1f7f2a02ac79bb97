/*
 * unwtab_arch.h - the architecture half of the unwind-table compiler.
 *
 * src/unwtab.c enumerates an object's CFI rows and lays out the table;
 * which DWARF register is the stack pointer, what GCC's PLT expression
 * looks like and where the kernel saves an interrupted thread's registers
 * in a signal frame are arch/$(ARCH)/unwtab_rule.c's business.
 */
#ifndef PTLEAK_UNWTAB_ARCH_H
#define PTLEAK_UNWTAB_ARCH_H

#include "recorder/cfi.h"
#include "recorder/unwtab.h"

/*
 * The table rule (unwtab.h) equivalent to the CFI row ROW (cfi.h): kind
 * STOP when CFI says the return address is undefined (outermost frame),
 * INVALID when the row cannot be expressed.  Returns 0, or -1 if the row
 * has a CFA or register libdw refused (CFI_CFA_INVALID, CFI_ERROR) where
 * the rule needs it.
 */
int arch_unwtab_rule(const struct cfi_row *row, struct unwtab_rule *r);

#endif
