/*
 * walk.c - the hooks' stack walk (part of the hook blob, hooks.c's
 * sibling): the rules by pc through the rule cache, a step, the walk,
 * and the thread's stack cache with its ways (rechook.h, struct
 * rec_scache; docs/design.md, "A patched call").
 */
#include "hooks_priv.h"
#include "rec_arch.h"

/* 1 if RA lies in ptleak's code pages: a tail call from another patched
 * function returns there. */
int in_stubs(const struct rec_conf *cf, uint64_t ra)
{
	uint64_t i, n;

	if (within(ra, cf->stub_lo, cf->stub_hi))
		return 1;
	n = cf->nstubs < REC_MAX_STUBS ? cf->nstubs : REC_MAX_STUBS;
	for (i = 0; i < n; i++)
		if (within(ra, cf->stub[i].lo, cf->stub[i].hi))
			return 1;
	return 0;
}

/* The rule at address KEY: from the rule cache, else looked up in OBJS
 * (F's object first) and cached.  NULL if no table covers KEY. */
static const struct unwtab_rule *rule_at(const struct rec_conf *cf,
					 const struct rec_objs *objs,
					 uint64_t key, struct unwtab_frame *f)
{
	struct rec_pccache *e = NULL;
	const struct unwtab_rule *r;
	uint64_t rule, check;

	if (cf->pccache) {
		e = &cf->pccache[rec_pccache_slot(key, cf->pccache_mask)];
		rule = __atomic_load_n(&e->rule, __ATOMIC_RELAXED);
		check = __atomic_load_n(&e->check, __ATOMIC_RELAXED);
		if (rule && (check ^ rule ^ (uint64_t)(uintptr_t)objs) == key)
			return (const struct unwtab_rule *)(uintptr_t)rule;
	}
	r = unwtab_lookup(objs->obj, (unsigned)objs->n, key, f);
	if (r && e) {
		rule = (uint64_t)(uintptr_t)r;
		__atomic_store_n(&e->rule, rule, __ATOMIC_RELAXED);
		__atomic_store_n(&e->check, key ^ rule ^ (uint64_t)(uintptr_t)objs,
				 __ATOMIC_RELAXED);
	}
	return r;
}

/* F's pc read from stack slot SLOT is ptleak's trampoline: the real
 * return address (0: not known, the walk ends). */
static uint64_t unhijack(const struct rec_conf *cf, uint64_t slot)
{
	const struct rec_hijack *t = cf->hijacks;
	uint64_t mask = cf->hijacks_mask, i, n, s;

	if (!t)
		return 0;
	for (i = rec_hijack_slot(slot, mask), n = 0; n <= mask;
	     i = (i + 1) & mask, n++) {
		s = __atomic_load_n(&t[i].slot, __ATOMIC_ACQUIRE);
		if (!s)
			return 0;
		if (s == slot)
			return __atomic_load_n(&t[i].real, __ATOMIC_RELAXED);
	}
	return 0;
}

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
	      const struct ring_res *res, unsigned first)
{
	struct unwtab_frame f = { c->ra, w->sp, w->fp, 0, NULL };
	uint64_t h = REC_STACK_HASH_SEED;
	const struct unwtab_rule *r;
	unsigned n = 0, skipped = 0;

	for (;;) {
		/* a patched function's stub between a caller and the
		 * function (an allocation inside fopen): not the program's,
		 * left out as the breakpoint engine has no frame there */
		if (in_stubs(cf, f.pc)) {
			if (++skipped > REC_MAX_DEPTH)
				break;
		} else {
			h = rec_stack_hash_add(h, f.pc, n);
			if (res)
				ring_put(ring, res, first + n, f.pc);
			if (++n >= max ||
			    within(f.pc - 1, cf->main_lo, cf->main_hi))
				break;
		}
		r = rule_at(cf, objs, unwtab_key(&f), &f);
		if (!r || !unwtab_apply(&w->st, r, &f))
			break;
		/* a return address at CFA - 8 that ptleak hijacked */
		if (f.pc == cf->hijack_ret && cf->hijack_ret &&
		    !(f.pc = unhijack(cf, f.sp - 8)))
			break;
	}
	*hash = rec_stack_hash_end(h, n);
	return n;
}

/* ---- the stack cache (rechook.h, struct rec_scache) ---- */

/* What the frame at PC is for the record: REC_SF_SKIP (a stub between a
 * caller and a patched function, left out), REC_SF_MAIN (the last). */
