/*
 * test_rec_drain.c - the recorder's consumer (rec_drain.c) on records
 * written here into a ring: the stacks records get through the memo of
 * the last (hash, function) answers, and a table past 2^17 index slots
 * (the batch's second prefetches) ending with exact figures; how full
 * the ring is (rec_fill) and the drain timer's pace from it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "breakpoints/fdprobe.h"
#include "recorder/ring.h"
#include "tables/heap.h"
#include "tables/stacks.h"
#include "../../src/recorder/rec_priv.h"

#define F_MALLOC	0x401000ull
#define F_CALLOC	0x401100ull
#define F_FREE		0x401200ull

static struct rec_fn fns[3];

static struct recorder *setup(void)
{
	struct recorder *R = rec_new(getpid(), 16);
	struct ring *r;

	R->area = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(R->area != MAP_FAILED);
	R->conf = (struct rec_conf *)(R->area + AREA_CONF);
	fns[0] = (struct rec_fn){ .name = "malloc", .addr = F_MALLOC,
		.fn = REC_FN_TAGGED(REC_FN_MALLOC, 1, AF_MALLOC) };
	fns[1] = (struct rec_fn){ .name = "calloc", .addr = F_CALLOC,
		.fn = REC_FN_TAGGED(REC_FN_CALLOC, 1, AF_CALLOC) };
	fns[2] = (struct rec_fn){ .name = "free", .addr = F_FREE,
		.fn = REC_FN_TAGGED(REC_FN_FREE, 1, AF_FREE) };
	R->fns = fns;
	R->nfns = 3;
	R->main_lo = 0x400000;
	R->main_hi = 0x400800;
	r = (struct ring *)(R->area + AREA_RING);
	ring_init(r, RING_LOG2);
	R->rd = ring_reader_new(r, ring_mem_size(RING_LOG2));
	return R;
}

static void done(struct recorder *R)
{
	R->fns = NULL;		/* static here */
	R->nfns = 0;
	rec_delete(R);		/* the area and the reader too */
}

static struct ring *ring_of(struct recorder *R)
{
	return (struct ring *)(R->area + AREA_RING);
}

/* FN (index into fns) allocated SIZE at ADDR, stack HASH, its pcs if
 * NPCS. */
static void put_alloc(struct recorder *R, unsigned fn, uint64_t addr,
		      uint64_t size, uint64_t hash, const uint64_t *pcs,
		      unsigned npcs)
{
	uint64_t w[6 + 4] = { fns[fn].fn, 77, addr, size, 1, hash };
	unsigned i;

	for (i = 0; i < npcs; i++)
		w[6 + i] = pcs[i];
	assert_int_equal(ring_produce(ring_of(R), REC_ALLOC, npcs, w, 6 + npcs), 0);
}

static void put_free(struct recorder *R, uint64_t addr)
{
	uint64_t w[3] = { fns[2].fn, 77, addr };

	assert_int_equal(ring_produce(ring_of(R), REC_FREE, 0, w, 3), 0);
}

/* The stack of the live block at ADDR, as pcs: N of them into PCS. */
static unsigned stack_at(struct heap *h, struct stacks *st, uint64_t addr,
			 const uint64_t **pcs)
{
	const struct heap_block *b = heap_lookup(h, addr);

	assert_non_null(b);
	assert_int_not_equal(b->stack, 0);
	return stacks_get(st, b->stack, pcs);
}

static void test_stack_memo(void **state)
{
	static const uint64_t pa[2] = { 0x401a00, 0x401b00 }, pc[1] = { 0x401c00 };
	struct recorder *R = setup();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	const uint64_t *p;
	uint64_t lost;
	uint32_t s1, s2;

	(void)state;
	/* hash 0x1000 whole, then by its hash alone (the memo), then with
	 * calloc (another stack: the function is its first pc) */
	put_alloc(R, 0, 0x10000, 16, 0x1000, pa, 2);
	put_alloc(R, 0, 0x10010, 16, 0x1000, NULL, 0);
	put_alloc(R, 1, 0x10020, 16, 0x1000, NULL, 0);
	/* 0x1040: the same memo slot as 0x1000's for malloc; then 0x1000
	 * again, looked up in the maps */
	put_alloc(R, 0, 0x10030, 16, 0x1040, pc, 1);
	put_alloc(R, 0, 0x10038, 16, 0x1040, NULL, 0);	/* from the memo */
	put_alloc(R, 0, 0x10040, 16, 0x1000, NULL, 0);
	/* a hash never sent whole: the function alone */
	put_alloc(R, 0, 0x10050, 16, 0x2001, NULL, 0);
	put_alloc(R, 0, 0x10060, 16, 0x2001, NULL, 0);	/* (memo slot 1) */
	assert_int_equal(rec_drain(R, h, NULL, st, &lost), 8);
	assert_int_equal(lost, 0);
	assert_int_equal(rec_bad(R), 0);

	assert_int_equal(stack_at(h, st, 0x10000, &p), 3);
	assert_int_equal(p[0], F_MALLOC);
	assert_int_equal(p[1], 0x401a00);
	assert_int_equal(p[2], 0x401b00);
	s1 = heap_lookup(h, 0x10000)->stack;
	assert_int_equal(heap_lookup(h, 0x10010)->stack, s1);
	assert_int_equal(heap_lookup(h, 0x10040)->stack, s1);
	assert_int_equal(stack_at(h, st, 0x10020, &p), 3);
	assert_int_equal(p[0], F_CALLOC);
	assert_int_equal(p[1], 0x401a00);
	assert_int_equal(p[2], 0x401b00);
	assert_int_not_equal(heap_lookup(h, 0x10020)->stack, s1);
	assert_int_equal(stack_at(h, st, 0x10030, &p), 2);
	assert_int_equal(p[0], F_MALLOC);
	assert_int_equal(p[1], 0x401c00);
	assert_int_equal(heap_lookup(h, 0x10038)->stack,
			 heap_lookup(h, 0x10030)->stack);
	assert_int_equal(stack_at(h, st, 0x10050, &p), 1);
	assert_int_equal(p[0], F_MALLOC);
	s2 = heap_lookup(h, 0x10050)->stack;
	assert_int_equal(heap_lookup(h, 0x10060)->stack, s2);
	assert_int_equal(heap_stats(h)->allocs, 8);
	/* the memo: slot (hash ^ hash >> 29 ^ fn index * 0x9e3779b9) % 64 */
	assert_int_equal(R->stack_memo[0].hash, 0x1000);
	assert_int_equal(R->stack_memo[0].fn, 0);
	assert_int_equal(R->stack_memo[0].id, s1);
	assert_int_equal(R->stack_memo[0x39].hash, 0x1000);
	assert_int_equal(R->stack_memo[0x39].fn, 1);
	assert_int_equal(R->stack_memo[0x39].id,
			 heap_lookup(h, 0x10020)->stack);
	assert_int_equal(R->stack_memo[0].id, heap_lookup(h, 0x10010)->stack);

	stacks_delete(st);
	heap_delete(h);
	done(R);
}

