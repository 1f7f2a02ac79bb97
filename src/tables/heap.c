/*
 * heap.c - the table of live heap blocks, totals and peak.
 *
 * The blocks are stored packed, 24 bytes each, with an index by address
 * (heap_store.c); this file counts.  The index doubles when it gets 3/4
 * full; nothing shrinks (except on heap_reset).
 *
 * Invariant: stats.in_use_bytes / in_use_blocks are always the sum / count
 * of the blocks in the table.  A block held by heap_realloc_begin is out of
 * the table and so out of in_use until heap_realloc_end decides.  The
 * per-stack and per-thread figures change with in_use, in the same two
 * places (in_use_add, in_use_sub), so they add up to it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tables/growth.h"
#include "tables/addrset.h"
#include "tables/heap.h"
#include "heap_store.h"
#include "base/util.h"

#define THREAD_SLOTS (2 * HEAP_MAX_THREADS)	/* power of two */
#define THREAD_MEMO 16				/* power of two */
#define THREAD_PENDING 64

struct heap {
	struct heap_store s;
	struct heap_block look;	/* heap_lookup's copy */
	struct heap_stats st;
	/* allocations and their bytes by stack id, freed ones included
	 * (pprof's alloc_space): 16 bytes per stack, as the stack table */
	struct heap_stack_total *per_stack;
	size_t nper_stack;
	uint64_t *stack_bytes;	/* [stack id]: bytes in use */
	size_t nstack_bytes;
	uint32_t stack_max;
	struct heap_thread *threads;	/* [0] is tid 0's */
	size_t nthreads, athreads;
	uint32_t *thread_slots;	/* index + 1 into threads, 0 = empty */
	/* the threads of recent events and their indexes, by tid's low
	 * bits: several threads' events interleave (one memo of the last
	 * thread missed there, 10% of the drain at 4 threads) */
	struct {
		int32_t tid;
		uint32_t index;
	} memo[THREAD_MEMO];
	/* names of threads with no entry yet (heap_thread_name): the
	 * recorder may run a thread's records after its exit named it */
	struct {
		int32_t tid;
		char name[16];
	} pending[THREAD_PENDING];
	unsigned npending;	/* names given so far: the next slot */
	heap_observer observer;
	void *observer_ctx;
	/* a census from a snapshot is being taken (heap_census_pending):
	 * the addresses freed meanwhile that the table did not know */
	struct addrset *late;
	/* bytes and blocks in use per stack over time (growth.h) */
	struct growth *growth;
	uint64_t clock;		/* the latest event time seen (now_ns()) */
};


static const char *const fn_names[AF_COUNT] = {
	[AF_MALLOC] = "malloc",
	[AF_CALLOC] = "calloc",
	[AF_REALLOC] = "realloc",
	[AF_REALLOCARRAY] = "reallocarray",
	[AF_FREE] = "free",
	[AF_POSIX_MEMALIGN] = "posix_memalign",
	[AF_ALIGNED_ALLOC] = "aligned_alloc",
	[AF_MEMALIGN] = "memalign",
	[AF_VALLOC] = "valloc",
	[AF_PVALLOC] = "pvalloc",
};

const char *alloc_fn_name(enum alloc_fn fn)
{
	if ((unsigned)fn >= AF_COUNT)
		return NULL;
	return fn_names[fn];
}

/* The slot of thread TID (> 0) in thread_slots, or the empty one where
 * it would go. */
static size_t thread_slot(const struct heap *h, int32_t tid)
{
	size_t i;

	for (i = hash64((uint64_t)tid) & (THREAD_SLOTS - 1); h->thread_slots[i];
	     i = (i + 1) & (THREAD_SLOTS - 1))
		if (h->threads[h->thread_slots[i] - 1].tid == tid)
			break;
	return i;
}

/* Thread TID's entry, not in the memo: a new one if there is room, else
 * tid 0's. */
