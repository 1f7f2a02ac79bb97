/* test_heap.c - the live-block table, totals and peak. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tables/growth.h"
#include "tables/heap.h"

static struct heap_block mk(uint64_t addr, uint64_t size, uint32_t stack,
			    int32_t tid, enum alloc_fn fn, uint64_t time_ns)
{
	struct heap_block b;

	memset(&b, 0, sizeof(b));
	b.addr = addr;
	b.size = size;
	b.stack = stack;
	b.tid = tid;
	b.fn = (uint8_t)fn;
	b.time_ns = time_ns;
	return b;
}

static void alloc(struct heap *h, uint64_t addr, uint64_t size)
{
	struct heap_block b = mk(addr, size, 1, 100, AF_MALLOC, 1000);

	heap_alloc(h, &b);
}

static void check_stats(struct heap *h, uint64_t allocs, uint64_t frees,
			uint64_t bytes_allocated, uint64_t in_use_bytes,
			uint64_t in_use_blocks, uint64_t peak,
			uint64_t unknown_frees)
{
	const struct heap_stats *st = heap_stats(h);

	assert_int_equal(st->allocs, allocs);
	assert_int_equal(st->frees, frees);
	assert_int_equal(st->bytes_allocated, bytes_allocated);
	assert_int_equal(st->in_use_bytes, in_use_bytes);
	assert_int_equal(st->in_use_blocks, in_use_blocks);
	assert_int_equal(st->peak_bytes, peak);
	assert_int_equal(st->unknown_frees, unknown_frees);
}

static void assert_block_equal(const struct heap_block *a,
			       const struct heap_block *b)
{
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->addr, b->addr);
	assert_int_equal(a->size, b->size);
	/* the table keeps times to the microsecond (heap_entry) */
	assert_int_equal(a->time_ns / 1000, b->time_ns / 1000);
	assert_int_equal(a->stack, b->stack);
	assert_int_equal(a->tid, b->tid);
	assert_int_equal(a->fn, b->fn);
}

struct sum {
	uint64_t blocks, bytes;
};

static int sum_cb(const struct heap_block *b, void *ctx)
{
	struct sum *s = ctx;

	s->blocks++;
	s->bytes += b->size;
	return 0;
}

/* heap_foreach agrees with the in_use stats. */
static void check_consistent(struct heap *h)
{
	struct sum s = { 0, 0 };

	assert_int_equal(heap_foreach(h, sum_cb, &s), 0);
	assert_int_equal(s.blocks, heap_stats(h)->in_use_blocks);
	assert_int_equal(s.bytes, heap_stats(h)->in_use_bytes);
}

static void test_alloc_free_counts(void **state)
{
	struct heap *h = heap_new();
	const struct heap_block *b;

	check_stats(h, 0, 0, 0, 0, 0, 0, 0);
	alloc(h, 0x1000, 10);
	alloc(h, 0x2000, 20);
	alloc(h, 0x3000, 30);
	check_stats(h, 3, 0, 60, 60, 3, 60, 0);
	b = heap_lookup(h, 0x2000);
	assert_non_null(b);
	assert_int_equal(b->size, 20);
	assert_int_equal(heap_free(h, 0x2000), 1);
	assert_null(heap_lookup(h, 0x2000));
	check_stats(h, 3, 1, 60, 40, 2, 60, 0);
	assert_int_equal(heap_free(h, 0x1000), 1);
	assert_int_equal(heap_free(h, 0x3000), 1);
	check_stats(h, 3, 3, 60, 0, 0, 60, 0);
	check_consistent(h);
	heap_delete(h);
}

/* Census blocks: live and in use, no allocation counted; a free of one
 * is a free of a live block; a realloc replaces it. */
static void test_census_blocks(void **state)
{
	struct heap *h = heap_new();
	struct heap_block b = mk(0x1000, 104, 0, 0, AF_MALLOC, 0), nb, held;
	uint64_t a;

	(void)state;
	heap_reserve(h, 100000);
	b.before = 1;
	heap_census(h, &b);
	for (a = 0; a < 99999; a++) {
		struct heap_block c = mk(0x100000 + a * 32, 24, 0, 0, AF_MALLOC, 0);

		c.before = 1;
		heap_census(h, &c);
	}
	check_stats(h, 0, 0, 0, 104 + 99999 * 24, 100000, 104 + 99999 * 24, 0);
	assert_int_equal(heap_lookup(h, 0x1000)->before, 1);
	assert_int_equal(heap_free(h, 0x100000), 1);
	check_stats(h, 0, 1, 0, 104 + 99998 * 24, 99999, 104 + 99999 * 24, 0);
	assert_int_equal(heap_realloc_begin(h, 0x1000, &held), 1);
	nb = mk(0x2000, 500, 3, 7, AF_REALLOC, 5);
	heap_realloc_end(h, 0x1000, 1, &held, 500, &nb);
	check_stats(h, 1, 2, 500, 500 + 99998 * 24, 99999, 500 + 99998 * 24, 0);
	assert_null(heap_lookup(h, 0x1000));
	assert_int_equal(heap_lookup(h, 0x2000)->before, 0);
	heap_delete(h);
}

