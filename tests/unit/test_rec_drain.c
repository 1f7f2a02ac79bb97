/*
 * test_rec_drain.c - the recorder's consumer (rec_drain.c) on records
 * written here into a ring: the stacks records get through the memo of
 * the last (hash, function) answers, and a table past 2^17 index slots
 * (the batch's second prefetches) ending with exact figures; how full
 * the ring is (rec_fill) and the drain timer's pace from it; two lanes
 * run in the order of their records' times, each up to what the other
 * may still send.
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

#include "base/util.h"
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
	R->rd[0] = ring_reader_new(r, ring_mem_size(RING_LOG2));
	return R;
}

/* SETUP's recorder with lane 1 too. */
static struct recorder *setup2(void)
{
	struct recorder *R = setup();

	ring_init(rec_lane(R, 1), RING_LOG2);
	R->rd[1] = ring_reader_new(rec_lane(R, 1), ring_mem_size(RING_LOG2));
	R->nlanes = 2;
	return R;
}

static void done(struct recorder *R)
{
	R->fns = NULL;		/* static here */
	R->nfns = 0;
	rec_delete(R);		/* the area and the reader too */
}

/* the times of the records put in lane 0: one tick apart */
static uint64_t ticks;

/* In lane L at time T, thread TID: FN (index into fns) allocated SIZE
 * at ADDR, stack HASH, its pcs if NPCS. */
static void put_alloc_at(struct recorder *R, unsigned l, uint64_t t,
			 uint64_t tid, unsigned fn, uint64_t addr,
			 uint64_t size, uint64_t hash, const uint64_t *pcs,
			 unsigned npcs)
{
	uint64_t w[6 + 4] = { fns[fn].fn | tid << 32, t, addr, size, 1, hash };
	unsigned i;

	for (i = 0; i < npcs; i++)
		w[6 + i] = pcs[i];
	assert_int_equal(ring_produce(rec_lane(R, l), REC_ALLOC, npcs, w,
				      6 + npcs), 0);
}

/* put_alloc_at's record (no pcs) committed open (rechook.h,
 * REC_OPEN_HDR), then amended with the free's time TF unless 0. */
static void put_open_pcs_at(struct recorder *R, unsigned l, uint64_t t,
			    uint64_t tid, unsigned fn, uint64_t addr,
			    uint64_t size, uint64_t hash, const uint64_t *pcs,
			    unsigned npcs, uint64_t tf)
{
	uint64_t w[6] = { fns[fn].fn | tid << 32, t, addr, size, 1, hash };
	struct ring *r = rec_lane(R, l);
	struct ring_res res = { 0, 0, 0 };
	unsigned i;

	assert_int_equal(ring_reserve(r, REC_ALLOC, npcs, 7 + npcs, &res), 0);
	for (i = 0; i < 6; i++)
		ring_put(r, &res, i, w[i]);
	for (i = 0; i < npcs; i++)
		ring_put(r, &res, 6 + i, pcs[i]);
	ring_commit_open(r, &res);
	if (tf)
		assert_int_equal(ring_amend(r, res.pos, RING_HDR_WITH(res.hdr, RING_OPEN),
					    tf), 0);
}

static void put_open_at(struct recorder *R, unsigned l, uint64_t t,
			uint64_t tid, unsigned fn, uint64_t addr,
			uint64_t size, uint64_t hash, uint64_t tf)
{
	put_open_pcs_at(R, l, t, tid, fn, addr, size, hash, NULL, 0, tf);
}

static void put_free_at(struct recorder *R, unsigned l, uint64_t t,
			uint64_t tid, uint64_t addr)
{
	uint64_t w[3] = { fns[2].fn | tid << 32, t, addr };

	assert_int_equal(ring_produce(rec_lane(R, l), REC_FREE, 0, w, 3), 0);
}

static void put_alloc(struct recorder *R, unsigned fn, uint64_t addr,
		      uint64_t size, uint64_t hash, const uint64_t *pcs,
		      unsigned npcs)
{
	put_alloc_at(R, 0, ++ticks, 77, fn, addr, size, hash, pcs, npcs);
}