static __attribute__((noinline)) struct heap_thread *
thread_find(struct heap *h, int32_t tid)
{
	unsigned m = (unsigned)tid & (THREAD_MEMO - 1), k;
	size_t i;

	if (!h->threads) {
		h->thread_slots = xcalloc(THREAD_SLOTS, sizeof(*h->thread_slots));
		h->athreads = 64;
		h->threads = xcalloc(h->athreads, sizeof(*h->threads));
		h->nthreads = 1;	/* tid 0 */
	}
	if (tid <= 0)
		return &h->threads[0];
	i = thread_slot(h, tid);
	if (h->thread_slots[i]) {
		h->memo[m].tid = tid;
		h->memo[m].index = h->thread_slots[i] - 1;
		return &h->threads[h->memo[m].index];
	}
	if (h->nthreads > HEAP_MAX_THREADS)
		return &h->threads[0];
	if (h->nthreads == h->athreads) {
		h->athreads *= 2;
		h->threads = xrealloc(h->threads, h->athreads * sizeof(*h->threads));
	}
	memset(&h->threads[h->nthreads], 0, sizeof(*h->threads));
	h->threads[h->nthreads].tid = tid;
	for (k = 0; k < THREAD_PENDING; k++)
		if (h->pending[k].tid == tid) {
			memcpy(h->threads[h->nthreads].name, h->pending[k].name,
			       sizeof(h->pending[k].name));
			h->pending[k].tid = 0;
		}
	h->thread_slots[i] = (uint32_t)++h->nthreads;
	return &h->threads[h->nthreads - 1];
}

/* Thread TID's entry (the memo's tids are > 0: tid 0 is never in it). */
static inline struct heap_thread *thread_of(struct heap *h, int32_t tid)
{
	unsigned m = (unsigned)tid & (THREAD_MEMO - 1);

	if (h->memo[m].tid == tid && tid > 0)
		return &h->threads[h->memo[m].index];
	return thread_find(h, tid);
}

static void stack_add(struct heap *h, uint32_t stack, int64_t bytes,
		      int32_t blocks, int grows)
{
	if (stack >= h->nstack_bytes) {
		size_t n = h->nstack_bytes ? h->nstack_bytes : 1024;

		while (n <= stack)
			n *= 2;
		h->stack_bytes = xrealloc(h->stack_bytes, n * sizeof(uint64_t));
		memset(h->stack_bytes + h->nstack_bytes, 0,
		       (n - h->nstack_bytes) * sizeof(uint64_t));
		h->nstack_bytes = n;
	}
	if (stack > h->stack_max)
		h->stack_max = stack;
	h->stack_bytes[stack] += (uint64_t)bytes;
	if (grows)
		growth_note(h->growth, stack, bytes, blocks, h->clock);
}

/* stack_add(STACK, BYTES, 1, GROWS) then stack_add(STACK, -BYTES, -1,
 * GROWS) at one time */
static void stack_pair(struct heap *h, uint32_t stack, uint64_t bytes,
		       int grows)
{
	if (stack >= h->nstack_bytes)
		stack_add(h, stack, 0, 0, 0);	/* its slot, made */
	else if (stack > h->stack_max)
		h->stack_max = stack;
	if (grows)
		growth_note_pair(h->growth, stack, bytes, h->clock);
}

static inline void in_use_add(struct heap *h, const struct heap_block *b)
{
	h->st.in_use_bytes += b->size;
	h->st.in_use_blocks++;
	if (h->st.in_use_bytes > h->st.peak_bytes)
		h->st.peak_bytes = h->st.in_use_bytes;
	if (b->time_ns > h->clock)
		h->clock = b->time_ns;
	stack_add(h, b->stack, (int64_t)b->size, 1,
		  !(b->flags & HB_REPLACEMENT));
	thread_of(h, b->tid)->in_use_bytes += b->size;
}

static inline void in_use_sub(struct heap *h, const struct heap_block *b)
{
	h->st.in_use_bytes -= b->size;
	h->st.in_use_blocks--;
	/* (negated unsigned: a size the target gave may be 2^63) */
	stack_add(h, b->stack, (int64_t)(0 - b->size), -1,
		  !(b->flags & HB_REPLACEMENT));
	thread_of(h, b->tid)->in_use_bytes -= b->size;
}

/* Thread TID freed a block from before tracing (unknown to the table):
 * its next allocation replaces it (at most PRE_FREES_MAX pending). */
#define PRE_FREES_MAX 64
static void pre_free(struct heap *h, int32_t tid)
{
	struct heap_thread *t = thread_of(h, tid);

	if (t->pre_frees < PRE_FREES_MAX)
		t->pre_frees++;
}

/* A free counted to thread TID. */
static inline void count_free(struct heap *h, int32_t tid)
{
	h->st.frees++;
	thread_of(h, tid)->frees++;
}

