/*
 * heap.c - the table of live heap blocks, totals and peak.
 *
 * Open addressing with linear probing, keyed by block address (addr 0
 * marks an empty slot: a live block never has address 0).  Deletion uses
 * backward shifting, so there are no tombstones and lookups stay short
 * however many blocks come and go.  The table doubles when it gets 3/4
 * full; it never shrinks (except on heap_reset).
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
#include "tables/heap.h"
#include "base/util.h"

#define HEAP_MIN_CAP 1024	/* power of two */

struct heap {
	struct heap_block *slots;
	size_t cap;		/* power of two */
	size_t mask;
	size_t count;
	size_t grow_at;		/* grow when count reaches this */
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
	int32_t last_tid;	/* the thread of the last event ... */
	size_t last_thread;	/* ... and its index: most events are a run */
	heap_observer observer;
	void *observer_ctx;
	/* bytes and blocks in use per stack over time (growth.h) */
	struct growth *growth;
	uint64_t clock;		/* the latest event time seen (now_ns()) */
};

#define THREAD_SLOTS (2 * HEAP_MAX_THREADS)	/* power of two */

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

/*
 * A table of CAP zeroed slots.  A big one (a program with 10^5-10^7 live
 * blocks) is its own mapping with transparent huge pages asked for: its
 * slots are hit at random, one TLB entry per 2 MiB instead of per 4 KiB,
 * and a 2 MiB fault instead of 512 (measured: a quarter of the recorder's
 * consumer time on perl's 800,000 live blocks went to page faults).
 */
#define BIG_TABLE	(4ul << 20)

static void *slots_alloc(size_t cap)
{
	size_t len = cap * sizeof(struct heap_block);
	void *p;

	if (len < BIG_TABLE)
		return xcalloc(cap, sizeof(struct heap_block));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		die("out of memory (a table of %zu live blocks)", cap);
	madvise(p, len, MADV_HUGEPAGE);
	return p;
}

static void slots_free(struct heap_block *slots, size_t cap)
{
	size_t len = cap * sizeof(struct heap_block);

	if (len < BIG_TABLE)
		free(slots);
	else if (slots)
		munmap(slots, len);
}

static void table_init(struct heap *h, size_t cap)
{
	h->slots = slots_alloc(cap);
	h->cap = cap;
	h->mask = cap - 1;
	h->count = 0;
	h->grow_at = cap / 4 * 3;
}

static inline size_t slot_of(const struct heap *h, uint64_t addr)
{
	return (size_t)hash64(addr) & h->mask;
}

/* Index of ADDR's slot, or of the empty slot where it would go. */
static inline size_t find_slot(const struct heap *h, uint64_t addr)
{
	size_t i = slot_of(h, addr);

	while (h->slots[i].addr && h->slots[i].addr != addr)
		i = (i + 1) & h->mask;
	return i;
}

/* The table rehashed into CAP slots. */
static void table_resize(struct heap *h, size_t cap)
{
	struct heap_block *old = h->slots;
	size_t old_cap = h->cap, i;

	table_init(h, cap);
	for (i = 0; i < old_cap; i++) {
		if (old[i].addr) {
			size_t j = find_slot(h, old[i].addr);

			h->slots[j] = old[i];
			h->count++;
		}
	}
	slots_free(old, old_cap);
}

static void table_grow(struct heap *h)
{
	table_resize(h, h->cap * 2);
}

/* Empty slot I and shift the following cluster back over it. */
static void table_remove_at(struct heap *h, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & h->mask;
		if (!h->slots[j].addr)
			break;
		home = slot_of(h, h->slots[j].addr);
		/* Entry J may move to I unless its home lies cyclically in
		 * (I, J]: then it would be placed before its home. */
		if (((j - home) & h->mask) >= ((j - i) & h->mask)) {
			h->slots[i] = h->slots[j];
			i = j;
		}
	}
	h->slots[i].addr = 0;
	h->count--;
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

/* Thread TID's entry: a new one if there is room, else tid 0's. */
static struct heap_thread *thread_of(struct heap *h, int32_t tid)
{
	size_t i;

