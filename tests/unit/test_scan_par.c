/*
 * test_scan_par.c - the scan in batches on one thread and on two
 * (scan_input.threads 1, 2 and SCAN_THREADS_SPLIT, where the second
 * thread surely reads every other job), on heaps big enough for batches
 * of several jobs: the same classes and indirect bytes, exact, and the
 * same bytes read, with the small blocks read ahead (all, some, none:
 * scan_input.preread); the blocks' order (scan_sort_blocks) by the merge of
 * ascending runs, by the two-pass radix sort of narrowed keys and by the
 * radix sort of whole keys.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/scan.h"
#include "scan_fake.h"

#define BASE	0x10000ULL
#define ROOT	0x10000ULL
#define HEAP	0x20000ULL

static const int modes[] = { 1, 2, SCAN_THREADS_SPLIT };

/*
 * A heap of every shape, its blocks in address order from HEAP:
 *  ARR     an array of NA pointers, rooted: to SMALL[i] (i % 4 != 3),
 *          into SMALL[i] + 8 (i % 4 == 3: possibly lost);
 *  SMALL   NA blocks of 64 bytes; SMALL[i] (i % 4 == 3) points to
 *          LOSTP[i / 4] (possibly lost: from a possibly lost block),
 *          SMALL[i] (i % 4 == 0) into SMALL[i + 1] + 16;
 *  LOSTP   NA / 4 blocks of 32 bytes;
 *  BIG     600 KiB, rooted, cut in 128 KiB pieces: the last word of the
 *          first piece -> B1, the first of the second -> B2, into B3
 *          (possibly lost) in the third;
 *  B1..B3  64 bytes each;
 *  CH      NC blocks of 256 bytes, a rooted chain going up;
 *  CYC     a lost cycle of 4 blocks of 128 bytes;
 *  LIST    NL blocks of 64 bytes, each pointing to the one below (lost);
 *  LA      a lost array of NS pointers to LS;
 *  LS      NS blocks of 32 bytes (indirectly lost through LA).
 * The stack holds n / 16 + 4096 positions: ARR's and LA's pointers
 * spill (phases 1 and 2).
 */
enum { NA = 40000, NC = 3000, NL = 100, NS = 30000 };
#define BIG_SIZE	(600u << 10)
#define PIECE		(128u << 10)

struct layout {
	size_t arr, small, lostp, big, b1, ch, cyc, list, la, ls, n;
};

static uint64_t place(struct scan_block *b, size_t *n, uint64_t *a,
		      uint64_t size)
{
	b[*n].addr = *a;
	b[*n].size = size;
	(*n)++;
	*a += (size + 15) / 16 * 16 + 16;
	return b[*n - 1].addr;
}

static struct fake *build(struct scan_block *b, struct layout *l)
{
	uint64_t a = HEAP, arr, big;
	struct fake *f;
	size_t n = 0, i;

	l->arr = n;
	arr = place(b, &n, &a, 8ull * NA);
	l->small = n;
	for (i = 0; i < NA; i++)
		place(b, &n, &a, 64);
	l->lostp = n;
	for (i = 0; i < NA / 4; i++)
		place(b, &n, &a, 32);
	l->big = n;
	big = place(b, &n, &a, BIG_SIZE);
	l->b1 = n;
	for (i = 0; i < 3; i++)
		place(b, &n, &a, 64);
	l->ch = n;
	for (i = 0; i < NC; i++)
		place(b, &n, &a, 256);
	l->cyc = n;
	for (i = 0; i < 4; i++)
		place(b, &n, &a, 128);
	l->list = n;
	for (i = 0; i < NL; i++)
		place(b, &n, &a, 64);
	l->la = n;
	place(b, &n, &a, 8ull * NS);
	l->ls = n;
	for (i = 0; i < NS; i++)
		place(b, &n, &a, 32);
	l->n = n;