static uint64_t pc_flags(const struct rec_conf *cf, uint64_t pc)
{
	if (in_stubs(cf, pc))
		return REC_SF_SKIP;
	return within(pc - 1, cf->main_lo, cf->main_hi) ? REC_SF_MAIN : 0;
}

/* Frame flags FL counted into *N and *SKIPPED as walk() counts: 1 if the
 * walk ends with that frame. */
static int last_frame(uint64_t fl, unsigned *n, unsigned *skipped,
		      unsigned max)
{
	if (fl & REC_SF_SKIP)
		return ++*skipped > REC_MAX_DEPTH;
	return ++*n >= max || (fl & REC_SF_MAIN);
}

/* walk()'s step: F becomes its caller's frame, *RA_AT and *FP_AT where
 * the step read its pc and fp (ra_at 0: a step the cache does not
 * check).  1, or 0 when the walk ends, *RULE_END 1 if F's rule ended it
 * (no table, STOP, INVALID: whatever the stack holds). */
static int step(const struct rec_conf *cf, const struct rec_objs *objs,
		const struct unwtab_stack *st, struct unwtab_frame *f,
		uint64_t *ra_at, uint64_t *fp_at, int *rule_end, uint64_t *fl)
{
	const struct unwtab_rule *r = rule_at(cf, objs, unwtab_key(f), f);

	*rule_end = !r || r->kind < UNWTAB_CFA_SP || r->kind > UNWTAB_SIGNAL;
	if (fl && r && r->kind == UNWTAB_CFA_FP)
		*fl |= REC_SF_FPCFA;	/* F's fp is read by its rule */
	if (*rule_end || !unwtab_apply(st, r, f))
		return 0;
	*ra_at = *fp_at = 0;
	if (r->kind != UNWTAB_SIGNAL) {
		*ra_at = f->sp + (int64_t)r->ra_off;
		*fp_at = r->fp_off ? f->sp + (int64_t)r->fp_off : 0;
	}
	/* a return address at CFA - 8 that ptleak hijacked */
	if (f->pc == cf->hijack_ret && cf->hijack_ret) {
		*ra_at = 0;
		if (!(f->pc = unhijack(cf, f->sp - 8)))
			return 0;
	}
	return 1;
}

/* The caller's thread's cache, NULL if none (no walk); *SHARED 1 if
 * other threads may take it too (main_scache). */
struct rec_scache *scache_of(const struct rec_conf *cf,
			     const struct caller *w, int *shared)
{
	*shared = !w->e;
	if (!w->st.hi)
		return NULL;
	if (w->e)
		return cf->scache ? &cf->scache[w->e - cf->threads] : NULL;
	return cf->main_scache;
}

static void sframe_set(struct rec_sframe *d, const struct unwtab_frame *f,
		       uint64_t ra_at, uint64_t fp_at, uint64_t fl)
{
	d->pc = f->pc, d->sp = f->sp, d->fp = f->fp;
	d->ra_at = ra_at, d->fp_at = fp_at;
	d->flags = fl | (f->exact ? REC_SF_EXACT : 0);
}

static void sframe_copy(struct rec_sframe *d, const struct rec_sframe *s)
{
	d->pc = s->pc, d->sp = s->sp, d->fp = s->fp;
	d->ra_at = s->ra_at, d->fp_at = s->fp_at, d->flags = s->flags;
}

/* 1 if the words the step into cached frame D read still hold D's. */
static int sframe_holds(const struct unwtab_stack *st,
			const struct rec_sframe *d)
{
	uint64_t v;

	if (!d->ra_at || unwtab_read(st, d->ra_at, &v) || v != d->pc)
		return 0;
	return !d->fp_at || (!unwtab_read(st, d->fp_at, &v) && v == d->fp);
}

/* Bit I: frame I's fp can change the walk of SC's frames C[0 .. J): its
 * rule or a later one finds the CFA from it before a step reads fp from
 * the stack again (elsewhere, as code built without frame pointers keeps
 * anything in %rbp, its saved copies need not hold). */
_Static_assert(REC_SCACHE_FRAMES <= 64, "fp_needed: a bit a cached frame");