	if (!h->threads) {
		h->thread_slots = xcalloc(THREAD_SLOTS, sizeof(*h->thread_slots));
		h->athreads = 64;
		h->threads = xcalloc(h->athreads, sizeof(*h->threads));
		h->nthreads = 1;	/* tid 0 */
	}
	if (tid <= 0)
		return &h->threads[0];
	if (tid == h->last_tid)
		return &h->threads[h->last_thread];
	i = thread_slot(h, tid);
	if (h->thread_slots[i]) {
		h->last_tid = tid;
		h->last_thread = h->thread_slots[i] - 1;
		return &h->threads[h->last_thread];
	}
	if (h->nthreads > HEAP_MAX_THREADS)
		return &h->threads[0];
	if (h->nthreads == h->athreads) {
		h->athreads *= 2;
		h->threads = xrealloc(h->threads, h->athreads * sizeof(*h->threads));
	}
	memset(&h->threads[h->nthreads], 0, sizeof(*h->threads));
	h->threads[h->nthreads].tid = tid;
	h->thread_slots[i] = (uint32_t)++h->nthreads;
	return &h->threads[h->nthreads - 1];
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

/*
 * Make B live.  A live block already at B->addr (a missed free) is
 * replaced and counted freed.  Counts no allocation.
 */
static void put_live(struct heap *h, const struct heap_block *b, int fresh)
{
	struct heap_thread *t;
	size_t i;

	if (h->count + 1 > h->grow_at)
		table_grow(h);
	i = find_slot(h, b->addr);
	if (h->slots[i].addr) {
		in_use_sub(h, &h->slots[i]);
		count_free(h, b->tid);
	} else {
		h->count++;
	}
	h->slots[i] = *b;
	/* a fresh block that follows its thread's free of a block from
	 * before tracing, or of a block of the same size, replaces it
	 * (growth.h) */
	if (fresh) {
		growth_alloc(h->growth);
		t = thread_of(h, b->tid);
		if (t->pre_frees) {
			t->pre_frees--;
			h->slots[i].flags |= HB_REPLACEMENT;
		} else if (t->freed_size && t->freed_size == b->size) {
			h->slots[i].flags |= HB_REPLACEMENT;
		}
		t->freed_size = 0;
	}
	in_use_add(h, &h->slots[i]);
}

struct heap *heap_new(void)
{
	struct heap *h = xcalloc(1, sizeof(*h));

	table_init(h, HEAP_MIN_CAP);
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
	slots_free(h->slots, h->cap);
	free(h->per_stack);
	free(h->stack_bytes);
	free(h->threads);
	free(h->thread_slots);
	growth_free(h->growth);
	free(h);
}

void heap_reset(struct heap *h)
{
	slots_free(h->slots, h->cap);
	table_init(h, HEAP_MIN_CAP);
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
	h->last_tid = 0;
	growth_reset(h->growth);
	h->clock = 0;
}

void heap_prefetch(const struct heap *h, uint64_t addr)
{
	__builtin_prefetch(&h->slots[slot_of(h, addr)], 1);
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

/* B allocated (counted), told to the observer by the caller. */
static void count_alloc(struct heap *h, const struct heap_block *b)
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

void heap_inherit(struct heap *dst, const struct heap *src,
		  uint32_t (*stack)(void *ctx, uint32_t id), void *ctx)
{
	size_t i;

	heap_reserve(dst, src->count);
	for (i = 0; i < src->cap; i++) {
		struct heap_block b = src->slots[i];

		if (!b.addr)
			continue;
		b.stack = b.stack ? stack(ctx, b.stack) : 0;
		put_live(dst, &b, 0);
	}
}

void heap_reserve(struct heap *h, size_t n)
{
	size_t cap = h->cap;

	while (h->count + n > cap / 4 * 3 && cap < ((size_t)1 << 40))
		cap *= 2;
	if (cap != h->cap)
		table_resize(h, cap);
}

void heap_census(struct heap *h, const struct heap_block *b)
{
	if (b->addr)
		put_live(h, b, 0);
}

const struct heap_stack_total *heap_stack_totals(const struct heap *h,
						 size_t *n)
{
	*n = h->nper_stack;
	return h->per_stack;
}

int heap_free_by(struct heap *h, uint64_t addr, int32_t tid, uint64_t time_ns)
{
	uint64_t size;
	size_t i;

	if (!addr)
		return -1;
	i = find_slot(h, addr);
	if (!h->slots[i].addr) {
		h->st.unknown_frees++;
		pre_free(h, tid);
		tell(h, HEV_UNKNOWN_FREE, AF_FREE, tid, 0, time_ns, 0, addr, 0);
		return 0;
	}
	count_free(h, tid);
	size = h->slots[i].size;
	if (h->slots[i].before)
		pre_free(h, tid);	/* a census block: its usable size */
	else
		thread_of(h, tid)->freed_size = size;
	if (time_ns > h->clock)
		h->clock = time_ns;
	in_use_sub(h, &h->slots[i]);
	table_remove_at(h, i);
	tell(h, HEV_FREE, AF_FREE, tid, 0, time_ns, size, addr, 0);
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
	i = find_slot(h, old);
	if (!h->slots[i].addr)
		return 0;
	*held = h->slots[i];
	in_use_sub(h, held);
	table_remove_at(h, i);
	return 1;
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
	size_t i;

	if (!addr)
		return NULL;
	i = find_slot(h, addr);
	return h->slots[i].addr ? &h->slots[i] : NULL;
}

int heap_foreach(const struct heap *h,
		 int (*fn)(const struct heap_block *b, void *ctx), void *ctx)
{
	size_t i;
	int r;

	for (i = 0; i < h->cap; i++) {
		if (h->slots[i].addr && (r = fn(&h->slots[i], ctx)) != 0)
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

	if (tid <= 0 || !h->threads)
		return;
	i = thread_slot(h, tid);
	if (h->thread_slots[i])
		snprintf(h->threads[h->thread_slots[i] - 1].name,
			 sizeof(h->threads[0].name), "%s", name);
}

void heap_observe(struct heap *h, heap_observer fn, void *ctx)
{
	h->observer = fn;
	h->observer_ctx = ctx;
}