	f = fake_new(BASE, (size_t)(a - BASE));
	put(f, ROOT, arr);
	put(f, ROOT + 8, big);
	put(f, ROOT + 16, b[l->ch].addr);
	for (i = 0; i < NA; i++) {
		uint64_t s = b[l->small + i].addr;

		put(f, arr + 8 * i, i % 4 == 3 ? s + 8 : s);
		if (i % 4 == 3)
			put(f, s + 8, b[l->lostp + i / 4].addr);
		else if (i % 4 == 0)
			put(f, s, b[l->small + i + 1].addr + 16);
	}
	put(f, big + PIECE - 8, b[l->b1].addr);
	put(f, big + PIECE, b[l->b1 + 1].addr);
	put(f, big + 2 * PIECE + 16, b[l->b1 + 2].addr + 24);
	for (i = 0; i + 1 < NC; i++)
		put(f, b[l->ch + i].addr + 128, b[l->ch + i + 1].addr);
	for (i = 0; i < 4; i++)
		put(f, b[l->cyc + i].addr, b[l->cyc + (i + 1) % 4].addr);
	for (i = 1; i < NL; i++)
		put(f, b[l->list + i].addr + 8, b[l->list + i - 1].addr);
	for (i = 0; i < NS; i++) {
		put(f, b[l->la].addr + 8 * i, b[l->ls + i].addr);
		put(f, b[l->ls + i].addr, 0x1234);	/* not a pointer */
	}
	return f;
}

static void want(const struct scan_block *b, size_t i, enum scan_class c,
		 uint64_t ind)
{
	if (b[i].cls != c || b[i].indirect != ind)
		fail_msg("block %zu: class %d indirect %llu, want %d %llu", i,
			 (int)b[i].cls, (unsigned long long)b[i].indirect, (int)c,
			 (unsigned long long)ind);
}

static void check(const struct scan_block *b, const struct layout *l)
{
	size_t i;

	want(b, l->arr, SCAN_STILL_REACHABLE, 0);
	for (i = 0; i < NA; i++)
		want(b, l->small + i, i % 4 == 3 ? SCAN_POSSIBLY_LOST :
		     SCAN_STILL_REACHABLE, 0);
	for (i = 0; i < NA / 4; i++)
		want(b, l->lostp + i, SCAN_POSSIBLY_LOST, 0);
	want(b, l->big, SCAN_STILL_REACHABLE, 0);
	want(b, l->b1, SCAN_STILL_REACHABLE, 0);
	want(b, l->b1 + 1, SCAN_STILL_REACHABLE, 0);
	want(b, l->b1 + 2, SCAN_POSSIBLY_LOST, 0);
	for (i = 0; i < NC; i++)
		want(b, l->ch + i, SCAN_STILL_REACHABLE, 0);
	want(b, l->cyc, SCAN_DEFINITELY_LOST, 3 * 128);
	for (i = 1; i < 4; i++)
		want(b, l->cyc + i, SCAN_INDIRECTLY_LOST, 0);
	for (i = 0; i + 1 < NL; i++)
		want(b, l->list + i, SCAN_INDIRECTLY_LOST, 0);
	want(b, l->list + NL - 1, SCAN_DEFINITELY_LOST, (NL - 1) * 64ull);
	want(b, l->la, SCAN_DEFINITELY_LOST, 32ull * NS);
	for (i = 0; i < NS; i++)
		want(b, l->ls + i, SCAN_INDIRECTLY_LOST, 0);
}

/*
 * PRE: the blocks read ahead (scan_input.preread), of 8 bytes to 32 KiB
 * here (every small block of the heaps): 0 none, 1 all (64 MiB of
 * hits), 2 the first 5461 (a cap of 256 KiB: a block of SMALL takes
 * 48 bytes at worst, 16 and 4 a word; the rest read as they come).
 */
static int pre;
#define NPRE	3

/* Classify B (N blocks) over F with THREADS, reading F through two
 * contexts (the worker's counts its reads apart). */
static void run(struct fake *f, struct scan_block *b, size_t n,
		const struct scan_range *roots, size_t nroots, int threads,
		struct scan_stats *st)
{
	struct fake worker = *f;
	struct scan_input in;
	size_t i;

	worker.nreads = 0;
	for (i = 0; i < n; i++) {
		b[i].cls = (enum scan_class)-1;
		b[i].indirect = 777;
	}
	memset(&in, 0, sizeof(in));
	in.blocks = b;
	in.nblocks = n;
	in.roots = roots;
	in.nroots = nroots;
	in.read = fake_read;
	in.preread = pre == 1 ? 64u << 20 : pre == 2 ? 256u << 10 : 0;
	in.preread_min = pre ? 8 : 0;
	in.ctx = f;
	in.threads = threads;
	in.ctx_worker = &worker;
	assert_int_equal(scan_classify(&in, st), 0);
	if (threads == SCAN_THREADS_SPLIT)
		assert_true(worker.nreads > 0 && st->worker_bytes > 0);
	if (threads == 1)
		assert_int_equal(worker.nreads, 0);
}