static inline void tell(struct heap *h, uint8_t type, uint8_t fn, int32_t tid,
			uint32_t stack, uint64_t time_ns, uint64_t size,
			uint64_t addr, uint64_t old)
{
	struct heap_event e = { type, fn, tid, stack, time_ns, size, addr, old };

	if (h->observer)
		h->observer(h->observer_ctx, &e);
}

/* Entry E as a block. */
static void decode(const struct heap *h, const struct heap_entry *e,
		   struct heap_block *b)
{
	uint32_t t = HEAP_META_THREAD(e->meta);
	int before = !!(e->meta & HEAP_META_BEFORE);

	b->addr = e->addr;
	b->size = hs_size(&h->s, e);
	b->time_ns = hs_time(&h->s, e);
	b->stack = before ? 0 : e->stack;
	b->type = before ? (uint16_t)e->stack : 0;
	b->tid = h->threads && t < h->nthreads ? h->threads[t].tid : 0;
	b->fn = HEAP_META_FN(e->meta);
	b->flags = e->meta & HEAP_META_REPL ? HB_REPLACEMENT : 0;
	b->before = (uint8_t)before;
}

/*
 * Make B live.  A live block already at B->addr (a missed free) is
 * replaced and counted freed.  Counts no allocation.
 */
/* NB, a fresh block of thread T: one that follows its thread's free of a
 * block from before tracing, or of a block of the same size, replaces it
 * (growth.h). */
static void mark_fresh(struct heap *h, struct heap_thread *t,
		       struct heap_block *nb)
{
	growth_alloc(h->growth);
	if (t->pre_frees) {
		t->pre_frees--;
		nb->flags |= HB_REPLACEMENT;
	} else if (t->freed_size && t->freed_size == nb->size) {
		nb->flags |= HB_REPLACEMENT;
	}
	t->freed_size = 0;
}

static void put_live(struct heap *h, const struct heap_block *b, int fresh)
{
	struct heap_block nb = *b;
	struct heap_entry *e;
	struct heap_thread *t;
	uint64_t hash = hash64(b->addr);
	size_t i;

	hs_reserve(&h->s, 1);
	i = hs_find_h(&h->s, b->addr, hash);
	if (hs_at(&h->s, i)) {
		struct heap_block old;

		decode(h, hs_entry(&h->s, hs_at(&h->s, i) - 1), &old);
		in_use_sub(h, &old);
		count_free(h, b->tid);
		hs_remove(&h->s, i);
		i = hs_find_h(&h->s, b->addr, hash);
	}
	t = thread_of(h, b->tid);
	if (fresh)
		mark_fresh(h, t, &nb);
	e = hs_add_h(&h->s, i, b->addr, hash);
	hs_encode(&h->s, e, &nb, (uint32_t)(t - h->threads));
	in_use_add(h, &nb);
}

struct heap *heap_new(void)
{
	struct heap *h = xcalloc(1, sizeof(*h));

	hs_init(&h->s);
	h->growth = growth_new();
	return h;
}

const struct growth *heap_growth(const struct heap *h)
{
	return h->growth;
}

void heap_delete(struct heap *h)
{
	if (!h)
		return;
	hs_free(&h->s);
	free(h->per_stack);
	free(h->stack_bytes);
	free(h->threads);
	free(h->thread_slots);
	growth_free(h->growth);
	addrset_free(h->late);
	free(h);
}

void heap_reset(struct heap *h)
{
	hs_free(&h->s);
	hs_init(&h->s);
	memset(&h->st, 0, sizeof(h->st));
	if (h->per_stack)
		memset(h->per_stack, 0, h->nper_stack * sizeof(*h->per_stack));
	free(h->stack_bytes);
	free(h->threads);
	free(h->thread_slots);
	h->stack_bytes = NULL;
	h->nstack_bytes = h->stack_max = 0;
	h->threads = NULL;
	h->thread_slots = NULL;
	h->nthreads = h->athreads = 0;
	memset(h->memo, 0, sizeof(h->memo));
	memset(h->pending, 0, sizeof(h->pending));
	h->npending = 0;
	growth_reset(h->growth);
	heap_census_pending(h, 0);
	h->clock = 0;
}

void heap_prefetch(const struct heap *h, uint64_t addr)
{
	__builtin_prefetch(hs_home_slot(&h->s, addr), 1);
}

