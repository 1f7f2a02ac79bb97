/* test_report_vgtext.c - memcheck's text (report_vgtext.c) on synthetic
 * tables: the whole text, memcheck's order and numbering (a tie in bytes
 * goes by kind: still reachable before definitely lost), a record with no
 * stack, the errors counted, -q, --error-markers, --leak-check=summary,
 * records no scan classified. */
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
#include "output/report_vgtext.h"
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
	struct scan_block cls[5];
	struct report_input in;
};

/* 400 definite, 300 reachable, 200 possible, 100 indirect (malloc <- a <-
 * main), and 300 definite with no stack (a census block's kind) */
static int setup(void **state)
{
	static const uint64_t pcs[] = { PC_MALLOC, PC_A, PC_MAIN };
	static const struct { uint64_t size; enum scan_class c; int stack; } b[] = {
		{ 400, SCAN_DEFINITELY_LOST, 1 }, { 300, SCAN_STILL_REACHABLE, 1 },
		{ 200, SCAN_POSSIBLY_LOST, 1 }, { 100, SCAN_INDIRECTLY_LOST, 1 },
		{ 300, SCAN_DEFINITELY_LOST, 0 },
	};
	struct fx *fx = calloc(1, sizeof(*fx));
	unsigned i;

	fx->h = heap_new();
	fx->s = stacks_new();
	for (i = 0; i < 5; i++) {
		struct heap_block hb = { .addr = 0x1000 * (i + 1), .size = b[i].size,
					 .stack = b[i].stack ? stacks_intern(fx->s, pcs, 3) : 0,
					 .fn = AF_MALLOC };

		heap_alloc(fx->h, &hb);
		fx->cls[i] = (struct scan_block){ .addr = hb.addr, .size = hb.size,
						  .cls = b[i].c };
	}
	fx->in.pid = 7;
	fx->in.number = 1;
	fx->in.heap = fx->h;
	fx->in.stacks = fx->s;
	fx->in.depth = 16;
	fx->in.namer = namer;
	fx->in.classes = fx->cls;
	fx->in.nclasses = 5;
	/* valgrind's defaults of show and error kinds (options.c) */
	fx->in.show_kinds = fx->in.error_kinds = REPORT_KIND(SCAN_DEFINITELY_LOST) |
						 REPORT_KIND(SCAN_POSSIBLY_LOST);
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

/* FX's report in memcheck's text with O: the text (malloc'd), the errors
 * into *ERRORS */
static char *run(struct fx *fx, struct vgtext_opts *o, unsigned long *errors)
{
	struct report_result res;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct vgtext *v;

	assert_non_null(f);
	o->version = "T";
	o->banner = 1;
	v = vgtext_open(f, &fx->in, o);
	fx->in.sink = vgtext_sink(v);
	assert_int_equal(report_write(&fx->in, NULL, NULL, &res), 0);
	*errors = vgtext_close(v);
	fclose(f);
	return buf;
}

#define FRAMES \
	"==7==    at 0x7F0000001000: malloc (in /lib/libc.so.6)\n" \
	"==7==    by 0x401000: a (in /bin/app)\n" \
	"==7==    by 0x402000: main (in /bin/app)\n"

static void test_full(void **state)
{
	struct vgtext_opts o = { .verbosity = 1 };
	unsigned long errors;
	char *t = run(*state, &o, &errors);

	assert_string_equal(t,
		"==7== Memcheck, a memory error detector\n"
		"==7== ptleak's leak check in memcheck's words, from outside the process\n"
		"==7== Using ptleak-T, not Valgrind; rerun with -h for help\n"
		"==7== Command:\n"
		"==7== \n"
		"==7== \n"
		"==7== HEAP SUMMARY:\n"
		"==7==     in use at exit: 1,300 bytes in 5 blocks\n"
		"==7==   total heap usage: 5 allocs, 0 frees, 1,300 bytes allocated\n"
		"==7== \n"
		"==7== 200 bytes in 1 blocks are possibly lost in loss record 2 of 5\n"
		FRAMES
		"==7== \n"
		"==7== 300 bytes in 1 blocks are definitely lost in loss record 4 of 5\n"
		"==7==    (no allocation stack)\n"
		"==7== \n"
		"==7== 400 bytes in 1 blocks are definitely lost in loss record 5 of 5\n"
		FRAMES
		"==7== \n"
		"==7== LEAK SUMMARY:\n"
		"==7==    definitely lost: 700 bytes in 2 blocks\n"
		"==7==    indirectly lost: 100 bytes in 1 blocks\n"
		"==7==      possibly lost: 200 bytes in 1 blocks\n"
		"==7==    still reachable: 300 bytes in 1 blocks\n"
		"==7==         suppressed: 0 bytes in 0 blocks\n"
		"==7== Reachable blocks (those to which a pointer was found) are not shown.\n"
		"==7== To see them, rerun with: --leak-check=full --show-leak-kinds=all\n"
		"==7== \n"
		"==7== For lists of detected and suppressed errors, rerun with: -s\n"
		"==7== ERROR SUMMARY: 3 errors from 3 contexts (suppressed: 0 from 0)\n");
	assert_int_equal(errors, 3);
	free(t);
}

static void test_quiet_markers(void **state)
{
	struct fx *fx = *state;
	struct vgtext_opts o = { .verbosity = 0, .marker_begin = "B",
				 .marker_end = "E" };
	unsigned long errors;
	char *t;

	fx->in.show_kinds = REPORT_KIND(SCAN_INDIRECTLY_LOST);
	fx->in.error_kinds = REPORT_KIND(SCAN_STILL_REACHABLE);
	t = run(fx, &o, &errors);
	assert_string_equal(t,
		"==7== B\n"
		"==7== 100 bytes in 1 blocks are indirectly lost in loss record 1 of 5\n"
		FRAMES
		"==7== \n"
		"==7== E\n");
	/* counted, not shown */
	assert_int_equal(errors, 1);
	free(t);
}

static void test_summary(void **state)
{
	struct fx *fx = *state;
	struct vgtext_opts o = { .verbosity = 0, .list_errors = 1 };
	unsigned long errors;
	char *t;

	fx->in.leak_check = LEAK_CHECK_SUMMARY;
	t = run(fx, &o, &errors);
	/* -q -s: nothing but the ERROR SUMMARY; summary mode counts none */
	assert_string_equal(t,
		"==7== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)\n");
	assert_int_equal(errors, 0);
	free(t);
}

static void test_no_scan(void **state)
{
	struct fx *fx = *state;
	struct vgtext_opts o = { .verbosity = 0, .list_errors = 1 };
	unsigned long errors;
	char *t;

	/* no scan: every record unclassified, shown, and an error (it may
	 * be lost); the largest first as its kind is unknown */
	fx->in.classes = NULL;
	fx->in.nclasses = 0;
	fx->in.unclassified_why = "the threads could not be stopped";
	t = run(fx, &o, &errors);
	assert_non_null(strstr(t, "==7== 1,000 bytes in 4 blocks are unclassified (no scan) "
			       "in loss record 2 of 2\n"));
	assert_non_null(strstr(t, "==7== 300 bytes in 1 blocks are unclassified (no scan) "
			       "in loss record 1 of 2\n==7==    (no allocation stack)\n"));
	assert_non_null(strstr(t, "==7== ERROR SUMMARY: 2 errors from 2 contexts "
			       "(suppressed: 0 from 0)\n"));
	assert_int_equal(errors, 2);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quiet_markers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_scan, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
