/* test_stacks.c - stack interning. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tables/stacks.h"

static void test_same_pcs_same_id(void **state)
{
	struct stacks *s = stacks_new();
	uint64_t a[] = { 0x401000, 0x401234, 0x7f0000001000 };
	uint64_t b[] = { 0x401000, 0x401234, 0x7f0000001000 };
	const uint64_t *got;
	uint32_t id;

	id = stacks_intern(s, a, 3);
	assert_int_equal(id, 1);
	assert_int_equal(stacks_intern(s, b, 3), id);
	assert_int_equal(stacks_intern(s, a, 3), id);
	assert_int_equal(stacks_count(s), 1);
	assert_int_equal(stacks_get(s, id, &got), 3);
	assert_memory_equal(got, a, sizeof(a));
	assert_true(got != a);
	stacks_delete(s);
}

static void test_different_length_different_id(void **state)
{
	struct stacks *s = stacks_new();
	uint64_t a[] = { 1, 2, 3, 0 };
	uint32_t id3, id2, id4, id1;
	const uint64_t *got;

	id3 = stacks_intern(s, a, 3);
	id2 = stacks_intern(s, a, 2);
	id4 = stacks_intern(s, a, 4);
	id1 = stacks_intern(s, a, 1);
	assert_int_equal(id3, 1);
	assert_int_equal(id2, 2);
	assert_int_equal(id4, 3);
	assert_int_equal(id1, 4);
	assert_int_equal(stacks_count(s), 4);
	assert_int_equal(stacks_get(s, id2, &got), 2);
	assert_memory_equal(got, a, 2 * sizeof(*a));
	assert_int_equal(stacks_get(s, id4, &got), 4);
	assert_memory_equal(got, a, 4 * sizeof(*a));
	assert_int_equal(stacks_intern(s, a, 3), id3);
	assert_int_equal(stacks_intern(s, a, 4), id4);
	stacks_delete(s);
}

static void test_order_matters(void **state)
{
	struct stacks *s = stacks_new();
	uint64_t a[] = { 10, 20 };
	uint64_t b[] = { 20, 10 };

	assert_int_equal(stacks_intern(s, a, 2), 1);
	assert_int_equal(stacks_intern(s, b, 2), 2);
	assert_int_equal(stacks_count(s), 2);
	stacks_delete(s);
}

static void test_empty_is_zero(void **state)
{
	struct stacks *s = stacks_new();
	uint64_t a[] = { 1 };
	const uint64_t *got = a;

	assert_int_equal(stacks_intern(s, NULL, 0), 0);
	assert_int_equal(stacks_intern(s, a, 0), 0);
	assert_int_equal(stacks_count(s), 0);
	assert_int_equal(stacks_get(s, 0, &got), 0);
	assert_int_equal(stacks_get(s, 1, &got), 0);
	assert_int_equal(stacks_intern(s, a, 1), 1);
	assert_int_equal(stacks_get(s, 0, &got), 0);
	assert_int_equal(stacks_get(s, 2, &got), 0);
	assert_int_equal(stacks_get(s, UINT32_MAX, &got), 0);
	stacks_delete(s);
}

#define NSTACKS 100000
#define MAXDEPTH 32

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* Stack I: depth 1..32, PCs close together like real code addresses and
 * sharing long common suffixes (the callers), made distinct by the
 * innermost frame and the depth. */
static unsigned make_stack(unsigned i, uint64_t *pcs)
{
	unsigned n = 1 + i % MAXDEPTH, k;

	pcs[0] = 0x555555554000ULL + i / MAXDEPTH;
	for (k = 1; k < n; k++)
		pcs[k] = 0x555555560000ULL + 16 * k;
	return n;
}

static void test_many_stacks(void **state)
{
	struct stacks *s = stacks_new();
	uint32_t *ids = malloc(NSTACKS * sizeof(*ids));
	uint64_t pcs[MAXDEPTH];
	const uint64_t *got;
	unsigned i, n;

	assert_non_null(ids);
	for (i = 0; i < NSTACKS; i++) {
		n = make_stack(i, pcs);
		ids[i] = stacks_intern(s, pcs, n);
		assert_int_equal(ids[i], i + 1);
	}
	assert_int_equal(stacks_count(s), NSTACKS);
	for (i = 0; i < NSTACKS; i++) {
		n = make_stack(i, pcs);
		assert_int_equal(stacks_get(s, ids[i], &got), n);
		assert_memory_equal(got, pcs, n * sizeof(*pcs));
	}
	/* Interning again, in a random order, gives the same ids. */
	for (i = 0; i < NSTACKS; i++) {
		unsigned j = (unsigned)(rnd() % NSTACKS);

		n = make_stack(j, pcs);
		assert_int_equal(stacks_intern(s, pcs, n), ids[j]);
	}
	assert_int_equal(stacks_count(s), NSTACKS);
	free(ids);
	stacks_delete(s);
}

static void test_random_pcs(void **state)
{
	struct stacks *s = stacks_new();
	uint64_t *all = malloc(NSTACKS * 8 * sizeof(*all));
	const uint64_t *got;
	unsigned i;

	assert_non_null(all);
	for (i = 0; i < NSTACKS * 8; i++)
		all[i] = rnd();
	for (i = 0; i < NSTACKS; i++)
		assert_int_equal(stacks_intern(s, all + 8 * i, 8), i + 1);
	for (i = 0; i < NSTACKS; i++) {
		assert_int_equal(stacks_get(s, i + 1, &got), 8);
		assert_memory_equal(got, all + 8 * i, 8 * sizeof(*all));
	}
	free(all);
	stacks_delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_pcs_same_id),
		cmocka_unit_test(test_different_length_different_id),
		cmocka_unit_test(test_order_matters),
		cmocka_unit_test(test_empty_is_zero),
		cmocka_unit_test(test_many_stacks),
		cmocka_unit_test(test_random_pcs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
