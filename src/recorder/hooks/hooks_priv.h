/*
 * hooks_priv.h - what hooks.c and walk.c share inside the hook blob
 * (compiled freestanding with them only: nothing here is ptleak's).
 */
#ifndef PTLEAK_HOOKS_PRIV_H
#define PTLEAK_HOOKS_PRIV_H

#include "recorder/rechook.h"

/* 1 if ADDR lies in [LO, HI). */
static inline int within(uint64_t addr, uint64_t lo, uint64_t hi)
{
	return addr >= lo && addr < hi;
}

/* Who calls, from where: the thread's tid, the caller's frame and the
 * stack its walk may read (hi 0: none, the caller's return address only). */
struct caller {
	uint64_t tid;
	uint64_t sp, fp;
	struct unwtab_stack st;
	const struct rec_thread *e;	/* its entry, NULL: none */
};

/* 1 if RA lies in ptleak's code pages: a tail call from another patched
 * function returns there. */
int in_stubs(const struct rec_conf *cf, uint64_t ra);

/*
 * The caller's stack, at most MAX pcs from its return address on: hashed
 * into *HASH, and put in words FIRST.. of reservation RES of RING
 * unless RES is NULL.  Returns the number of pcs.  The walk is deterministic (it reads
 * the frames above ours, which stand still while we run), so a second
 * pass writes what the first hashed.
 */
unsigned walk(const struct rec_conf *cf, const struct rec_call *c,
	      const struct caller *w, const struct rec_objs *objs,
	      unsigned max, uint64_t *hash, struct ring *ring,
	      const struct ring_res *res, unsigned first);

/* The caller's thread's cache, NULL if none (no walk); *SHARED 1 if
 * other threads may take it too (main_scache). */
struct rec_scache *scache_of(const struct rec_conf *cf,
			     const struct caller *w, int *shared);

/*
 * walk() (no reservation) with the thread's cache SC (rechook.h, struct
 * rec_scache): the same pcs and hash.  -1 if SC is in use (the caller
 * walks without it).
 */
int walk_cached(const struct rec_conf *cf, const struct rec_call *c,
		const struct caller *w, const struct rec_objs *objs,
		unsigned max, uint64_t *hash, struct rec_scache *sc,
		int shared);

/* ---- the stack cache's ways (walk.c's walk_cached, hooks.c's
 * emit_fast) ---- */

#define SC_KEY	7

/* Word I of the key of a walk (struct rec_scache, from objs on) on a
 * stack whose top is HI. */
static inline __attribute__((always_inline)) uint64_t
scache_key(const struct rec_conf *cf, uint64_t hi, const struct rec_objs *objs,
	   unsigned max, unsigned i)
{
	switch (i) {
	case 0:
		return (uint64_t)(uintptr_t)objs;
	case 1:
		return hi;
	case 2:
		return __atomic_load_n(&cf->main_lo, __ATOMIC_RELAXED);
	case 3:
		return __atomic_load_n(&cf->main_hi, __ATOMIC_RELAXED);
	case 4:
		return cf->hijack_ret;
	case 5:
		return cf->nstubs;
	default:
		return max;
	}
}

/* The way of SC whose walk this is (its first frame PC, SP, FP, its
 * words all holding in ST): its index, -1 if none; from the way last met
 * on (sc->way_hint: a loop calls from the same place again; the others
 * in turn). */
static inline int way_of(const struct rec_scache *sc, uint64_t pc,
			 uint64_t sp, uint64_t fp, const struct unwtab_stack *st)
{
	const struct rec_sway *w;
	uint64_t v;
	unsigned i, j, k, h = (unsigned)sc->way_hint;

	for (i = 0; i < REC_SCACHE_WAYS; i++) {
		j = (h + i) % REC_SCACHE_WAYS;
		w = &sc->way[j];
		if (!w->nwords || w->pc != pc || w->sp != sp ||
		    (w->fpkey && w->fp != fp) ||
		    w->nwords > REC_SWAY_WORDS + 1)
			continue;
		/* every word inside ST (unwtab_read's test, once: off[k]
		 * <= top) */
		if (w->nwords > 1 && (sp < st->lo || st->hi < 8 ||
				      sp > st->hi - 8 || w->top > st->hi - 8 - sp))
			continue;
		for (k = 0; k + 1 < w->nwords; k++) {
			__builtin_memcpy(&v, (const void *)(uintptr_t)(sp + w->off[k]), 8);
			if (v != w->val[k])
				break;
		}
		if (k + 1 == w->nwords)
			return (int)j;
	}
	return -1;
}

/* 1 if SC's key is the one a walk with these would write (scache_key's
 * words; unrolled, the switch folds away) */
static inline __attribute__((always_inline)) int
scache_keyed(const struct rec_conf *cf, uint64_t hi, const struct rec_objs *objs,
	     unsigned max, const struct rec_scache *sc)
{
	const uint64_t *kw = &sc->objs;
	unsigned i;

#pragma GCC unroll 8
	for (i = 0; i < SC_KEY; i++)
		if (kw[i] != scache_key(cf, hi, objs, max, i))
			return 0;
	return 1;
}

#endif
