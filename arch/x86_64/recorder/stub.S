/*
 * stub.S - the common stub of every patched function (include/rechook.h).
 *
 * Entered by jmp from the function's trampoline with the caller's frame
 * untouched: (%rsp) = the caller's return address, %rsp % 16 == 8, the
 * arguments in their registers, %r10 = function id, %r11 = the relocated
 * original.  The frame below %rbp is the call's struct rec_call; its size
 * is a multiple of 16, so %rsp % 16 == 0 at each call made here and the
 * callee sees %rsp % 16 == 8 as the ABI wants.  %rbp is chained: a frame
 * pointer walk goes through the stub.  Its CFI (as the hooks') goes into
 * the blob's own unwind table (recblob.h), not into the image.
 */
#include "recorder/rechook.h"

/* Places in the stub ptleak's detach must know (recblob_offsets.h): a
 * thread stopped anywhere in it is put back where it would be without
 * the stub (src/rec_detach.c). */
#define LABEL(n)	.globl rec_stub_##n; .hidden rec_stub_##n; rec_stub_##n:

	.text
	.globl	rec_stub
	.hidden	rec_stub
	.hidden	hook_enter
	.hidden	hook_leave
	.type	rec_stub, @function
	.p2align 4
rec_stub:
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	LABEL(framed)
	sub	$REC_CALL_SIZE, %rsp
	mov	%rdi, REC_CALL_ARGS + 0(%rsp)
	mov	%rsi, REC_CALL_ARGS + 8(%rsp)
	mov	%rdx, REC_CALL_ARGS + 16(%rsp)
	mov	%rcx, REC_CALL_ARGS + 24(%rsp)
	mov	%r8, REC_CALL_ARGS + 32(%rsp)
	mov	%r9, REC_CALL_ARGS + 40(%rsp)
	mov	%r10, REC_CALL_FN(%rsp)
	mov	%r11, REC_CALL_ORIG(%rsp)
	mov	8(%rbp), %rax
	mov	%rax, REC_CALL_RA(%rsp)
	mov	%rbx, REC_CALL_RBX(%rsp)
	mov	%r12, REC_CALL_R12(%rsp)
	mov	%r13, REC_CALL_R13(%rsp)
	mov	%r14, REC_CALL_R14(%rsp)
	mov	%r15, REC_CALL_R15(%rsp)
	mov	%rsp, %rdi
	LABEL(call_enter)
	call	hook_enter
	LABEL(after_enter)
	mov	REC_CALL_ARGS + 0(%rsp), %rdi
	mov	REC_CALL_ARGS + 8(%rsp), %rsi
	mov	REC_CALL_ARGS + 16(%rsp), %rdx
	mov	REC_CALL_ARGS + 24(%rsp), %rcx
	mov	REC_CALL_ARGS + 32(%rsp), %r8
	mov	REC_CALL_ARGS + 40(%rsp), %r9
	mov	REC_CALL_IN_R10(%rsp), %r10
	mov	REC_CALL_IN_R11(%rsp), %r11
	LABEL(call_orig)
	call	*REC_CALL_ORIG(%rsp)
	LABEL(after_orig)
	mov	%rax, REC_CALL_RET(%rsp)
	mov	%rdx, REC_CALL_RET2(%rsp)
	mov	%rcx, REC_CALL_RCX(%rsp)
	mov	%rsi, REC_CALL_RSI(%rsp)
	mov	%rdi, REC_CALL_RDI(%rsp)
	mov	%r8, REC_CALL_R8(%rsp)
	mov	%r9, REC_CALL_R9(%rsp)
	mov	%r10, REC_CALL_R10(%rsp)
	mov	%r11, REC_CALL_R11(%rsp)
	mov	%rsp, %rdi
	LABEL(call_leave)
	call	hook_leave
	LABEL(after_leave)
	/* scrub what the hooks used below the frame, then the frame's
	 * words once read: a block's address left in dead stack would be
	 * a root for the leak scan (rechook.h, REC_SCRUB).  16 bytes a
	 * store with %xmm0 (2.5x faster than rep stosq; movups: not every
	 * call comes with the ABI's alignment: h_own_malloc's allocator is
	 * entered with %rsp % 16 == 0 once, where movaps faulted), kept
	 * meanwhile in
	 * the argument words, dead now and zeroed below (a thread taken out
	 * between xmm_saved and xmm_back gets it back: rec_out.c) */
	.if	REC_SCRUB != 768 || REC_SCRUB_FREE != 384
	.error	"stub.S: the scrub's stores cover 768 (384) bytes, not REC_SCRUB (_FREE)"
	.endif
	movups	%xmm0, REC_CALL_ARGS(%rsp)
	LABEL(xmm_saved)
	pxor	%xmm0, %xmm0
	/* a free's hooks went less deep (REC_SCRUB_FREE): its deepest
	 * stores skipped (flags only: cmp) */
	cmpb	$REC_FN_FREE_ID, REC_CALL_FN(%rsp)
	je	1f
	.irp	o, 768, 752, 736, 720, 704, 688, 672, 656, 640, 624, 608, 592, \
		576, 560, 544, 528, 512, 496, 480, 464, 448, 432, 416, 400
	movups	%xmm0, -\o(%rsp)
	.endr
1:
	.irp	o, 384, 368, 352, 336, 320, 304, 288, 272, 256, 240, 224, 208, \
		192, 176, 160, 144, 128, 112, 96, 80, 64, 48, 32, 16
	movups	%xmm0, -\o(%rsp)
	.endr
	movups	REC_CALL_ARGS(%rsp), %xmm0
	LABEL(xmm_back)
	mov	REC_CALL_RET(%rsp), %rax
	mov	REC_CALL_RET2(%rsp), %rdx
	mov	REC_CALL_RCX(%rsp), %rcx
	mov	REC_CALL_RSI(%rsp), %rsi
	mov	REC_CALL_RDI(%rsp), %rdi
	mov	REC_CALL_R8(%rsp), %r8
	mov	REC_CALL_R9(%rsp), %r9
	mov	REC_CALL_R10(%rsp), %r10
	mov	REC_CALL_R11(%rsp), %r11
	LABEL(restored)
	movq	$0, REC_CALL_ARGS + 0(%rsp)
	movq	$0, REC_CALL_ARGS + 8(%rsp)
	movq	$0, REC_CALL_ARGS + 16(%rsp)
	movq	$0, REC_CALL_ARGS + 24(%rsp)
	movq	$0, REC_CALL_ARGS + 32(%rsp)
	movq	$0, REC_CALL_ARGS + 40(%rsp)
	movq	$0, REC_CALL_RET(%rsp)
	movq	$0, REC_CALL_RET2(%rsp)
	movq	$0, REC_CALL_RCX(%rsp)
	movq	$0, REC_CALL_RSI(%rsp)
	movq	$0, REC_CALL_RDI(%rsp)
	movq	$0, REC_CALL_R8(%rsp)
	movq	$0, REC_CALL_R9(%rsp)
	movq	$0, REC_CALL_R10(%rsp)
	movq	$0, REC_CALL_R11(%rsp)
	/* no dead frame may look like a live one to ptleak's detach */
	movq	$0, REC_CALL_FN(%rsp)
	movq	$0, REC_CALL_ORIG(%rsp)
	LABEL(leave)
	leave
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	LABEL(ret)
	ret
	LABEL(end)
	.cfi_endproc
	.size	rec_stub, . - rec_stub
	.section .note.GNU-stack, "", @progbits
