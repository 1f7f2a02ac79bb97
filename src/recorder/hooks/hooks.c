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
#include "hooks_priv.h"
#include "rec_arch.h"
#include "recorder/ring.h"

/* Written by the mapper, read by the hooks: never by the hooks. */
struct rec_conf *rec_ctx __attribute__((section(".rec_ctx"), used));

/* The hooks' records: at most this many words between tid and hash. */
#define MAX_WORDS	5

void hook_enter(struct rec_call *c);
unsigned hook_leave(struct rec_call *c);

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

/* The nesting rule (rechook.h): 1 if the call is inside another one. */
static int nested(const struct rec_conf *cf, const struct rec_call *c)
{
	uint64_t ra = c->ra, i, n = cf->nranges, hi;

	hi = __atomic_load_n(&cf->near_hi, __ATOMIC_RELAXED);
	if (hi && !within(ra, __atomic_load_n(&cf->near_lo, __ATOMIC_RELAXED), hi))
		return 0;	/* the program's own code: the common case */
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

/* c->entry := the calling thread's entry, once a call (hook_enter). */
static void look_up_entry(const struct rec_conf *cf, struct rec_call *c)
{
	/* %fs:0 only if there is a table: a thread with no TLS faults */
	if (cf->threads)
		c->entry = (uint64_t)(uintptr_t)thread_entry(cf, rec_arch_tcb());
}

/* The calling thread's entry (c->entry, set by hook_enter). */
static const struct rec_thread *entry_of(const struct rec_call *c)
{
	return (const struct rec_thread *)(uintptr_t)c->entry;
}

static void caller_of(const struct rec_conf *cf, const struct rec_call *c,
		      struct caller *w)
{
	const struct rec_thread *e = entry_of(c);
	uint64_t tcb;
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
	/* %fs:0 only if it is needed: a thread with no TLS faults there */
	tcb = cf->tid_off ? rec_arch_tcb() : 0;
	if (tcb)
		w->tid = (uint64_t)*(const volatile int32_t *)(tcb + cf->tid_off);
	else
		w->tid = on_main ? cf->main_tid : 0;
	if (on_main)
		w->st.lo = w->sp, w->st.hi = cf->main_stack_hi;
}

/* caller_of's tid, in a frame of its own (emit's stays small: its
 * scrub class) */
static __attribute__((noinline)) uint64_t tid_of(const struct rec_conf *cf,
						 const struct rec_call *c)
{
	struct caller who;

	caller_of(cf, c, &who);
	return who.tid;
}

/* 1 if ptleak has the stack of hash H already. */
static int interned(const struct rec_conf *cf, uint64_t h)
{
	uint64_t word = __atomic_load_n(&cf->stackset, __ATOMIC_ACQUIRE), mask, v;
	const uint64_t *set = rec_stackset_table(word, &mask);
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

/* The ring of the calling thread: its own lane (*ALONE := 1: no other
 * thread writes there), or the shared one. */
static struct ring *lane_of(const struct rec_conf *cf, const struct rec_call *c,
			    int *alone)
{
	const struct rec_thread *e = entry_of(c);
	uint64_t l;

	*alone = 0;
	if (!e)
		return cf->ring;
	l = __atomic_load_n(&e->lane, __ATOMIC_RELAXED);
	if (!l || l >= __atomic_load_n(&cf->nlanes, __ATOMIC_RELAXED))
		return cf->ring;
	*alone = 1;
	return (struct ring *)(uintptr_t)(cf->lanes + (l - 1) * cf->lane_stride);
}

/* Words 0.. of reservation RES in ring R: fn and tid, the time T, the N
 * words W, then the stack's hash H if NH.  Plain stores where the words
 * do not wrap round the ring's end (ring_put's index arithmetic a word:
 * a tenth of a call's instructions). */
static inline __attribute__((always_inline)) void
put_head(struct ring *r, const struct ring_res *res,
		     const struct rec_call *c, uint64_t tid, uint64_t t,
		     const uint64_t *w, unsigned n, uint64_t h, unsigned nh)
{
	uint64_t mask = res->mask, at = (res->pos + 8) & mask;
	uint64_t *p = ring_word_m(r, at, mask);
	unsigned i;

	if (at + 8 * (n + 2 + nh) <= mask + 1) {
		p[0] = (uint32_t)c->fn | tid << 32;
		p[1] = t;
		for (i = 0; i < n; i++)
			p[i + 2] = w[i];
		if (nh)
			p[n + 2] = h;
		return;
	}
	ring_put(r, res, 0, (uint32_t)c->fn | tid << 32);
	ring_put(r, res, 1, t);
	for (i = 0; i < n; i++)
		ring_put(r, res, i + 2, w[i]);
	if (nh)
		ring_put(r, res, n + 2, h);
}

/* A record's time: the TSC once the process has had a second thread
 * (rec_conf.need_tsc), else 0 (an rdtsc is ~15% of the hooks' time). */
static inline uint64_t record_time(const struct rec_conf *cf)
{
	return __atomic_load_n(&cf->need_tsc, __ATOMIC_RELAXED) ? ring_arch_tsc() : 0;
}

/* The record TYPE of call C in ring R (ALONE: lane_of's): fn, tid,
 * time, the N words W.  C's scrub class (rechook.h) := REC_SCRUB_MIN
 * (hook_enter tail-calls emit and emit_free: their frame takes
 * hook_enter's place), REC_SCRUB_WAIT if the ring was full or the thread
 * has no entry (tid_of's frame). */
static inline __attribute__((always_inline)) void
emit_in(const struct rec_conf *cf, unsigned type, struct rec_call *c,
	const uint64_t *w, unsigned n, struct ring *r, int alone)
{
	const struct rec_thread *e = entry_of(c);
	struct ring_res res;
	uint64_t t, tid;
	int waited = 0;

	tid = e ? e->tid : tid_of(cf, c);
	/* the time before the reservation (docs/recorder.md, "Lanes") */
	t = record_time(cf);
	if (ring_reserve_w(r, type, 0, n + 2, &res, alone, &waited) == 0) {
		put_head(r, &res, c, tid, t, w, n, 0, 0);
		ring_commit(r, &res);
	}
	c->scrub = waited || !e ? REC_SCRUB_WAIT : REC_SCRUB_MIN;
}

static void emit(const struct rec_conf *cf, unsigned type, struct rec_call *c,
		 const uint64_t *w, unsigned n)
{
	struct ring *r;
	int alone;

	r = lane_of(cf, c, &alone);
	emit_in(cf, type, c, w, n, r, alone);
}

/* A free's record, in ring R (free_amends found it: four arguments, a
 * tail call) */
static __attribute__((noinline)) void emit_free(const struct rec_conf *cf,
						struct rec_call *c,
						struct ring *r, int alone)
{
	emit_in(cf, REC_FREE, c, c->arg, 1, r, alone);
}

/* The allocation record TYPE of call C: fn, tid, time, the N words W,
 * then the stack's hash and, unless ptleak has it, its pcs. */
static void emit_stack(const struct rec_conf *cf, unsigned type,
		       const struct rec_call *c, const uint64_t *w, unsigned n)
{
	const struct rec_objs *objs = __atomic_load_n(&cf->objs, __ATOMIC_ACQUIRE);
	unsigned npcs, max = 1;
	struct rec_scache *sc;
	int shared, got, alone;
	struct ring *r;
	struct ring_res res;
	struct caller who;
	uint64_t hash, t;

	r = lane_of(cf, c, &alone);
	caller_of(cf, c, &who);
	if (objs && who.st.hi && cf->depth > 1)
		max = cf->depth < REC_MAX_DEPTH ? (unsigned)cf->depth : REC_MAX_DEPTH;
	sc = max > 1 ? scache_of(cf, &who, &shared) : NULL;
	got = sc ? walk_cached(cf, c, &who, objs, max, &hash, sc, shared) : -1;
	npcs = got >= 0 ? (unsigned)got :
	       walk(cf, c, &who, objs, max, &hash, NULL, NULL, 0);
	if (interned(cf, hash))
		npcs = 0;
	t = record_time(cf);
	if (ring_reserve_as(r, type, npcs, n + 3 + npcs, &res, alone) < 0)
		return;
	put_head(r, &res, c, who.tid, t, w, n, hash, 1);
	if (npcs)
		walk(cf, c, &who, objs, npcs, &hash, r, &res, n + 3);
	ring_commit(r, &res);
}

/* Allocation C's record: its type (*TYPE) and words after fn, tid and
 * time (W, their number; 0: not an allocation). */
static inline unsigned alloc_words(const struct rec_call *c, unsigned kind,
				   uint64_t *w, unsigned *type)
{
	switch (kind) {
	case REC_FN_MALLOC:
		w[0] = c->ret, w[1] = c->arg[0], w[2] = 0;
		*type = REC_ALLOC;
		return 3;
	case REC_FN_CALLOC:
	case REC_FN_MEMALIGN:
		w[0] = c->ret, w[1] = c->arg[0], w[2] = c->arg[1];
		*type = REC_ALLOC;
		return 3;
	case REC_FN_REALLOC:
		w[0] = c->arg[0], w[1] = c->arg[1], w[2] = 0, w[3] = c->ret;
		*type = REC_REALLOC_END;
		return 4;
	case REC_FN_REALLOCARRAY:
		w[0] = c->arg[0], w[1] = c->arg[1], w[2] = c->arg[2];
		w[3] = c->ret;
		*type = REC_REALLOC_END;
		return 4;
	case REC_FN_POSIX_MEMALIGN:
		w[0] = c->arg[0], w[1] = c->arg[1], w[2] = c->arg[2];
		w[3] = (uint32_t)c->ret;
		w[4] = w[3] || !w[0] ? 0 : *(const volatile uint64_t *)w[0];
		*type = REC_MEMALIGN;
		return 5;
	}
	return 0;
}

/*
 * emit_stack's common case: a thread in the table whose stack is a way
 * of its cache (walk_cached's first case, as it reads it), interned
 * (perl: every call but ~1 in 60).  The same record as emit_stack's.  1
 * (*WAITED: the ring was full), or 0 if it is not that case: nothing
 * done.  Inlined into leave_alloc: one frame.
 */
static inline __attribute__((always_inline)) int
emit_fast(const struct rec_conf *cf, unsigned type, const struct rec_call *c,
	  const uint64_t *w, unsigned n, int *waited)
{
	const struct rec_objs *objs = __atomic_load_n(&cf->objs, __ATOMIC_ACQUIRE);
	const struct rec_thread *e = entry_of(c);
	const struct rec_sway *way = NULL;
	struct unwtab_stack st;
	struct rec_scache *sc;
	struct ring_res res;
	struct ring *r;
	uint64_t hash, t, g, sp, fp;
	unsigned max, open;
	int alone, i;

	if (!e || !objs || !cf->scache || cf->depth <= 1)
		return 0;
	/* caller_of's, for a thread with an entry */
	rec_arch_caller(c, &sp, &fp);
	if (!within(sp, e->lo, e->hi))
		return 0;
	st.lo = sp, st.hi = e->hi;
	max = cf->depth < REC_MAX_DEPTH ? (unsigned)cf->depth : REC_MAX_DEPTH;
	sc = &cf->scache[e - cf->threads];
	/* taken as walk_cached takes it: odd meanwhile */
	g = __atomic_load_n(&sc->gen, __ATOMIC_RELAXED);
	if (g & 1)
		return 0;
	__atomic_store_n(&sc->gen, g + 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (scache_keyed(cf, st.hi, objs, max, sc) &&
	    (i = way_of(sc, c->ra, sp, fp, &st)) >= 0)
		way = &sc->way[i];
	if (!way || !interned(cf, way->hash)) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&sc->gen, g, __ATOMIC_RELEASE);
		return 0;
	}
	hash = way->hash;
	sc->way_hint = (uint64_t)i;	/* looked at first next time */
	sc->walks++;
	sc->from_way++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&sc->gen, g + 2, __ATOMIC_RELEASE);
	r = lane_of(cf, c, &alone);
	t = record_time(cf);
	/* in its own lane, an allocation's record stays open for its free
	 * (rechook.h, REC_OPEN_HDR) */
	open = alone && type == REC_ALLOC;
	if (ring_reserve_w(r, type, 0, n + 3 + open, &res, alone, waited) == 0) {
		put_head(r, &res, c, e->tid, t, w, n, hash, 1);
		if (open) {
			ring_commit_open(r, &res);
			((struct rec_thread *)(uintptr_t)e)->open_end =
				res.pos + REC_OPEN_LEN;
		} else {
			ring_commit(r, &res);
		}
	}
	return 1;
}