static void put_free(struct recorder *R, uint64_t addr)
{
	put_free_at(R, 0, ++ticks, 77, addr);
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

/* H's counts are these. */
static void expect_counts(struct heap *h, uint64_t allocs, uint64_t frees,
			  uint64_t unknown, uint64_t in_use)
{
	const struct heap_stats *s = heap_stats(h);

	assert_int_equal(s->allocs, allocs);
	assert_int_equal(s->frees, frees);
	assert_int_equal(s->unknown_frees, unknown);
	assert_int_equal(s->in_use_bytes, in_use);
}

static void finish(struct recorder *R, struct heap *h, struct stacks *st)
{
	stacks_delete(st);
	heap_delete(h);
	done(R);
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

/* 1 if HASH is in the stack set published as WORD, as a hook looks
 * (hooks.c interned): within REC_STACKSET_PROBES entries of its slot. */
static int in_set(uint64_t word, uint64_t hash)
{
	uint64_t mask, i;
	const uint64_t *set = rec_stackset_table(word, &mask);

	for (i = 0; i < REC_STACKSET_PROBES; i++) {
		if (set[(hash + i) & mask] == hash)
			return 1;
		if (!set[(hash + i) & mask])
			return 0;
	}
	return 0;
}

/* The I-th of test_stackset_grows' hashes: distinct slots mod 2^14. */
static uint64_t grow_hash(uint64_t i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ull;
}

/*
 * The stack set starts at 2^12 hashes and doubles at half full: 2^13 at
 * the 2,049th stack, 2^14 at the 4,097th.  Nine hashes of one slot
 * first: the ninth finds its chain full in the 2^12 table and is put in
 * the 2^13 one.  Each table is filled before it is published, and one
 * replaced keeps what it had (a hook may still be on it); a hash alone
 * after it all maps to its stack.
 */
static void test_stackset_grows(void **state)
{
	struct recorder *R = setup();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	const uint64_t *p;
	uint64_t lost, w12, w13, w, pc, i, same[9];
	long got = 0;

	(void)state;
	R->area_t = (uintptr_t)R->area;
	rec_stackset_publish(R);
	w12 = R->conf->stackset;
	assert_int_equal(w12, rec_stackset_word(R->area_t + AREA_STACKSET,
						STACKSET_LOG_MIN));
	w13 = rec_stackset_word(R->area_t + AREA_STACKSET + STACKSET_OFF(13), 13);
	for (i = 0; i < 9; i++) {
		same[i] = 0x777 + (i << 12) + (0xabcull << 40);
		pc = 0x403000 + 16 * i;
		put_alloc(R, 0, 0x20000000 + 32 * i, 16, same[i], &pc, 1);
	}
	got += rec_drain(R, h, NULL, st, &lost);
	assert_int_equal(R->conf->stackset, w12);
	for (i = 0; i < 8; i++)
		assert_true(in_set(w12, same[i]));
	assert_false(in_set(w12, same[8]));
	for (i = 0; i < 5000; i++) {
		pc = 0x402000 + 16 * i;
		put_alloc(R, 0, 0x10000000 + 32 * i, 16, grow_hash(i), &pc, 1);
		if (i % 1000 == 999)
			got += rec_drain(R, h, NULL, st, &lost);
		/* 8 + 2,041 = 2,049 in it: the 2^13 table */
		if (i == 2040) {
			got += rec_drain(R, h, NULL, st, &lost);
			assert_int_equal(R->conf->stackset, w13);
		}
	}
	got += rec_drain(R, h, NULL, st, &lost);
	assert_int_equal(got, 5009);
	assert_int_equal(lost, 0);
	w = R->conf->stackset;
	assert_int_equal(w, rec_stackset_word(R->area_t + AREA_STACKSET +
					      STACKSET_OFF(14), 14));
	assert_int_equal(R->ss_n, 5009);
	assert_int_equal(R->ss_count, 5009);
	for (i = 0; i < 5000; i++)
		assert_true(in_set(w, grow_hash(i)));
	for (i = 0; i < 9; i++) {
		assert_true(in_set(w, same[i]));
		assert_true(in_set(w13, same[i]));
	}
	/* the tables replaced: what each had when it was */
	for (i = 0; i <= 2040; i++)
		assert_true(in_set(w12, grow_hash(i)));
	assert_false(in_set(w12, grow_hash(2041)));
	/* 9 + 4,088 = 4,097 */
	for (i = 0; i <= 4087; i++)
		assert_true(in_set(w13, grow_hash(i)));
	assert_false(in_set(w13, grow_hash(4088)));
	/* hashes alone: their stacks */
	put_alloc(R, 0, 0x30000000, 16, grow_hash(4321), NULL, 0);
	put_alloc(R, 0, 0x30000010, 16, same[8], NULL, 0);
	assert_int_equal(rec_drain(R, h, NULL, st, &lost), 2);
	assert_int_equal(stack_at(h, st, 0x30000000, &p), 2);
	assert_int_equal(p[0], F_MALLOC);
	assert_int_equal(p[1], 0x402000 + 16 * 4321);
	assert_int_equal(stack_at(h, st, 0x30000010, &p), 2);
	assert_int_equal(p[1], 0x403000 + 16 * 8);
	stacks_delete(st);
	heap_delete(h);
	done(R);
}

/* The thread entry of TCB (rec_thread_set's, found the way it does). */
static const struct rec_thread *entry_at(struct recorder *R, uint64_t tcb)
{
	const struct rec_thread *T = (const struct rec_thread *)(R->area + AREA_THREADS);
	uint64_t i;

	for (i = rec_thread_slot(tcb, NTHREADS - 1); T[i].tcb; i = (i + 1) & (NTHREADS - 1))
		if (T[i].tcb == tcb)
			return &T[i];
	return NULL;
}

/*
 * Lanes are made as threads take them: none but the shared ring at
 * first, the next one for a thread that finds no made lane free (its
 * header written, its reader made, conf.nlanes published), a made one
 * again once its thread is gone, the shared ring past lanes_max; after
 * rec_disable no lane is made (the ring's enabled word is the target's
 * to write: ptleak's own flag says it).
 */
static void test_lanes_made(void **state)
{
	struct recorder *R = setup();
	int local;
	uint64_t sp = (uintptr_t)&local;

	(void)state;
	R->lanes_max = 4;
	assert_int_equal(R->nlanes, 1);
	assert_int_equal(rec_thread_set(R, 101, 0x7000, sp), 0);
	assert_int_equal(entry_at(R, 0x7000)->lane, 1);
	assert_int_equal(R->nlanes, 2);
	assert_int_equal(R->conf->nlanes, 2);
	assert_non_null(R->rd[1]);
	assert_int_equal(rec_lane(R, 1)->enabled, 1);
	assert_int_equal(rec_lane(R, 2)->magic, 0);	/* not made */
	assert_int_equal(rec_thread_set(R, 102, 0x8000, sp), 0);
	assert_int_equal(rec_thread_set(R, 103, 0x9000, sp), 0);
	assert_int_equal(entry_at(R, 0x8000)->lane, 2);
	assert_int_equal(entry_at(R, 0x9000)->lane, 3);
	assert_int_equal(R->nlanes, 4);
	assert_int_equal(R->conf->nlanes, 4);
	/* past lanes_max: the shared ring */
	assert_int_equal(rec_thread_set(R, 104, 0xa000, sp), 0);
	assert_int_equal(entry_at(R, 0xa000)->lane, 0);
	/* a lane given back is taken again, none made */
	rec_thread_gone(R, 102);
	assert_int_equal(rec_thread_set(R, 105, 0xb000, sp), 0);
	assert_int_equal(entry_at(R, 0xb000)->lane, 2);
	assert_int_equal(R->nlanes, 4);
	/* disabled: a made lane free is still given, no new one made */
	R->lanes_max = 6;
	rec_thread_gone(R, 103);
	rec_disable(R);
	rec_lane(R, 0)->enabled = 1;	/* the target's write */
	assert_int_equal(rec_thread_set(R, 106, 0xc000, sp), 0);
	assert_int_equal(entry_at(R, 0xc000)->lane, 3);
	assert_int_equal(rec_thread_set(R, 107, 0xd000, sp), 0);
	assert_int_equal(entry_at(R, 0xd000)->lane, 0);
	assert_int_equal(R->nlanes, 4);
	assert_int_equal(rec_lane(R, 4)->magic, 0);
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

/*
 * Thread 5 (lane 1) frees A, thread 6 (lane 0) is handed A by its next
 * malloc; lane 0 is taken first: in their times' order the table ends
 * with thread 6's block, no free unknown.  Then a realloc begun in lane
 * 0 (the thread's records before it had a lane) ends in lane 1.
 */
static void test_lanes_order(void **state)
{
	struct recorder *R = setup2();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	const struct heap_stats *s;
	const struct heap_block *b;
	uint64_t lost, t0 = 1000000;

	(void)state;
	put_alloc_at(R, 1, t0 + 10, 5, 0, 0xa000, 100, 0x1000, NULL, 0);
	put_free_at(R, 1, t0 + 20, 5, 0xa000);
	put_alloc_at(R, 0, t0 + 30, 6, 0, 0xa000, 200, 0x1000, NULL, 0);
	put_free_at(R, 0, t0 + 40, 6, 0xb000);	/* unknown */
	put_alloc_at(R, 1, t0 + 50, 5, 0, 0xb000, 300, 0x1000, NULL, 0);
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 5);
	s = heap_stats(h);
	assert_int_equal(s->allocs, 3);
	assert_int_equal(s->frees, 1);
	assert_int_equal(s->unknown_frees, 1);
	assert_int_equal(s->in_use_bytes, 500);
	b = heap_lookup(h, 0xa000);
	assert_non_null(b);
	assert_int_equal(b->size, 200);
	assert_int_equal(b->tid, 6);
	assert_int_equal(heap_lookup(h, 0xb000)->size, 300);
	stacks_delete(st);
	heap_delete(h);
	done(R);
}

/* rec_drain.c's EPS: records of two lanes closer than this in time are
 * in no order the times can tell */
#define EPS 4000

/* The peak of: lane 1's block of 100 bytes at 0xa000, freed GAP ticks
 * after it was made (in an amended record if AMENDED), lane 0's of 1000
 * made and freed between; the counts exact either way. */
static uint64_t peak_of_pairs(uint64_t gap, int amended)
{
	struct recorder *R = setup2();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	uint64_t lost, t0 = 1000000, peak;

	if (amended) {
		put_open_at(R, 1, t0 + 10, 5, 0, 0xa000, 100, 0x1000, t0 + 10 + gap);
	} else {
		put_alloc_at(R, 1, t0 + 10, 5, 0, 0xa000, 100, 0x1000, NULL, 0);
		put_free_at(R, 1, t0 + 10 + gap, 5, 0xa000);
	}
	put_alloc_at(R, 0, t0 + 20, 6, 0, 0xb000, 1000, 0x1000, NULL, 0);
	put_free_at(R, 0, t0 + 30, 6, 0xb000);
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 4 - amended);
	expect_counts(h, 2, 2, 0, 0);
	assert_int_equal(heap_stats(h)->bytes_allocated, 1100);
	peak = heap_stats(h)->peak_bytes;
	finish(R, h, st);
	return peak;
}

/*
 * A free that is its lane's next record after the block's allocation,
 * up to EPS later, runs with it, as one: another lane's records between
 * them in time see it freed (the times cannot order them); further
 * apart they run in their times' order.  A block so freed at an address
 * the table has live (its free was missed) is counted as the slow way
 * counts it: the old one freed, no free unknown.
 */
static void test_freed_at_once(void **state)
{
	struct recorder *R;
	struct heap *h;
	struct stacks *st;
	uint64_t lost;

	(void)state;
	assert_int_equal(peak_of_pairs(EPS + 1, 0), 1100);
	assert_int_equal(peak_of_pairs(EPS, 0), 1000);
	R = setup();
	h = heap_new();
	st = stacks_new();
	put_alloc(R, 0, 0xc000, 50, 0x1000, NULL, 0);
	put_alloc(R, 0, 0xc000, 70, 0x1000, NULL, 0);
	put_free(R, 0xc000);
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 3);
	expect_counts(h, 2, 2, 0, 0);
	assert_int_equal(heap_stats(h)->peak_bytes, 70);
	assert_null(heap_lookup(h, 0xc000));
	finish(R, h, st);
}

