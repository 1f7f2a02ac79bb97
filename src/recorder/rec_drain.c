/*
 * rec_drain.c - the recorder's consumer: ring records (rechook.h) to the
 * heap table (heap.h) and the descriptor probes (fdprobe.h), the same
 * calls the breakpoint engine makes, so that reports do not know which
 * engine ran.
 *
 * Stacks: a record carries a hash of its walked return addresses and,
 * the first times, the addresses themselves; ptleak interns them (hash ->
 * walked stack) and then puts the hash into the stack set, so that the
 * hooks send only the hash from then on.  The stack of a block is the
 * function's entry followed by the walked addresses, cut after a return
 * address into main, as the breakpoint engine's unwinder makes it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakpoints/fdprobe.h"
#include "recorder/ring.h"
#include "rec_priv.h"
#include "tables/stacks.h"
#include "base/util.h"

#define MAX_PCS 512
/* reallocs begun, not ended (longjmp out of realloc leaves them): a
 * linear search, so a target that sends only begins is cut here */
#define REC_MAX_REALLOCS 4096

/*
 * A record decoded, its stack interned, waiting in a batch: the heap
 * table's slots of a batch are prefetched before its operations run in
 * order (the table of a big program is too big for the caches: each
 * operation was a cache miss, half the consumer's time).
 */
struct op {
	unsigned type;
	struct heap_block b;	/* the allocation (ALLOC, REALLOC_END) */
	uint64_t addr;		/* FREE, REALLOC_BEGIN, REALLOC_END: old */
	uint64_t tid;
	uint64_t size;		/* REALLOC_END: the size for heap_realloc_end */
	/* FD_OPEN: the result, FD_CLOSE: the arguments; the descriptors
	 * the hook read; fdprobe's index of the function */
	uint64_t fa[3];
	int v0, v1;
	unsigned idx;
};

#define BATCH 64

/* O cleared for a record: what every kind reads (the FD kinds set
 * their own fields).  Not memset of the whole: rep stos, 40% of take. */
static inline void op_clear(struct op *o)
{
	o->b = (struct heap_block){ 0 };
	o->addr = o->size = 0;
}

