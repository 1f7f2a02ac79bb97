/*
 * hooks.c - the code ptleak copies into a target (the hook blob).
 *
 * Compiled freestanding and linked by blob.ld into one flat image with no
 * relocation (mkblob.py checks): every datum is reached through rec_ctx,
 * the image's first word, which whoever maps the image fills before any
 * entry runs; the code loads it rip-relatively.  It points to the
 * struct rec_conf (rechook.h); the data area (docs/recorder.md, piece 2)
 * will hold it.
 *
 * Entry points are the global symbols named rec_*: mkblob.py gives each
 * one's offset in the image (recblob.h).  Nothing else may be named rec_*.
 * hook_enter and hook_leave are called by the stub (stub.S) only.
 */
#include "recorder/rechook.h"
#include "rec_arch.h"
#include "recorder/ring.h"

/* Written by the mapper, read by the hooks: never by the hooks. */
struct rec_conf *rec_ctx __attribute__((section(".rec_ctx"), used));

/* The hooks' records: at most this many words between tid and hash. */
#define MAX_WORDS	5

void hook_enter(struct rec_call *c);
void hook_leave(struct rec_call *c);

static struct rec_conf *ctx(void)
{
	return __atomic_load_n(&rec_ctx, __ATOMIC_RELAXED);
}

/*
 * One record of type TYPE with the words A0, A1, A2.  0, or -1 if it was
 * not recorded (no context yet, ring disabled or lost: counted there).
 */
int rec_record(uint64_t type, uint64_t a0, uint64_t a1, uint64_t a2)
{
	uint64_t w[3] = { a0, a1, a2 };
	struct rec_conf *cf = ctx();

	if (!cf || !cf->ring)
		return -1;
	return ring_produce(cf->ring, (unsigned)type, 0, w, 3);
}

/* 1 if ADDR lies in [LO, HI). */
static int within(uint64_t addr, uint64_t lo, uint64_t hi)
{
	return addr >= lo && addr < hi;
}

/* 1 if RA lies in ptleak's code pages: a tail call from another patched
 * function returns there. */
static int in_stubs(const struct rec_conf *cf, uint64_t ra)
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

/* The nesting rule (rechook.h): 1 if the call is inside another one. */
static int nested(const struct rec_conf *cf, const struct rec_call *c)
{
	uint64_t ra = c->ra, i, n = cf->nranges;

	if (in_stubs(cf, ra))
		return 1;
	if (n > REC_MAX_RANGES)
		n = REC_MAX_RANGES;
	for (i = 0; i < n; i++)
		if (within(ra, cf->range[i].lo, cf->range[i].hi) &&
		    cf->range[i].obj == REC_FN_OBJ(c->fn))
			return 1;
	return 0;
}

/* The calling thread's entry in the thread table, NULL if none. */
static const struct rec_thread *thread_entry(const struct rec_conf *cf,
					     uint64_t tcb)
{
	const struct rec_thread *t = cf->threads, *e;
	uint64_t mask = cf->threads_mask, i, s, v;

	if (!t || !tcb)
		return NULL;
	s = rec_thread_slot(tcb, mask);
	for (i = 0; i <= mask; i++) {
		e = &t[(s + i) & mask];
		v = __atomic_load_n(&e->tcb, __ATOMIC_ACQUIRE);
		if (v == tcb)
			return e;
		if (!v)
			break;
	}
	return NULL;
}

/* Who calls, from where: the thread's tid, the caller's frame and the
 * stack its walk may read (hi 0: none, the caller's return address only). */
struct caller {
	uint64_t tid;
	uint64_t sp, fp;
	struct unwtab_stack st;
	const struct rec_thread *e;	/* its entry, NULL: none */
};

static void caller_of(const struct rec_conf *cf, const struct rec_call *c,
		      struct caller *w)
{
	/* %fs:0 only if it is needed: a thread with no TLS faults there */
	uint64_t tcb = cf->threads || cf->tid_off ? rec_arch_tcb() : 0;
	const struct rec_thread *e = thread_entry(cf, tcb);
	int on_main;