/* Nothing reserved in lane R since its head was END (the thread's own),
 * and the record at POS is of the block at ADDR. */
static inline int unmoved(struct ring *r, uint64_t end, uint64_t pos,
			  uint64_t addr)
{
	return __atomic_load_n(&r->head, __ATOMIC_RELAXED) == end &&
	       __atomic_load_n(ring_word(r, pos + REC_OPEN_ADDR),
			       __ATOMIC_RELAXED) == addr;
}

/*
 * A free whose block the thread's last record allocated, that record
 * still open in the thread's lane R (ALONE: lane_of's; not taken yet):
 * the free's time put in it (ring_amend_begin, _end) instead of a
 * record (a busy program's usual pair: half its records).  1 if so.
 */
static int free_amends(const struct rec_conf *cf, const struct rec_call *c,
		       struct ring *r, int alone)
{
	const struct rec_thread *e = entry_of(c);
	uint64_t end, pos, t;

	if (!e || !c->arg[0])
		return 0;
	end = __atomic_load_n(&e->open_end, __ATOMIC_RELAXED);
	if (!end)
		return 0;
	pos = end - REC_OPEN_LEN;
	/* no locked instruction for a free of another block (perl's) */
	if (!alone || !unmoved(r, end, pos, c->arg[0]) ||
	    __atomic_load_n(ring_word(r, pos), __ATOMIC_RELAXED) != REC_OPEN_HDR)
		return 0;
	/* the time before the amendment, as a record's before its
	 * reservation */
	t = record_time(cf);
	if (ring_amend_begin(r, pos, REC_OPEN_HDR) < 0)
		return 0;
	/* again with the record held: a signal handler may have made
	 * records (a lap of them: another open record there) since */
	if (!unmoved(r, end, pos, c->arg[0])) {
		ring_amend_cancel(r, pos, REC_OPEN_HDR);
		return 0;
	}
	ring_amend_end(r, pos, REC_OPEN_HDR, t);
	return 1;
}

