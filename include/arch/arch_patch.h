/*
 * arch_patch.h - the arch contract of the recorder's patching
 * (docs/recorder.md, pieces 4 and 5), implemented in arch/$(ARCH)/patch.c.
 *
 * A patched function's entry (after an endbr64, which stays in place)
 * becomes a jump to a per-function trampoline in a code page within
 * ARCH_PATCH_REACH of the function.  The trampoline passes the function's
 * id and its relocated original to the blob's common stub (rec_stub):
 * the displaced whole instructions, rewritten for their new place,
 * followed by a jump back to the rest of the function.
 *
 * Nothing here reads or writes a process: the caller copies bytes.
 */
#ifndef PTLEAK_ARCH_PATCH_H
#define PTLEAK_ARCH_PATCH_H

#include <stddef.h>
#include <stdint.h>

#define ARCH_PATCH_JMP_LEN	5	/* the jump written at the entry */
#define ARCH_PATCH_MAX_LEN	24	/* displaced bytes, at most */
#define ARCH_PATCH_MAX_INSNS	8
/* Bytes arch_relocate() may write: each instruction grows to 16 at most
 * (jcc out of reach), plus the jump back (14 out of reach). */
#define ARCH_RELOC_MAX		(16 * ARCH_PATCH_MAX_INSNS + 16)
#define ARCH_TRAMP_LEN		32	/* arch_trampoline_build(), padded */
/* A rel32 reaches +-2 GiB: the code page must lie this close. */
#define ARCH_PATCH_REACH	0x7fff0000ll

/* What arch_patch_plan() chose at a function's entry. */
struct arch_patch {
	uint64_t func;			/* the function's entry */
	uint64_t at;			/* where the jump goes (func, or after endbr64) */
	unsigned len;			/* displaced bytes: whole instructions, >= 5 */
	unsigned ninsns;
	uint8_t orig[ARCH_PATCH_MAX_LEN];	/* the bytes at AT */
	uint8_t insn_len[ARCH_PATCH_MAX_INSNS];
};

/*
 * Plan the patch of the function at FUNC_ADDR whose body (its symbol's
 * size, from the entry) is BODY[0 .. BODY_LEN).  Chooses the whole
 * instructions covering ARCH_PATCH_JMP_LEN bytes after an optional
 * endbr64 and refuses (-1, message in ERR): a call, ret, loop/jrcxz/
 * jecxz, int3 or other trap among them, an undecodable or %rip-reading
 * one, a body too short, and any branch of the body whose target lies
 * strictly inside the displaced bytes (it would land in the middle of the
 * jump).  0 and *P filled.
 */
int arch_patch_plan(struct arch_patch *p, const uint8_t *body, size_t body_len,
		    uint64_t func_addr, char *err, size_t errlen);

/*
 * arch_patch_plan's last check alone, on a planned P: 0 if no branch of
 * BODY targets the inside of the displaced bytes, else -1 with a
 * message.  EXACT: every instruction of the body decoded; else (what
 * arch_patch_plan does) the body scanned at every byte for a relative
 * branch into them, as if an instruction began there, and decoded only
 * if one could be there: the same answer, and 98% of libc's functions
 * need no decoding at all.
 */
int arch_patch_check_body(const struct arch_patch *p, const uint8_t *body,
			  size_t body_len, int exact, char *err, size_t errlen);

/*
 * The displaced instructions of P rewritten to run at TO, then a jump
 * back to p->at + p->len, into BUF (ARCH_RELOC_MAX bytes).  rip-relative
 * displacements are rewritten (refused out of rel32 reach); jcc rel8/
 * rel32 become jcc rel32, or an inverted jcc over an absolute jump when
 * out of reach; jmp becomes jmp rel32 or an absolute jump.  Returns the
 * bytes written, or -1 with a message in ERR.
 */
int arch_relocate(const struct arch_patch *p, uint64_t to, uint8_t *buf,
		  char *err, size_t errlen);

/*
 * The jump written at p->at: ARCH_PATCH_JMP_LEN bytes into BUF jumping to
 * DEST.  The caller writes p->len bytes: the rest (BUF[5 .. len)) are
 * int3s (never executed: no branch targets them).  0, or -1 with a
 * message in ERR if DEST is out of rel32 reach.
 */
int arch_patch_jump(const struct arch_patch *p, uint64_t dest, uint8_t *buf,
		    char *err, size_t errlen);

/*
 * The per-function trampoline at address AT into BUF (ARCH_TRAMP_LEN
 * bytes): hands the stub the function id FN and the relocated original
 * ORIG (x86-64: %r10 = FN, %r11 = ORIG, both free at a function's entry)
 * and jumps to STUB (the blob's rec_stub).  0, or -1 with a message if a
 * target is out of rel32 reach.
 */
int arch_trampoline_build(uint64_t at, uint32_t fn, uint64_t orig,
			  uint64_t stub, uint8_t *buf, char *err, size_t errlen);

/* What arch_rec_take_out asks of the recorder in the process. */
struct arch_rec_ops {
	/* the 8 bytes of the process at ADDR: 0, or -1 */
	int (*read)(void *ctx, uint64_t addr, uint64_t *v);
	/* the code page holding PC (its blob at its start), 0 if none */
	uint64_t (*page_of)(void *ctx, uint64_t pc);
	/* the entry (arch_patch.at) of the function whose id is FN, 0 if
	 * none has it */
	uint64_t (*fn_entry)(void *ctx, uint64_t fn);
	/* PC in a trampoline: its function's entry, the trampoline's first
	 * byte in *TRAMP; else 0 */
	uint64_t (*tramp_entry)(void *ctx, uint64_t pc, uint64_t *tramp);
};

/*
 * A thread stopped with registers R whose pc is in the recorder's code
 * (a trampoline, the stub, the hooks), the patched entries restored:
 * R set to what it would be without the recorder, at the function's
 * entry (the original not run yet) or back in its caller with its
 * results.  1 done; 0 the pc is not in the recorder's code; -1 its frame
 * could not be read.  (A pc in a relocated prologue is the caller's
 * business: rec_fixup_pc.)
 */
struct arch_regs;
int arch_rec_take_out(struct arch_regs *r, const struct arch_rec_ops *ops,
		      void *ctx);

#endif