/*
 * A block freed at once by its thread while, between the two in time,
 * another thread freed it and a third was handed it back (thread 5 sent
 * it away and got it again): run in the times' order, the free not moved
 * before the others' records of the block.  And one whose free is past
 * what may still come from the other lane: its allocation runs in its
 * place, its free waits for the other lane's record being written.
 */
static void test_freed_at_once_split(void **state)
{
	struct recorder *R = setup2();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	struct ring_res res = { 0, 0, 0 };
	uint64_t lost, t0 = 1000000;

	(void)state;
	put_alloc_at(R, 1, t0 + 10, 5, 0, 0xa000, 100, 0x1000, NULL, 0);
	put_free_at(R, 1, t0 + 40, 5, 0xa000);
	put_free_at(R, 0, t0 + 20, 6, 0xa000);
	put_alloc_at(R, 0, t0 + 30, 7, 0, 0xa000, 100, 0x1000, NULL, 0);
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 4);
	expect_counts(h, 2, 2, 0, 0);
	assert_null(heap_lookup(h, 0xa000));
	finish(R, h, st);

	R = setup2();
	h = heap_new();
	st = stacks_new();
	put_alloc_at(R, 1, t0, 5, 0, 0xb000, 10, 0x1000, NULL, 0);
	put_free_at(R, 1, t0 + EPS - 1000, 5, 0xb000);
	/* lane 0 up to t0 + EPS + 1000, then a record being written: lane
	 * 1 runs up to t0 + 1000 */
	put_alloc_at(R, 0, t0 + EPS + 1000, 6, 0, 0xc000, 20, 0x1000, NULL, 0);
	assert_int_equal(ring_reserve(rec_lane(R, 0), REC_FREE, 0, 3, &res), 0);
	assert_int_equal(rec_drain(R, h, NULL, st, &lost), 3);
	expect_counts(h, 1, 0, 0, 10);
	assert_non_null(heap_lookup(h, 0xb000));
	assert_null(heap_lookup(h, 0xc000));
	ring_put(rec_lane(R, 0), &res, 0, fns[2].fn | 6ull << 32);
	ring_put(rec_lane(R, 0), &res, 1, t0 + EPS + 2000);
	ring_put(rec_lane(R, 0), &res, 2, 0xc000);
	ring_commit(rec_lane(R, 0), &res);
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 1);
	expect_counts(h, 2, 2, 0, 0);
	assert_int_equal(heap_stats(h)->peak_bytes, 20);
	assert_null(heap_lookup(h, 0xb000));
	assert_null(heap_lookup(h, 0xc000));
	finish(R, h, st);
}

