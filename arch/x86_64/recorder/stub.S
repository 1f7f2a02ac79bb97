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

/* The scrub's 16-byte stores of %xmm0 at -FROM(%rsp) up to -TO(%rsp). */
	.macro	STORES from, to
	.set	o, \from
	.rept	(\from - \to) / 16 + 1
	movups	%xmm0, -o(%rsp)
	.set	o, o - 16
	.endr
	.endm

/* The frame's words every call wrote but the first two (the caller's
 * %xmm0 meanwhile): the other arguments, fn and orig, the results. */
	.macro	ZERO_CALL_WORDS
	movups	%xmm0, REC_CALL_ARGS + 16(%rsp)
	movups	%xmm0, REC_CALL_ARGS + 32(%rsp)
	/* no dead frame may look like a live one to ptleak's detach: fn */
	movups	%xmm0, REC_CALL_FN(%rsp)	/* fn, orig */
	movups	%xmm0, REC_CALL_RET(%rsp)	/* ret, ret2 */
	.endm

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
	/* a call hook_enter recorded whole (a free): no hook_leave, no
	 * registers to keep from it (no_leave below) */
	cmpl	$REC_RECORD_DONE, REC_CALL_REC(%rsp)
	je	rec_stub_no_leave
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
	 * a root for the leak scan (rechook.h, REC_SCRUB).  As deep as
	 * hook_leave says (%eax: the call's class, REC_SCRUB_*), 16 bytes a
	 * store with %xmm0 (2.5x faster than rep stosq; movups: not every
	 * call comes with the ABI's alignment: h_own_malloc's allocator is
	 * entered with %rsp % 16 == 0 once, where movaps faulted), kept
	 * meanwhile in the argument words, dead now and zeroed below (a
	 * thread taken out between xmm_saved and xmm_back gets it back:
	 * rec_out.c) */
	.if	REC_SCRUB != 768 || REC_SCRUB_WAIT != 384 || REC_SCRUB_EMIT != 192 || REC_SCRUB_MIN != 128
	.error	"stub.S: the scrub's entries are at 768, 384, 192 and 128 bytes, not REC_SCRUB*"
	.endif
	movups	%xmm0, REC_CALL_ARGS(%rsp)
	LABEL(xmm_saved)
	pxor	%xmm0, %xmm0
	cmp	$REC_SCRUB_WAIT, %eax
	ja	768f
	cmp	$REC_SCRUB_EMIT, %eax
	ja	384f
	cmp	$REC_SCRUB_MIN, %eax
	ja	192f
	jmp	128f
768:
	STORES	768, 400
384:
	STORES	384, 208
192:
	STORES	192, 144
128:
	STORES	128, 16
	mov	REC_CALL_RET(%rsp), %rax
	mov	REC_CALL_RET2(%rsp), %rdx
	mov	REC_CALL_RCX(%rsp), %rcx
	mov	REC_CALL_RSI(%rsp), %rsi
	mov	REC_CALL_RDI(%rsp), %rdi
	mov	REC_CALL_R8(%rsp), %r8
	mov	REC_CALL_R9(%rsp), %r9
	mov	REC_CALL_R10(%rsp), %r10
	mov	REC_CALL_R11(%rsp), %r11
	LABEL(regs_back)
	/* the frame's words read, zeroed 16 bytes a store with %xmm0 (still
	 * 0), but the first two (the caller's %xmm0) */
	.if	REC_CALL_FN != 48 || REC_CALL_RET != 64 || REC_CALL_RCX != 96 || \
		REC_CALL_R11 != 144 || REC_CALL_OUTER != 152
	.error	"stub.S: the frame's zeroing expects struct rec_call as rechook.h had it"
	.endif
	ZERO_CALL_WORDS
	movups	%xmm0, REC_CALL_RCX(%rsp)	/* rcx, rsi */
	movups	%xmm0, REC_CALL_RCX + 16(%rsp)	/* rdi, r8 */
	movups	%xmm0, REC_CALL_RCX + 32(%rsp)	/* r9, r10 */
	movups	%xmm0, REC_CALL_R11(%rsp)	/* r11, outer */
	movups	REC_CALL_ARGS(%rsp), %xmm0
	LABEL(xmm_back)
	movq	$0, REC_CALL_ARGS + 0(%rsp)
	movq	$0, REC_CALL_ARGS + 8(%rsp)
	LABEL(restored)
	LABEL(leave)
	.cfi_remember_state
	leave
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	LABEL(ret)
	ret
	.cfi_restore_state

	/* The original returned and hook_leave is not wanted: its registers
	 * stay as it left them but %rax (the scratch, kept meanwhile in the
	 * frame's result word) and %xmm0 (the scrub's zero, in the argument
	 * words); the outer word cleared as hook_leave would, the scrub as
	 * deep as hook_enter's class (rec_call.scrub), then the frame's
	 * words it wrote zeroed (the arguments, fn and orig, the result
	 * word: the caller-saved ones were not written). */
	LABEL(no_leave)
	mov	%rax, REC_CALL_RET(%rsp)
	LABEL(nl_rax_saved)
	mov	REC_CALL_OUTER(%rsp), %rax
	test	%rax, %rax
	jz	1f
	movq	$0, (%rax)
1:
	movups	%xmm0, REC_CALL_ARGS(%rsp)
	LABEL(nl_xmm_saved)
	pxor	%xmm0, %xmm0
	mov	REC_CALL_SCRUB(%rsp), %eax
	cmp	$REC_SCRUB_WAIT, %eax
	ja	7768f
	cmp	$REC_SCRUB_MIN, %eax
	ja	7384f
	jmp	7128f
7768:
	STORES	768, 400
7384:
	STORES	384, 144
7128:
	STORES	128, 16
	mov	REC_CALL_RET(%rsp), %rax
	LABEL(nl_rax_back)
	ZERO_CALL_WORDS
	movups	REC_CALL_ARGS(%rsp), %xmm0
	LABEL(nl_xmm_back)
	movq	$0, REC_CALL_ARGS + 0(%rsp)
	movq	$0, REC_CALL_ARGS + 8(%rsp)
	LABEL(nl_leave)
	leave
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	LABEL(nl_ret)
	ret
	LABEL(end)
	.cfi_endproc
	.size	rec_stub, . - rec_stub
	.section .note.GNU-stack, "", @progbits