/* An index of fewer slots is taken for one in the caches: not worth a
 * second prefetch (with its entries at 3/4 full, 3 MiB: past a core's
 * L2 cache). */
#define PREFETCH_FREE_MIN	(1u << 17)

int heap_prefetch_worth(const struct heap *h)
{
	return h->s.cap >= PREFETCH_FREE_MIN;
}

void heap_prefetch_free(const struct heap *h, uint64_t addr, long back)
{
	const struct heap_entry *e = hs_entry_hint(&h->s, addr);
	const uint32_t *m = back >= 0 ? hs_moved_slot(&h->s, (size_t)back) : NULL;

	if (e)
		__builtin_prefetch(e, 1);
	if (m)
		__builtin_prefetch(m, 1);
}

/* STACK's totals grown to be there (a new id is the next one, mostly) */
static void per_stack_grow(struct heap *h, uint32_t stack)
{
	size_t n = h->nper_stack ? h->nper_stack : 1024;

	while (n <= stack)
		n *= 2;
	h->per_stack = xrealloc(h->per_stack, n * sizeof(*h->per_stack));
	memset(h->per_stack + h->nper_stack, 0,
	       (n - h->nper_stack) * sizeof(*h->per_stack));
	h->nper_stack = n;
}

/* B's allocation counted: totals, its thread's, its stack's. */
static void count_new(struct heap *h, const struct heap_block *b)
{
	struct heap_thread *t = thread_of(h, b->tid);

	h->st.allocs++;
	h->st.bytes_allocated += b->size;
	t->allocs++;
	t->bytes_allocated += b->size;
	if (b->stack >= h->nper_stack)
		per_stack_grow(h, b->stack);
	h->per_stack[b->stack].allocs++;
	h->per_stack[b->stack].bytes += b->size;
}

/* B allocated (counted), told to the observer by the caller. */
static void count_alloc(struct heap *h, const struct heap_block *b)
{
	count_new(h, b);
	put_live(h, b, 1);
}

void heap_alloc(struct heap *h, const struct heap_block *b)
{
	if (!b->addr)
		return;
	count_alloc(h, b);
	tell(h, HEV_ALLOC, b->fn, b->tid, b->stack, b->time_ns, b->size,
	     b->addr, 0);
}

/* Live block B, out of the table (or never in it), freed by thread TID
 * at TIME_NS: counted and told. */
static void free_live(struct heap *h, const struct heap_block *b,
		      int32_t tid, uint64_t time_ns)
{
	count_free(h, tid);
	if (b->before)
		pre_free(h, tid);	/* a census block: its usable size */
	else
		thread_of(h, tid)->freed_size = b->size;
	if (time_ns > h->clock)
		h->clock = time_ns;
	in_use_sub(h, b);
	tell(h, HEV_FREE, AF_FREE, tid, 0, time_ns, b->size, b->addr, 0);
}

int heap_alloc_free(struct heap *h, const struct heap_block *b, int32_t tid,
		    uint64_t time_ns)
{
	struct heap_block nb = *b;
	struct heap_thread *t;

	if (!b->addr || hs_at(&h->s, hs_find_h(&h->s, b->addr, hash64(b->addr))))
		return -1;
	/* heap_alloc's counts, put_live's but the table's entry */
	count_new(h, b);
	t = thread_of(h, b->tid);
	mark_fresh(h, t, &nb);
	if (h->observer || b->before || time_ns != b->time_ns) {
		in_use_add(h, &nb);
		tell(h, HEV_ALLOC, b->fn, b->tid, b->stack, b->time_ns,
		     b->size, b->addr, 0);
		/* heap_free_by's, of the block as the table would give it */
		nb.tid = t->tid;
		free_live(h, &nb, tid, time_ns);
		return 0;
	}
	/* the same, in and out at one time: what is left of both */
	if (h->st.in_use_bytes + nb.size > h->st.peak_bytes)
		h->st.peak_bytes = h->st.in_use_bytes + nb.size;
	if (time_ns > h->clock)
		h->clock = time_ns;
	stack_pair(h, nb.stack, nb.size, !(nb.flags & HB_REPLACEMENT));
	if (tid != b->tid)
		t = thread_of(h, tid);
	h->st.frees++;
	t->frees++;
	t->freed_size = nb.size;
	return 0;
}