struct drain {
	struct recorder *R;
	struct heap *h;
	struct fdprobe *fp;
	struct stacks *st;
	uint64_t now;
	long n;
	struct op ops[BATCH];
	unsigned nops;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* The id of KEY (non-zero) in map M, 0 if none. */
static uint32_t idmap_get(const struct idmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return 0;
	for (i = mix(key) & (m->cap - 1); m->e[i].key; i = (i + 1) & (m->cap - 1))
		if (m->e[i].key == key)
			return m->e[i].id;
	return 0;
}

/* KEY (non-zero) -> ID in map M, unless KEY is there already. */
static void idmap_put(struct idmap *m, uint64_t key, uint32_t id)
{
	size_t i;

	if ((m->count + 1) * 2 > m->cap) {
		struct idmap old = *m;
		size_t k;

		m->cap = m->cap ? 2 * m->cap : 1024;
		m->e = xcalloc(m->cap, sizeof(*m->e));
		m->count = 0;
		for (k = 0; k < old.cap; k++)
			if (old.e[k].key)
				idmap_put(m, old.e[k].key, old.e[k].id);
		free(old.e);
	}
	for (i = mix(key) & (m->cap - 1); m->e[i].key; i = (i + 1) & (m->cap - 1))
		if (m->e[i].key == key)
			return;
	m->e[i].key = key;
	m->e[i].id = id;
	m->count++;
}

/* The hooks may send only the hash of this stack from now on. */
static void stackset_add(struct recorder *R, uint64_t hash)
{
	uint64_t *set = (uint64_t *)(R->area + AREA_STACKSET), i, n;

	for (i = hash & (NSTACKSET - 1), n = 0; n < REC_STACKSET_PROBES;
	     i = (i + 1) & (NSTACKSET - 1), n++) {
		uint64_t v = __atomic_load_n(&set[i], __ATOMIC_RELAXED);

		if (v == hash)
			return;
		if (!v) {
			__atomic_store_n(&set[i], hash, __ATOMIC_RELEASE);
			return;
		}
	}
	/* that chain is full: this stack keeps coming whole */
}

static const struct rec_fn *fn_of(const struct recorder *R, uint64_t fn)
{
	unsigned i;

	for (i = 0; i < R->nfns; i++)
		if (R->fns[i].fn == (uint32_t)fn)
			return &R->fns[i];
	return NULL;
}

/*
 * The stack of a record: HASH, and the NPCS pcs at PCS when it came
 * whole; F the function called.  0 when the hash is unknown (its whole
 * record was lost).
 */
static uint32_t stack_lookup(struct drain *d, const struct rec_fn *f,
			     uint64_t hash, const uint64_t *pcs, unsigned npcs)
{
	struct recorder *R = d->R;
	uint64_t all[MAX_PCS + 1], key;
	const uint64_t *w;
	uint32_t wid, id;
	unsigned n, i;

	wid = idmap_get(&R->walked_of, hash);
	if (!wid) {
		if (!npcs && !hash)
			return 0;
		/* cut after a return address into main */
		for (n = 0; n < npcs && n < MAX_PCS; n++)
			if (R->main_hi && pcs[n] - 1 >= R->main_lo &&
			    pcs[n] - 1 < R->main_hi) {
				n++;
				break;
			}
		/* npcs 0 with an unknown hash: lost, counted once below */
		wid = stacks_intern(R->walked, pcs, n);
		if (!wid && npcs)
			return 0;
		if (!wid) {
			/* an empty walk: its own id */
			wid = stacks_intern(R->walked, (const uint64_t[]){ 0 }, 1);
		}
		idmap_put(&R->walked_of, hash, wid);
		if (npcs)
			stackset_add(R, hash);
	}
	key = (uint64_t)wid << 32 | (uint64_t)(f - R->fns) | 1ull << 31;
	id = idmap_get(&R->stack_of, key);
	if (id)
		return id;
	n = stacks_get(R->walked, wid, &w);
	all[0] = f->addr;
	for (i = 0; i < n && i + 1 < R->depth && i < MAX_PCS; i++) {
		if (!w[i])
			break;
		all[i + 1] = w[i];
	}
	id = stacks_intern(d->st, all, i + 1);
	idmap_put(&R->stack_of, key, id);
	return id;
}

/* stack_lookup through the memo of the last answers (a site allocates
 * in runs: two map lookups a record were 6% of the consumer). */
static uint32_t stack_of(struct drain *d, const struct rec_fn *f,
			 uint64_t hash, const uint64_t *pcs, unsigned npcs)
{
	struct recorder *R = d->R;
	uint32_t fi = (uint32_t)(f - R->fns);
	size_t m = (hash ^ (hash >> 29) ^ fi * 0x9e3779b9u) & (REC_STACK_MEMO - 1);
	uint32_t id;

	if (R->stack_memo[m].id && R->stack_memo[m].hash == hash &&
	    R->stack_memo[m].fn == fi)
		return R->stack_memo[m].id;
	id = stack_lookup(d, f, hash, pcs, npcs);
	if (id) {
		R->stack_memo[m].hash = hash;
		R->stack_memo[m].fn = fi;
		R->stack_memo[m].id = id;
	}
	return id;
}

static struct rec_realloc *realloc_find(struct recorder *R, uint64_t tid,
					uint64_t old)
{
	size_t i;

	for (i = R->nreallocs; i > 0; i--)
		if (R->reallocs[i - 1].tid == tid && R->reallocs[i - 1].old == old)
			return &R->reallocs[i - 1];
	return NULL;
}

static uint64_t product(uint64_t a, uint64_t b, int *overflow)
{
	unsigned __int128 m = (unsigned __int128)a * b;

	*overflow = m >> 64 != 0;
	return (uint64_t)m;
}

/*
 * The batch's slots were prefetched as its records came: now the
 * entries of the blocks it frees, and the slots of the entries their
 * removals will move (the last ones, as many as the frees outnumber the
 * allocations so far).
 */
static void prefetch_frees(const struct drain *d)
{
	unsigned i;
	long back = 0;

	for (i = 0; i < d->nops; i++) {
		switch (d->ops[i].type) {
		case REC_FD_OPEN:
		case REC_FD_CLOSE:
			break;
		case REC_FREE:
		case REC_REALLOC_BEGIN:
			heap_prefetch_free(d->h, d->ops[i].addr, back++);
			break;
		default:
			back--;
		}
	}
}

/* Run the batch's operations, in order. */
static void flush(struct drain *d)
{
	struct recorder *R = d->R;
	struct rec_realloc *q;
	unsigned i;

	if (R->slow_drain) {
		uint64_t until = now_ns() + 1000ull * d->nops;

		while (now_ns() < until)
			;
	}
	if (heap_prefetch_worth(d->h))
		prefetch_frees(d);
	for (i = 0; i < d->nops; i++) {
		struct op *o = &d->ops[i];

		switch (o->type) {
		case REC_FD_OPEN:
			fdprobe_rec_open(d->fp, R->pid, (pid_t)o->tid, o->idx,
					 o->fa[0], o->v0, o->v1, o->b.stack,
					 o->b.time_ns);
			break;
		case REC_FD_CLOSE:
			fdprobe_rec_close(d->fp, o->idx, o->fa[0], o->fa[1],
					  o->fa[2], o->v0);
			break;
		case REC_FREE:
			heap_free_by(d->h, o->addr, (int32_t)o->tid, o->b.time_ns);
			break;
		case REC_REALLOC_BEGIN:
			/* a begin left by longjmp for the same block: back live */
			if ((q = realloc_find(R, o->tid, o->addr)) && q->live)
				heap_alloc(d->h, &q->held);
			if (!q && R->nreallocs == REC_MAX_REALLOCS) {
				/* more begins without an end than threads
				 * could leave: the target wrote them */
				R->bad++;
				break;
			}
			if (!q) {
				if (R->nreallocs == R->areallocs) {
					R->areallocs = R->areallocs ? 2 * R->areallocs : 16;
					R->reallocs = xrealloc(R->reallocs, R->areallocs *
							       sizeof(*R->reallocs));
				}
				q = &R->reallocs[R->nreallocs++];
			}
			q->tid = o->tid;
			q->old = o->addr;
			q->live = heap_realloc_begin(d->h, o->addr, &q->held);
			break;
		case REC_REALLOC_END: {
			struct rec_realloc held = { 0 };

			q = realloc_find(R, o->tid, o->addr);
			if (q) {
				held = *q;
				*q = R->reallocs[--R->nreallocs];
			}
			heap_realloc_end(d->h, o->addr, held.live, &held.held,
					 o->size, &o->b);
			break;
		}
		default:
			heap_alloc(d->h, &o->b);
		}
	}
	d->nops = 0;
}

uint64_t rec_checkpoint(struct recorder *R)
{
	uint64_t now = now_ns();

	uint64_t head;

	if (!R || !R->area || R->broken)
		return now;
	head = __atomic_load_n(&((struct ring *)(R->area + AREA_RING))->head,
			       __ATOMIC_ACQUIRE);
	/* nothing reserved since the last mark: it dates every record
	 * below head already (a target that stops allocating must not grow
	 * the list at every drain) */
	if (R->nmarks > R->firstmark && R->marks[R->nmarks - 1].head == head)
		return now;
	if (R->firstmark && R->firstmark == R->nmarks)
		R->firstmark = R->nmarks = 0;
	if (R->nmarks == R->amarks && R->firstmark) {
		/* drop the used ones first */
		memmove(R->marks, R->marks + R->firstmark,
			(R->nmarks - R->firstmark) * sizeof(*R->marks));
		R->nmarks -= R->firstmark;
		R->firstmark = 0;
	}
	if (R->nmarks == R->amarks) {
		R->amarks = R->amarks ? 2 * R->amarks : 64;
		R->marks = xrealloc(R->marks, R->amarks * sizeof(*R->marks));
	}
	R->marks[R->nmarks].head = head;
	R->marks[R->nmarks].ns = now;
	R->nmarks++;
	return now;
}

/* The time of the record at ring position POS: the first checkpoint
 * that saw it reserved (the drain's own, last, sees every one). */
static uint64_t time_of(struct recorder *R, uint64_t pos, uint64_t now)
{
	while (R->firstmark < R->nmarks && R->marks[R->firstmark].head <= pos)
		R->firstmark++;
	return R->firstmark < R->nmarks ? R->marks[R->firstmark].ns : now;
}

static int bad(struct recorder *R)
{
	R->bad++;
	return 0;
}

static int take(void *ctx, const struct ring_rec *rec)
{
	struct drain *d = ctx;
	struct recorder *R = d->R;
	const uint64_t *w = rec->w;
	unsigned nw = rec->nwords - rec->npcs, kind;	/* checked below */
	const struct rec_fn *f;
	struct heap_block *b;
	struct op *o;
	int overflow = 0;

	d->n++;
	/* the target wrote every word: a record that fails a check is
	 * counted and skipped */
	if (rec->npcs > rec->nwords || nw < 3 || !(f = fn_of(R, w[0])))
		return bad(R);
	kind = REC_FN_KIND(w[0]);
	o = &d->ops[d->nops];
	op_clear(o);
	b = &o->b;
	b->time_ns = time_of(R, rec->pos, d->now);
	b->tid = (int32_t)w[1];
	b->fn = (uint8_t)REC_FN_TAG(w[0]);
	o->type = rec->type;
	o->tid = w[1];
	switch (rec->type) {
	case REC_FREE:
		if (!w[2])
			return 0;
		/* fall through */
	case REC_REALLOC_BEGIN:
		o->addr = w[2];
		break;
	case REC_ALLOC:
		if (nw < 6)
			return bad(R);
		if (!w[2])
			return 0;	/* a failed call */
		b->addr = w[2];
		b->size = kind == REC_FN_CALLOC ? product(w[3], w[4], &overflow) :
			  kind == REC_FN_MEMALIGN ? w[4] : w[3];
		b->stack = stack_of(d, f, w[5], w + nw, rec->npcs);
		break;
	case REC_REALLOC_END:
		if (nw < 7)
			return bad(R);
		o->addr = w[2];
		b->size = kind == REC_FN_REALLOCARRAY ? product(w[3], w[4], &overflow) :
			  w[3];
		o->size = overflow ? 1 : b->size;
		b->addr = w[5];
		b->stack = stack_of(d, f, w[6], w + nw, rec->npcs);
		break;
	case REC_MEMALIGN:
		if (nw < 8)
			return bad(R);
		if (w[5] || !w[6])
			return 0;	/* failed */
		b->addr = w[6];
		b->size = w[4];
		b->stack = stack_of(d, f, w[7], w + nw, rec->npcs);
		o->type = REC_ALLOC;
		break;
	case REC_FD_OPEN:
		/* fn tid a0 a1 result v0 v1 hash */
		if (nw < 8)
			return bad(R);
		if (!d->fp)
			return 0;
		o->idx = REC_FN_TAG(w[0]);
		o->fa[0] = w[4];
		o->v0 = (int)w[5];
		o->v1 = (int)w[6];
		b->stack = stack_of(d, f, w[7], w + nw, rec->npcs);
		break;
	case REC_FD_CLOSE:
		/* fn tid a0 a1 a2 v */
		if (nw < 6)
			return bad(R);
		if (!d->fp)
			return 0;
		o->idx = REC_FN_TAG(w[0]);
		o->fa[0] = w[2], o->fa[1] = w[3], o->fa[2] = w[4];
		o->v0 = (int)w[5];
		break;
	default:
		return bad(R);
	}
	if (rec->type != REC_FD_OPEN && rec->type != REC_FD_CLOSE)
		heap_prefetch(d->h, o->addr ? o->addr : b->addr);
	if (++d->nops == BATCH)
		flush(d);
	return 0;
}

long rec_drain(struct recorder *R, struct heap *h, struct fdprobe *fp,
	       struct stacks *st, uint64_t *lost)
{
	static struct drain d;
	uint64_t goal;
	int got;

