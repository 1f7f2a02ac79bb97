/*
 * uwt_cfi_odd.S - CFI that libdw refuses, as in libgcrypt 1.10's
 * hand-written assembly: DW_CFA_def_cfa_register after a CFA expression
 * (the offset is undefined then).  Built into a shared object for
 * test_unwtab: the rows libdw cannot read must become INVALID, and the
 * next function's must still be there.
 */
	.text
	.globl uwt_odd
	.type uwt_odd, @function
uwt_odd:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	mov %rsp, %rax
	/* DW_CFA_def_cfa_expression: breg7 8; deref; plus_uconst 16 */
	.cfi_escape 0x0f, 0x05, 0x77, 0x08, 0x06, 0x23, 0x10
	nop
	.globl uwt_odd_refused
uwt_odd_refused:
	.cfi_def_cfa_register %rsp
	nop
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size uwt_odd, .-uwt_odd

	.p2align 4
	.globl uwt_after
	.type uwt_after, @function
uwt_after:
	.cfi_startproc
	ret
	.cfi_endproc
	.size uwt_after, .-uwt_after

	.section .note.GNU-stack,"",@progbits
