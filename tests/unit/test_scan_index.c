/*
 * test_scan_index.c - the scan's lookup (scan_index.c, scan_lane.c):
 * which block a word points at or into, with each index (the regions'
 * keys, with the blocks' sizes or without, and the lanes' remembered
 * range; the single-level buckets; none), against a brute-force search,
 * exactly, on random layouts (with big blocks: two buckets a block;
 * small ones only: one per 8): adjacent blocks, 0-byte blocks, blocks
 * sharing an address, overlapping ones, blocks of 4 GiB or more, blocks
 * far apart (several regions), words at and around every block's ends
 * and the span's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/analysis/scan_priv.h"

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The scan's rule by brute force: the last block at or below W, and W
 * at its start, or inside it (not at glibc's next chunk header). */
static int64_t brute(const struct scan_block *b, size_t n, int glibc,
		     uint64_t w)
{
	size_t i, last = n;

	for (i = 0; i < n; i++)
		if (b[i].addr <= w)
			last = i;
	if (last == n)
		return -1;
	if (w == b[last].addr)
		return (int64_t)(last | HIT_START);
	if (w - b[last].addr < b[last].size &&
	    !(glibc && scan_glibc_next_header(b[last].size, w - b[last].addr)))
		return (int64_t)last;
	return -1;
}

/* A random layout of up to N blocks from BASE: mostly small and packed
 * (glibc chunks), some adjacent with no gap, 0 bytes, sharing an address,
 * overlapping, huge, or after a jump of a region or more; none past the
 * top of the space (the count placed). */
static int small_only;	/* blocks of 8-128 bytes (the index for small ones) */

static size_t layout(struct scan_block *b, size_t n, uint64_t *x, uint64_t base)
{
	uint64_t a = base, was = base;
	size_t i;

	memset(b, 0, n * sizeof(*b));
	for (i = 0; i < n; i++) {
		uint64_t r = rnd(x) % 100;

		if (a < was)	/* wrapped */
			return i;
		was = a;
		b[i].addr = a;
		if (small_only)
			r = r < 90 ? 0 : 70;	/* small, or 0 bytes */
		if (r < 50)
			b[i].size = 8 + rnd(x) % 120;
		else if (r < 65)
			b[i].size = 4000 + rnd(x) % 200;
		else if (r < 72)
			b[i].size = 0;
		else if (r < 74)
			b[i].size = (1ull << 32) + rnd(x) % 4096;	/* 4 GiB + */
		else
			b[i].size = 16 + rnd(x) % 48;
		r = rnd(x) % 100;
		if (r < 40)		/* adjacent */
			a += b[i].size;
		else if (r < 45)	/* the same address next */
			;
		else if (r < 48)	/* overlapping: inside this one */
			a += b[i].size / 2;
		else if (r < 50)	/* a region or more away */
			a += b[i].size + (rnd(x) % 3 + 1) * (1ull << 32) + rnd(x) % 4096;
		else			/* a glibc header, a gap */
			a += ((b[i].size + 15) & ~15ull) + 16 + (rnd(x) % 4) * 64;
		if (b[i].size > UINT64_MAX - b[i].addr)
			b[i].size = UINT64_MAX - b[i].addr;
		if (a > UINT64_MAX - 7)
			return i + 1;
		a = (a + 7) & ~7ull;
	}
	return n;
}

/* Words at and around every block's start and end, inside, between,
 * and around the span's ends, in runs (a lane's remembered range). */
static size_t words(const struct scan_block *b, size_t n, uint64_t *x,
		    uint64_t *w)
{
	size_t i, m = 0;
	int d;

	for (i = 0; i < n; i++) {
		uint64_t a = b[i].addr, e = a + b[i].size;

		for (d = -9; d <= 9; d++) {
			w[m++] = a + (uint64_t)(int64_t)d;
			w[m++] = e + (uint64_t)(int64_t)d;
		}
		w[m++] = a + (b[i].size ? rnd(x) % b[i].size : 0);
		w[m++] = a + (b[i].size ? rnd(x) % b[i].size : 0);
		w[m++] = rnd(x);
	}
	for (d = -20; d <= 20; d++) {
		w[m++] = b[0].addr + (uint64_t)(int64_t)d;
		w[m++] = b[n - 1].addr + b[n - 1].size + (uint64_t)(int64_t)d;
	}
	w[m++] = 0;
	w[m++] = UINT64_MAX;
	/* shuffled a little: runs into one block broken now and then */
	for (i = 0; i + 1 < m; i += 7) {
		size_t j = i + rnd(x) % (m - i);
		uint64_t t = w[i];

		w[i] = w[j];
		w[j] = t;
	}
	return m;
}

