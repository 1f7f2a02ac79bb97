/* test_report_threads.c - the report's THREADS section, "threads" and
 * "target.resources", on a synthetic heap. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tables/heap.h"
#include "output/report.h"
#include "tables/stacks.h"

static void namer(void *ctx, uint64_t pc, int caller, struct frame_info *out)
{
	(void)ctx;
	(void)caller;
	memset(out, 0, sizeof(*out));
	out->pc = pc;
}

struct fx {
	struct heap *h;
	struct stacks *s;
	struct report_input in;
	struct proc_resources rsc;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	static char *const argv[] = { "./t", NULL };
	uint64_t pc = 0x1000;

	fx->h = heap_new();
	fx->s = stacks_new();
	stacks_intern(fx->s, &pc, 1);
	fx->in.pid = 1234;
	fx->in.argv = argv;
	fx->in.heap = fx->h;
	fx->in.stacks = fx->s;
	fx->in.depth = 16;
	fx->in.namer = namer;
	fx->in.unclassified_why = "--no-scan";
	fx->in.threads = 1;
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

static void alloc(struct fx *fx, uint64_t addr, uint64_t size, int32_t tid)
{
	struct heap_block b = { .addr = addr, .size = size, .stack = 1,
				.tid = tid, .fn = AF_MALLOC };

	heap_alloc(fx->h, &b);
}

static char *text_of(struct fx *fx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(report_write(&fx->in, f, NULL, NULL), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *json_of(struct fx *fx)
{
	char path[] = "/tmp/ptleak-rt-XXXXXX", *buf;
	int fd = mkstemp(path);
	FILE *f;
	long n;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(report_write(&fx->in, NULL, path, NULL), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	unlink(path);
	return buf;
}

/* 12 threads: the top 10 by bytes in use, then one line for 2. */
static void test_threads_text(void **state)
{
	struct fx *fx = *state;
	char *t, *p;
	int32_t tid;

	for (tid = 101; tid <= 112; tid++)
		alloc(fx, 0x10000 * (uint64_t)tid, (uint64_t)tid * 10, tid);
	/* 112 frees 111's block; 103 is named */
	heap_free_by(fx->h, 0x10000 * 111, 112, 0);
	heap_thread_name(fx->h, 103, "worker\x1b");
	t = text_of(fx);
	p = strstr(t, "ptleak[1234]: THREADS:");
	assert_non_null(p);
	assert_string_equal(p,
"ptleak[1234]: THREADS: 12 threads used the heap\n"
"ptleak[1234]:   thread 112 (): 1 allocs, 1 frees, 1,120 bytes allocated, 1,120 bytes in use\n"
"ptleak[1234]:   thread 110 (): 1 allocs, 0 frees, 1,100 bytes allocated, 1,100 bytes in use\n"
"ptleak[1234]:   thread 109 (): 1 allocs, 0 frees, 1,090 bytes allocated, 1,090 bytes in use\n"
"ptleak[1234]:   thread 108 (): 1 allocs, 0 frees, 1,080 bytes allocated, 1,080 bytes in use\n"
"ptleak[1234]:   thread 107 (): 1 allocs, 0 frees, 1,070 bytes allocated, 1,070 bytes in use\n"
"ptleak[1234]:   thread 106 (): 1 allocs, 0 frees, 1,060 bytes allocated, 1,060 bytes in use\n"
"ptleak[1234]:   thread 105 (): 1 allocs, 0 frees, 1,050 bytes allocated, 1,050 bytes in use\n"
"ptleak[1234]:   thread 104 (): 1 allocs, 0 frees, 1,040 bytes allocated, 1,040 bytes in use\n"
"ptleak[1234]:   thread 103 (worker\\x1b): 1 allocs, 0 frees, 1,030 bytes allocated, 1,030 bytes in use\n"
"ptleak[1234]:   thread 102 (): 1 allocs, 0 frees, 1,020 bytes allocated, 1,020 bytes in use\n"
"ptleak[1234]:   2 other threads: 2 allocs, 0 frees, 2,120 bytes allocated, 1,010 bytes in use\n");
	/* the section comes after the leak summary, a blank line before */
	assert_non_null(strstr(t, "ptleak[1234]:       unclassified: 11,670 bytes in 11 blocks "
			       "(--no-scan)\nptleak[1234]:\nptleak[1234]: THREADS:"));
	free(t);
	fx->in.threads = 0;
	t = text_of(fx);
	assert_null(strstr(t, "THREADS"));
	free(t);
}

static void test_threads_json(void **state)
{
	struct fx *fx = *state;
	char *t;

	alloc(fx, 0x1000, 10, 7);
	alloc(fx, 0x2000, 30, 8);
	heap_free_by(fx->h, 0x2000, 7, 0);
	heap_thread_name(fx->h, 8, "w\"8");
	t = json_of(fx);
	assert_non_null(strstr(t, ",\"threads\":["
		"{\"tid\":7,\"name\":null,\"allocs\":1,\"frees\":1,\"bytes_allocated\":10,"
		"\"in_use_bytes\":10},"
		"{\"tid\":8,\"name\":\"w\\\"8\",\"allocs\":1,\"frees\":0,\"bytes_allocated\":30,"
		"\"in_use_bytes\":0}]}\n"));
	free(t);
}

static void test_resources(void **state)
{
	struct fx *fx = *state;
	char *t;

	fx->rsc = (struct proc_resources){ 1, 1.25, 0.5, 3.25, 123456 };
	fx->in.resources = &fx->rsc;
	t = text_of(fx);
	/* the last line, after a blank one */
	assert_non_null(strstr(t, "no leaks are possible\n"
		"ptleak[1234]:\nptleak[1234]: RESOURCES: 1.25 s user, 0.50 s system, "
		"3.25 s wall, max RSS 123,456 KiB\n"));
	assert_string_equal(strstr(t, "RESOURCES"), "RESOURCES: 1.25 s user, 0.50 s "
			    "system, 3.25 s wall, max RSS 123,456 KiB\n");
	free(t);
	t = json_of(fx);
	assert_non_null(strstr(t, "\"exit\":null,\"resources\":{\"user_s\":1.250,"
		"\"sys_s\":0.500,\"wall_s\":3.250,\"max_rss_kb\":123456}},"));
	free(t);
	/* --fd-only: the line on its own */
	fx->in.heap = NULL;
	t = text_of(fx);
	assert_string_equal(t, "ptleak[1234]:\nptleak[1234]: RESOURCES: 1.25 s user, "
		"0.50 s system, 3.25 s wall, max RSS 123,456 KiB\n");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_threads_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resources, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
