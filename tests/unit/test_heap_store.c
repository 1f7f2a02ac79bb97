/*
 * test_heap_store.c - the live-block table's storage (src/tables/
 * heap_store.h): the index's slots exactly where linear probing puts
 * them, removals in every position of a cluster, the moved last entry
 * found again, doubling from the slots, distances past DMAX, growth
 * across entry chunks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/tables/heap_store.h"

/* hash64's inverse: addresses with a chosen hash (home and tag) */
static uint64_t inv_mul(uint64_t c)
{
	uint64_t x = c;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - c * x;
	return x;
}

static uint64_t unhash(uint64_t h)
{
	h ^= h >> 33;
	h *= inv_mul(0xc4ceb9fe1a85ec53ULL);
	h ^= h >> 33;
	h *= inv_mul(0xff51afd7ed558ccdULL);
	h ^= h >> 33;
	return h;
}

/* An address whose home is HOME and tag TAG in an index of 2^CBITS
 * slots with TBITS tag bits; LOW the hash's bits below. */
static uint64_t addr_at(unsigned cbits, unsigned tbits, uint64_t home,
			uint64_t tag, uint64_t low)
{
	uint64_t h = home << (64 - cbits) | tag << (64 - cbits - tbits) | low;

	return unhash(h);
}

static void add(struct heap_store *s, uint64_t addr)
{
	size_t i;

	hs_reserve(s, 1);
	i = hs_find(s, addr);
	assert_int_equal(hs_at(s, i), 0);
	hs_add(s, i, addr)->size = 1;
}

static void del(struct heap_store *s, uint64_t addr)
{
	size_t i = hs_find(s, addr);

	assert_int_not_equal(hs_at(s, i), 0);
	hs_remove(s, i);
}

static void test_layout(void **state)
{
	struct heap_store s;

	(void)state;
	assert_int_equal(unhash(hash64(0x5555deadbee0ULL)), 0x5555deadbee0ULL);
	hs_init(&s);
	assert_int_equal(s.cap, 1024);
	assert_int_equal(s.ibits, 10);
	assert_int_equal(s.dbits, 6);
	assert_int_equal(s.tbits, 16);
	assert_int_equal(s.imask, 1023);
	assert_int_equal(s.dmax, 63);
	/* one entry at home 7, tag 0x1234: index 1, distance 0 */
	add(&s, addr_at(10, 16, 7, 0x1234, 99));
	assert_int_equal(s.slot[7], 1 | 0 << 10 | 0x1234u << 16);
	assert_int_equal(hs_find(&s, addr_at(10, 16, 7, 0x1234, 99)), 7);
	/* same home and tag, other low bits: read, not it, next slot */
	assert_int_equal(hs_find(&s, addr_at(10, 16, 7, 0x1234, 98)), 8);
	add(&s, addr_at(10, 16, 7, 0x1234, 98));
	assert_int_equal(s.slot[8], 2 | 1 << 10 | 0x1234u << 16);
	assert_int_equal(hs_check(&s), 0);
	hs_free(&s);
}

/*
 * Five entries at home 100 (slots 100-104), one at home 102 (slot 105),
 * one at home 106 (slot 106): each removed in turn from a fresh table.
 */
#define NCL 7
static const uint64_t cl_home[NCL] = { 100, 100, 100, 100, 100, 102, 106 };

static void cluster(struct heap_store *s, uint64_t *a)
{
	size_t i;

	hs_init(s);
	for (i = 0; i < NCL; i++) {
		a[i] = addr_at(10, 16, cl_home[i], 0x100 + i, i);
		add(s, a[i]);
	}
	for (i = 0; i < NCL; i++)
		assert_int_equal(s->slot[100 + i] & s->imask, i + 1);
	assert_int_equal(s->slot[105] >> 10 & 63, 3);
	assert_int_equal(s->slot[106] >> 10 & 63, 0);
	assert_int_equal(hs_check(s), 0);
}

