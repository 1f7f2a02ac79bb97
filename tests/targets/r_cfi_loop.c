/*
 * r_cfi_loop - a function whose unwind information loops: its CFA rule
 * (DW_CFA_def_cfa_expression) is DW_OP_skip -3, a jump back to itself.
 * Whatever evaluates it must bound its work.  main keeps the 24 bytes
 * call_malloc() allocates (@call), loses 40 more (@lost) and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>

void *call_malloc(unsigned long n);

__asm__(".text\n"
	".globl call_malloc\n"
	".type call_malloc, @function\n"
	"call_malloc:\n"
	".cfi_startproc\n"
	"\tsub $8, %rsp\n"
	/* DW_CFA_def_cfa_expression, 3 bytes: DW_OP_skip, -3 */
	".cfi_escape 0x0f, 0x03, 0x2f, 0xfd, 0xff\n"
	"\tcall malloc@PLT\n"
	"\tadd $8, %rsp\n"
	"\tret\n"
	".cfi_endproc\n"
	".size call_malloc, .-call_malloc\n");

void *volatile keep;

int main(void)
{
	keep = call_malloc(24);	/* @call */
	call_malloc(40);	/* @lost */
	printf("done\n");
	return 0;
}
