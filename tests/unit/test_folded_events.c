/* test_folded_events.c - --folded and --events files from a synthetic
 * heap, byte for byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "output/events_log.h"
#include "output/folded.h"
#include "tables/heap.h"
#include "tables/stacks.h"

#define PC_MALLOC 0x1000ull
#define PC_XSTRDUP 0x2000ull	/* "xstrdup" (x.c:7) */
#define PC_PARSE 0x3000ull	/* "par;se" (x.c:12) */
#define PC_MAIN 0x4000ull	/* "main" */
#define PC_BELOW 0x5000ull	/* below main: never shown */
#define PC_ANON 0x6000ull	/* module only */

static void namer(void *ctx, uint64_t pc, int caller, struct frame_info *out)
{
	(void)caller;
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	out->module = "/lib/x.so";
	out->module_offset = pc - 0x1000;
	*(int *)ctx += 1;
	switch (pc) {
	case PC_MALLOC:
		out->function = "__libc_malloc";
		break;
	case PC_XSTRDUP:
		out->function = "xstrdup";
		out->file = "x.c";
		out->line = 7;
		break;
	case PC_PARSE:
		out->function = "par;se, really";
		out->file = "x.c";
		out->line = 12;
		break;
	case PC_MAIN:
		out->function = "main";
		break;
	case PC_BELOW:
		out->function = "__libc_start_main";
		break;
	}
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void block(struct heap *h, uint64_t addr, uint64_t size, uint32_t stack,
		  enum alloc_fn fn, uint64_t ms)
{
	struct heap_block b = { .addr = addr, .size = size, .stack = stack,
				.tid = 42, .fn = (uint8_t)fn,
				.time_ns = 1000000000ull + ms * 1000000ull };

	heap_alloc(h, &b);
}

static void test_folded(void **state)
{
	static const uint64_t s1[] = { PC_MALLOC, PC_XSTRDUP, PC_PARSE, PC_MAIN, PC_BELOW };
	static const uint64_t s2[] = { PC_MALLOC, PC_ANON };
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	char path[] = "/tmp/ptleak-fo-XXXXXX", *t;
	uint32_t a = stacks_intern(st, s1, 5), b = stacks_intern(st, s2, 2);
	int calls = 0;

	(void)state;
	close(mkstemp(path));
	block(h, 0x100, 1000, a, AF_MALLOC, 0);
	block(h, 0x200, 234, a, AF_MALLOC, 0);
	block(h, 0x300, 50, a, AF_CALLOC, 0);
	block(h, 0x400, 7, b, AF_MALLOC, 0);
	block(h, 0x500, 0, b, AF_MALLOC, 0);
	assert_int_equal(folded_write(path, h, st, 16, namer, &calls), 0);
	t = slurp(path);
	assert_string_equal(t,
		"main;par:se, really;xstrdup;malloc 1234\n"
		"main;par:se, really;xstrdup;calloc 50\n"
		"x.so+0x5000;malloc 7\n");
	free(t);
	/* --depth 2 */
	assert_int_equal(folded_write(path, h, st, 2, namer, &calls), 0);
	t = slurp(path);
	assert_string_equal(t, "xstrdup;malloc 1234\nxstrdup;calloc 50\nx.so+0x5000;malloc 7\n");
	free(t);
	unlink(path);
	heap_delete(h);
	stacks_delete(st);
}

static void test_events(void **state)
{
	static const uint64_t s1[] = { PC_MALLOC, PC_PARSE, PC_MAIN };
	static const uint64_t s2[] = { PC_MALLOC, PC_XSTRDUP, PC_MAIN };
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	char path[] = "/tmp/ptleak-ev-XXXXXX", *t, tmp[64];
	uint32_t a = stacks_intern(st, s1, 3), b = stacks_intern(st, s2, 3);
	struct heap_block held, nb = { .addr = 0x300, .stack = b, .tid = 43,
				       .fn = AF_REALLOC, .time_ns = 1005000000ull };
	struct evlog *l;
	int calls = 0, live;

	(void)state;
	close(mkstemp(path));
	l = evlog_open(path);
	assert_non_null(l);
	evlog_attach(l, h, st, 1000000000ull);
	block(h, 0x100, 10, a, AF_MALLOC, 1);
	block(h, 0x200, 20, a, AF_CALLOC, 2);
	live = heap_realloc_begin(h, 0x100, &held);
	heap_realloc_end(h, 0x100, live, &held, 30, &nb);
	heap_free_by(h, 0x200, 42, 1007000000ull);
	heap_free_by(h, 0x999, 42, 1008000000ull);
	assert_int_equal(evlog_rows(l), 6);
	assert_int_equal(evlog_finish(l, namer, &calls), 0);
	/* two distinct callers: named once each */
	assert_int_equal(calls, 2);
	block(h, 0x400, 1, a, AF_MALLOC, 9);	/* after the end: not logged */
	evlog_close(l);
	t = slurp(path);
	assert_string_equal(t,
		"ms,tid,event,size,address,old_address,caller\n"
		"1,42,malloc,10,0x100,,\"par;se, really (x.c:12)\"\n"
		"2,42,calloc,20,0x200,,\"par;se, really (x.c:12)\"\n"
		"5,43,free,10,0x100,,xstrdup (x.c:7)\n"
		"5,43,realloc,30,0x300,0x100,xstrdup (x.c:7)\n"
		"7,42,free,20,0x200,,\n"
		"8,42,free,,0x999,,\n");
	free(t);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(access(tmp, F_OK), -1);
	unlink(path);
	heap_delete(h);
	stacks_delete(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