	if (lost)
		*lost = R ? R->lost : 0;
	if (!R || !R->rd || R->broken)
		return 0;
	d.R = R, d.h = h, d.fp = fp, d.st = st, d.n = 0, d.nops = 0;
	d.now = rec_checkpoint(R);
	/* what was reserved before now, not more: threads that allocate
	 * faster than ptleak consumes would keep it here for ever (its
	 * events, signals and reports waiting) */
	goal = rec_head_pos(R);
	do {
		got = ring_consume(R->rd, take, &d, 4096);
		flush(&d);
		if (got < 0) {
			R->broken = 1;
			return -1;
		}
	} while (got == 4096 && ring_tail(R->rd) < goal);
	/* the target's count, read while its header makes sense */
	R->lost = __atomic_load_n(&((struct ring *)(R->area + AREA_RING))->lost,
				  __ATOMIC_RELAXED);
	if (lost)
		*lost = R->lost;
	return d.n;
}

uint64_t rec_bad(const struct recorder *R)
{
	return R ? R->bad : 0;
}

const char *rec_why(const struct recorder *R)
{
	return R && R->rd ? ring_why(R->rd) : NULL;
}

int rec_blocked(const struct recorder *R)
{
	const struct ring *r;

	if (!R || !R->rd || R->broken)
		return 0;
	r = (const struct ring *)(R->area + AREA_RING);
	return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) != ring_tail(R->rd);
}

