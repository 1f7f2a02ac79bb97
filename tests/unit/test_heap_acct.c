/* test_heap_acct.c - the heap table's figures per stack and per thread,
 * and its events to an observer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tables/heap.h"

static struct heap_block mk(uint64_t addr, uint64_t size, uint32_t stack,
			    int32_t tid, enum alloc_fn fn)
{
	struct heap_block b;

	memset(&b, 0, sizeof(b));
	b.addr = addr;
	b.size = size;
	b.stack = stack;
	b.tid = tid;
	b.fn = (uint8_t)fn;
	b.time_ns = 7;
	return b;
}

static const struct heap_thread *thread(struct heap *h, int32_t tid)
{
	const struct heap_thread *t;
	size_t n, i;

	n = heap_threads(h, &t);
	for (i = 0; i < n; i++)
		if (t[i].tid == tid)
			return &t[i];
	return NULL;
}

/* The threads' figures add up to the process's. */
static void check_sums(struct heap *h)
{
	const struct heap_stats *st = heap_stats(h);
	const struct heap_thread *t;
	uint64_t a = 0, f = 0, b = 0, u = 0, s = 0;
	size_t n, i;
	uint32_t k;

	n = heap_threads(h, &t);
	for (i = 0; i < n; i++) {
		a += t[i].allocs;
		f += t[i].frees;
		b += t[i].bytes_allocated;
		u += t[i].in_use_bytes;
	}
	assert_int_equal(a, st->allocs);
	assert_int_equal(f, st->frees);
	assert_int_equal(b, st->bytes_allocated);
	assert_int_equal(u, st->in_use_bytes);
	for (k = 0; k <= heap_stack_max(h); k++)
		s += heap_stack_bytes(h, k);
	assert_int_equal(s, st->in_use_bytes);
}

static void test_per_thread(void **state)
{
	struct heap *h = heap_new();
	struct heap_block b1 = mk(0x1000, 100, 1, 11, AF_MALLOC);
	struct heap_block b2 = mk(0x2000, 50, 2, 12, AF_MALLOC);
	struct heap_block held, nb;
	int live;

	(void)state;
	heap_alloc(h, &b1);
	heap_alloc(h, &b2);
	/* thread 12 frees thread 11's block: the free is 12's, the bytes
	 * leave 11's in use */
	assert_int_equal(heap_free_by(h, 0x1000, 12, 9), 1);
	assert_int_equal(thread(h, 11)->allocs, 1);
	assert_int_equal(thread(h, 11)->frees, 0);
	assert_int_equal(thread(h, 11)->in_use_bytes, 0);
	assert_int_equal(thread(h, 11)->bytes_allocated, 100);
	assert_int_equal(thread(h, 12)->frees, 1);
	assert_int_equal(thread(h, 12)->in_use_bytes, 50);
	/* realloc by 13 of 12's block */
	live = heap_realloc_begin(h, 0x2000, &held);
	nb = mk(0x3000, 0, 3, 13, AF_REALLOC);
	heap_realloc_end(h, 0x2000, live, &held, 80, &nb);
	assert_int_equal(thread(h, 12)->in_use_bytes, 0);
	assert_int_equal(thread(h, 13)->in_use_bytes, 80);
	assert_int_equal(thread(h, 13)->frees, 1);
	assert_int_equal(thread(h, 13)->allocs, 1);
	/* a free told without a thread is tid 0's */
	heap_free(h, 0x3000);
	assert_int_equal(thread(h, 0)->frees, 1);
	assert_int_equal(thread(h, 13)->in_use_bytes, 0);
	heap_thread_name(h, 13, "worker-13");
	heap_thread_name(h, 99, "unknown");
	assert_string_equal(thread(h, 13)->name, "worker-13");
	assert_null(thread(h, 99));
	check_sums(h);
	heap_delete(h);
}

/* Beyond HEAP_MAX_THREADS, threads share tid 0's entry: bounded. */
static void test_threads_bounded(void **state)
{
	struct heap *h = heap_new();
	const struct heap_thread *t;
	int32_t tid;

	(void)state;
	for (tid = 1; tid <= HEAP_MAX_THREADS + 100; tid++) {
		struct heap_block b = mk(0x1000 + 16 * (uint64_t)tid, 8, 1, tid,
					 AF_MALLOC);

		heap_alloc(h, &b);
	}
	assert_int_equal(heap_threads(h, &t), HEAP_MAX_THREADS + 1);
	assert_int_equal(thread(h, 0)->allocs, 100);
	assert_int_equal(thread(h, 0)->in_use_bytes, 800);
	check_sums(h);
	heap_delete(h);
}

