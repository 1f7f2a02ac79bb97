/* test_growth.c - which stacks grow (growth.h), from synthetic histories
 * fed through the heap table as the engines feed it. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tables/growth.h"
#include "tables/heap.h"

#define MS 1000000ull
#define T0 (1000 * MS)		/* tracing starts at 1 s */

static uint64_t next_addr = 0x10000;

static uint64_t alloc(struct heap *h, uint64_t size, uint32_t stack,
		      uint64_t t)
{
	struct heap_block b = { .addr = next_addr, .size = size, .stack = stack,
				.tid = 1, .fn = AF_MALLOC, .time_ns = t };

	next_addr += 0x1000;
	heap_alloc(h, &b);
	return b.addr;
}

static void dofree(struct heap *h, uint64_t addr, uint64_t t)
{
	assert_int_equal(heap_free_by(h, addr, 1, t), 1);
}

static size_t list(struct heap *h, uint64_t now, struct growth_entry *e)
{
	return growth_list(heap_growth(h), now, e, GROWTH_MAX);
}

/* 640 bytes every 10 ms, never freed: 64,000 B/s, 100 blocks/s. */
static void test_steady_list(void **state)
{
	struct heap *h = heap_new();
	struct growth_entry e[GROWTH_MAX];
	uint64_t t;
	(void)state;

	for (t = T0; t < T0 + 5000 * MS; t += 10 * MS)
		alloc(h, 640, 7, t);
	assert_int_equal(list(h, T0 + 5000 * MS, e), 1);
	assert_int_equal(e[0].stack, 7);
	/* a staircase's least-squares slope is the steps' rate, less half a
	 * step over the window: within 0.5% */
	assert_true(fabs(e[0].bytes_per_s - 64000.0) < 320.0);
	assert_true(fabs(e[0].blocks_per_s - 100.0) < 0.5);
	assert_true(e[0].r2 > 0.99);
	assert_int_equal(e[0].in_use_bytes, 500 * 640);
	assert_int_equal(e[0].in_use_blocks, 500);
	assert_int_equal(e[0].first_ns, T0);
	heap_delete(h);
}

/* 100 blocks allocated and freed every 10 ms; a pool of 500 with one
 * replaced every 10 ms; one big block: none grows. */
static void test_levels_not_listed(void **state)
{
	struct heap *h = heap_new();
	struct growth_entry e[GROWTH_MAX];
	uint64_t pool[500], churn[100], t;
	unsigned i, k = 0;
	(void)state;

	alloc(h, 1 << 20, 3, T0);
	for (i = 0; i < 500; i++)
		pool[i] = alloc(h, 96, 2, T0);
	for (t = T0; t < T0 + 10000 * MS; t += 10 * MS) {
		for (i = 0; i < 100; i++)
			churn[i] = alloc(h, 32 + i, 1, t);
		for (i = 0; i < 100; i++)
			dofree(h, churn[i], t + 5 * MS);
		dofree(h, pool[k], t + 6 * MS);
		pool[k] = alloc(h, 96, 2, t + 6 * MS);
		k = (k + 1) % 500;
	}
	assert_int_equal(list(h, T0 + 10000 * MS, e), 0);
	assert_int_equal(growth_fastest(heap_growth(h), T0 + 10000 * MS, &e[0]), 0);
	heap_delete(h);
}

/* Grows for 2.1 s, then stops while the program goes on allocating
 * elsewhere: listed 0.4 s after it stopped (its rate over the time it
 * grew), not at the end of a 10 s trace (its last new maximum is 8 s old,
 * most of the program's allocations came after it); had the program
 * allocated nothing since, it is listed as it was. */
static void test_stopped(void **state)
{
	struct heap *h = heap_new();
	struct growth_entry e[GROWTH_MAX];
	uint64_t t;
	(void)state;

	for (t = T0; t < T0 + 2100 * MS; t += 10 * MS)
		alloc(h, 100, 5, t);
	/* nothing else allocated since: as it was */
	assert_int_equal(list(h, T0 + 10000 * MS, e), 1);
	/* the program goes on allocating elsewhere */
	for (; t < T0 + 2500 * MS; t += 10 * MS)
		dofree(h, alloc(h, 50, 1, t), t);
	assert_int_equal(list(h, T0 + 2500 * MS, e), 1);
	assert_int_equal(e[0].last_ns, T0 + 2090 * MS);
	assert_int_equal(e[0].stack, 5);
	for (; t < T0 + 10000 * MS; t += 10 * MS)
		dofree(h, alloc(h, 50, 1, t), t);
	assert_int_equal(list(h, T0 + 10000 * MS, e), 0);
	heap_delete(h);
}

/* 1.5 s of growth is too short a window; two steps are not steady
 * growth. */
static void test_too_short_or_few(void **state)
{
	struct heap *h = heap_new();
	struct growth_entry e[GROWTH_MAX];
	uint64_t t;
	(void)state;

	for (t = T0; t < T0 + 1500 * MS; t += 10 * MS)
		alloc(h, 100, 5, t);
	assert_int_equal(list(h, T0 + 1500 * MS, e), 0);
	alloc(h, 1000, 6, T0);
	alloc(h, 1000, 6, T0 + 3000 * MS);
	assert_int_equal(list(h, T0 + 3100 * MS, e), 0);
	heap_delete(h);
}

/* Three stacks growing at 1, 2 and 3 kB/s, a fourth shrinking back, a
 * fifth freeing everything at the end: the three, fastest first; at most
 * MAX; the fastest of the hot set. */