/*
 * A free that amended its block's allocation record (rechook.h,
 * REC_OPEN_HDR) is that lane's next record, as if it had one: run with
 * the allocation within EPS, at its own time beyond; at its own time
 * too where another lane's records of the block come between (it was
 * sent away, freed, made again and handed back); an open record not
 * amended is an allocation alone; a free's time before its allocation's
 * is raised to it.
 */
static void test_amended(void **state)
{
	static const uint64_t pcs[2] = { 0x401a00, 0x401b00 };
	struct recorder *R;
	struct heap *h;
	struct stacks *st;
	const uint64_t *got;
	uint64_t lost, t0 = 1000000;

	(void)state;
	assert_int_equal(peak_of_pairs(EPS + 1, 1), 1100);
	assert_int_equal(peak_of_pairs(EPS, 1), 1000);

	R = setup2();
	h = heap_new();
	st = stacks_new();
	put_open_at(R, 1, t0 + 10, 5, 0, 0xa000, 100, 0x1000, t0 + 40);
	put_free_at(R, 0, t0 + 20, 6, 0xa000);
	put_alloc_at(R, 0, t0 + 30, 7, 0, 0xa000, 100, 0x1000, NULL, 0);
	put_open_at(R, 1, t0 + 50, 5, 0, 0xb000, 80, 0x1000, 0);
	put_open_at(R, 1, t0 + 60, 5, 0, 0xc000, 40, 0x1000, t0 + 55);
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 5);
	expect_counts(h, 4, 3, 0, 80);
	assert_null(heap_lookup(h, 0xa000));
	assert_int_equal(heap_lookup(h, 0xb000)->size, 80);
	assert_null(heap_lookup(h, 0xc000));
	assert_int_equal(heap_stats(h)->peak_bytes, 120);
	finish(R, h, st);

	/* an open record with its stack's pcs (not interned yet): the
	 * amendment after them */
	R = setup2();
	h = heap_new();
	st = stacks_new();
	put_open_pcs_at(R, 1, t0 + 10, 5, 0, 0xd000, 60, 0x2000, pcs, 2, 0);
	put_open_pcs_at(R, 1, t0 + 20, 5, 0, 0xe000, 70, 0x2000, pcs, 2, t0 + 30);
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 2);
	expect_counts(h, 2, 1, 0, 60);
	assert_int_equal(rec_bad(R), 0);
	assert_int_equal(stack_at(h, st, 0xd000, &got), 3);
	assert_int_equal(got[0], F_MALLOC);
	assert_int_equal(got[1], pcs[0]);
	assert_int_equal(got[2], pcs[1]);
	assert_null(heap_lookup(h, 0xe000));
	finish(R, h, st);
}