long rec_skip_holes(struct recorder *R)
{
	long n = 0;
	int got;

	if (!R || !R->rd || R->broken)
		return 0;
	while ((got = ring_skip(R->rd)) > 0)
		n += got;
	if (got < 0)
		R->broken = 1;
	return n;
}

uint64_t rec_head_pos(const struct recorder *R)
{
	if (!R || !R->area)
		return 0;
	return __atomic_load_n(&((const struct ring *)(R->area + AREA_RING))->head,
			       __ATOMIC_ACQUIRE);
}

uint64_t rec_tail_pos(const struct recorder *R)
{
	return R && R->rd ? ring_tail(R->rd) : 0;
}

unsigned rec_fill(const struct recorder *R)
{
	uint64_t used;

	if (!R || !R->rd || R->broken)
		return 0;
	used = rec_head_pos(R) - ring_tail(R->rd);
	return used >= (1ull << RING_LOG2) ? 256 : (unsigned)(used >> (RING_LOG2 - 8));
}

long rec_drain_pace(long ns, unsigned fill)
{
	if (fill >= 64)
		ns /= 2;
	else if (fill < 16)
		ns *= 2;
	return ns < REC_DRAIN_MIN_NS ? REC_DRAIN_MIN_NS :
	       ns > REC_DRAIN_MAX_NS ? REC_DRAIN_MAX_NS : ns;
}

void rec_debug_ring(const struct recorder *R)
{
	const struct ring *r = (const struct ring *)(R->area + AREA_RING);

	fprintf(stderr, "ptleak-debug: ring: enabled %u head %llu tail %llu "
		"heartbeat %u lost %llu dropped %llu sleeps %llu waiters %u\n",
		r->enabled, (unsigned long long)r->head,
		(unsigned long long)r->tail, r->heartbeat,
		(unsigned long long)r->lost, (unsigned long long)r->dropped,
		(unsigned long long)r->sleeps, r->waiters);
	rec_debug_scache(R);
}
