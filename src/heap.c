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
 * the table and so out of in_use until heap_realloc_end decides.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "heap.h"
#include "util.h"

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

static void table_grow(struct heap *h)
{
	struct heap_block *old = h->slots;
	size_t old_cap = h->cap, i;

	table_init(h, old_cap * 2);
	for (i = 0; i < old_cap; i++) {
		if (old[i].addr) {
			size_t j = find_slot(h, old[i].addr);

			h->slots[j] = old[i];
			h->count++;
		}
	}
	slots_free(old, old_cap);
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

static inline void in_use_add(struct heap *h, uint64_t size)
{
	h->st.in_use_bytes += size;
	h->st.in_use_blocks++;
	if (h->st.in_use_bytes > h->st.peak_bytes)
		h->st.peak_bytes = h->st.in_use_bytes;
}

static inline void in_use_sub(struct heap *h, uint64_t size)
{
	h->st.in_use_bytes -= size;
	h->st.in_use_blocks--;
}

/*
 * Make B live.  A live block already at B->addr (a missed free) is
 * replaced and counted freed.  Counts no allocation.
 */
static void put_live(struct heap *h, const struct heap_block *b)
{
	size_t i;

	if (h->count + 1 > h->grow_at)
		table_grow(h);
	i = find_slot(h, b->addr);
	if (h->slots[i].addr) {
		in_use_sub(h, h->slots[i].size);
		h->st.frees++;
	} else {
		h->count++;
	}
	h->slots[i] = *b;
	in_use_add(h, b->size);
}

struct heap *heap_new(void)
{
	struct heap *h = xcalloc(1, sizeof(*h));

	table_init(h, HEAP_MIN_CAP);
	return h;
}

void heap_delete(struct heap *h)
{
	if (!h)
		return;
	slots_free(h->slots, h->cap);
	free(h->per_stack);
	free(h);
}

void heap_reset(struct heap *h)
{
	slots_free(h->slots, h->cap);
	table_init(h, HEAP_MIN_CAP);
	memset(&h->st, 0, sizeof(h->st));
	memset(h->per_stack, 0, h->nper_stack * sizeof(*h->per_stack));
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

void heap_alloc(struct heap *h, const struct heap_block *b)
{
	if (!b->addr)
		return;
	h->st.allocs++;
	h->st.bytes_allocated += b->size;
	if (b->stack >= h->nper_stack)
		per_stack_grow(h, b->stack);
	h->per_stack[b->stack].allocs++;
	h->per_stack[b->stack].bytes += b->size;
	put_live(h, b);
}

const struct heap_stack_total *heap_stack_totals(const struct heap *h,
						 size_t *n)
{
	*n = h->nper_stack;
	return h->per_stack;
}

int heap_free(struct heap *h, uint64_t addr)
{
	size_t i;

	if (!addr)
		return -1;
	i = find_slot(h, addr);
	if (!h->slots[i].addr) {
		h->st.unknown_frees++;
		return 0;
	}
	h->st.frees++;
	in_use_sub(h, h->slots[i].size);
	table_remove_at(h, i);
	return 1;
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
	in_use_sub(h, held->size);
	table_remove_at(h, i);
	return 1;
}

void heap_realloc_end(struct heap *h, uint64_t old, int was_live,
		      const struct heap_block *held, uint64_t size,
		      const struct heap_block *newb)
{
	uint64_t result = newb ? newb->addr : 0;

	if (result || (size == 0 && old)) {
		/* OLD was released (its bytes already left in_use at begin;
		 * its address may be live again, handed to another thread). */
		if (old && was_live)
			h->st.frees++;
		else if (old)
			h->st.unknown_frees++;
		if (result) {
			struct heap_block b = *newb;

			b.size = size;
			heap_alloc(h, &b);
		}
		return;
	}
	/* Failure: OLD is untouched, put it back exactly as it was. */
	if (was_live && held && held->addr)
		put_live(h, held);
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
