/*
 * cs.h - the capstone handles of the x86-64 arch code.
 *
 * A capstone handle builds its instruction-id cache at its first
 * disassembly (a memset and a sort of the whole x86 table, ~30 us);
 * a handle per analysed instruction paid that for each of the ~50
 * breakpoints planted at start-up.  These two live as long as ptleak.
 */
#ifndef PTLEAK_X86_CS_H
#define PTLEAK_X86_CS_H

#include <capstone/capstone.h>

/* Intel syntax with details (operands, groups); 0 if capstone fails. */
csh x86_cs_detail(void);
/* AT&T syntax, for log and error texts; 0 if capstone fails. */
csh x86_cs_att(void);

#endif