static void test_stack_top(void **state)
{
	struct heap *h = heap_new();
	uint32_t ids[3];
	uint64_t bytes[3];
	uint32_t s;

	(void)state;
	/* stack s gets s * 10 bytes, but stack 5 gets 1000 */
	for (s = 1; s <= 9; s++) {
		struct heap_block b = mk(0x1000 * s, s == 5 ? 1000 : s * 10, s,
					 1, AF_MALLOC);

		heap_alloc(h, &b);
	}
	assert_int_equal(heap_stack_top(h, 3, ids, bytes), 3);
	assert_int_equal(ids[0], 5);
	assert_int_equal(bytes[0], 1000);
	assert_int_equal(ids[1], 9);
	assert_int_equal(bytes[1], 90);
	assert_int_equal(ids[2], 8);
	assert_int_equal(bytes[2], 80);
	heap_free(h, 0x5000);
	heap_free(h, 0x9000);
	assert_int_equal(heap_stack_bytes(h, 5), 0);
	assert_int_equal(heap_stack_top(h, 3, ids, bytes), 3);
	assert_int_equal(ids[0], 8);
	assert_int_equal(ids[2], 6);
	check_sums(h);
	heap_reset(h);
	assert_int_equal(heap_stack_top(h, 3, ids, bytes), 0);
	heap_delete(h);
}

struct seen {
	struct heap_event e[16];
	unsigned n;
};

static void observe(void *ctx, const struct heap_event *e)
{
	struct seen *s = ctx;

	if (s->n < 16)
		s->e[s->n++] = *e;
}

static void test_observer(void **state)
{
	struct heap *h = heap_new();
	struct heap_block b = mk(0x1000, 100, 4, 11, AF_CALLOC), held, nb;
	struct seen s = { .n = 0 };
	int live;

	(void)state;
	heap_observe(h, observe, &s);
	heap_alloc(h, &b);
	live = heap_realloc_begin(h, 0x1000, &held);
	nb = mk(0x2000, 0, 5, 12, AF_REALLOC);
	heap_realloc_end(h, 0x1000, live, &held, 300, &nb);
	heap_free_by(h, 0x2000, 13, 99);
	heap_free_by(h, 0x7000, 13, 100);
	/* realloc(NULL, 8), then realloc(p, 0) returning NULL: a free */
	nb = mk(0x3000, 0, 6, 12, AF_REALLOC);
	heap_realloc_end(h, 0, 0, NULL, 8, &nb);
	live = heap_realloc_begin(h, 0x3000, &held);
	nb = mk(0, 0, 6, 12, AF_REALLOC);
	heap_realloc_end(h, 0x3000, live, &held, 0, &nb);
	assert_int_equal(s.n, 7);
	assert_int_equal(s.e[0].type, HEV_ALLOC);
	assert_int_equal(s.e[0].fn, AF_CALLOC);
	assert_int_equal(s.e[0].size, 100);
	assert_int_equal(s.e[0].stack, 4);
	assert_int_equal(s.e[1].type, HEV_FREE);
	assert_int_equal(s.e[1].fn, AF_REALLOC);
	assert_int_equal(s.e[1].size, 100);
	assert_int_equal(s.e[1].addr, 0x1000);
	assert_int_equal(s.e[1].tid, 12);
	assert_int_equal(s.e[1].stack, 5);
	assert_int_equal(s.e[2].type, HEV_REALLOC);
	assert_int_equal(s.e[2].size, 300);
	assert_int_equal(s.e[2].addr, 0x2000);
	assert_int_equal(s.e[2].old, 0x1000);
	assert_int_equal(s.e[3].type, HEV_FREE);
	assert_int_equal(s.e[3].size, 300);
	assert_int_equal(s.e[3].tid, 13);
	assert_int_equal(s.e[3].time_ns, 99);
	assert_int_equal(s.e[3].stack, 0);
	assert_int_equal(s.e[4].type, HEV_UNKNOWN_FREE);
	assert_int_equal(s.e[4].addr, 0x7000);
	assert_int_equal(s.e[5].type, HEV_REALLOC);
	assert_int_equal(s.e[5].old, 0);
	assert_int_equal(s.e[6].type, HEV_FREE);
	assert_int_equal(s.e[6].size, 8);
	assert_int_equal(heap_stats(h)->allocs, 3);
	assert_int_equal(heap_stats(h)->frees, 3);
	check_sums(h);
	heap_delete(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_thread),
		cmocka_unit_test(test_threads_bounded),
		cmocka_unit_test(test_stack_top),
		cmocka_unit_test(test_observer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
