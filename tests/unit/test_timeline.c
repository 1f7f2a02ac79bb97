/* test_timeline.c - the bounded sample store. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/timeline.h"

static void offer(struct timeline *tl, uint64_t ms, int last)
{
	struct tl_sample s;

	memset(&s, 0, sizeof(s));
	s.ms = ms;
	s.heap_bytes = ms * 10;
	timeline_add(tl, &s, last);
}

/* 10,000 samples: at most TL_MAX kept, evenly spread from the first. */
static void test_thinned_evenly(void **state)
{
	struct timeline *tl = timeline_new();
	uint64_t ms;
	size_t i, n;

	(void)state;
	for (ms = 0; ms < 10000; ms++)
		offer(tl, ms, 0);
	n = timeline_count(tl);
	assert_int_equal(timeline_stride(tl), 4);
	/* 0, 4, ..., 9996 */
	assert_int_equal(n, 2500);
	for (i = 0; i < n; i++) {
		assert_int_equal(timeline_get(tl, i)->ms, 4 * i);
		assert_int_equal(timeline_get(tl, i)->heap_bytes, 40 * i);
	}
	assert_null(timeline_get(tl, n));
	/* the final report's sample is kept whatever the stride */
	offer(tl, 9999, 1);
	assert_int_equal(timeline_count(tl), 2501);
	assert_int_equal(timeline_get(tl, 2500)->ms, 9999);
	timeline_delete(tl);
}

/* Filled exactly, then one more: thinned to half, the new one kept. */
static void test_full(void **state)
{
	struct timeline *tl = timeline_new();
	uint64_t ms;

	(void)state;
	for (ms = 0; ms < TL_MAX; ms++)
		offer(tl, ms, 0);
	assert_int_equal(timeline_count(tl), TL_MAX);
	assert_int_equal(timeline_stride(tl), 1);
	offer(tl, TL_MAX, 0);
	assert_int_equal(timeline_count(tl), TL_MAX / 2 + 1);
	assert_int_equal(timeline_get(tl, TL_MAX / 2)->ms, TL_MAX);
	assert_int_equal(timeline_get(tl, TL_MAX / 2 - 1)->ms, TL_MAX - 2);
	offer(tl, TL_MAX + 1, 0);
	assert_int_equal(timeline_count(tl), TL_MAX / 2 + 1);
	timeline_reset(tl);
	assert_int_equal(timeline_count(tl), 0);
	assert_int_equal(timeline_stride(tl), 1);
	timeline_delete(tl);
}

static void test_peak(void **state)
{
	struct timeline *tl = timeline_new();
	uint32_t ids[TL_PEAK_TOP + 1];
	uint64_t bytes[TL_PEAK_TOP + 1];
	unsigned i;

	(void)state;
	for (i = 0; i <= TL_PEAK_TOP; i++) {
		ids[i] = i + 1;
		bytes[i] = 1000 - i;
	}
	assert_true(timeline_above_peak(tl, 1));
	timeline_set_peak(tl, 120, 5000, ids, bytes, TL_PEAK_TOP + 1);
	assert_false(timeline_above_peak(tl, 5000));
	assert_true(timeline_above_peak(tl, 5001));
	assert_int_equal(timeline_peak(tl)->n, TL_PEAK_TOP);
	assert_int_equal(timeline_peak(tl)->ms, 120);
	assert_int_equal(timeline_peak(tl)->stack[49], 50);
	assert_int_equal(timeline_peak(tl)->bytes[49], 951);
	timeline_delete(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thinned_evenly),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_peak),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
