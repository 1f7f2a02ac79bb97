/*
 * test_report_digest.c - the pieces of PTLEAK_DEBUG=snapshot-check and of the
 * snapshot's shared-mapping test: scan_blocks_find (the scan's pointer
 * test, alone) and report_digest (records kept, two reports compared).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/scan.h"
#include "output/report_digest.h"

static void test_find(void **state)
{
	/* 24 bytes at 0x1000 (glibc chunk 32: the next header at +16), 40
	 * at 0x1020, 0 at 0x2000 */
	struct scan_block arr[3] = {
		{ .addr = 0x1000, .size = 24 }, { .addr = 0x1020, .size = 40 },
		{ .addr = 0x2000, .size = 0 },
	};
	struct scan_blocks b = { .arr = arr, .n = 3 };

	(void)state;
	assert_int_equal(scan_blocks_find(&b, 0xfff, 0), -1);
	assert_int_equal(scan_blocks_find(&b, 0x1000, 0), 0);
	assert_int_equal(scan_blocks_find(&b, 0x1017, 0), 0);
	assert_int_equal(scan_blocks_find(&b, 0x1010, 0), 0);
	assert_int_equal(scan_blocks_find(&b, 0x1010, 1), -1);	/* header */
	assert_int_equal(scan_blocks_find(&b, 0x1018, 0), -1);
	assert_int_equal(scan_blocks_find(&b, 0x1020, 1), 1);
	assert_int_equal(scan_blocks_find(&b, 0x1047, 0), 1);
	assert_int_equal(scan_blocks_find(&b, 0x1040, 1), -1);	/* +32 */
	assert_int_equal(scan_blocks_find(&b, 0x1048, 0), -1);
	assert_int_equal(scan_blocks_find(&b, 0x2000, 0), 2);
	assert_int_equal(scan_blocks_find(&b, 0x2001, 0), -1);
	assert_int_equal(scan_blocks_find(&b, UINT64_MAX, 0), -1);
	b.n = 0;
	assert_int_equal(scan_blocks_find(&b, 0x1000, 0), -1);
}

/* A report of two records told to D's sink; DEF: the lost record's
 * bytes. */
static void feed(struct report_digest *d, uint64_t def, int swap)
{
	const struct report_sink *sk = digest_sink(d);
	struct report_totals t;
	struct report_record r[2];
	int i;

	memset(&t, 0, sizeof(t));
	t.nrecs = 2;
	t.cls_bytes[SCAN_DEFINITELY_LOST] = def;
	t.cls_blocks[SCAN_DEFINITELY_LOST] = 1;
	t.cls_bytes[SCAN_STILL_REACHABLE] = 200;
	t.cls_blocks[SCAN_STILL_REACHABLE] = 2;
	memset(r, 0, sizeof(r));
	r[0] = (struct report_record){ .cls = SCAN_DEFINITELY_LOST, .bytes = def,
				       .blocks = 1, .stack = 7, .fn = 1 };
	r[1] = (struct report_record){ .cls = SCAN_STILL_REACHABLE, .bytes = 200,
				       .blocks = 2, .stack = 9, .fn = 1 };
	assert_int_equal(sk->flags, REPORT_SINK_ALL | REPORT_SINK_KEYS);
	sk->begin(sk->ctx, &t);
	for (i = 0; i < 2; i++)
		sk->record(sk->ctx, &r[swap ? 1 - i : i]);
}

static void test_digest(void **state)
{
	struct report_digest a, b;
	char why[512];

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	feed(&a, 100, 0);
	feed(&b, 100, 1);	/* another order: equal */
	assert_int_equal(a.n, 2);
	assert_int_equal(digest_diff(&a, &b, why, sizeof(why)), 0);
	assert_string_equal(why, "");

	feed(&b, 104, 0);	/* a class's totals */
	assert_int_equal(digest_diff(&a, &b, why, sizeof(why)), 1);
	assert_string_equal(why, "definitely lost: 100 bytes in 1 blocks, "
			    "held 104 bytes in 1 blocks");

	/* the same totals, a record's stack changed */
	feed(&b, 100, 0);
	b.recs[1].stack = 3;
	assert_int_equal(digest_diff(&a, &b, why, sizeof(why)), 1);
	assert_string_equal(why, "2 records, held 2; record 1: stack 7: "
			    "definitely lost, 100 bytes (0 indirect) in 1 "
			    "blocks, held stack 3: still reachable, 200 bytes "
			    "(0 indirect) in 2 blocks");

	/* a record missing */
	feed(&b, 100, 0);
	b.n = 1;
	assert_int_equal(digest_diff(&a, &b, why, sizeof(why)), 1);
	assert_string_equal(why, "2 records, held 1; record 2: stack 9: still "
			    "reachable, 200 bytes (0 indirect) in 2 blocks, "
			    "held none");
	digest_free(&a);
	digest_free(&b);
	assert_null(a.recs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_digest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