static void test_free_null(void **state)
{
	struct heap *h = heap_new();

	assert_int_equal(heap_free(h, 0), -1);
	check_stats(h, 0, 0, 0, 0, 0, 0, 0);
	alloc(h, 0x1000, 8);
	assert_int_equal(heap_free(h, 0), -1);
	check_stats(h, 1, 0, 8, 8, 1, 8, 0);
	heap_delete(h);
}

static void test_free_unknown(void **state)
{
	struct heap *h = heap_new();

	alloc(h, 0x1000, 8);
	assert_int_equal(heap_free(h, 0x5000), 0);
	check_stats(h, 1, 0, 8, 8, 1, 8, 1);
	assert_non_null(heap_lookup(h, 0x1000));
	/* a double free: the second one is unknown */
	assert_int_equal(heap_free(h, 0x1000), 1);
	assert_int_equal(heap_free(h, 0x1000), 0);
	check_stats(h, 1, 1, 8, 0, 0, 8, 2);
	heap_delete(h);
}

static void test_peak_rise_fall(void **state)
{
	struct heap *h = heap_new();

	alloc(h, 0x1000, 100);
	alloc(h, 0x2000, 200);
	check_stats(h, 2, 0, 300, 300, 2, 300, 0);
	heap_free(h, 0x1000);
	heap_free(h, 0x2000);
	check_stats(h, 2, 2, 300, 0, 0, 300, 0);
	alloc(h, 0x3000, 50);
	check_stats(h, 3, 2, 350, 50, 1, 300, 0);
	alloc(h, 0x4000, 260);
	check_stats(h, 4, 2, 610, 310, 2, 310, 0);
	heap_delete(h);
}

static void test_alloc_live_address_replaces(void **state)
{
	struct heap *h = heap_new();
	struct heap_block b = mk(0x1000, 20, 3, 7, AF_CALLOC, 5);

	alloc(h, 0x1000, 10);
	heap_alloc(h, &b);
	check_stats(h, 2, 1, 30, 20, 1, 20, 0);
	assert_block_equal(heap_lookup(h, 0x1000), &b);
	check_consistent(h);
	heap_delete(h);
}

static void test_realloc_grow(void **state)
{
	struct heap *h = heap_new();
	struct heap_block a = mk(0xa000, 10, 3, 42, AF_MALLOC, 111);
	struct heap_block held, nb;
	int live;

	heap_alloc(h, &a);
	live = heap_realloc_begin(h, 0xa000, &held);
	assert_int_equal(live, 1);
	assert_block_equal(&held, &a);
	assert_null(heap_lookup(h, 0xa000));
	/* nothing counted yet */
	assert_int_equal(heap_stats(h)->allocs, 1);
	assert_int_equal(heap_stats(h)->frees, 0);

	nb = mk(0xb000, 100, 4, 42, AF_REALLOC, 222);
	heap_realloc_end(h, 0xa000, live, &held, 100, &nb);
	check_stats(h, 2, 1, 110, 100, 1, 100, 0);
	assert_null(heap_lookup(h, 0xa000));
	assert_block_equal(heap_lookup(h, 0xb000), &nb);
	check_consistent(h);
	heap_delete(h);
}

/*
 * A report while two reallocs are in flight (heap_holds_put): the old
 * blocks come back live, counted in use (not as allocations, no new
 * peak); one whose address another thread was given meanwhile stays
 * out; heap_holds_take leaves the table and its figures as before, and
 * the reallocs end as if nothing happened.
 */
static void test_holds(void **state)
{
	struct heap *h = heap_new();
	struct heap_block a = mk(0xa000, 10, 3, 42, AF_MALLOC, 111);
	struct heap_block b = mk(0xb000, 20, 4, 43, AF_MALLOC, 112);
	struct heap_block c = mk(0xb000, 50, 6, 44, AF_MALLOC, 113);
	struct heap_block held[3], nb;
	uint8_t put[3] = { 9, 9, 9 };
	int la, lb;

	heap_alloc(h, &a);
	heap_alloc(h, &b);
	la = heap_realloc_begin(h, 0xa000, &held[0]);
	lb = heap_realloc_begin(h, 0xb000, &held[1]);
	memset(&held[2], 0, sizeof(held[2]));	/* realloc(NULL, n) */
	heap_alloc(h, &c);	/* 0xb000 handed out again */
	check_stats(h, 3, 0, 80, 50, 1, 50, 0);
	assert_int_equal(heap_stack_bytes(h, 3), 0);
	heap_holds_put(h, held, 3, put);
	assert_int_equal(put[0], 1);
	assert_int_equal(put[1], 0);
	assert_int_equal(put[2], 0);
	check_stats(h, 3, 0, 80, 60, 2, 50, 0);	/* no new peak */
	assert_block_equal(heap_lookup(h, 0xa000), &a);
	assert_int_equal(heap_lookup(h, 0xb000)->size, 50);
	assert_int_equal(heap_stack_bytes(h, 3), 10);
	check_consistent(h);
	heap_holds_take(h, held, 3, put);
	check_stats(h, 3, 0, 80, 50, 1, 50, 0);
	assert_null(heap_lookup(h, 0xa000));
	assert_int_equal(heap_stack_bytes(h, 3), 0);
	check_consistent(h);
	nb = mk(0xc000, 100, 7, 42, AF_REALLOC, 222);
	heap_realloc_end(h, 0xa000, la, &held[0], 100, &nb);
	nb = mk(0xd000, 40, 8, 43, AF_REALLOC, 223);
	heap_realloc_end(h, 0xb000, lb, &held[1], 40, &nb);
	check_stats(h, 5, 2, 220, 190, 3, 190, 0);
	assert_int_equal(heap_lookup(h, 0xb000)->size, 50);
	check_consistent(h);
	heap_delete(h);
}

