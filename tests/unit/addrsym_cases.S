/*
 * addrsym_cases.S - a symbol table holding each case of libdw's choice
 * of an address's symbol (test_addrsym compares addrsym_find with it at
 * every byte): aliases of one size and of two sizes, global, weak and
 * local at one address, twins, a local inside a global, sizeless labels before,
 * inside and after sized functions, an object, a gap.
 */
	.text
	.p2align 6
	/* a sizeless global label, then functions */
	.globl	as_label_first
as_label_first:
	nop
	nop
	/* aliases of one size: global, weak, local */
	.globl	as_f1
	.type	as_f1, @function
	.weak	as_f1_weak
	.type	as_f1_weak, @function
	.type	as_f1_local, @function
as_f1:
as_f1_weak:
as_f1_local:
	nop
	nop
	nop
	/* a local label inside as_f1, sized */
	.type	as_f1_inner, @function
as_f1_inner:
	nop
	nop
	.size	as_f1_inner, . - as_f1_inner
	ret
	.size	as_f1, . - as_f1
	.size	as_f1_weak, . - as_f1_weak
	.size	as_f1_local, . - as_f1_local
	/* a gap with a sizeless local label in it */
as_gap_label:
	.skip	7, 0x90
	/* one start, two sizes: the shorter wins where both hold */
	.globl	as_long
	.type	as_long, @function
	.globl	as_short
	.type	as_short, @function
	.weak	as_short_weak
	.type	as_short_weak, @function
as_long:
as_short:
as_short_weak:
	.skip	5, 0x90
	.size	as_short, . - as_short
	.size	as_short_weak, . - as_short_weak
	.skip	6, 0x90
	.size	as_long, . - as_long
	/* a weak symbol longer than a global at the same start */
	.weak	as_wlong
	.type	as_wlong, @function
	.globl	as_gshort
	.type	as_gshort, @function
as_wlong:
as_gshort:
	.skip	3, 0x90
	.size	as_gshort, . - as_gshort
	.skip	3, 0x90
	.size	as_wlong, . - as_wlong
	/* a local function alone */
	.type	as_static, @function
as_static:
	.skip	9, 0x90
	.size	as_static, . - as_static
	/* two globals, one start, one size: the first in the table */
	.globl	as_twin_a
	.type	as_twin_a, @function
	.globl	as_twin_b
	.type	as_twin_b, @function
as_twin_a:
as_twin_b:
	.skip	3, 0x90
	.size	as_twin_a, . - as_twin_a
	.size	as_twin_b, . - as_twin_b
	/* a sizeless global label and a sizeless local at one address */
	.globl	as_label_mid
as_label_mid:
as_label_mid_local:
	.skip	4, 0x90
	/* a global function overlapping the next one */
	.globl	as_over
	.type	as_over, @function
as_over:
	.skip	4, 0x90
	.globl	as_over2
	.type	as_over2, @function
as_over2:
	.skip	4, 0x90
	.size	as_over, . - as_over
	.skip	4, 0x90
	.size	as_over2, . - as_over2
	/* sizeless at the end */
	.globl	as_label_last
as_label_last:
	.skip	16, 0x90

	.data
	.globl	as_object
	.type	as_object, @object
as_object:
	.quad	1, 2
	.size	as_object, . - as_object
	.globl	as_data_label
as_data_label:
	.quad	3
	.section .note.GNU-stack, "", @progbits