static uint64_t fp_needed(const struct rec_sframe *C, unsigned j)
{
	uint64_t need = 0;
	unsigned i;

	for (i = j; i-- > 0;)
		if ((C[i].flags & REC_SF_FPCFA) ||
		    (i + 1 < j && !C[i + 1].fp_at && (need >> (i + 1) & 1)))
			need |= 1ull << i;
	return need;
}

/* Word K of way W := the word at AT (V); 0, or -1 if it does not fit. */
static int way_word(struct rec_sway *w, unsigned k, uint64_t at, uint64_t v)
{
	uint64_t off = at - w->sp;

	if (k >= REC_SWAY_WORDS || (off >> 32))
		return -1;
	w->off[k] = (uint32_t)off;
	w->val[k] = v;
	if (!k || off > w->top)
		w->top = (uint32_t)off;
	return 0;
}

/* The whole walk in SC's frames (J of them) as its next way, if every
 * step's words are known and fit; else nothing. */
static void way_put(struct rec_scache *sc, unsigned j, uint64_t hash,
		    unsigned n)
{
	struct rec_sway *w = &sc->way[sc->way_next % REC_SCACHE_WAYS];
	const struct rec_sframe *C = sc->f;
	uint64_t need = fp_needed(C, j);
	unsigned i, k = 0;

	w->nwords = 0;
	w->top = 0;
	w->pc = C[0].pc, w->sp = C[0].sp;
	w->fp = need & 1 ? C[0].fp : 0;
	w->fpkey = need & 1;
	for (i = 1; i < j; i++) {
		if (!C[i].ra_at || way_word(w, k++, C[i].ra_at, C[i].pc))
			return;
		if ((need >> i & 1) && C[i].fp_at &&
		    way_word(w, k++, C[i].fp_at, C[i].fp))
			return;
	}
	w->hash = hash, w->n = n;
	w->nwords = k + 1;
	sc->way_next++;
}

/*
 * walk() (no reservation) with the thread's cache SC: the same pcs and
 * hash.  Frames are walked until one equals a cached frame; the cached
 * frames after it are taken while their words hold (sframe_holds), the
 * rest walked again.  The cache then holds this walk.  -1 if SC is in
 * use (the caller walks without it: not from here, so that the hooks'
 * deepest stack stays within REC_SCRUB).
 */
