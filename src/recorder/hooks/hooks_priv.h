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

#endif