/*
 * Records of time 0 (the process's only thread so far: rec_conf.need_tsc
 * 0) run before every later one of another lane, in their lane's order,
 * and are dated by the drain (not by the first checkpoint ever).
 */
static void test_time_zero(void **state)
{
	struct recorder *R = setup2();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	const struct heap_stats *s;
	const struct heap_block *b;
	uint64_t lost, t0 = ring_arch_tsc(), before, after;

	(void)state;
	rec_checkpoint(R);	/* an old mark: not the records' time */
	usleep(20000);
	put_alloc_at(R, 1, 0, 5, 0, 0xa000, 100, 0x1000, NULL, 0);
	put_free_at(R, 1, 0, 5, 0xa000);
	put_alloc_at(R, 1, 0, 5, 0, 0xc000, 50, 0x1000, NULL, 0);
	/* a second thread, then both with times */
	put_alloc_at(R, 0, t0 + 30, 6, 0, 0xa000, 200, 0x1000, NULL, 0);
	put_alloc_at(R, 1, t0 + 50, 5, 0, 0xb000, 300, 0x1000, NULL, 0);
	before = now_ns();
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 5);
	after = now_ns();
	s = heap_stats(h);
	assert_int_equal(s->allocs, 4);
	assert_int_equal(s->frees, 1);
	assert_int_equal(s->in_use_bytes, 550);
	b = heap_lookup(h, 0xa000);
	assert_non_null(b);
	assert_int_equal(b->size, 200);
	assert_int_equal(b->tid, 6);
	b = heap_lookup(h, 0xc000);
	assert_non_null(b);
	assert_true(b->time_ns >= before && b->time_ns <= after);
	stacks_delete(st);
	heap_delete(h);
	done(R);
}