/*
 * hook_leave's allocations, tail-called (hook_leave's frame gone):
 * emit_fast's record, else emit_stack's.  The call's scrub class: the
 * larger of hook_enter's and its own (REC_SCRUB_EMIT, REC_SCRUB_WAIT
 * after ring_wait, REC_SCRUB after emit_stack).
 */
static __attribute__((noinline)) unsigned
leave_alloc(const struct rec_conf *cf, struct rec_call *c, unsigned kind)
{
	uint64_t w[MAX_WORDS];
	unsigned type = 0, n = alloc_words(c, kind, w, &type), scrub;
	int waited = 0;

	if (!n)
		return c->scrub;
	if (emit_fast(cf, type, c, w, n, &waited)) {
		scrub = waited ? REC_SCRUB_WAIT : REC_SCRUB_EMIT;
	} else {
		emit_stack(cf, type, c, w, n);
		scrub = REC_SCRUB;
	}
	return scrub > c->scrub ? scrub : c->scrub;
}

/* Where the thread's recorded call in progress is kept (FD: its
 * descriptor creation in progress): its table entry, the main thread's
 * word while it has none, or NULL (not known: the second nesting rule
 * does not apply). */
static uint64_t *outer_of(const struct rec_conf *cf, const struct rec_call *c,
			  int fd)
{
	const struct rec_thread *e = entry_of(c);
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
		c->scrub = REC_SCRUB;	/* emit's frame below hook_enter's */
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
	c->record = REC_RECORD_LEAVE;
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

	c->record = REC_RECORD_NO;
	c->scrub = REC_SCRUB_MIN;
	c->outer = 0;
	c->entry = 0;
	if (!cf || !cf->ring)
		return;
	if (REC_FN_IS_FD(kind)) {
		c->scrub = REC_SCRUB;	/* rare: not worth a class */
		look_up_entry(cf, c);
		fd_enter(cf, c, kind);
		return;
	}
	if (nested(cf, c))
		return;
	look_up_entry(cf, c);
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
	/* a free is recorded whole now: the stub calls no hook_leave */
	c->record = kind == REC_FN_FREE ? REC_RECORD_DONE : REC_RECORD_LEAVE;
	/* tail calls: emit's frame in hook_enter's place */
	if (kind == REC_FN_FREE) {
		int alone;
		struct ring *r = lane_of(cf, c, &alone);

		if (!free_amends(cf, c, r, alone))
			emit_free(cf, c, r, alone);
	} else if (kind == REC_FN_REALLOC || kind == REC_FN_REALLOCARRAY)
		emit(cf, REC_REALLOC_BEGIN, c, c->arg, 1);
}

/* After the original returned: the allocations.  Returns the call's
 * scrub class (rechook.h): the deeper of hook_enter's and its own. */
unsigned hook_leave(struct rec_call *c)
{
	const struct rec_conf *cf = ctx();
	unsigned kind = REC_FN_KIND(c->fn);

	if (c->outer)
		__atomic_store_n((uint64_t *)(uintptr_t)c->outer, 0, __ATOMIC_RELAXED);
	if (!c->record || !cf || !cf->ring)
		return c->scrub;
	if (REC_FN_IS_FD(kind)) {
		fd_leave(cf, c, kind);
		return REC_SCRUB;
	}
	return leave_alloc(cf, c, kind);
}