static void test_realloc_in_place(void **state)
{
	struct heap *h = heap_new();
	struct heap_block held, nb;
	int live;

	alloc(h, 0xa000, 64);
	live = heap_realloc_begin(h, 0xa000, &held);
	nb = mk(0xa000, 32, 5, 1, AF_REALLOCARRAY, 9);
	heap_realloc_end(h, 0xa000, live, &held, 32, &nb);
	check_stats(h, 2, 1, 96, 32, 1, 64, 0);
	assert_block_equal(heap_lookup(h, 0xa000), &nb);
	check_consistent(h);
	heap_delete(h);
}

static void test_realloc_null(void **state)
{
	struct heap *h = heap_new();
	struct heap_block held, nb;
	int live;

	live = heap_realloc_begin(h, 0, &held);
	assert_int_equal(live, 0);
	nb = mk(0xc000, 64, 2, 1, AF_REALLOC, 1);
	heap_realloc_end(h, 0, live, &held, 64, &nb);
	check_stats(h, 1, 0, 64, 64, 1, 64, 0);
	assert_block_equal(heap_lookup(h, 0xc000), &nb);
	heap_delete(h);
}

static void test_realloc_null_fails(void **state)
{
	struct heap *h = heap_new();
	struct heap_block held, nb;
	int live;

	live = heap_realloc_begin(h, 0, &held);
	nb = mk(0, 1ull << 50, 2, 1, AF_REALLOC, 1);
	heap_realloc_end(h, 0, live, &held, 1ull << 50, &nb);
	check_stats(h, 0, 0, 0, 0, 0, 0, 0);
	heap_delete(h);
}

static void test_realloc_zero_frees(void **state)
{
	struct heap *h = heap_new();
	struct heap_block held, nb;
	int live;

	alloc(h, 0xa000, 32);
	live = heap_realloc_begin(h, 0xa000, &held);
	assert_int_equal(live, 1);
	nb = mk(0, 0, 2, 1, AF_REALLOC, 1);
	heap_realloc_end(h, 0xa000, live, &held, 0, &nb);
	check_stats(h, 1, 1, 32, 0, 0, 32, 0);
	assert_null(heap_lookup(h, 0xa000));
	check_consistent(h);
	heap_delete(h);
}

/* An allocator whose realloc(p, 0) returns a minimum-size block. */
static void test_realloc_zero_returns_block(void **state)
{
	struct heap *h = heap_new();
	struct heap_block held, nb;
	int live;

	alloc(h, 0xa000, 32);
	live = heap_realloc_begin(h, 0xa000, &held);
	nb = mk(0xd000, 0, 2, 1, AF_REALLOC, 1);
	heap_realloc_end(h, 0xa000, live, &held, 0, &nb);
	check_stats(h, 2, 1, 32, 0, 1, 32, 0);
	assert_non_null(heap_lookup(h, 0xd000));
	heap_delete(h);
}

static void test_realloc_failure_restores(void **state)
{
	struct heap *h = heap_new();
	struct heap_block a = mk(0xa000, 1000, 9, 77, AF_CALLOC, 12345);
	struct heap_block held, nb;
	struct heap_stats before;
	int live;

	alloc(h, 0x1000, 24);
	heap_alloc(h, &a);
	before = *heap_stats(h);
	live = heap_realloc_begin(h, 0xa000, &held);
	assert_int_equal(live, 1);
	nb = mk(0, 1ull << 40, 10, 77, AF_REALLOC, 99999);
	heap_realloc_end(h, 0xa000, live, &held, 1ull << 40, &nb);
	assert_memory_equal(heap_stats(h), &before, sizeof(before));
	check_stats(h, 2, 0, 1024, 1024, 2, 1024, 0);
	assert_block_equal(heap_lookup(h, 0xa000), &a);
	check_consistent(h);
	heap_delete(h);
}

static void test_realloc_unknown_old(void **state)
{
	struct heap *h = heap_new();
	struct heap_block held, nb;
	int live;

	live = heap_realloc_begin(h, 0xe000, &held);
	assert_int_equal(live, 0);
	nb = mk(0xf000, 40, 1, 1, AF_REALLOC, 1);
	heap_realloc_end(h, 0xe000, live, &held, 40, &nb);
	check_stats(h, 1, 0, 40, 40, 1, 40, 1);
	/* failure on an unknown block: nothing at all */
	live = heap_realloc_begin(h, 0xe100, &held);
	nb = mk(0, 80, 1, 1, AF_REALLOC, 1);
	heap_realloc_end(h, 0xe100, live, &held, 80, &nb);
	check_stats(h, 1, 0, 40, 40, 1, 40, 1);
	assert_null(heap_lookup(h, 0xe100));
	heap_delete(h);
}