static void test_remove_every_position(void **state)
{
	/* the slots 100-106 after removing entry R: entry index + 1
	 * (after the last entry moved into R's), 0 empty */
	static const uint32_t want[NCL][NCL] = {
		{ 2, 3, 4, 5, 6, 0, 1 },	/* 7 moved to 0 */
		{ 1, 3, 4, 5, 6, 0, 2 },
		{ 1, 2, 4, 5, 6, 0, 3 },
		{ 1, 2, 3, 5, 6, 0, 4 },
		{ 1, 2, 3, 4, 6, 0, 5 },
		{ 1, 2, 3, 4, 5, 0, 6 },	/* 7 moved to 5 */
		{ 1, 2, 3, 4, 5, 6, 0 },	/* the last: nothing moved */
	};
	/* the distances left in slots 100-105 (105 empty in the first
	 * five: home 102's entry moved back to 104) */
	static const uint32_t dist[NCL][NCL - 1] = {
		{ 0, 1, 2, 3, 2, 0 },
		{ 0, 1, 2, 3, 2, 0 },
		{ 0, 1, 2, 3, 2, 0 },
		{ 0, 1, 2, 3, 2, 0 },
		{ 0, 1, 2, 3, 2, 0 },
		{ 0, 1, 2, 3, 4, 0 },
		{ 0, 1, 2, 3, 4, 3 },
	};
	struct heap_store s;
	uint64_t a[NCL];
	size_t r, i;

	(void)state;
	for (r = 0; r < NCL; r++) {
		cluster(&s, a);
		del(&s, a[r]);
		assert_int_equal(s.n, NCL - 1);
		for (i = 0; i < NCL; i++)
			assert_int_equal(s.slot[100 + i] & s.imask, want[r][i]);
		for (i = 0; i < NCL - 1; i++)
			if (s.slot[100 + i])
				assert_int_equal(s.slot[100 + i] >> 10 & 63,
						 dist[r][i]);
		/* the moved entry is found again, at its new index */
		if (r != NCL - 1) {
			assert_int_equal(hs_entry(&s, r)->addr, a[NCL - 1]);
			assert_int_equal(hs_at(&s, hs_find(&s, a[NCL - 1])), r + 1);
		}
		for (i = 0; i < NCL; i++)
			assert_int_equal(!hs_at(&s, hs_find(&s, a[i])), i == r);
		assert_int_equal(hs_check(&s), 0);
		hs_free(&s);
	}
}

/* A cluster across the end of the index: homes 1022, 1022, 1023, 1022
 * fill 1022, 1023, 0, 1; removing the first shifts the rest back. */
static void test_wrap(void **state)
{
	static const uint64_t home[4] = { 1022, 1022, 1023, 1022 };
	struct heap_store s;
	uint64_t a[4];
	size_t i;

	(void)state;
	hs_init(&s);
	for (i = 0; i < 4; i++) {
		a[i] = addr_at(10, 16, home[i], 7 + i, 0);
		add(&s, a[i]);
	}
	assert_int_equal(s.slot[0] & 1023, 3);
	assert_int_equal(s.slot[0] >> 10 & 63, 1);
	assert_int_equal(s.slot[1] & 1023, 4);
	assert_int_equal(s.slot[1] >> 10 & 63, 3);
	del(&s, a[0]);		/* entry 4 moves to index 0 */
	assert_int_equal(s.slot[1022] & 1023, 2);
	assert_int_equal(s.slot[1023] & 1023, 3);
	assert_int_equal(s.slot[1023] >> 10 & 63, 0);
	assert_int_equal(s.slot[0] & 1023, 1);
	assert_int_equal(s.slot[0] >> 10 & 63, 2);
	assert_int_equal(s.slot[1], 0);
	assert_int_equal(hs_entry(&s, 0)->addr, a[3]);
	assert_int_equal(hs_check(&s), 0);
	hs_free(&s);
}

/* 70 entries at one home: distances from 63 on are read from the
 * entries; removals from the front shift them all back. */
static void test_long_cluster(void **state)
{
	struct heap_store s;
	uint64_t a[70];
	size_t i;

	(void)state;
	hs_init(&s);
	for (i = 0; i < 70; i++) {
		a[i] = addr_at(10, 16, 500, 0xabcd, i);	/* one tag too */
		add(&s, a[i]);
	}
	assert_int_equal(s.slot[500 + 62] >> 10 & 63, 62);
	assert_int_equal(s.slot[500 + 63] >> 10 & 63, 63);
	assert_int_equal(s.slot[500 + 69] >> 10 & 63, 63);
	for (i = 0; i < 70; i++)
		assert_int_equal(hs_at(&s, hs_find(&s, a[i])) != 0, 1);
	assert_int_equal(hs_check(&s), 0);
	del(&s, a[0]);
	del(&s, a[1]);
	assert_int_equal(s.slot[500 + 61] >> 10 & 63, 61);
	assert_int_equal(s.slot[500 + 62] >> 10 & 63, 62);
	assert_int_equal(s.slot[500 + 63] >> 10 & 63, 63);
	assert_int_equal(s.slot[500 + 67] >> 10 & 63, 63);
	assert_int_equal(s.slot[500 + 68], 0);
	assert_int_equal(hs_check(&s), 0);
	/* doubled: a distance of 63 goes through the entry */
	hs_reserve(&s, 1000);
	assert_int_equal(s.cap, 2048);
	assert_int_equal(hs_check(&s), 0);
	for (i = 2; i < 70; i++)
		del(&s, a[i]);
	assert_int_equal(s.n, 0);
	assert_int_equal(hs_check(&s), 0);
	hs_free(&s);
}

