/* test_report_vg.c - valgrind's choices in the report: the kinds listed
 * (--show-leak-kinds), counted (--errors-for-leak-kinds), --leak-check,
 * the records a sink (the XML) is given, --gen-suppressions' text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tables/heap.h"
#include "output/report.h"
#include "analysis/scan.h"
#include "tables/stacks.h"

#define PC_MALLOC 0x7f0000001000ull
#define PC_A 0x401000ull	/* a() */
#define PC_MAIN 0x402000ull	/* main() */

static void namer(void *ctx, uint64_t pc, int caller, struct frame_info *out)
{
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	out->module = pc == PC_MALLOC ? "/lib/libc.so.6" : "/bin/app";
	out->function = pc == PC_A ? "a" : pc == PC_MAIN ? "main" : "__libc_malloc";
}

struct fx {
	struct heap *h;
	struct stacks *s;
	struct scan_block cls[4];
	struct report_input in;
	struct report_record got[8];
	unsigned ngot;
};

static void sink(void *ctx, const struct report_record *rec)
{
	struct fx *fx = ctx;

	assert_true(fx->ngot < 8);
	fx->got[fx->ngot++] = *rec;
}

/* one block per class, stacks malloc <- a <- main (sizes 400 definite,
 * 300 reachable, 200 possible, 100 indirect), addresses in order */
static int setup(void **state)
{
	static const uint64_t pcs[] = { PC_MALLOC, PC_A, PC_MAIN };
	static const struct { uint64_t size; enum scan_class c; } b[] = {
		{ 400, SCAN_DEFINITELY_LOST }, { 300, SCAN_STILL_REACHABLE },
		{ 200, SCAN_POSSIBLY_LOST }, { 100, SCAN_INDIRECTLY_LOST },
	};
	static struct report_sink sk = { .record = sink };
	struct fx *fx = calloc(1, sizeof(*fx));
	unsigned i;

	fx->h = heap_new();
	fx->s = stacks_new();
	for (i = 0; i < 4; i++) {
		struct heap_block hb = { .addr = 0x1000 * (i + 1), .size = b[i].size,
					 .stack = stacks_intern(fx->s, pcs, 3),
					 .fn = AF_MALLOC };

		heap_alloc(fx->h, &hb);
		fx->cls[i] = (struct scan_block){ .addr = hb.addr, .size = hb.size,
						  .cls = b[i].c };
	}
	sk.ctx = fx;
	fx->in.pid = 7;
	fx->in.heap = fx->h;
	fx->in.stacks = fx->s;
	fx->in.depth = 16;
	fx->in.namer = namer;
	fx->in.classes = fx->cls;
	fx->in.nclasses = 4;
	fx->in.sink = &sk;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	heap_delete(fx->h);
	stacks_delete(fx->s);
	free(fx);
	return 0;
}

/* report FX with TEXT into *BUF (NULL: no text): its result */
static struct report_result run(struct fx *fx, char **buf)
{
	struct report_result res;
	size_t len = 0;
	FILE *f = buf ? open_memstream(buf, &len) : NULL;

	fx->ngot = 0;
	assert_int_equal(report_write(&fx->in, f, NULL, &res), 0);
	if (f)
		fclose(f);
	return res;
}

static void test_defaults(void **state)
{
	struct fx *fx = *state;
	struct report_result res = run(fx, NULL);

	/* definite, possible, indirect listed; numbers count every record */
	assert_int_equal(fx->ngot, 3);
	assert_int_equal(fx->got[0].cls, SCAN_DEFINITELY_LOST);
	assert_int_equal(fx->got[0].bytes, 400);
	assert_int_equal(fx->got[0].number, 1);
	assert_int_equal(fx->got[0].total, 4);
	assert_int_equal(fx->got[1].cls, SCAN_POSSIBLY_LOST);
	assert_int_equal(fx->got[1].number, 3);
	assert_int_equal(fx->got[2].cls, SCAN_INDIRECTLY_LOST);
	assert_int_equal(fx->got[2].number, 4);
	/* the sink sees the frames as the text does: malloc, a, main */
	assert_int_equal(fx->got[0].nframes, 3);
	assert_int_equal(res.lost_bytes, 700);
	assert_int_equal(res.lost_blocks, 3);
}

static void test_kinds(void **state)
{
	struct fx *fx = *state;
	struct report_result res;

	fx->in.show_kinds = REPORT_KIND(SCAN_STILL_REACHABLE) |
			    REPORT_KIND(SCAN_POSSIBLY_LOST);
	fx->in.error_kinds = REPORT_KIND(SCAN_STILL_REACHABLE);
	res = run(fx, NULL);
	assert_int_equal(fx->ngot, 2);
	assert_int_equal(fx->got[0].cls, SCAN_STILL_REACHABLE);
	assert_int_equal(fx->got[0].number, 2);
	assert_int_equal(fx->got[1].cls, SCAN_POSSIBLY_LOST);
	assert_int_equal(res.lost_bytes, 300);
	assert_int_equal(res.lost_blocks, 1);

	fx->in.show_kinds = REPORT_KINDS_NONE;
	fx->in.error_kinds = REPORT_KINDS_NONE;
	res = run(fx, NULL);
	assert_int_equal(fx->ngot, 0);
	assert_int_equal(res.lost_bytes, 0);
}

static void test_leak_check(void **state)
{
	struct fx *fx = *state;
	char *buf = NULL;

	fx->in.leak_check = LEAK_CHECK_SUMMARY;
	run(fx, &buf);
	assert_int_equal(fx->ngot, 0);
	assert_null(strstr(buf, "loss record"));
	assert_non_null(strstr(buf, "ptleak[7]:    definitely lost: 400 bytes in 1 block\n"));
	free(buf);

	buf = NULL;
	fx->in.leak_check = LEAK_CHECK_NO;
	run(fx, &buf);
	assert_int_equal(fx->ngot, 0);
	assert_null(strstr(buf, "LEAK SUMMARY"));
	assert_non_null(strstr(buf, "in use at exit: 1,000 bytes in 4 blocks"));
	free(buf);
}

/* --gen-suppressions=all: each record's block after it, frame 0 named
 * after the allocator */
static void test_gen_suppressions(void **state)
{
	struct fx *fx = *state;
	char *buf = NULL;

	fx->in.gen_suppressions = 1;
	fx->in.show_kinds = REPORT_KIND(SCAN_POSSIBLY_LOST);
	run(fx, &buf);
	assert_non_null(strstr(buf,
		"ptleak[7]: 200 bytes in 1 block are possibly lost in loss record 3 of 4\n"
		"ptleak[7]:    at 0x7f0000001000: malloc (libc.so.6)\n"
		"ptleak[7]:    by 0x401000: a (app)\n"
		"ptleak[7]:    by 0x402000: main (app)\n"
		"ptleak[7]:\n"
		"{\n"
		"   <insert_a_suppression_name_here>\n"
		"   Memcheck:Leak\n"
		"   match-leak-kinds: possible\n"
		"   fun:malloc\n"
		"   fun:a\n"
		"   fun:main\n"
		"}\n"
		"ptleak[7]: LEAK SUMMARY:\n"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leak_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gen_suppressions, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