/* 60,000 blocks (2^17 index slots from 49,153 on), then in batches the
 * even ones freed and 10,000 new ones made between them: the figures
 * and every block exact. */
static void test_big_table(void **state)
{
	static const uint64_t pa[1] = { 0x401a00 };
	struct recorder *R = setup();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	const struct heap_stats *s;
	uint64_t lost, a, b = 0x20000000;
	long got = 0;

	(void)state;
	for (a = 0; a < 60000; a++) {
		put_alloc(R, 0, b + 32 * a, 24, 0x1000, a ? NULL : pa, a ? 0 : 1);
		if (a % 10000 == 9999)	/* 560 KB: the ring is 1 MiB */
			got += rec_drain(R, h, NULL, st, &lost);
	}
	assert_int_equal(heap_prefetch_worth(h), 1);
	for (a = 0; a < 60000; a += 2) {
		put_free(R, b + 32 * a);
		if (a % 6 == 0)
			put_alloc(R, 0, 0x30000000 + 32 * a, 40, 0x1000, NULL, 0);
		if (a % 10000 == 9998)
			got += rec_drain(R, h, NULL, st, &lost);
	}
	got += rec_drain(R, h, NULL, st, &lost);
	assert_int_equal(got, 60000 + 30000 + 10000);
	assert_int_equal(lost, 0);
	assert_int_equal(rec_bad(R), 0);
	s = heap_stats(h);
	assert_int_equal(s->allocs, 70000);
	assert_int_equal(s->frees, 30000);
	assert_int_equal(s->unknown_frees, 0);
	assert_int_equal(s->in_use_blocks, 40000);
	assert_int_equal(s->in_use_bytes, 30000 * 24 + 10000 * 40);
	assert_int_equal(s->peak_bytes, 60000 * 24 - 24 + 40);	/* a = 0 */
	for (a = 0; a < 60000; a++) {
		const struct heap_block *x = heap_lookup(h, b + 32 * a);

		if (a % 2 == 0) {
			assert_null(x);
			continue;
		}
		assert_non_null(x);
		assert_int_equal(x->size, 24);
		assert_int_equal(x->tid, 77);
	}
	for (a = 0; a < 60000; a += 6)
		assert_int_equal(heap_lookup(h, 0x30000000 + 32 * a)->size, 40);
	stacks_delete(st);
	heap_delete(h);
	done(R);
}

/* How full the ring is, in 256ths (a free record: 32 bytes, a quarter
 * of the 1 MiB ring 8,192 of them), and the drain timer's pace from it:
 * halved from a quarter up, doubled under a sixteenth, 0.25-2 ms. */
static void test_fill_pace(void **state)
{
	struct recorder *R = setup();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	uint64_t lost, a;

	(void)state;
	assert_int_equal(RING_LOG2, 20);
	assert_int_equal(rec_fill(R), 0);
	for (a = 0; a < 8191; a++)
		put_free(R, 0x20000000 + 16 * a);
	assert_int_equal(rec_fill(R), 63);
	put_free(R, 0x10000000);
	assert_int_equal(rec_fill(R), 64);
	for (a = 0; a < 3 * 8192; a++)
		put_free(R, 0x40000000 + 16 * a);
	assert_int_equal(rec_fill(R), 256);
	assert_int_equal(rec_drain(R, h, NULL, st, &lost), 4 * 8192);
	assert_int_equal(rec_fill(R), 0);
	assert_int_equal(heap_stats(h)->unknown_frees, 4 * 8192);
	assert_int_equal(rec_fill(NULL), 0);

	assert_int_equal(rec_drain_pace(2000000, 0), 2000000);
	assert_int_equal(rec_drain_pace(2000000, 63), 2000000);
	assert_int_equal(rec_drain_pace(2000000, 64), 1000000);
	assert_int_equal(rec_drain_pace(1000000, 200), 500000);
	assert_int_equal(rec_drain_pace(500000, 256), 250000);
	assert_int_equal(rec_drain_pace(250000, 256), 250000);
	assert_int_equal(rec_drain_pace(250000, 63), 250000);
	assert_int_equal(rec_drain_pace(250000, 16), 250000);
	assert_int_equal(rec_drain_pace(250000, 15), 500000);
	assert_int_equal(rec_drain_pace(1000000, 0), 2000000);
	stacks_delete(st);
	heap_delete(h);
	done(R);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_memo),
		cmocka_unit_test(test_big_table),
		cmocka_unit_test(test_fill_pace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