/*
 * Thread 1 reallocs A; glibc releases A and thread 2's malloc is handed A
 * before thread 1's realloc returns B.  Both the new A and B are live.
 */
static void test_realloc_race(void **state)
{
	struct heap *h = heap_new();
	struct heap_block a = mk(0xa000, 16, 1, 1, AF_MALLOC, 10);
	struct heap_block a2 = mk(0xa000, 48, 2, 2, AF_MALLOC, 20);
	struct heap_block b = mk(0xb000, 64, 3, 1, AF_REALLOC, 30);
	struct heap_block held;
	int live;

	heap_alloc(h, &a);
	live = heap_realloc_begin(h, 0xa000, &held);
	assert_int_equal(live, 1);
	heap_alloc(h, &a2);
	/* no missed free: A was out of the table */
	assert_int_equal(heap_stats(h)->frees, 0);
	heap_realloc_end(h, 0xa000, live, &held, 64, &b);
	check_stats(h, 3, 1, 128, 112, 2, 112, 0);
	assert_block_equal(heap_lookup(h, 0xa000), &a2);
	assert_block_equal(heap_lookup(h, 0xb000), &b);
	check_consistent(h);
	heap_delete(h);
}

static uint64_t rng_state = 0x123456789abcdefULL;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static void shuffle(uint64_t *a, size_t n)
{
	size_t i;

	for (i = n - 1; i > 0; i--) {
		size_t j = rnd() % (i + 1);
		uint64_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

#define NRAND 100000

static void test_random_many(void **state)
{
	struct heap *h = heap_new();
	uint64_t *addrs = malloc(NRAND * sizeof(*addrs));
	uint64_t total = 0, live_bytes;
	size_t i;

	assert_non_null(addrs);
	/* Clustered like real heap addresses: 16-byte aligned, two arenas. */
	for (i = 0; i < NRAND; i++)
		addrs[i] = (i & 1 ? 0x7f0000000000ULL : 0x555555000000ULL) +
			   16 * (i / 2 + 1);
	shuffle(addrs, NRAND);
	for (i = 0; i < NRAND; i++) {
		struct heap_block b = mk(addrs[i], addrs[i] % 1000,
					 (uint32_t)i, 1, AF_MALLOC, i);

		heap_alloc(h, &b);
		total += addrs[i] % 1000;
	}
	check_stats(h, NRAND, 0, total, total, NRAND, total, 0);
	check_consistent(h);
	for (i = 0; i < NRAND; i++) {
		const struct heap_block *b = heap_lookup(h, addrs[i]);

		assert_non_null(b);
		assert_int_equal(b->addr, addrs[i]);
		assert_int_equal(b->size, addrs[i] % 1000);
	}

	/* Remove half in another random order. */
	shuffle(addrs, NRAND);
	live_bytes = total;
	for (i = 0; i < NRAND / 2; i++) {
		assert_int_equal(heap_free(h, addrs[i]), 1);
		live_bytes -= addrs[i] % 1000;
	}
	check_stats(h, NRAND, NRAND / 2, total, live_bytes, NRAND / 2,
		    total, 0);
	check_consistent(h);
	for (i = 0; i < NRAND; i++) {
		const struct heap_block *b = heap_lookup(h, addrs[i]);

		if (i < NRAND / 2) {
			assert_null(b);
		} else {
			assert_non_null(b);
			assert_int_equal(b->addr, addrs[i]);
			assert_int_equal(b->size, addrs[i] % 1000);
		}
	}

	/* Interleave: re-add the removed ones while removing the rest. */
	for (i = 0; i < NRAND / 2; i++) {
		struct heap_block b = mk(addrs[i], 1, 0, 1, AF_MALLOC, 0);

		heap_alloc(h, &b);
		assert_int_equal(heap_free(h, addrs[NRAND / 2 + i]), 1);
	}
	check_stats(h, NRAND + NRAND / 2, NRAND, total + NRAND / 2,
		    NRAND / 2, NRAND / 2, total, 0);
	check_consistent(h);
	for (i = 0; i < NRAND; i++) {
		if (i < NRAND / 2)
			assert_non_null(heap_lookup(h, addrs[i]));
		else
			assert_null(heap_lookup(h, addrs[i]));
	}
	for (i = 0; i < NRAND / 2; i++)
		assert_int_equal(heap_free(h, addrs[i]), 1);
	check_stats(h, NRAND + NRAND / 2, NRAND + NRAND / 2,
		    total + NRAND / 2, 0, 0, total, 0);
	check_consistent(h);
	free(addrs);
	heap_delete(h);
}

static int stop_cb(const struct heap_block *b, void *ctx)
{
	int *n = ctx;

	return ++*n == 3 ? 42 : 0;
}

static void test_foreach_stops(void **state)
{
	struct heap *h = heap_new();
	int n = 0;

	alloc(h, 0x1000, 1);
	alloc(h, 0x2000, 1);
	alloc(h, 0x3000, 1);
	alloc(h, 0x4000, 1);
	assert_int_equal(heap_foreach(h, stop_cb, &n), 42);
	assert_int_equal(n, 3);
	heap_delete(h);
}

static void test_reset(void **state)
{
	struct heap *h = heap_new();
	struct sum s = { 0, 0 };
	uint64_t i;

	for (i = 1; i <= 5000; i++)
		alloc(h, i * 32, 8);
	heap_free(h, 32);
	heap_free(h, 1);
	heap_reset(h);
	check_stats(h, 0, 0, 0, 0, 0, 0, 0);
	assert_null(heap_lookup(h, 64));
	heap_foreach(h, sum_cb, &s);
	assert_int_equal(s.blocks, 0);
	alloc(h, 64, 5);
	check_stats(h, 1, 0, 5, 5, 1, 5, 0);
	check_consistent(h);
	heap_delete(h);
}

/* Threads whose tids share the memo's slot (tid mod 16), interleaved,
 * each with its own counts; and the same after a reset. */
static void test_threads_interleaved(void **state)
{
	static const int32_t tids[] = { 1, 17, 33, 2, 49 };
	const struct heap_thread *t;
	struct heap_block b;
	size_t n, i, k;
	int round;

	(void)state;
	struct heap *h = heap_new();

	for (round = 0; round < 2; round++) {
		for (i = 0; i < 20; i++) {
			k = i % 5;
			b = mk(0x1000 + i * 64, 10 * (k + 1), 1, tids[k], AF_MALLOC, 1);
			heap_alloc(h, &b);
		}
		/* frees of every other block, by the thread before the owner */
		for (i = 0; i < 20; i += 2)
			heap_free_by(h, 0x1000 + i * 64, tids[(i + 4) % 5], 2);
		n = heap_threads(h, &t);
		assert_int_equal(n, 6);		/* tid 0 and the five */
		for (k = 0; k < 5; k++) {
			for (i = 1; i < n && t[i].tid != tids[k]; i++)
				;
			assert_true(i < n);
			assert_int_equal(t[i].allocs, 4);
			assert_int_equal(t[i].bytes_allocated, 40 * (k + 1));
			/* its blocks k, k + 5, k + 10, k + 15: two even,
			 * freed (by other threads), two live */
			assert_int_equal(t[i].in_use_bytes, 20 * (k + 1));
			/* the even blocks' frees: two by each thread */
			assert_int_equal(t[i].frees, 2);
		}
		heap_reset(h);
	}
	heap_delete(h);
}

/* A thread named before its first event (the recorder may run a
 * thread's records after its exit named it) gets the name with its
 * entry, unless 64 names came after it (at most 64 are kept); a name
 * given when there is an entry goes to it at once; names of threads
 * that never come make no entry. */
static void name_others(struct heap *h, int32_t from, int n)
{
	char nm[16];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(nm, sizeof(nm), "never%u", (unsigned)i % 10000u);
		heap_thread_name(h, from + i, nm);
	}
}

static void test_thread_name_before(void **state)
{
	const struct heap_thread *t;
	struct heap_block b;
	struct heap *h = heap_new();

	(void)state;
	heap_thread_name(h, 7, "early");
	name_others(h, 1000, 63);
	b = mk(0x1000, 10, 1, 7, AF_MALLOC, 1);
	heap_alloc(h, &b);
	heap_thread_name(h, 8, "gone");
	name_others(h, 2000, 64);
	b = mk(0x3000, 30, 1, 8, AF_MALLOC, 1);
	heap_alloc(h, &b);
	b = mk(0x2000, 20, 1, 9, AF_MALLOC, 1);
	heap_alloc(h, &b);
	heap_thread_name(h, 9, "named9");
	assert_int_equal(heap_threads(h, &t), 4);	/* tid 0 and 7, 8, 9 */
	assert_int_equal(t[1].tid, 7);
	assert_string_equal(t[1].name, "early");
	assert_int_equal(t[2].tid, 8);
	assert_string_equal(t[2].name, "");
	assert_int_equal(t[3].tid, 9);
	assert_string_equal(t[3].name, "named9");
	heap_delete(h);
}

/* Events told, for test_alloc_free_same. */
struct evlog {
	struct heap_event e[64];
	unsigned n;
};

static void log_event(void *ctx, const struct heap_event *e)
{
	struct evlog *l = ctx;

	if (l->n < 64)
		l->e[l->n] = *e;
	l->n++;
}

/* X allocated, then freed by TID at T: by heap_alloc_free if FAST. */
static void alloc_free(struct heap *h, int fast, const struct heap_block *x,
		       int32_t tid, uint64_t t)
{
	if (fast) {
		assert_int_equal(heap_alloc_free(h, x, tid, t), 0);
		return;
	}
	heap_alloc(h, x);
	heap_free_by(h, x->addr, tid, t);
}

/* Heaps A and B alike: counts, peak, threads, stacks' totals, the bytes
 * of stacks 0 .. NSTACKS - 1. */
static void expect_same_heaps(const struct heap *a, const struct heap *b,
			      uint32_t nstacks)
{
	const struct heap_thread *ta, *tb;
	const struct heap_stack_total *sa, *sb;
	size_t na, nb;
	uint32_t i;

	assert_memory_equal(heap_stats(a), heap_stats(b), sizeof(struct heap_stats));
	na = heap_threads(a, &ta);
	nb = heap_threads(b, &tb);
	assert_int_equal(na, nb);
	assert_memory_equal(ta, tb, na * sizeof(*ta));
	sa = heap_stack_totals(a, &na);
	sb = heap_stack_totals(b, &nb);
	assert_int_equal(na, nb);
	assert_memory_equal(sa, sb, na * sizeof(*sa));
	for (i = 0; i < nstacks; i++)
		assert_int_equal(heap_stack_bytes(a, i), heap_stack_bytes(b, i));
}

/*
 * heap_alloc_free against heap_alloc then heap_free_by, on two tables
 * given the same calls: counts, peak, threads, stacks' totals and bytes,
 * the blocks left and every event told the same; refused (-1, nothing
 * done) for an address that is live.
 */
static void test_alloc_free_same(void **state)
{
	struct heap *a = heap_new(), *b = heap_new();
	struct evlog la = { .n = 0 }, lb = { .n = 0 };
	struct heap_block x;
	size_t i;
	int k;

	(void)state;
	heap_observe(a, log_event, &la);
	heap_observe(b, log_event, &lb);
	for (k = 0; k < 2; k++) {
		struct heap *h = k ? b : a;

		x = mk(0x100, 40, 3, 11, AF_MALLOC, 1000);
		heap_alloc(h, &x);
		heap_free_by(h, 0x900, 11, 1100);	/* unknown: a pre-free */
		x = mk(0x200, 24, 4, 11, AF_CALLOC, 1200);
		alloc_free(h, k, &x, 12, 1300);
		/* same size as thread 12's last free: a replacement */
		x = mk(0x300, 24, 4, 12, AF_MALLOC, 1400);
		alloc_free(h, k, &x, 12, 1500);
		x = mk(0x400, 500, 5, 13, AF_MALLOC, 1600);
		heap_alloc(h, &x);
		/* a live address: refused, the slow way then */
		x = mk(0x100, 8, 6, 13, AF_MALLOC, 1700);
		if (k)
			assert_int_equal(heap_alloc_free(h, &x, 13, 1800), -1);
		heap_alloc(h, &x);
		heap_free_by(h, 0x100, 13, 1800);
	}
	assert_memory_equal(heap_stats(a), heap_stats(b), sizeof(struct heap_stats));
	assert_int_equal(heap_stats(b)->peak_bytes, 540);
	assert_int_equal(la.n, lb.n);
	assert_int_equal(la.n, 9);
	for (i = 0; i < la.n; i++) {
		assert_int_equal(la.e[i].type, lb.e[i].type);
		assert_int_equal(la.e[i].fn, lb.e[i].fn);
		assert_int_equal(la.e[i].tid, lb.e[i].tid);
		assert_int_equal(la.e[i].stack, lb.e[i].stack);
		assert_int_equal(la.e[i].time_ns, lb.e[i].time_ns);
		assert_int_equal(la.e[i].size, lb.e[i].size);
		assert_int_equal(la.e[i].addr, lb.e[i].addr);
		assert_int_equal(la.e[i].old, lb.e[i].old);
	}
	expect_same_heaps(a, b, 8);
	assert_int_equal(heap_stack_bytes(b, 5), 500);
	assert_non_null(heap_lookup(b, 0x400));
	assert_null(heap_lookup(b, 0x200));
	assert_null(heap_lookup(b, 0x100));
	heap_delete(a);
	heap_delete(b);
}

/*
 * heap_alloc_free's short way (no observer, the free at the block's own
 * time: both in and out at once) against heap_alloc then heap_free_by:
 * counts, peak, threads, stacks' totals and bytes, and the growth
 * module's view (the stacks growing, their fitted lines, the fastest)
 * the same.  Stack 7 grows by a block kept every 10 ms with a pair of
 * it each time; stack 8 makes only pairs, some bigger than its most.
 */
static void test_alloc_free_short(void **state)
{
	struct heap *a = heap_new(), *b = heap_new();
	struct growth_entry ga[8], gb[8], fa, fb;
	uint32_t ids_a[8] = { 0 }, ids_b[8] = { 0 };
	uint64_t bytes_a[8] = { 0 }, bytes_b[8] = { 0 };
	struct heap_block x;
	size_t na, nb, i;
	uint64_t t;
	int k;

	(void)state;
	for (k = 0; k < 2; k++) {
		struct heap *h = k ? b : a;

		for (i = 0; i < 300; i++) {
			t = 1000000000ull + i * 10000000ull;
			x = mk(0x100000 + i * 0x100, 100, 7, 21, AF_MALLOC, t);
			heap_alloc(h, &x);
			x = mk(0x900000, 50 + i % 7, 7, 21, AF_MALLOC, t);
			alloc_free(h, k, &x, 21, t);
			/* freed by another thread */
			x = mk(0x910000, 30 + i % 5 * 40, 8, 22, AF_CALLOC, t);
			alloc_free(h, k, &x, 23, t);
			/* a replacement: the size of thread 22's last free */
			x = mk(0x920000, 24, 8, 22, AF_MALLOC, t);
			alloc_free(h, k, &x, 22, t);
			alloc_free(h, k, &x, 22, t);
			/* only pairs, each its stack's new maximum: hot */
			if (i < 20) {
				x = mk(0x930000, 10 * (i + 1), 9, 24, AF_MALLOC, t);
				alloc_free(h, k, &x, 24, t);
			}
		}
	}
	expect_same_heaps(a, b, 10);
	assert_int_equal(heap_stats(b)->peak_bytes, 300 * 100 + 190);
	assert_int_equal(heap_stats(b)->allocs, 1520);
	assert_int_equal(heap_stats(b)->frees, 1220);
	t = 1000000000ull + 300 * 10000000ull;
	na = growth_list(heap_growth(a), t, ga, 8);
	nb = growth_list(heap_growth(b), t, gb, 8);
	assert_int_equal(na, 1);
	assert_int_equal(nb, 1);
	assert_int_equal(gb[0].stack, 7);
	assert_memory_equal(ga, gb, na * sizeof(*ga));
	assert_int_equal(growth_fastest(heap_growth(a), t, &fa), 1);
	assert_int_equal(growth_fastest(heap_growth(b), t, &fb), 1);
	assert_memory_equal(&fa, &fb, sizeof(fa));
	assert_int_equal(growth_hot(heap_growth(a), ids_a, bytes_a, 8), 2);
	assert_int_equal(growth_hot(heap_growth(b), ids_b, bytes_b, 8), 2);
	assert_memory_equal(ids_a, ids_b, sizeof(ids_a));
	assert_memory_equal(bytes_a, bytes_b, sizeof(bytes_a));
	assert_int_equal(ids_b[0], 7);
	assert_int_equal(ids_b[1], 9);
	heap_delete(a);
	heap_delete(b);
}

static void test_fn_names(void **state)
{
	static const char *const names[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free",
		"posix_memalign", "aligned_alloc", "memalign", "valloc",
		"pvalloc",
	};
	int i;

	assert_int_equal(AF_COUNT, 10);
	for (i = 0; i < AF_COUNT; i++)
		assert_string_equal(alloc_fn_name((enum alloc_fn)i), names[i]);
	assert_null(alloc_fn_name(AF_COUNT));
	assert_null(alloc_fn_name((enum alloc_fn)-1));
}

/* A census from a snapshot (heap_census_pending): blocks freed between
 * the snapshot and their census entry are no blocks, their frees those
 * of live blocks. */
static void test_census_pending(void **state)
{
	struct heap *h = heap_new();
	struct heap_block c, n = mk(0x3000, 40, 1, 100, AF_REALLOC, 2000);
	const struct heap_stats *st = heap_stats(h);
	struct heap_block held;
	uint64_t census[] = { 0x1000, 0x2000, 0x4000, 0x5000 };
	size_t i;
	int live;

	(void)state;
	heap_census_pending(h, 1);
	assert_int_equal(heap_free_by(h, 0x1000, 100, 1500), 0);
	live = heap_realloc_begin(h, 0x2000, &held);
	assert_int_equal(live, 0);
	heap_realloc_end(h, 0x2000, live, &held, 40, &n);
	/* 0x5000 freed, then handed out again and live */
	assert_int_equal(heap_free_by(h, 0x5000, 100, 1600), 0);
	alloc(h, 0x5000, 24);
	assert_int_equal(st->unknown_frees, 3);
	for (i = 0; i < 4; i++) {
		c = mk(census[i], 56, 0, 0, AF_MALLOC, 0);
		c.before = 1;
		heap_census(h, &c);
	}
	heap_census_pending(h, 0);
	assert_int_equal(st->unknown_frees, 0);
	assert_int_equal(st->frees, 3);
	assert_int_equal(st->allocs, 2);
	assert_int_equal(st->in_use_blocks, 3);
	assert_int_equal(st->in_use_bytes, 40 + 56 + 24);
	assert_null(heap_lookup(h, 0x1000));
	assert_null(heap_lookup(h, 0x2000));
	assert_int_equal(heap_lookup(h, 0x3000)->size, 40);
	assert_int_equal(heap_lookup(h, 0x4000)->before, 1);
	assert_int_equal(heap_lookup(h, 0x5000)->size, 24);
	/* off: an unknown free stays unknown */
	assert_int_equal(heap_free_by(h, 0x6000, 100, 1700), 0);
	c = mk(0x6000, 56, 0, 0, AF_MALLOC, 0);
	heap_census(h, &c);
	assert_int_equal(st->unknown_frees, 1);
	assert_non_null(heap_lookup(h, 0x6000));
	heap_delete(h);
}

/* The packed entries (heap_entry): every field back, sizes of 4 GiB and
 * more kept aside, times to the microsecond, the entries dense. */
static void test_packed_entries(void **state)
{
	struct heap *h = heap_new();
	struct heap_block b = mk(0x5000, 5ull << 30, 77, 4242, AF_MEMALIGN,
				 20000000000123456ull), c, t;
	const struct heap_block *l;
	struct heap_entries e;
	uint64_t a;

	(void)state;
	heap_alloc(h, &b);
	c = mk(0x6000, HEAP_SIZE_BIG, 0, 0, AF_MALLOC, 0);
	c.before = 1;
	c.type = 513;
	heap_census(h, &c);
	l = heap_lookup(h, 0x5000);
	assert_int_equal(l->size, 5ull << 30);
	assert_int_equal(l->time_ns, 20000000000123000ull);
	assert_int_equal(l->stack, 77);
	assert_int_equal(l->tid, 4242);
	assert_int_equal(l->fn, AF_MEMALIGN);
	assert_int_equal(l->before, 0);
	l = heap_lookup(h, 0x6000);
	assert_int_equal(l->size, HEAP_SIZE_BIG);
	assert_int_equal(l->time_ns, 0);
	assert_int_equal(l->stack, 0);
	assert_int_equal(l->type, 513);
	assert_int_equal(l->before, 1);
	/* a time 100 days before the first and 300 days after */
	t = mk(0x7000, 1, 1, 1, AF_MALLOC, 20000000000123456ull - 8640000000000000ull);
	heap_alloc(h, &t);
	assert_int_equal(heap_lookup(h, 0x7000)->time_ns, t.time_ns / 1000 * 1000);
	t = mk(0x7010, 1, 1, 1, AF_MALLOC, 20000000000123456ull + 25920000000000000ull);
	heap_alloc(h, &t);
	assert_int_equal(heap_lookup(h, 0x7010)->time_ns, t.time_ns / 1000 * 1000);
	check_stats(h, 3, 0, (5ull << 30) + 2, (5ull << 30) + HEAP_SIZE_BIG + 2, 4,
		    (5ull << 30) + HEAP_SIZE_BIG + 2, 0);
	heap_entries(h, &e);
	assert_int_equal(e.n, 4);
	assert_int_equal(heap_entry(&e, 0)->addr, 0x5000);
	assert_int_equal(heap_entry_size(&e, heap_entry(&e, 0)), 5ull << 30);
	assert_int_equal(heap_entry_size(&e, heap_entry(&e, 1)), HEAP_SIZE_BIG);
	assert_int_equal(heap_entry_time(&e, heap_entry(&e, 0)), 20000000000123000ull);
	/* a removal moves the last entry into the hole */
	assert_int_equal(heap_free(h, 0x5000), 1);
	heap_entries(h, &e);
	assert_int_equal(e.n, 3);
	assert_int_equal(heap_entry(&e, 0)->addr, 0x7010);
	assert_int_equal(heap_index_of(h, 0x7010), 0);
	assert_int_equal(heap_index_of(h, 0x5000), -1);
	assert_int_equal(heap_lookup(h, 0x6000)->size, HEAP_SIZE_BIG);
	/* 200,000 more across chunks, then every other one freed */
	for (a = 0; a < 200000; a++) {
		struct heap_block x = mk(0x10000000 + a * 48, a % 4 ? 40 : 5ull << 32,
					 1, 1, AF_MALLOC, 1000);

		heap_alloc(h, &x);
	}
	for (a = 0; a < 200000; a += 2)
		assert_int_equal(heap_free(h, 0x10000000 + a * 48), 1);
	heap_entries(h, &e);
	assert_int_equal(e.n, 100003);
	for (a = 1; a < 200000; a += 2) {
		long i = heap_index_of(h, 0x10000000 + a * 48);

		assert_true(i >= 0);
		assert_int_equal(heap_entry(&e, (size_t)i)->addr, 0x10000000 + a * 48);
		assert_int_equal(heap_entry_size(&e, heap_entry(&e, (size_t)i)),
				 a % 4 ? 40 : 5ull << 32);
	}
	check_consistent(h);
	heap_delete(h);
}

/* The drain's second prefetch is for tables past 2^17 index slots:
 * more than 49,152 live blocks. */
static void test_prefetch_worth(void **state)
{
	struct heap *h = heap_new();
	uint64_t a;

	(void)state;
	for (a = 0; a < 49152; a++)
		alloc(h, 0x10000 + 16 * a, 8);
	assert_int_equal(heap_prefetch_worth(h), 0);
	heap_prefetch_free(h, 0x10000, 0);	/* hints: nothing changes */
	heap_prefetch_free(h, 0x10000, 60000);
	alloc(h, 0x10000 + 16 * a, 8);
	assert_int_equal(heap_prefetch_worth(h), 1);
	heap_prefetch_free(h, 0x20, 3);
	check_stats(h, 49153, 0, 8 * 49153, 8 * 49153, 49153, 8 * 49153, 0);
	check_consistent(h);
	heap_delete(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_free_counts),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_free_unknown),
		cmocka_unit_test(test_peak_rise_fall),
		cmocka_unit_test(test_alloc_live_address_replaces),
		cmocka_unit_test(test_realloc_grow),
		cmocka_unit_test(test_realloc_in_place),
		cmocka_unit_test(test_realloc_null),
		cmocka_unit_test(test_realloc_null_fails),
		cmocka_unit_test(test_realloc_zero_frees),
		cmocka_unit_test(test_realloc_zero_returns_block),
		cmocka_unit_test(test_realloc_failure_restores),
		cmocka_unit_test(test_realloc_unknown_old),
		cmocka_unit_test(test_realloc_race),
		cmocka_unit_test(test_random_many),
		cmocka_unit_test(test_foreach_stops),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_fn_names),
		cmocka_unit_test(test_threads_interleaved),
		cmocka_unit_test(test_thread_name_before),
		cmocka_unit_test(test_alloc_free_same),
		cmocka_unit_test(test_alloc_free_short),
		cmocka_unit_test(test_census_blocks),
		cmocka_unit_test(test_census_pending),
		cmocka_unit_test(test_packed_entries),
		cmocka_unit_test(test_prefetch_worth),
		cmocka_unit_test(test_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