static void test_threads_same_classes(void **state)
{
	struct scan_range root = { ROOT, ROOT + 24, 0 };
	struct scan_block *b = calloc(2 * NA + NC + NS + 200, sizeof(*b));
	struct scan_stats st;
	uint64_t bytes = 0;
	struct layout l;
	struct fake *f;
	size_t m;

	(void)state;
	assert_non_null(b);
	f = build(b, &l);
	for (pre = 0; pre < NPRE; pre++)
		for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
			run(f, b, l.n, &root, 1, modes[m], &st);
			check(b, &l);
			if (m == 0 && !pre)
				bytes = st.bytes_scanned;
			assert_int_equal(st.bytes_scanned, bytes);
			/* all but ARR, BIG and LA; the first 5461 of SMALL */
			assert_int_equal(st.preread_blocks, pre == 1 ? l.n - 3 :
					 pre == 2 ? (256u << 10) / 48 : 0);
			assert_int_equal(st.unreadable_bytes, 0);
		}
	pre = 0;
	fake_free(f);
	free(b);
}

/*
 * A root range of 2 MiB read in 16 pieces (two batches), unreadable
 * from 300 KiB on for 8 KiB (readable again after): as ever, the rest of
 * the range is unreadable, the pieces after the hole are not looked at
 * (a pointer there to X leaves X lost), on one thread or two.
 */
static void test_threads_unreadable_root(void **state)
{
	uint64_t rs = BASE, re = BASE + (2u << 20), heap = re;
	struct scan_range roots[2] = { { rs, re, 0 }, { heap + 0x1000, heap + 0x1008, 0 } };
	struct scan_block b[3];
	struct scan_stats st;
	struct fake *f;
	size_t m;

	(void)state;
	f = fake_new(BASE, (2u << 20) + 0x2000);
	memset(b, 0, sizeof(b));
	b[0].addr = heap;
	b[0].size = 64;
	b[1].addr = heap + 0x100;
	b[1].size = 64;
	b[2].addr = heap + 0x200;
	b[2].size = 64;
	put(f, rs + 0x100, b[0].addr);		/* before the hole */
	put(f, rs + (1500u << 10), b[1].addr);	/* after it */
	put(f, heap + 0x1000, b[2].addr);	/* the second root */
	f->bad_lo = rs + (300u << 10);
	f->bad_hi = f->bad_lo + 0x2000;
	for (m = 0; m < NPRE * sizeof(modes) / sizeof(modes[0]); m++) {
		pre = (int)(m / (sizeof(modes) / sizeof(modes[0])));
		run(f, b, 3, roots, 2, modes[m % (sizeof(modes) / sizeof(modes[0]))], &st);
		want(b, 0, SCAN_STILL_REACHABLE, 0);
		want(b, 1, SCAN_DEFINITELY_LOST, 0);
		want(b, 2, SCAN_STILL_REACHABLE, 0);
		assert_int_equal(st.unreadable_bytes, re - f->bad_lo);
		/* the root before the hole, the second, the blocks (X in
		 * phase 2) */
		assert_int_equal(st.bytes_scanned, (300u << 10) + 8 + 3 * 64);
	}
	pre = 0;
	fake_free(f);
}

/*
 * Blocks read as one span (small, close, popped in a row), one of them
 * unreadable: the span comes short there and the blocks after it are
 * read one by one: a pointer from the unreadable block is not seen (Y
 * lost), one from a block after it is (X reachable).
 */