static void test_order(void **state)
{
	struct heap *h = heap_new();
	struct growth_entry e[GROWTH_MAX];
	uint64_t t, a[600];
	unsigned i = 0;
	(void)state;

	for (t = T0; t < T0 + 3000 * MS; t += 10 * MS) {
		alloc(h, 10, 11, t);
		alloc(h, 20, 12, t);
		alloc(h, 30, 13, t);
		/* stack 14: 40 bytes every 10 ms for 2 s, two blocks freed
		 * every 10 ms in the last second: none left */
		if (t < T0 + 2000 * MS) {
			a[i++] = alloc(h, 40, 14, t);
		} else {
			dofree(h, a[--i], t);
			dofree(h, a[--i], t);
		}
	}
	/* stack 15: as 13, all freed at the very end */
	for (t = T0; t < T0 + 3000 * MS; t += 10 * MS)
		a[i++] = alloc(h, 30, 15, t);
	while (i)
		dofree(h, a[--i], T0 + 3000 * MS);
	assert_int_equal(list(h, T0 + 3000 * MS, e), 3);
	assert_int_equal(e[0].stack, 13);
	assert_int_equal(e[1].stack, 12);
	assert_int_equal(e[2].stack, 11);
	assert_true(fabs(e[0].bytes_per_s - 3000.0) < 30.0);
	assert_true(fabs(e[2].bytes_per_s - 1000.0) < 10.0);
	assert_int_equal(growth_list(heap_growth(h), T0 + 3000 * MS, e, 2), 2);
	assert_int_equal(e[0].stack, 13);
	assert_int_equal(e[1].stack, 12);
	assert_int_equal(growth_fastest(heap_growth(h), T0 + 3000 * MS, &e[0]), 1);
	assert_int_equal(e[0].stack, 13);
	heap_delete(h);
}

/* Attached to a program whose pool of 500 was made before: each old
 * block (unknown to the table) freed and replaced, one every 10 ms: the
 * replacements (HB_REPLACEMENT) are not growth; a list beside it is.  A
 * thread's credit of unknown frees is its own and bounded. */
static void test_replacements(void **state)
{
	struct heap *h = heap_new();
	struct growth_entry e[GROWTH_MAX];
	const struct heap_block *b;
	uint64_t t, old = 0x900000000ull, a;
	unsigned i;
	(void)state;

	for (t = T0; t < T0 + 5000 * MS; t += 10 * MS) {
		assert_int_equal(heap_free_by(h, old, 1, t), 0);
		old += 0x100;
		a = alloc(h, 96, 2, t);
		alloc(h, 640, 7, t);
	}
	b = heap_lookup(h, a);
	assert_non_null(b);
	assert_int_equal(b->flags, HB_REPLACEMENT);
	assert_int_equal(list(h, T0 + 5000 * MS, e), 1);
	assert_int_equal(e[0].stack, 7);
	/* 100 unknown frees by thread 3: its next 64 blocks replace, the
	 * 65th is its own; thread 1's next block too */
	for (i = 0; i < 100; i++)
		heap_free_by(h, old + i * 0x100, 3, t);
	for (i = 0; i < 65; i++) {
		struct heap_block nb = { .addr = 0x700000000ull + i * 0x100,
					 .size = 8, .stack = 9, .tid = 3,
					 .fn = AF_MALLOC, .time_ns = t };

		heap_alloc(h, &nb);
		assert_int_equal(heap_lookup(h, nb.addr)->flags,
				 i < 64 ? HB_REPLACEMENT : 0);
	}
	assert_int_equal(heap_lookup(h, alloc(h, 8, 9, t))->flags, 0);
	heap_delete(h);
}

/* A pool made at one stack, its blocks replaced one by one from another
 * (a free, then an allocation of the same size): not growth; a list whose
 * entries follow the free of a temporary of another size is. */
static void test_transfer(void **state)
{
	struct heap *h = heap_new();
	struct growth_entry e[GROWTH_MAX];
	uint64_t pool[500], t;
	unsigned k = 0;
	(void)state;

	for (k = 0; k < 500; k++)
		pool[k] = alloc(h, 96, 20, T0);
	for (t = T0, k = 0; t < T0 + 5000 * MS; t += 10 * MS, k++) {
		dofree(h, pool[k], t);
		pool[k] = alloc(h, 96, 21, t);
		assert_int_equal(heap_lookup(h, pool[k])->flags, HB_REPLACEMENT);
		dofree(h, alloc(h, 50, 22, t), t);
		assert_int_equal(heap_lookup(h, alloc(h, 640, 7, t))->flags, 0);
	}
	assert_int_equal(list(h, T0 + 5000 * MS, e), 1);
	assert_int_equal(e[0].stack, 7);
	assert_int_equal(heap_stack_bytes(h, 21), 500 * 96);
	heap_delete(h);
}

/* heap_reset forgets the history; the memory per stack is small. */
static void test_reset_and_size(void **state)
{
	struct heap *h = heap_new();
	struct growth_entry e[GROWTH_MAX];
	uint64_t t;
	(void)state;

	for (t = T0; t < T0 + 3000 * MS; t += 10 * MS)
		alloc(h, 100, 5, t);
	assert_int_equal(list(h, T0 + 3000 * MS, e), 1);
	heap_reset(h);
	assert_int_equal(list(h, T0 + 3000 * MS, e), 0);
	assert_true(growth_stack_bytes() <= 112);
	heap_delete(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady_list),
		cmocka_unit_test(test_levels_not_listed),
		cmocka_unit_test(test_stopped),
		cmocka_unit_test(test_too_short_or_few),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_replacements),
		cmocka_unit_test(test_transfer),
		cmocka_unit_test(test_reset_and_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
