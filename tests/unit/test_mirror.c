/*
 * test_mirror.c - the blocks' memory read before a scan (mirror.c): what
 * it gives is the memory's bytes exactly, for any range inside a span;
 * nothing across mappings, past a short read, or past its cap; blocks
 * of MIRROR_MIN bytes or more held whole, near each other in one span,
 * far ones not, on one thread or two.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/analysis/mirror.h"

/* Memory [BASE, BASE + SIZE): two mappings split at MID; unreadable from
 * BAD on. */
#define BASE	0x100000ull
#define SIZE	0x400000ull
#define MID	(BASE + 0x200000)
#define NB	2000
#define PIECE_BYTES	(1u << 20)	/* mirror.c's pieces: several here */

struct mem {
	uint8_t *m;
	uint64_t bad;
	int reads;
};

static long mem_rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem *p = ctx;
	uint64_t end = p->bad < BASE + SIZE ? p->bad : BASE + SIZE;

	p->reads++;
	if (addr < BASE || addr >= end)
		return -1;
	if (len > end - addr)
		len = (size_t)(end - addr);
	memcpy(buf, p->m + (addr - BASE), len);
	return (long)len;
}

static uint64_t mem_end(void *ctx, uint64_t addr)
{
	(void)ctx;
	if (addr < BASE || addr >= BASE + SIZE)
		return 0;
	return addr < MID ? MID : BASE + SIZE;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Every range the mirror gives is the memory's. */
static void same_bytes(const struct mirror *mi, const struct mem *p,
		       uint64_t *x)
{
	int i;

	for (i = 0; i < 20000; i++) {
		uint64_t a = BASE - 64 + rnd(x) % (SIZE + 128);
		size_t len = 1 + rnd(x) % 9000;
		const uint8_t *c = mirror_at(mi, a, len);

		if (c) {
			assert_true(a >= BASE && a + len <= BASE + SIZE);
			assert_memory_equal(c, p->m + (a - BASE), len);
			assert_true(a + len <= p->bad);
			assert_true(a >= MID || a + len <= MID);
		}
	}
}

static void test_random_blocks(void **state)
{
	struct mem p = { NULL, UINT64_MAX, 0 };
	struct mirror_io io = { mem_rd, mem_end, &p, 2 };
	static struct scan_block b[NB];
	struct scan_blocks set;
	struct mirror mi;
	uint64_t x = 88172645463325252ull, a = BASE + 16;
	size_t i, n = 0, got = 0;

	(void)state;
	p.m = malloc(SIZE);
	assert_non_null(p.m);
	for (i = 0; i < SIZE; i++)
		p.m[i] = (uint8_t)rnd(&x);
	memset(b, 0, sizeof(b));
	while (n < NB && a < BASE + SIZE - 9000) {
		b[n].addr = a;
		b[n].size = rnd(&x) % 5 == 0 ? rnd(&x) % 1000 : 1024 + rnd(&x) % 2000;
		a += b[n].size + (rnd(&x) % 4 == 0 ? 4096 + rnd(&x) % 8192 : 16);
		n++;
	}
	memset(&set, 0, sizeof(set));
	set.arr = b;
	set.n = n;
	mirror_build(&mi, &set, &io, 1ull << 30);
	assert_true(mi.n > 1 && mi.n < n);
	/* every block with bytes held whole */
	for (i = 0; i < n; i++) {
		uint64_t e = b[i].addr + b[i].size;

		if (b[i].size < MIRROR_MIN || b[i].size > MIRROR_MAX)
			continue;
		if (b[i].addr < MID && e > MID)
			e = MID;
		if (mirror_at(&mi, b[i].addr, (size_t)(e - b[i].addr)))
			got++;
		else
			fail_msg("block %zu not held", i);
	}
	same_bytes(&mi, &p, &x);
	mirror_free(&mi);

	/* unreadable past BAD: nothing from there, one thread or two */
	p.bad = BASE + SIZE / 3;
	for (io.threads = 1; io.threads <= 2; io.threads++) {
		mirror_build(&mi, &set, &io, 1ull << 30);
		same_bytes(&mi, &p, &x);
		assert_null(mirror_at(&mi, p.bad, 8));
		assert_true(mi.bytes > PIECE_BYTES);
		mirror_free(&mi);
	}

	/* a cap: the first spans only, their room within it */
	p.bad = UINT64_MAX;
	mirror_build(&mi, &set, &io, 64 << 10);
	assert_true(mi.bytes <= 64 << 10);
	assert_true(mi.n > 0);
	same_bytes(&mi, &p, &x);
	assert_null(mirror_at(&mi, b[n - 1].addr, 1));
	mirror_free(&mi);

	/* cap 0: none, and no read */
	p.reads = 0;
	mirror_build(&mi, &set, &io, 0);
	assert_int_equal(mi.n, 0);
	assert_int_equal(p.reads, 0);
	assert_null(mirror_at(&mi, b[0].addr, 1));
	mirror_free(&mi);
	free(p.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_blocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