/*
 * rec_drain runs a record only when no lane can still send an older
 * one: a lane with a record reserved and not committed holds the other
 * lane's later records (its next one is not older than its last taken),
 * and records of the last EPS ticks wait; rec_drain_quiet takes all.
 */
static void test_lanes_bound(void **state)
{
	struct recorder *R = setup2();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	struct ring_res res = { 0, 0, 0 };
	uint64_t lost, now = ring_arch_tsc();

	(void)state;
	put_alloc_at(R, 1, now - 5000000, 5, 0, 0xa000, 1, 0x1000, NULL, 0);
	/* lane 1's next record, being written */
	assert_int_equal(ring_reserve(rec_lane(R, 1), REC_FREE, 0, 3, &res), 0);
	put_alloc_at(R, 0, now - 4000000, 6, 0, 0xb000, 2, 0x1000, NULL, 0);
	assert_int_equal(rec_drain(R, h, NULL, st, &lost), 2);
	/* taken both, run lane 1's only: lane 0's is later than lane 1's
	 * last, which the record being written may come before */
	assert_int_equal(heap_stats(h)->allocs, 1);
	assert_non_null(heap_lookup(h, 0xa000));
	assert_null(heap_lookup(h, 0xb000));
	assert_int_equal(rec_blocked(R), 1);
	/* committed: everything older than now - EPS runs, in time order */
	ring_put(rec_lane(R, 1), &res, 0, fns[2].fn | 5ull << 32);
	ring_put(rec_lane(R, 1), &res, 1, now - 4500000);
	ring_put(rec_lane(R, 1), &res, 2, 0xa000);
	ring_commit(rec_lane(R, 1), &res);
	put_alloc_at(R, 0, ring_arch_tsc() + 1000000000ull, 6, 0, 0xc000, 4,
		     0x1000, NULL, 0);
	assert_int_equal(rec_drain(R, h, NULL, st, &lost), 2);
	assert_int_equal(heap_stats(h)->allocs, 2);
	assert_int_equal(heap_stats(h)->frees, 1);
	assert_null(heap_lookup(h, 0xa000));
	assert_non_null(heap_lookup(h, 0xb000));
	assert_null(heap_lookup(h, 0xc000));	/* a future time: waits */
	assert_int_equal(rec_blocked(R), 1);
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 0);
	assert_non_null(heap_lookup(h, 0xc000));
	assert_int_equal(rec_blocked(R), 0);
	assert_int_equal(heap_stats(h)->in_use_bytes, 6);
	stacks_delete(st);
	heap_delete(h);
	done(R);
}