int walk_cached(const struct rec_conf *cf, const struct rec_call *c,
		const struct caller *w, const struct rec_objs *objs,
		unsigned max, uint64_t *hash, struct rec_scache *sc,
		int shared)
{
	struct unwtab_frame f = { c->ra, w->sp, w->fp, 0, NULL };
	struct rec_sframe *C = sc->f, *P = sc->pend, *d;
	uint64_t h = REC_STACK_HASH_SEED, g, ra_at = 0, fp_at = 0, fl, v;
	uint64_t *kw = &sc->objs;
	unsigned n = 0, skipped = 0, m = 0, k = 0, j = 0, e, i, cnt;
	int usable = 1, rule_end = 0, ended = 0, deferred, whole_hash = 0;

	g = __atomic_load_n(&sc->gen, __ATOMIC_RELAXED);
	/* odd: a walk of this thread's in progress (or left), or of
	 * another thread's if SHARED */
	if ((g & 1) || (shared && !__atomic_compare_exchange_n(&sc->gen, &g,
			g + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
		return -1;
	if (!shared)
		__atomic_store_n(&sc->gen, g + 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sc->walks++;
	/* the key as this walk reads it, in the cache at once (ours now) */
	for (i = 0; i < SC_KEY; i++) {
		v = scache_key(cf, w->st.hi, objs, max, i);
		usable &= kw[i] == v;
		kw[i] = v;
	}
	if (usable) {
		int at = way_of(sc, f.pc, f.sp, f.fp, &w->st);

		if (at >= 0) {
			const struct rec_sway *way = &sc->way[at];

			sc->way_hint = (uint64_t)at;
			sc->from_way++;
			*hash = way->hash;
			n = way->n;
			goto out;
		}
		m = sc->n < REC_SCACHE_FRAMES ? (unsigned)sc->n : REC_SCACHE_FRAMES;
	} else {
		for (i = 0; i < REC_SCACHE_WAYS; i++)
			sc->way[i].nwords = 0;
	}

	/* 1: frames walked until one meets the cache (into P while the
	 * cache may still be met, else into C) */
	for (;;) {
		if (usable) {
			while (k < m && C[k].sp < f.sp)
				k++;
			if (k < m && C[k].sp == f.sp && C[k].pc == f.pc &&
			    C[k].fp == f.fp &&
			    !(C[k].flags & REC_SF_EXACT) == !f.exact)
				goto met;
			if (j == REC_SCACHE_PENDING) {
				for (i = 0; i < j; i++)
					sframe_copy(&C[i], &P[i]);
				usable = 0;
			}
		}
		fl = pc_flags(cf, f.pc);
		d = usable ? &P[j] : j < REC_SCACHE_FRAMES ? &C[j] : NULL;
		if (d)
			sframe_set(d, &f, ra_at, fp_at, fl);
		j++;
		if (!(fl & REC_SF_SKIP))
			h = rec_stack_hash_add(h, f.pc, n);
		if (last_frame(fl, &n, &skipped, max)) {
			ended = 1;
			rule_end = 0;
			break;
		}
		if (!step(cf, objs, &w->st, &f, &ra_at, &fp_at, &rule_end,
			  d ? &d->flags : NULL)) {
			ended = rule_end;
			break;
		}
	}
	goto end;

met:
	/* 2: f is cached frame k; the frames after it while they hold */
	deferred = j == 0 && k == 0;	/* the hash: the cache's, or later */
	for (e = k;; e++) {
		fl = C[e].flags;
		if (!deferred && !(fl & REC_SF_SKIP))
			h = rec_stack_hash_add(h, C[e].pc, n);
		if (last_frame(fl, &n, &skipped, max)) {
			ended = 1;
			rule_end = 0;
			break;
		}
		if (e + 1 == m) {
			/* the cached walk ended there by that frame's rule */
			ended = rule_end = sc->done == 1;
			break;
		}
		if (!sframe_holds(&w->st, &C[e + 1]))
			break;
	}
	if (deferred) {
		if (ended && e + 1 == m && sc->whole == 1)
			whole_hash = 1;
		else
			for (i = 0, cnt = 0; i <= e; i++)
				if (!(C[i].flags & REC_SF_SKIP))
					h = rec_stack_hash_add(h, C[i].pc, cnt++);
	}
	f = (struct unwtab_frame){ C[e].pc, C[e].sp, C[e].fp,
				   !!(C[e].flags & REC_SF_EXACT), NULL };
	/* the walk's frames: P[0 .. j), C[k .. e] */
	cnt = e - k + 1;
	if (j < k)
		for (i = 0; i < cnt; i++)
			sframe_copy(&C[j + i], &C[k + i]);
	else if (j > k)
		for (i = cnt; i-- > 0;)
			if (j + i < REC_SCACHE_FRAMES)
				sframe_copy(&C[j + i], &C[k + i]);
	for (i = 0; i < j; i++)
		sframe_copy(&C[i], &P[i]);
	/* the words this walk's step into f read (a frame met from another
	 * caller than the cached walk's was reached by other words): what
	 * the next walk checks to take it, and a way records */
	if (j) {
		C[j].ra_at = ra_at;
		C[j].fp_at = fp_at;
	}
	j += cnt;
	usable = 0;
	/* 3: the rest walked */
	while (!ended) {
		if (!step(cf, objs, &w->st, &f, &ra_at, &fp_at, &rule_end,
			  j <= REC_SCACHE_FRAMES ? &C[j - 1].flags : NULL)) {
			ended = rule_end;
			break;
		}
		fl = pc_flags(cf, f.pc);
		if (j < REC_SCACHE_FRAMES)
			sframe_set(&C[j], &f, ra_at, fp_at, fl);
		j++;
		if (!(fl & REC_SF_SKIP))
			h = rec_stack_hash_add(h, f.pc, n);
		ended = last_frame(fl, &n, &skipped, max);
	}

end:
	if (usable)
		for (i = 0; i < j; i++)
			sframe_copy(&C[i], &P[i]);
	*hash = whole_hash ? sc->hash : rec_stack_hash_end(h, n);
	sc->n = j < REC_SCACHE_FRAMES ? j : REC_SCACHE_FRAMES;
	/* the walk is the cache's frames and ended there whatever the
	 * words above: by the count, main, or the last frame's rule */
	sc->whole = ended && j <= REC_SCACHE_FRAMES;
	sc->done = rule_end && sc->whole;
	sc->hash = *hash;
	if (sc->whole && j)
		way_put(sc, j, *hash, n);
out:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&sc->gen, g + 2, __ATOMIC_RELEASE);
	return (int)n;
}