/* Doubling from the slots: the home's new bit is the tag's top bit. */
static void test_double(void **state)
{
	struct heap_store s;
	uint64_t a[4];
	size_t i;

	(void)state;
	hs_init(&s);
	/* homes 3 and 3 with tag top bits 0 and 1, home 4 (distance 0),
	 * home 3 tag top bit 1 at distance 3 */
	a[0] = addr_at(10, 16, 3, 0x0001, 0);
	a[1] = addr_at(10, 16, 3, 0x8001, 0);
	a[2] = addr_at(10, 16, 4, 0x8002, 0);
	a[3] = addr_at(10, 16, 3, 0xc003, 0);
	for (i = 0; i < 4; i++)
		add(&s, a[i]);
	assert_int_equal(s.slot[5] & 1023, 3);
	assert_int_equal(s.slot[6] & 1023, 4);
	hs_reserve(&s, 768);	/* 772 > 768: 2048 slots */
	assert_int_equal(s.cap, 2048);
	assert_int_equal(s.ibits, 11);
	assert_int_equal(s.tbits, 15);
	/* homes 6, 7, 9, 7: slots 6, 7, 9, 8 */
	assert_int_equal(s.slot[6], 1 | 0u << 11 | 0x0001u << 17);
	assert_int_equal(s.slot[7], 2 | 0u << 11 | 0x0001u << 17);
	assert_int_equal(s.slot[8], 4 | 1u << 11 | 0x4003u << 17);
	assert_int_equal(s.slot[9], 3 | 0u << 11 | 0x0002u << 17);
	assert_int_equal(hs_check(&s), 0);
	hs_free(&s);
}

/* 200,000 entries in 4 chunks, the index doubled 9 times, then
 * removed in a scattered order, each removal checked at intervals. */
static void test_growth_chunks(void **state)
{
	struct heap_store s;
	size_t i, n = 200000, k;

	(void)state;
	hs_init(&s);
	for (i = 0; i < n; i++) {
		add(&s, 0x555555550000ULL + 48 * i);
		if (i == 1000 || i == 70000)
			assert_int_equal(hs_check(&s), 0);
	}
	assert_int_equal(s.nchunks, 4);
	assert_int_equal(s.cap, 1u << 19);
	assert_int_equal(hs_check(&s), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(hs_entry(&s, hs_at(&s, hs_find(&s,
				 0x555555550000ULL + 48 * i)) - 1)->addr,
				 0x555555550000ULL + 48 * i);
	/* 7919 is prime to n: every address once */
	for (i = 0, k = 0; i < n; i++, k = (k + 7919) % n) {
		del(&s, 0x555555550000ULL + 48 * k);
		if (i % 49999 == 0)
			assert_int_equal(hs_check(&s), 0);
	}
	assert_int_equal(s.n, 0);
	for (i = 0; i < s.cap; i++)
		assert_int_equal(s.slot[i], 0);
	hs_free(&s);
}

/* The drain's hints: the entry behind a slot among the first four
 * probed, the home slot of the entry a removal moves. */
static void test_hints(void **state)
{
	struct heap_store s;
	uint64_t a[6];
	size_t i;

	(void)state;
	hs_init(&s);
	for (i = 0; i < 6; i++) {
		a[i] = addr_at(10, 16, 40, 0x10 + i, 0);	/* slots 40-45 */
		add(&s, a[i]);
	}
	for (i = 0; i < 4; i++)
		assert_ptr_equal(hs_entry_hint(&s, a[i]), hs_entry(&s, i));
	assert_null(hs_entry_hint(&s, a[4]));		/* fifth probed */
	assert_null(hs_entry_hint(&s, addr_at(10, 16, 40, 0x99, 0)));
	assert_null(hs_entry_hint(&s, addr_at(10, 16, 41, 0x10, 0)));
	/* same home and tag, other low bits: the hint is the other's */
	assert_ptr_equal(hs_entry_hint(&s, addr_at(10, 16, 40, 0x10, 1)),
			 hs_entry(&s, 0));
	assert_ptr_equal(hs_moved_slot(&s, 0), &s.slot[40]);
	assert_ptr_equal(hs_moved_slot(&s, 5), &s.slot[40]);
	assert_null(hs_moved_slot(&s, 6));
	add(&s, addr_at(10, 16, 900, 1, 0));
	assert_ptr_equal(hs_moved_slot(&s, 0), &s.slot[900]);
	assert_ptr_equal(hs_moved_slot(&s, 1), &s.slot[40]);
	hs_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_remove_every_position),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_long_cluster),
		cmocka_unit_test(test_double),
		cmocka_unit_test(test_growth_chunks),
		cmocka_unit_test(test_hints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