/*
 * A lane's lost count is the target's to write: one that grows by no
 * more records than its head grew by 8 bytes is taken (its sum
 * returned), one that grows faster or shrinks breaks the recorder
 * (rec_drain -1, rec_why says which count), as a scribbled record does.
 */
static void expect_lost(uint64_t l0, uint64_t l1, int sane)
{
	struct recorder *R = setup2();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	uint64_t lost = 99;

	put_alloc_at(R, 1, 1000, 5, 0, 0xa000, 100, 0x1000, NULL, 0);	/* 56 bytes */
	rec_lane(R, 0)->lost = 3;	/* a lane with nothing reserved */
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), -1);
	assert_string_equal(rec_why(R), "a lane's count of lost records is not "
			    "one its producers can make");
	done(R);
	R = setup2();
	put_alloc_at(R, 1, 1000, 5, 0, 0xa000, 100, 0x1000, NULL, 0);
	rec_lane(R, 1)->lost = l0;
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 1);
	assert_int_equal(lost, l0);
	put_free_at(R, 1, 1001, 5, 0xa000);	/* 32 bytes more */
	rec_lane(R, 1)->lost = l1;
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), sane ? 1 : -1);
	if (sane) {
		assert_int_equal(lost, l1);
		assert_null(rec_why(R));
	} else {
		assert_string_equal(rec_why(R), "a lane's count of lost "
				    "records is not one its producers can make");
		assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 0);
	}
	stacks_delete(st);
	heap_delete(h);
	done(R);
}

static void test_lost_checked(void **state)
{
	(void)state;
	expect_lost(7, 7, 1);
	expect_lost(7, 11, 1);		/* 4 records of 8 bytes in 32 */
	expect_lost(7, 12, 0);
	expect_lost(0, 1, 1);
	expect_lost(7, 6, 0);		/* smaller */
	expect_lost(0, 0x6d8524f6a64c7010ull, 0);	/* scribble_attach's */
}

static void test_lost_head_scribbled(void **state)
{
	struct recorder *R = setup2();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	uint64_t lost;

	(void)state;
	put_alloc_at(R, 1, 1000, 5, 0, 0xa000, 100, 0x1000, NULL, 0);
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), 1);
	/* scribble_attach's seed 18 */
	rec_lane(R, 1)->lost = 0xbde9f8bf5a1e283ull;
	rec_lane(R, 1)->head = 0xbde9f8bf5a1e283ull * 8 + 56;
	assert_int_equal(rec_drain_quiet(R, h, NULL, st, &lost), -1);
	assert_int_equal(lost, 0);
	stacks_delete(st);
	heap_delete(h);
	done(R);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_memo),
		cmocka_unit_test(test_big_table),
		cmocka_unit_test(test_stackset_grows),
		cmocka_unit_test(test_lanes_made),
		cmocka_unit_test(test_fill_pace),
		cmocka_unit_test(test_lanes_order),
		cmocka_unit_test(test_freed_at_once),
		cmocka_unit_test(test_freed_at_once_split),
		cmocka_unit_test(test_amended),
		cmocka_unit_test(test_time_zero),
		cmocka_unit_test(test_lanes_bound),
		cmocka_unit_test(test_lost_checked),
		cmocka_unit_test(test_lost_head_scribbled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