static void test_threads_span_short(void **state)
{
	enum { NB = 200 };
	uint64_t arr = HEAP, b0 = HEAP + 0x1000, x, y;
	struct scan_range root = { ROOT, ROOT + 8, 0 };
	struct scan_block b[NB + 3];
	struct scan_stats st;
	struct fake *f;
	size_t i, m;

	(void)state;
	f = fake_new(BASE, 0x20000);
	memset(b, 0, sizeof(b));
	b[0].addr = arr;
	b[0].size = 8 * NB;
	for (i = 0; i < NB; i++) {
		b[1 + i].addr = b0 + 48 * i;
		b[1 + i].size = 32;
		put(f, arr + 8 * i, b[1 + i].addr);
	}
	x = b[NB + 1].addr = b0 + 48 * NB + 64;
	y = b[NB + 2].addr = x + 64;
	b[NB + 1].size = b[NB + 2].size = 32;
	put(f, ROOT, arr);
	put(f, b[1 + 100].addr, y);	/* unreadable */
	put(f, b[1 + 150].addr + 8, x);
	f->bad_lo = b[1 + 100].addr;
	f->bad_hi = f->bad_lo + 32;
	for (m = 0; m < NPRE * sizeof(modes) / sizeof(modes[0]); m++) {
		int t = modes[m % (sizeof(modes) / sizeof(modes[0]))];

		/* read ahead or not, the unreadable block alike */
		pre = (int)(m / (sizeof(modes) / sizeof(modes[0])));
		/* one job a batch: the split mode's worker would have none */
		run(f, b, NB + 3, &root, 1, t == SCAN_THREADS_SPLIT ? 2 : t, &st);
		for (i = 0; i <= NB; i++)
			want(b, i, SCAN_STILL_REACHABLE, 0);
		want(b, NB + 1, SCAN_STILL_REACHABLE, 0);
		want(b, NB + 2, SCAN_DEFINITELY_LOST, 0);
		/* the root, the array, the blocks but the unreadable one, X, Y */
		assert_int_equal(st.bytes_scanned, 8 + 8 * NB + 32 * (NB - 1) + 64);
	}
	pre = 0;
	fake_free(f);
}

/* scan_sort_blocks: stable, as qsort by (address, original position). */
static int cmp_ref(const void *x, const void *y)
{
	const struct scan_block *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->size < b->size ? -1 : a->size > b->size;
}

static void sort_check(struct scan_block *b, size_t n)
{
	struct scan_block *ref = malloc(n * sizeof(*ref));
	size_t i;

	assert_non_null(ref);
	for (i = 0; i < n; i++) {
		b[i].size = i;	/* the original position */
		b[i].born = ~(uint64_t)i * 3;
	}
	memcpy(ref, b, n * sizeof(*b));
	qsort(ref, n, sizeof(*ref), cmp_ref);
	scan_sort_blocks(b, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(b[i].addr, ref[i].addr);
		assert_int_equal(b[i].size, ref[i].size);
		assert_int_equal(b[i].born, ref[i].born);
	}
	free(ref);
}

/* Addresses using every bit (more regions than are ranked: the radix
 * sort of whole keys), some equal. */
static void test_sort_blocks(void **state)
{
	enum { N = 20000 };
	struct scan_block *b = calloc(N, sizeof(*b));
	uint64_t x = 0x243f6a8885a308d3ULL;
	size_t i;

	(void)state;
	assert_non_null(b);
	for (i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i].addr = i % 7 == 0 ? 0x7f0000001000ULL : (i % 3 ? x >> 17 : x);
	}
	sort_check(b, N);
	free(b);
}

static void test_sort_runs_and_narrow(void **state)
{
	enum { N = 50000 };
	static const uint64_t region[3] = {
		0x555555550000ull, 0x7f0000000000ull, 0x7f0100000000ull
	};
	struct scan_block *b = calloc(N, sizeof(*b));
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t i, r;

	(void)state;
	assert_non_null(b);
	/* R ascending runs (merged up to 8, else the radix sort) in three
	 * regions, equal addresses in a run and across runs (stability) */
	for (r = 1; r <= 9; r++) {
		for (i = 0; i < N; i++) {
			size_t q = i * r / N, j = i - (q * N + r - 1) / r;

			b[i].addr = region[(q + 1) % 3] + 16 * (j / 2);
		}
		sort_check(b, N);
	}
	/* shuffled in three regions: 16-byte aligned (narrowed), and
	 * 8-byte aligned */
	for (r = 0; r < 2; r++) {
		for (i = 0; i < N; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			b[i].addr = region[x % 3] + ((x >> 8) % 0xfffffff0ull & ~(r ? 7ull : 15ull));
			if (i % 11 == 0 && i)
				b[i].addr = b[i - 1].addr;
		}
		sort_check(b, N);
	}
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_same_classes),
		cmocka_unit_test(test_threads_unreadable_root),
		cmocka_unit_test(test_threads_span_short),
		cmocka_unit_test(test_sort_blocks),
		cmocka_unit_test(test_sort_runs_and_narrow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