static void check_layout(size_t n, uint64_t seed, uint64_t base)
{
	struct scan_block *b = calloc(n, sizeof(*b));
	uint64_t *w = calloc(n * 64 + 128, sizeof(*w)), x = seed;
	int64_t *got = calloc(n * 64 + 128, sizeof(*got));
	struct scan_blocks set;
	size_t m, k;
	int glibc, kind;

	assert_non_null(b);
	assert_non_null(w);
	assert_non_null(got);
	n = layout(b, n, &x, base);
	m = words(b, n, &x, w);
	memset(&set, 0, sizeof(set));
	set.arr = b;
	set.n = n;
	for (glibc = 0; glibc < 2; glibc++)
		for (kind = 0; kind < 4; kind++) {
			assert_int_equal(scan_lookup_words(&set, glibc, kind, w, m, got), 0);
			for (k = 0; k < m; k++) {
				int64_t want = brute(b, n, glibc, w[k]);

				if (got[k] != want)
					fail_msg("seed %llu n %zu glibc %d index %d: word "
						 "%#llx: %lld, want %lld",
						 (unsigned long long)seed, n, glibc, kind,
						 (unsigned long long)w[k], (long long)got[k],
						 (long long)want);
			}
		}
	free(b);
	free(w);
	free(got);
}

static void test_random_layouts(void **state)
{
	static const size_t sizes[] = { 1, 2, 63, 64, 65, 200, 1000 };
	uint64_t seed;
	size_t i;

	(void)state;
	for (small_only = 0; small_only < 2; small_only++)
		for (seed = 1; seed <= 30; seed++)
			for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
				if (sizes[i] < 1000 || seed <= 3)
					check_layout(sizes[i], seed * 0x9e3779b97f4a7c15ull,
						     0x10000);
	small_only = 0;
}

/* The last region at the top of the address space (its end wraps). */
static void test_top_of_space(void **state)
{
	uint64_t seed;

	(void)state;
	for (seed = 1; seed <= 10; seed++)
		check_layout(300, seed * 0x2545f4914f6cdd1dull, UINT64_MAX - (3ull << 32));
}

/* Arenas: 4 KiB blocks back to back, words running through each block
 * (the remembered range hit again and again), then past its end. */
static void test_arenas(void **state)
{
	enum { N = 500, M = N * 520 };
	struct scan_block *b = calloc(N, sizeof(*b));
	uint64_t *w = calloc(M, sizeof(*w)), x = 7;
	int64_t *got = calloc(M, sizeof(*got));
	struct scan_blocks set;
	size_t i, m = 0, k;
	int kind;

	(void)state;
	assert_non_null(b);
	assert_non_null(w);
	assert_non_null(got);
	for (i = 0; i < N; i++) {
		b[i].addr = 0x5555000000ull + i * 4112;
		b[i].size = i % 10 == 9 ? 4112 : 4096;
	}
	for (i = 0; i < N; i++) {
		uint64_t t = b[rnd(&x) % N].addr;

		for (k = 0; k < 512; k++)
			w[m++] = t + (rnd(&x) % 4128);
		w[m++] = b[i].addr + b[i].size;
	}
	memset(&set, 0, sizeof(set));
	set.arr = b;
	set.n = N;
	for (kind = 2; kind < 4; kind++) {
		assert_int_equal(scan_lookup_words(&set, 1, kind, w, m, got), 0);
		for (k = 0; k < m; k++)
			assert_int_equal(got[k], brute(b, N, 1, w[k]));
	}
	free(b);
	free(w);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_layouts),
		cmocka_unit_test(test_top_of_space),
		cmocka_unit_test(test_arenas),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
