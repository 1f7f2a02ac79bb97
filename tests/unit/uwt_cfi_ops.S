/*
 * uwt_cfi_ops.S - every call frame instruction cfi.c's interpreter runs,
 * and some it leaves to libdw, for test_cfi: the tables compiled from it
 * with the interpreter and by libdw must be the same bytes.  Built twice:
 * with an .eh_frame_hdr (libdw's binary search finds the FDEs) and
 * with -DUWT_NOHDR without one (libdw reads the FDEs in order).
 */
	.text
	.globl uwt_ops_frame
	.type uwt_ops_frame, @function
uwt_ops_frame:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	.cfi_escape 0x2e, 0x10		/* GNU_args_size 16 */
	.cfi_escape 0x40		/* advance_loc 0: an empty row */
	.cfi_remember_state
	nop
	.cfi_remember_state
	.cfi_escape 0x12, 0x07, 0x7e	/* def_cfa_sf rsp, -2 (* -8) */
	nop
	.cfi_escape 0x2f, 0x06, 0x02	/* GNU_negative_offset_extended rbp */
	nop
	.cfi_restore_state
	nop
	.cfi_escape 0x11, 0x06, 0x03	/* offset_extended_sf rbp, 3 (* -8) */
	nop
	.cfi_restore %rbp
	nop
	.cfi_escape 0x05, 0x06, 0x04	/* offset_extended rbp, 4 (* -8) */
	nop
	.cfi_escape 0x06, 0x06		/* restore_extended rbp */
	.cfi_restore_state
	nop
	.cfi_val_offset %rbp, -16
	nop
	.cfi_register %rbp, %rbx
	nop
	.cfi_same_value %rbp
	nop
	.cfi_offset %rbp, -40000	/* past the table's 16 bits */
	nop
	.cfi_undefined %rbp
	nop
	.cfi_undefined %rip		/* outermost: STOP */
	nop
	/* DW_CFA_offset rip, 2^58 + 1 (* -8): -8 in libdw's 61 bits */
	.cfi_escape 0x90, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x04
	nop
	.cfi_escape 0x0e, 0x80, 0x80, 0x80, 0x80, 0x20	/* def_cfa_offset 2^33 */
	nop
	.cfi_def_cfa %rsp, 16
	.cfi_escape 0x03, 0x01, 0x00	/* advance_loc2 1 */
	.cfi_escape 0x0e, 0x18
	.cfi_escape 0x04, 0x01, 0x00, 0x00, 0x00	/* advance_loc4 1 */
	.cfi_escape 0x13, 0x7d		/* def_cfa_offset_sf -3 (* -8) */
	.cfi_escape 0x02, 0x01		/* advance_loc1 1 */
	.cfi_escape 0x15, 0x06, 0x7e	/* val_offset_sf rbp */
	.cfi_escape 0x1d, 1, 0, 0, 0, 0, 0, 0, 0	/* MIPS_advance_loc8 1 */
	.cfi_escape 0x0e, 0x28
	nop
	nop
	nop
	nop
	pop %rbp
	ret
	.cfi_endproc
	.size uwt_ops_frame, .-uwt_ops_frame

/* advances past the FDE's end: its last row is cut there */
	.p2align 4
	.globl uwt_ops_tail
	.type uwt_ops_tail, @function
uwt_ops_tail:
	.cfi_startproc
	nop
	.cfi_escape 0x02, 0x40		/* advance_loc1 64 */
	.cfi_def_cfa_offset 16
	ret
	.cfi_endproc
	.size uwt_ops_tail, .-uwt_ops_tail

/* DW_CFA_expression: libdw's */
	.p2align 4
	.globl uwt_ops_expr
	.type uwt_ops_expr, @function
uwt_ops_expr:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_escape 0x10, 0x06, 0x02, 0x77, 0x00	/* rbp at *(rsp + 0) */
	nop
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size uwt_ops_expr, .-uwt_ops_expr

/*
 * an opcode nobody knows: libdw refuses the rows from there on (and ld
 * makes no .eh_frame_hdr: only in the object without one)
 */
#ifdef UWT_NOHDR
	.p2align 4
	.globl uwt_ops_unknown
	.type uwt_ops_unknown, @function
uwt_ops_unknown:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	nop
	.cfi_escape 0x25
	pop %rbx
	ret
	.cfi_endproc
	.size uwt_ops_unknown, .-uwt_ops_unknown
#endif

/* restore_state with nothing remembered: libdw refuses it too */
	.p2align 4
	.globl uwt_ops_unbalanced
	.type uwt_ops_unbalanced, @function
uwt_ops_unbalanced:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	nop
	.cfi_escape 0x0b		/* restore_state */
	pop %rbx
	ret
	.cfi_endproc
	.size uwt_ops_unbalanced, .-uwt_ops_unbalanced

	.section .note.GNU-stack,"",@progbits
