/*
 * rechook.h - the recorder's hooked calls (docs/recorder.md, piece 5):
 * what the mapper tells the hooks (struct rec_conf, reached through the
 * blob's context word), the stub's frame (struct rec_call, shared with
 * arch/$(ARCH)/recorder/stub.S) and the records the hooks put in the ring.
 * Freestanding: included by the hooks, by the stub (assembler: only the
 * REC_CALL_* offsets) and by ptleak.
 *
 * A patched function's entry jumps to its trampoline (arch_patch.h),
 * which enters the blob's rec_stub with the function id and the relocated
 * original.  rec_stub saves the argument registers in a struct rec_call
 * on its own stack, calls hook_enter(call), calls the original with the
 * original arguments, stores the result, calls hook_leave(call) and
 * returns the result.  The call's state lives in that frame only: a
 * longjmp out of the original abandons it with nothing to undo.
 *
 * Nesting rule: a call is recorded unless its return address lies in the
 * stub range (the code page: a tail call from another patched function
 * returns there) or in the body of an allocator function of the same
 * object (realloc -> malloc inside libc).  A signal handler's call returns
 * into the handler: recorded, whatever its thread was doing.
 */
#ifndef PTLEAK_RECHOOK_H
#define PTLEAK_RECHOOK_H

/* struct rec_call, for the stub */
#define REC_CALL_ARGS	0	/* 6 argument registers, in ABI order */
#define REC_CALL_FN	48	/* function id (REC_FN) */
#define REC_CALL_ORIG	56	/* relocated original entry */
#define REC_CALL_RET	64	/* result (rax) */
#define REC_CALL_RET2	72	/* second result register (rdx), kept */
#define REC_CALL_RA	80	/* the caller's return address */
#define REC_CALL_REC	88	/* set by hook_enter: 1 = recorded call */
#define REC_CALL_SIZE	96	/* a multiple of 16 */

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>

#include "ring.h"

struct rec_call {
	uint64_t arg[6];
	uint64_t fn;
	uint64_t orig;
	uint64_t ret;
	uint64_t ret2;
	uint64_t ra;
	uint64_t record;
};

_Static_assert(offsetof(struct rec_call, fn) == REC_CALL_FN, "rec_call");
_Static_assert(offsetof(struct rec_call, orig) == REC_CALL_ORIG, "rec_call");
_Static_assert(offsetof(struct rec_call, ret) == REC_CALL_RET, "rec_call");
_Static_assert(offsetof(struct rec_call, ret2) == REC_CALL_RET2, "rec_call");
_Static_assert(offsetof(struct rec_call, ra) == REC_CALL_RA, "rec_call");
_Static_assert(offsetof(struct rec_call, record) == REC_CALL_REC, "rec_call");
_Static_assert(sizeof(struct rec_call) == REC_CALL_SIZE, "rec_call");

/* What a patched function is: its arguments' meaning. */
enum rec_kind {
	REC_FN_MALLOC = 1,	/* (size): malloc, valloc, pvalloc */
	REC_FN_CALLOC,		/* (n, size) */
	REC_FN_REALLOC,		/* (old, size) */
	REC_FN_FREE,		/* (addr) */
	REC_FN_MEMALIGN,	/* (align, size): memalign, aligned_alloc */
	REC_FN_POSIX_MEMALIGN,	/* (memptr, align, size) -> int */
};

/* A function id: its kind and the index of its object (nesting rule). */
#define REC_FN(kind, obj)	((uint32_t)(kind) | (uint32_t)(obj) << 8)
#define REC_FN_KIND(fn)		((unsigned)(fn) & 0xff)
#define REC_FN_OBJ(fn)		((unsigned)(fn) >> 8)

/*
 * Ring record types and words.  Every record starts with fn (the id) and
 * tid (0 if the TCB offset is unknown) and ends with its stack: npcs
 * (header) return addresses, today the caller's alone.
 *   REC_ALLOC          fn tid result a0 a1      a0, a1: the size arguments
 *                                               (a1 0 for one-size kinds)
 *   REC_FREE           fn tid addr              before the original runs
 *   REC_REALLOC_BEGIN  fn tid old               before the original runs
 *   REC_REALLOC_END    fn tid old size result   after it returned
 *   REC_MEMALIGN       fn tid memptr align size rc result
 *                      result: *memptr read after return if rc == 0, else 0
 */
enum rec_type {
	REC_ALLOC = 16,		/* below: rec_record's free-form types */
	REC_FREE,
	REC_REALLOC_BEGIN,
	REC_REALLOC_END,
	REC_MEMALIGN,
};

#define REC_MAX_RANGES	32

/* An allocator function's body [lo, hi) in object OBJ. */
struct rec_range {
	uint64_t lo, hi;
	uint64_t obj;
};

/* The context word points here.  Written by the mapper before any patch
 * is live, read-only for the hooks. */
struct rec_conf {
	struct ring *ring;
	int64_t tid_off;	/* tid (int32) at TCB + tid_off; 0: unknown */
	uint64_t stub_lo, stub_hi;	/* the code page: stubs, relocated code */
	uint64_t nranges;
	struct rec_range range[REC_MAX_RANGES];
};

#endif /* __ASSEMBLER__ */
#endif