void heap_inherit(struct heap *dst, const struct heap *src,
		  uint32_t (*stack)(void *ctx, uint32_t id), void *ctx)
{
	size_t i;

	heap_reserve(dst, src->s.n);
	if (!dst->s.epoch_set) {
		dst->s.epoch_us = src->s.epoch_us;
		dst->s.epoch_set = src->s.epoch_set;
	}
	for (i = 0; i < src->s.n; i++) {
		struct heap_block b;

		decode(src, hs_entry(&src->s, i), &b);
		b.stack = b.stack ? stack(ctx, b.stack) : 0;
		put_live(dst, &b, 0);
	}
}

void heap_reserve(struct heap *h, size_t n)
{
	hs_reserve(&h->s, n);
}

void heap_census(struct heap *h, const struct heap_block *b)
{
	if (!b->addr)
		return;
	if (h->late && addrset_remove(h->late, b->addr)) {
		/* freed since the snapshot: a free of a live block */
		h->st.unknown_frees--;
		h->st.frees++;
		return;
	}
	put_live(h, b, 0);
}

void heap_census_pending(struct heap *h, int on)
{
	if (on && !h->late)
		h->late = addrset_new();
	if (!on) {
		addrset_free(h->late);
		h->late = NULL;
	}
}

const struct heap_stack_total *heap_stack_totals(const struct heap *h,
						 size_t *n)
{
	*n = h->nper_stack;
	return h->per_stack;
}

int heap_free_by(struct heap *h, uint64_t addr, int32_t tid, uint64_t time_ns)
{
	struct heap_block b;
	size_t i;

	if (!addr)
		return -1;
	i = hs_find(&h->s, addr);
	if (!hs_at(&h->s, i)) {
		h->st.unknown_frees++;
		if (h->late)
			addrset_add(h->late, addr);
		pre_free(h, tid);
		tell(h, HEV_UNKNOWN_FREE, AF_FREE, tid, 0, time_ns, 0, addr, 0);
		return 0;
	}
	decode(h, hs_entry(&h->s, hs_at(&h->s, i) - 1), &b);
	hs_remove(&h->s, i);
	free_live(h, &b, tid, time_ns);
	return 1;
}

int heap_free(struct heap *h, uint64_t addr)
{
	return heap_free_by(h, addr, 0, 0);
}

int heap_realloc_begin(struct heap *h, uint64_t old, struct heap_block *held)
{
	size_t i;

	memset(held, 0, sizeof(*held));
	if (!old)
		return 0;
	i = hs_find(&h->s, old);
	if (!hs_at(&h->s, i))
		return 0;
	decode(h, hs_entry(&h->s, hs_at(&h->s, i) - 1), held);
	in_use_sub(h, held);
	hs_remove(&h->s, i);
	return 1;
}

void heap_holds_put(struct heap *h, const struct heap_block *b, size_t n,
		    uint8_t *put)
{
	uint64_t peak = h->st.peak_bytes;
	size_t k;

	for (k = 0; k < n; k++) {
		struct heap_block nb = b[k];

		put[k] = nb.addr && !hs_at(&h->s, hs_find(&h->s, nb.addr));
		if (!put[k])
			continue;
		nb.flags |= HB_REPLACEMENT;	/* no growth note */
		put_live(h, &nb, 0);
	}
	h->st.peak_bytes = peak;
}

void heap_holds_take(struct heap *h, const struct heap_block *b, size_t n,
		     const uint8_t *put)
{
	struct heap_block old;
	size_t k, i;

	for (k = 0; k < n; k++) {
		if (!put[k])
			continue;
		i = hs_find(&h->s, b[k].addr);
		if (!hs_at(&h->s, i))
			continue;
		decode(h, hs_entry(&h->s, hs_at(&h->s, i) - 1), &old);
		in_use_sub(h, &old);
		hs_remove(&h->s, i);
	}
}