	rec_arch_caller(c, &w->sp, &w->fp);
	w->st.lo = w->st.hi = 0;
	w->e = e;
	if (e) {
		w->tid = e->tid;
		if (within(w->sp, e->lo, e->hi))
			w->st.lo = w->sp, w->st.hi = e->hi;
		return;
	}
	on_main = within(w->sp, cf->main_stack_lo, cf->main_stack_hi);
	if (cf->tid_off)
		w->tid = (uint64_t)*(const volatile int32_t *)(tcb + cf->tid_off);
	else
		w->tid = on_main ? cf->main_tid : 0;
	if (on_main)
		w->st.lo = w->sp, w->st.hi = cf->main_stack_hi;
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
 * into *HASH, and put in words FIRST.. of reservation RES unless RES is
 * NULL.  Returns the number of pcs.  The walk is deterministic (it reads
 * the frames above ours, which stand still while we run), so a second
 * pass writes what the first hashed.
 */
static unsigned walk(const struct rec_conf *cf, const struct rec_call *c,
		     const struct caller *w, const struct rec_objs *objs,
		     unsigned max, uint64_t *hash, const struct ring_res *res,
		     unsigned first)
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
				ring_put(cf->ring, res, first + n, f.pc);
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
		uint64_t *ra_at, uint64_t *fp_at, int *rule_end)
{
	const struct unwtab_rule *r = rule_at(cf, objs, unwtab_key(f), f);

	*rule_end = !r || r->kind < UNWTAB_CFA_SP || r->kind > UNWTAB_SIGNAL;
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
static struct rec_scache *scache_of(const struct rec_conf *cf,
				    const struct caller *w, int *shared)
{
	*shared = !w->e;
	if (!w->st.hi)
		return NULL;
	if (w->e)
		return cf->scache ? &cf->scache[w->e - cf->threads] : NULL;
	return cf->main_scache;
}

#define SC_KEY	7

/* Word I of the key of a walk (struct rec_scache, from objs on). */
static uint64_t scache_key(const struct rec_conf *cf, const struct caller *w,
			   const struct rec_objs *objs, unsigned max, unsigned i)
{
	switch (i) {
	case 0:
		return (uint64_t)(uintptr_t)objs;
	case 1:
		return w->st.hi;
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

/*
 * walk() (no reservation) with the thread's cache SC: the same pcs and
 * hash.  Frames are walked until one equals a cached frame; the cached
 * frames after it are taken while their words hold (sframe_holds), the
 * rest walked again.  The cache then holds this walk.  -1 if SC is in
 * use (the caller walks without it: not from here, so that the hooks'
 * deepest stack stays within REC_SCRUB).
 */
static __attribute__((noinline)) int
walk_cached(const struct rec_conf *cf, const struct rec_call *c,
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
	/* the key as this walk reads it, in the cache at once (ours now) */
	for (i = 0; i < SC_KEY; i++) {
		v = scache_key(cf, w, objs, max, i);
		usable &= kw[i] == v;
		kw[i] = v;
	}
	if (usable)
		m = sc->n < REC_SCACHE_FRAMES ? (unsigned)sc->n : REC_SCACHE_FRAMES;

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
		if (!step(cf, objs, &w->st, &f, &ra_at, &fp_at, &rule_end)) {
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
	j += cnt;
	usable = 0;
	/* 3: the rest walked */
	while (!ended) {
		if (!step(cf, objs, &w->st, &f, &ra_at, &fp_at, &rule_end)) {
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
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&sc->gen, g + 2, __ATOMIC_RELEASE);
	return (int)n;
}

/* 1 if ptleak has the stack of hash H already. */
static int interned(const struct rec_conf *cf, uint64_t h)
{
	const uint64_t *set = cf->stackset;
	uint64_t mask = cf->stackset_mask, v;
	unsigned i;

	if (!set)
		return 0;
	for (i = 0; i < REC_STACKSET_PROBES && i <= mask; i++) {
		v = __atomic_load_n(&set[(h + i) & mask], __ATOMIC_RELAXED);
		if (v == h)
			return 1;
		if (!v)
			break;
	}
	return 0;
}

/* Words 0.. of reservation RES: fn, tid, the N words W. */
static void put_head(const struct rec_conf *cf, const struct ring_res *res,
		     const struct rec_call *c, uint64_t tid, const uint64_t *w,
		     unsigned n)
{
	unsigned i;

	ring_put(cf->ring, res, 0, c->fn);
	ring_put(cf->ring, res, 1, tid);
	for (i = 0; i < n; i++)
		ring_put(cf->ring, res, i + 2, w[i]);
}

/* The record TYPE of call C: fn, tid, the N words W. */
static void emit(const struct rec_conf *cf, unsigned type,
		 const struct rec_call *c, const uint64_t *w, unsigned n)
{
	struct ring_res res;
	struct caller who;

	caller_of(cf, c, &who);
	if (ring_reserve(cf->ring, type, 0, n + 2, &res) < 0)
		return;
	put_head(cf, &res, c, who.tid, w, n);
	ring_commit(cf->ring, &res);
}

/* The allocation record TYPE of call C: fn, tid, the N words W, then the
 * stack's hash and, unless ptleak has it, its pcs. */
static void emit_stack(const struct rec_conf *cf, unsigned type,
		       const struct rec_call *c, const uint64_t *w, unsigned n)
{
	const struct rec_objs *objs = __atomic_load_n(&cf->objs, __ATOMIC_ACQUIRE);
	unsigned npcs, max = 1;
	struct rec_scache *sc;
	int shared, got;
	struct ring_res res;
	struct caller who;
	uint64_t hash;

	caller_of(cf, c, &who);
	if (objs && who.st.hi && cf->depth > 1)
		max = cf->depth < REC_MAX_DEPTH ? (unsigned)cf->depth : REC_MAX_DEPTH;
	sc = max > 1 ? scache_of(cf, &who, &shared) : NULL;
	got = sc ? walk_cached(cf, c, &who, objs, max, &hash, sc, shared) : -1;
	npcs = got >= 0 ? (unsigned)got :
	       walk(cf, c, &who, objs, max, &hash, NULL, 0);
	if (interned(cf, hash))
		npcs = 0;
	if (ring_reserve(cf->ring, type, npcs, n + 3 + npcs, &res) < 0)
		return;
	put_head(cf, &res, c, who.tid, w, n);
	ring_put(cf->ring, &res, n + 2, hash);
	if (npcs)
		walk(cf, c, &who, objs, npcs, &hash, &res, n + 3);
	ring_commit(cf->ring, &res);
}

/* Where the thread's recorded call in progress is kept (FD: its
 * descriptor creation in progress): its table entry, the main thread's
 * word while it has none, or NULL (not known: the second nesting rule
 * does not apply). */
static uint64_t *outer_of(const struct rec_conf *cf, const struct rec_call *c,
			  int fd)
{
	uint64_t tcb = cf->threads ? rec_arch_tcb() : 0;
	const struct rec_thread *e = thread_entry(cf, tcb);
	uint64_t sp, fp;

	if (e)
		return (uint64_t *)(uintptr_t)(fd ? &e->fd_outer : &e->outer);
	rec_arch_caller(c, &sp, &fp);
	if (within(sp, cf->main_stack_lo, cf->main_stack_hi))
		return (uint64_t *)(uintptr_t)(fd ? &cf->main_fd_outer :
					       &cf->main_outer);
	return NULL;
}

/* The int at ADDR (a FILE's, a DIR's, a pipe's pair: the program's own
 * memory, valid for the call), -1 for a null pointer. */
static uint64_t int_at(uint64_t addr)
{
	return addr ? (uint64_t)(int64_t)*(const volatile int *)(uintptr_t)addr :
		      (uint64_t)-1;
}

/* A descriptor creation of C's kind with these arguments can make one. */
static int fd_wanted(unsigned kind, const struct rec_call *c)
{
	switch (kind) {
	case REC_FN_FD_DUP2:
		return (int)c->arg[0] != (int)c->arg[1];
	case REC_FN_FD_FCNTL:
		return (int)c->arg[1] == REC_F_DUPFD ||
		       (int)c->arg[1] == REC_F_DUPFD_CLOEXEC;
	case REC_FN_FD_SIGNALFD:
		return (int)c->arg[0] == -1;
	default:
		return 1;
	}
}

/* Is creation C part of the creation in progress whose frame is at O
 * (REC_FD_NEST_DIST)?  O's frame is live, or dead stack of this thread
 * (a longjmp left it): readable either way. */
static int fd_nested(const struct rec_conf *cf, const struct rec_call *c,
		     uint64_t o)
{
	uint64_t at = (uint64_t)(uintptr_t)c, obj;

	if (!o || at >= o || o - at >= REC_FD_NEST_DIST)
		return 0;
	obj = REC_FN_OBJ(((const volatile struct rec_call *)(uintptr_t)o)->fn);
	return obj < REC_MAX_OBJS &&
	       within(c->ra, cf->obj_text[obj].lo, cf->obj_text[obj].hi);
}

/* hook_enter of a descriptor function: closes are recorded now, and a
 * creation is decided on. */
static void fd_enter(const struct rec_conf *cf, struct rec_call *c,
		     unsigned kind)
{
	uint64_t *outer, at = (uint64_t)(uintptr_t)c, o, w[4];

	if (in_stubs(cf, c->ra))
		return;		/* a tail call from a patched function */
	if (cf->pid && rec_arch_getpid() != cf->pid)
		return;		/* a vfork child's: not this process's */
	if (REC_FN_FD_IS_CLOSE(kind)) {
		w[0] = c->arg[0], w[1] = c->arg[1], w[2] = c->arg[2];
		w[3] = kind == REC_FN_FD_FCLOSE ?
		       int_at(c->arg[0] ? c->arg[0] + REC_FILE_FILENO : 0) :
		       kind == REC_FN_FD_CLOSEDIR ?
		       int_at(c->arg[0] ? c->arg[0] + REC_DIR_FD : 0) :
		       (uint64_t)-1;
		emit(cf, REC_FD_CLOSE, c, w, 4);
		return;
	}
	if (!fd_wanted(kind, c))
		return;
	outer = outer_of(cf, c, 1);
	if (outer) {
		o = __atomic_load_n(outer, __ATOMIC_RELAXED);
		if (fd_nested(cf, c, o))
			return;
		if (!o || at >= o) {
			__atomic_store_n(outer, at, __ATOMIC_RELAXED);
			c->outer = (uint64_t)(uintptr_t)outer;
		}
	}
	c->record = 1;
}

/* hook_leave of a descriptor creation: what it made, with its stack. */
static void fd_leave(const struct rec_conf *cf, struct rec_call *c,
		     unsigned kind)
{
	uint64_t w[5] = { c->arg[0], c->arg[1], c->ret, (uint64_t)-1,
			  (uint64_t)-1 };
	uint64_t pair;

	switch (kind) {
	case REC_FN_FD_FILE:
		if (!c->ret)
			return;
		w[3] = int_at(c->ret + REC_FILE_FILENO);
		break;
	case REC_FN_FD_DIR:
		if (!c->ret)
			return;
		w[3] = int_at(c->ret + REC_DIR_FD);
		break;
	case REC_FN_FD_PAIR0:
	case REC_FN_FD_PAIR3:
		pair = c->arg[kind == REC_FN_FD_PAIR0 ? 0 : 3];
		if ((int)c->ret != 0 || !pair)
			return;
		w[3] = int_at(pair);
		w[4] = int_at(pair + sizeof(int));
		break;
	default:
		if ((int)c->ret < 0)
			return;
	}
	emit_stack(cf, REC_FD_OPEN, c, w, 5);
}

/* Before the original runs: decide whether the call is recorded; free
 * and realloc's begin are recorded now (before another thread can be
 * handed the block). */
void hook_enter(struct rec_call *c)
{
	const struct rec_conf *cf = ctx();
	unsigned kind = REC_FN_KIND(c->fn);

	uint64_t *outer, at = (uint64_t)(uintptr_t)c, o;

	c->record = 0;
	c->outer = 0;
	if (!cf || !cf->ring)
		return;
	if (REC_FN_IS_FD(kind)) {
		fd_enter(cf, c, kind);
		return;
	}
	if (nested(cf, c))
		return;
	outer = outer_of(cf, c, 0);
	if (outer) {
		o = __atomic_load_n(outer, __ATOMIC_RELAXED);
		if (o && at < o && o - at < REC_NEST_DIST)
			return;		/* inside the call at O */
		if (!o || at >= o) {
			/* none, or one longjmp left (it was above) */
			__atomic_store_n(outer, at, __ATOMIC_RELAXED);
			c->outer = (uint64_t)(uintptr_t)outer;
		}
	}
	c->record = 1;
	if (kind == REC_FN_FREE)
		emit(cf, REC_FREE, c, c->arg, 1);
	else if (kind == REC_FN_REALLOC || kind == REC_FN_REALLOCARRAY)
		emit(cf, REC_REALLOC_BEGIN, c, c->arg, 1);
}

/* After the original returned: the allocations. */
void hook_leave(struct rec_call *c)
{
	const struct rec_conf *cf = ctx();
	uint64_t w[MAX_WORDS];

	if (c->outer)
		__atomic_store_n((uint64_t *)(uintptr_t)c->outer, 0, __ATOMIC_RELAXED);
	if (!c->record || !cf || !cf->ring)
		return;
	if (REC_FN_IS_FD(REC_FN_KIND(c->fn))) {
		fd_leave(cf, c, REC_FN_KIND(c->fn));
		return;
	}
	switch (REC_FN_KIND(c->fn)) {
	case REC_FN_MALLOC:
		w[0] = c->ret, w[1] = c->arg[0], w[2] = 0;
		emit_stack(cf, REC_ALLOC, c, w, 3);
		break;
	case REC_FN_CALLOC:
	case REC_FN_MEMALIGN:
		w[0] = c->ret, w[1] = c->arg[0], w[2] = c->arg[1];
		emit_stack(cf, REC_ALLOC, c, w, 3);
		break;
	case REC_FN_REALLOC:
		w[0] = c->arg[0], w[1] = c->arg[1], w[2] = 0, w[3] = c->ret;
		emit_stack(cf, REC_REALLOC_END, c, w, 4);
		break;
	case REC_FN_REALLOCARRAY:
		w[0] = c->arg[0], w[1] = c->arg[1], w[2] = c->arg[2];
		w[3] = c->ret;
		emit_stack(cf, REC_REALLOC_END, c, w, 4);
		break;
	case REC_FN_POSIX_MEMALIGN:
		w[0] = c->arg[0], w[1] = c->arg[1], w[2] = c->arg[2];
		w[3] = (uint32_t)c->ret;
		w[4] = w[3] || !w[0] ? 0 : *(const volatile uint64_t *)w[0];
		emit_stack(cf, REC_MEMALIGN, c, w, 5);
		break;
	}
}
