/*
 * unwtab_walk.h - walk a stack with the unwind tables of unwtab.h.
 *
 * Freestanding: static inline, no libc, no global state, no allocation,
 * so that the recorder's in-target hooks can include it.  Every stack
 * read goes through unwtab_read, which refuses what lies outside the
 * stack's [lo, hi): a corrupt or foreign frame ends the walk, it never
 * faults.  Tables are only read (they may sit in a read-only mapping).
 *
 * Cost: per frame, a binary search over the loaded objects (skipped while
 * the frames stay in one object), one over the few rows of the pc's
 * bucket, and one read (return address) or two (saved fp); a signal frame
 * reads three words.
 */
#ifndef PTLEAK_UNWTAB_WALK_H
#define PTLEAK_UNWTAB_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/unwtab.h"

/* One loaded object: its code's run-time range and its table. */
struct unwtab_obj {
	uint64_t lo, hi;	/* executable segment(s), run-time addresses */
	uint64_t bias;		/* run-time address - table pc */
	const struct unwtab_hdr *tab;
};

/* The bytes a walk may read: [lo, hi) (a thread's stack). */
struct unwtab_stack {
	uint64_t lo, hi;
};

/* A frame's registers.  EXACT: pc is where the thread was interrupted
 * (first frame of a stopped thread, or after a signal frame); else it is
 * a return address and its row is looked up at pc - 1 (the call). */
struct unwtab_frame {
	uint64_t pc, sp, fp;
	int exact;
	/* the object of the previous lookup, tried first; NULL: none */
	const struct unwtab_obj *obj;
};

/* The 8 bytes at ADDR into *V: 0, or -1 if they are not all in S. */
static inline int unwtab_read(const struct unwtab_stack *s, uint64_t addr,
			      uint64_t *v)
{
	if (addr < s->lo || s->hi < 8 || addr > s->hi - 8)
		return -1;
	__builtin_memcpy(v, (const void *)(uintptr_t)addr, 8);
	return 0;
}

/* The object holding PC among OBJS (sorted by lo, not overlapping). */
static inline const struct unwtab_obj *
unwtab_find_obj(const struct unwtab_obj *objs, unsigned n, uint64_t pc)
{
	unsigned lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc < objs[mid].lo)
			hi = mid;
		else if (pc >= objs[mid].hi)
			lo = mid + 1;
		else
			return &objs[mid];
	}
	return NULL;
}

/* The rule covering table address PC in T, NULL outside its rows. */
static inline const struct unwtab_rule *
unwtab_find_rule(const struct unwtab_hdr *t, uint64_t pc)
{
	const struct unwtab_row *rows = unwtab_rows(t);
	const uint32_t *buckets = unwtab_buckets(t);
	uint32_t b, lo, hi, mid;

	if (pc < t->lo || pc >= t->hi)
		return NULL;
	/* the last row with rows[].pc <= pc, among its bucket's rows */
	b = (uint32_t)(pc - t->lo) >> t->bucket_shift;
	lo = buckets[b] + 1;
	hi = b + 1 < t->nbuckets ? buckets[b + 1] + 1 : t->nrows;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &unwtab_rules(t)[rows[lo - 1].rule];
}

/* The signal trampoline's caller: the interrupted registers. */
static inline int unwtab_step_signal(const struct unwtab_stack *s,
				     const struct unwtab_rule *r,
				     struct unwtab_frame *f)
{
	uint64_t pc, sp, fp;

	if (unwtab_read(s, f->sp + (int64_t)r->ra_off, &pc) ||
	    unwtab_read(s, f->sp + (int64_t)r->cfa_off, &sp) ||
	    unwtab_read(s, f->sp + (int64_t)r->fp_off, &fp))
		return 0;
	*f = (struct unwtab_frame){ pc, sp, fp, 1, f->obj };
	return pc != 0;
}

/* The address F's rule is looked up at: its pc if exact, else the call
 * before the return address. */
static inline uint64_t unwtab_key(const struct unwtab_frame *f)
{
	return f->exact ? f->pc : f->pc - 1;
}

/* The rule at address KEY: F's object tried first, then OBJS; F's object
 * becomes KEY's.  NULL if no table covers KEY. */
static inline const struct unwtab_rule *
unwtab_lookup(const struct unwtab_obj *objs, unsigned nobjs, uint64_t key,
	      struct unwtab_frame *f)
{
	const struct unwtab_obj *o = f->obj;

	if (!o || key < o->lo || key >= o->hi)
		o = unwtab_find_obj(objs, nobjs, key);
	if (!o)
		return NULL;
	f->obj = o;
	return unwtab_find_rule(o->tab, key - o->bias);
}

/* Replace F by its caller's frame by rule R (F's): 1, or 0 as
 * unwtab_step says. */
static inline int unwtab_apply(const struct unwtab_stack *s,
			       const struct unwtab_rule *r,
			       struct unwtab_frame *f)
{
	uint64_t cfa, ra, fp = f->fp;

	switch (r->kind) {
	case UNWTAB_CFA_SP:
		cfa = f->sp + (int64_t)r->cfa_off;
		break;
	case UNWTAB_CFA_FP:
		cfa = f->fp + (int64_t)r->cfa_off;
		break;
	case UNWTAB_PLT:
		cfa = f->sp + (int64_t)r->cfa_off +
		      ((f->pc & 15) >= r->plt_split ? 8 : 0);
		break;
	case UNWTAB_SIGNAL:
		return unwtab_step_signal(s, r, f);
	default:
		return 0;
	}
	if (cfa <= f->sp || unwtab_read(s, cfa + (int64_t)r->ra_off, &ra))
		return 0;
	if (r->fp_off && unwtab_read(s, cfa + (int64_t)r->fp_off, &fp))
		return 0;
	*f = (struct unwtab_frame){ ra, cfa, fp, 0, f->obj };
	return ra != 0;
}

/*
 * Replace F by its caller's frame.  Returns 1, or 0 when the walk ends:
 * no table covers the pc, STOP or INVALID, a read outside the stack, a
 * caller's sp not above the frame's (corrupt or looping), a pc of 0.
 */
static inline int unwtab_step(const struct unwtab_obj *objs, unsigned nobjs,
			      const struct unwtab_stack *s,
			      struct unwtab_frame *f)
{
	const struct unwtab_rule *r = unwtab_lookup(objs, nobjs, unwtab_key(f), f);

	return r && unwtab_apply(s, r, f);
}

/*
 * The frame of a function's caller at the function's first instruction
 * (the return address at sp): 0, or -1 if sp is not in S.
 */
static inline int unwtab_entry_frame(const struct unwtab_stack *s, uint64_t sp,
				     uint64_t fp, struct unwtab_frame *f)
{
	uint64_t ra;

	if (unwtab_read(s, sp, &ra))
		return -1;
	*f = (struct unwtab_frame){ ra, sp + 8, fp, 0, NULL };
	return 0;
}

/*
 * Walk from F: PCS[0] = F's pc, then its callers' return addresses (a
 * signal frame's caller: the interrupted pc), at most MAX.  Returns the
 * number of pcs.
 */
static inline unsigned unwtab_walk(const struct unwtab_obj *objs,
				   unsigned nobjs,
				   const struct unwtab_stack *s,
				   struct unwtab_frame f,
				   uint64_t *pcs, unsigned max)
{
	unsigned n = 0;

	if (max == 0)
		return 0;
	pcs[n++] = f.pc;
	while (n < max && unwtab_step(objs, nobjs, s, &f))
		pcs[n++] = f.pc;
	return n;
}

#endif