void heap_realloc_end(struct heap *h, uint64_t old, int was_live,
		      const struct heap_block *held, uint64_t size,
		      const struct heap_block *newb)
{
	static const struct heap_block none;
	uint64_t result = newb ? newb->addr : 0;

	if (!newb)
		newb = &none;
	if (result || (size == 0 && old)) {
		/* OLD was released (its bytes already left in_use at begin;
		 * its address may be live again, handed to another thread). */
		if (old && was_live) {
			count_free(h, newb->tid);
			if (result && held && held->before)
				pre_free(h, newb->tid);
			tell(h, HEV_FREE, newb->fn, newb->tid, newb->stack,
			     newb->time_ns, held ? held->size : 0, old, 0);
		} else if (old) {
			h->st.unknown_frees++;
			if (h->late)
				addrset_add(h->late, old);
			if (result)
				pre_free(h, newb->tid);
		}
		if (result) {
			struct heap_block b = *newb;

			b.size = size;
			count_alloc(h, &b);
			tell(h, HEV_REALLOC, b.fn, b.tid, b.stack, b.time_ns,
			     size, result, old);
		}
		return;
	}
	/* Failure: OLD is untouched, put it back exactly as it was. */
	if (was_live && held && held->addr)
		put_live(h, held, 0);
}

const struct heap_stats *heap_stats(const struct heap *h)
{
	return &h->st;
}

const struct heap_block *heap_lookup(const struct heap *h, uint64_t addr)
{
	struct heap *m = (struct heap *)h;	/* the copy only */
	long i = heap_index_of(h, addr);

	if (i < 0)
		return NULL;
	decode(h, hs_entry(&h->s, (size_t)i), &m->look);
	return &m->look;
}

long heap_index_of(const struct heap *h, uint64_t addr)
{
	size_t i;

	if (!addr)
		return -1;
	i = hs_find(&h->s, addr);
	return hs_at(&h->s, i) ? (long)hs_at(&h->s, i) - 1 : -1;
}

void heap_entries(const struct heap *h, struct heap_entries *out)
{
	out->chunk = h->s.chunk;
	out->n = h->s.n;
	out->heap = h;
}

uint64_t heap_big_size(const struct heap *h, uint64_t addr)
{
	struct heap_entry e = { addr, HEAP_SIZE_BIG, 0, 0 };

	return hs_size(&h->s, &e);
}

void heap_entry_block(const struct heap_entries *e, const struct heap_entry *x,
		      struct heap_block *out)
{
	decode(e->heap, x, out);
}

uint64_t heap_entry_time(const struct heap_entries *e, const struct heap_entry *x)
{
	return hs_time(&e->heap->s, x);
}

int heap_foreach(const struct heap *h,
		 int (*fn)(const struct heap_block *b, void *ctx), void *ctx)
{
	struct heap_block b;
	size_t i;
	int r;

	for (i = 0; i < h->s.n; i++) {
		decode(h, hs_entry(&h->s, i), &b);
		if ((r = fn(&b, ctx)) != 0)
			return r;
	}
	return 0;
}

uint64_t heap_stack_bytes(const struct heap *h, uint32_t stack)
{
	return stack < h->nstack_bytes ? h->stack_bytes[stack] : 0;
}

uint32_t heap_stack_max(const struct heap *h)
{
	return h->stack_max;
}

unsigned heap_stack_top(const struct heap *h, unsigned n, uint32_t *ids,
			uint64_t *bytes)
{
	unsigned k = 0, j;
	uint32_t s;

	/* insertion into a short sorted list; most stacks fall below its
	 * last entry at the first comparison */
	for (s = 1; s <= h->stack_max && n; s++) {
		uint64_t v = h->stack_bytes[s];

		if (!v || (k == n && v <= bytes[k - 1]))
			continue;
		j = k < n ? k++ : n - 1;
		for (; j > 0 && bytes[j - 1] < v; j--) {
			bytes[j] = bytes[j - 1];
			ids[j] = ids[j - 1];
		}
		bytes[j] = v;
		ids[j] = s;
	}
	return k;
}

size_t heap_threads(const struct heap *h, const struct heap_thread **out)
{
	*out = h->threads;
	return h->nthreads;
}

void heap_thread_name(struct heap *h, int32_t tid, const char *name)
{
	size_t i;

	if (tid <= 0)
		return;
	i = h->threads ? thread_slot(h, tid) : 0;
	if (h->threads && h->thread_slots[i]) {
		snprintf(h->threads[h->thread_slots[i] - 1].name,
			 sizeof(h->threads[0].name), "%s", name);
		return;
	}
	/* for its entry when it comes (the oldest name given way) */
	i = h->npending++ % THREAD_PENDING;
	h->pending[i].tid = tid;
	snprintf(h->pending[i].name, sizeof(h->pending[i].name), "%s", name);
}

void heap_observe(struct heap *h, heap_observer fn, void *ctx)
{
	h->observer = fn;
	h->observer_ctx = ctx;
}
