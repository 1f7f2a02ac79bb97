/* test_report_fds.c - the report's file-descriptor part, text and JSON,
 * on a synthetic fd table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tables/fds.h"
#include "tables/heap.h"
#include "output/report.h"
#include "tables/stacks.h"
#include "analysis/suppress.h"
#include "symbols/symbols.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define EXE "/work/f_basic"

#define PC_OPEN		0x7f0000001000ull	/* "__libc_open64", libc */
#define PC_HELPER	0x55d0c0a01200ull	/* helper f.c:7 */
#define PC_MAIN		0x55d0c0a010b4ull	/* main f.c:20 */
#define PC_START	0x7f0000002000ull	/* below main */

static void fake_namer(void *ctx, uint64_t pc, int caller,
		       struct frame_info *out)
{
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	switch (pc) {
	case PC_OPEN:
		out->function = "__libc_open64";
		out->module = LIBC;
		break;
	case PC_HELPER:
		out->function = "helper";
		out->file = "f.c";
		out->line = 7;
		out->module = EXE;
		break;
	case PC_MAIN:
		out->function = "main";
		out->file = "f.c";
		out->line = 20;
		out->module = EXE;
		break;
	case PC_START:
		out->function = "__libc_start_call_main";
		out->module = LIBC;
		break;
	}
}

struct fx {
	struct fdtable *t;
	struct heap *h;
	struct stacks *s;
	struct suppressions *supp;
	struct report_input in;
	char json[64];
};

static char *const argv0[] = { "./f", NULL };

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct fd_now in[3];
	int i;

	if (!fx)
		return -1;
	fx->t = fds_new();
	fx->h = heap_new();
	fx->s = stacks_new();
	for (i = 0; i < 3; i++) {
		in[i].fd = i;
		in[i].target = "/dev/pts/0";
		in[i].dev = in[i].ino = 0;
	}
	fds_inherit(fx->t, in, 3);
	fx->in.pid = 77;
	fx->in.argv = argv0;
	fx->in.reason = REPORT_EXIT;
	fx->in.exited = 1;
	fx->in.fds = fx->t;
	fx->in.stacks = fx->s;
	fx->in.depth = 16;
	fx->in.namer = fake_namer;
	fx->in.now_ns = 10000000000ull;
	strcpy(fx->json, "/tmp/test_report_fds.XXXXXX");
	if (mkstemp(fx->json) < 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char tmp[80];

	unlink(fx->json);
	snprintf(tmp, sizeof(tmp), "%s.tmp", fx->json);
	unlink(tmp);
	fds_delete(fx->t);
	heap_delete(fx->h);
	stacks_delete(fx->s);
	supp_free(fx->supp);
	free(fx);
	return 0;
}

static void traced(struct fx *fx, int fd, const char *target, const char *fn,
		   uint64_t time_ns)
{
	uint64_t pcs[] = { PC_OPEN, PC_HELPER, PC_MAIN, PC_START };
	struct fd_rec r;

	memset(&r, 0, sizeof(r));
	r.fd = fd;
	r.origin = FD_TRACED;
	r.type = (uint8_t)fd_type_of(target);
	r.opened_by = fn;
	r.target = (char *)target;
	r.stack = stacks_intern(fx->s, pcs, 4);
	r.time_ns = time_ns;
	fds_open(fx->t, &r);
}

static void unknown(struct fx *fx, int fd, const char *target)
{
	struct fd_rec r;

	memset(&r, 0, sizeof(r));
	r.fd = fd;
	r.origin = FD_UNKNOWN;
	r.type = (uint8_t)fd_type_of(target);
	r.target = (char *)target;
	fds_open(fx->t, &r);
}

static char *text_of(struct fx *fx, struct report_result *res)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(report_write(&fx->in, f, NULL, res), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *json_of(struct fx *fx)
{
	char *buf;
	long n;
	FILE *f;

	assert_int_equal(report_write(&fx->in, NULL, fx->json, NULL), 0);
	f = fopen(fx->json, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void test_text_fd_only(void **state)
{
	struct fx *fx = *state;
	struct report_result res;
	char *t;

	traced(fx, 3, "/dev/null", "open", 1);
	traced(fx, 5, "pipe:[12]", "pipe", 1);
	unknown(fx, 4, "/dev/zero");
	t = text_of(fx, &res);
	assert_string_equal(t,
		"ptleak[77]: FILE DESCRIPTORS: 6 open at exit (3 inherited)\n"
		"ptleak[77]: fd 3 -> /dev/null, opened by open\n"
		"ptleak[77]:    at 0x7f0000001000: open (libc.so.6)\n"
		"ptleak[77]:    by 0x55d0c0a01200: helper (f.c:7)\n"
		"ptleak[77]:    by 0x55d0c0a010b4: main (f.c:20)\n"
		"ptleak[77]:\n"
		"ptleak[77]: fd 4 -> /dev/zero, opened by unknown\n"
		"ptleak[77]:\n"
		"ptleak[77]: fd 5 -> pipe:[12], opened by pipe\n"
		"ptleak[77]:    at 0x7f0000001000: pipe (libc.so.6)\n"
		"ptleak[77]:    by 0x55d0c0a01200: helper (f.c:7)\n"
		"ptleak[77]:    by 0x55d0c0a010b4: main (f.c:20)\n"
		"ptleak[77]:\n");
	assert_int_equal(res.leaked_fds, 3);
	assert_int_equal(res.lost_bytes, 0);
	free(t);
}

static void test_after_heap(void **state)
{
	struct fx *fx = *state;
	char *t, *p;

	fx->in.heap = fx->h;
	t = text_of(fx, NULL);
	/* the heap part, a blank line, then the descriptors */
	assert_non_null(strstr(t, "HEAP SUMMARY:"));
	p = strstr(t, "ptleak[77]:\nptleak[77]: FILE DESCRIPTORS: 3 open at exit "
		      "(3 inherited)\n");
	assert_non_null(p);
	assert_string_equal(p + strlen("ptleak[77]:\n"),
			    "ptleak[77]: FILE DESCRIPTORS: 3 open at exit (3 inherited)\n");
	free(t);
}

static void test_labels(void **state)
{
	struct fx *fx = *state;
	char *t;

	fx->in.reason = REPORT_SIGNAL;
	t = text_of(fx, NULL);
	assert_string_equal(t, "ptleak[77]: FILE DESCRIPTORS: 3 open now (3 inherited)\n");
	free(t);
	fx->in.reason = REPORT_DETACH;
	t = text_of(fx, NULL);
	assert_string_equal(t, "ptleak[77]: FILE DESCRIPTORS: 3 open at detach (3 inherited)\n");
	free(t);
}

static void test_untracked(void **state)
{
	struct fx *fx = *state;
	struct report_result res;
	char *t;

	fx->in.fds_untracked = "no descriptor function found in ./f";
	t = text_of(fx, &res);
	assert_string_equal(t,
		"ptleak[77]: FILE DESCRIPTORS: 3 open at exit (3 inherited)\n"
		"ptleak[77]: file descriptors NOT tracked: no descriptor function "
		"found in ./f\n");
	assert_int_equal(res.untracked, 1);
	assert_int_equal(res.leaked_fds, 0);
	free(t);
	t = json_of(fx);
	assert_non_null(strstr(t, "\"records\":[],\"tracked\":false,\"why\":"
		"\"no descriptor function found in ./f\"},\"threads\":[]}"));
	free(t);
}

static void test_json(void **state)
{
	struct fx *fx = *state;
	char *j;

	traced(fx, 3, "socket:[9]", "socket", 1);
	unknown(fx, 4, "anon_inode:[eventfd]");
	j = json_of(fx);
	assert_non_null(strstr(j, "\"heap\":null,\"fds\":{\"open\":5,\"inherited\":3,"
		"\"records\":[{\"fd\":3,\"type\":\"socket\",\"target\":\"socket:[9]\","
		"\"opened_by\":\"socket\",\"stack\":["
		"{\"pc\":\"0x55d0c0a01200\",\"function\":\"helper\",\"file\":\"f.c\","
		"\"line\":7,\"module\":\"/work/f_basic\"},"
		"{\"pc\":\"0x55d0c0a010b4\",\"function\":\"main\",\"file\":\"f.c\","
		"\"line\":20,\"module\":\"/work/f_basic\"}]},"
		"{\"fd\":4,\"type\":\"anon\",\"target\":\"anon_inode:[eventfd]\","
		"\"opened_by\":\"unknown\",\"stack\":[]}],\"tracked\":true,\"why\":null},\"threads\":[]}"));
	free(j);
	fx->in.fds = NULL;
	j = json_of(fx);
	assert_non_null(strstr(j, "\"fds\":null,\"threads\":[]}"));
	free(j);
}

static void test_no_fds_no_text(void **state)
{
	struct fx *fx = *state;
	char *t;

	fx->in.fds = NULL;
	fx->in.heap = fx->h;
	t = text_of(fx, NULL);
	assert_null(strstr(t, "FILE DESCRIPTORS"));
	free(t);
}

static void test_min_age(void **state)
{
	struct fx *fx = *state;
	struct report_result res;
	char *t;

	traced(fx, 3, "/old", "open", 1000000000ull);		/* 9 s old */
	traced(fx, 4, "/young", "open", 9500000000ull);	/* 0.5 s */
	unknown(fx, 5, "/unknown-age");
	fx->in.min_age_ns = 2000000000ull;
	t = text_of(fx, &res);
	assert_non_null(strstr(t, "fd 3 -> /old"));
	assert_null(strstr(t, "fd 4 -> /young"));
	assert_non_null(strstr(t, "fd 5 -> /unknown-age"));
	assert_non_null(strstr(t, "FILE DESCRIPTORS: 6 open at exit (3 inherited)"));
	assert_int_equal(res.leaked_fds, 2);
	free(t);
}

static void test_suppressed(void **state)
{
	struct fx *fx = *state;
	struct report_result res;
	char path[] = "/tmp/test_report_fds_supp.XXXXXX";
	int fd = mkstemp(path);
	char *t;

	assert_true(fd >= 0);
	assert_true(write(fd, "fd:help*\nleak:nothing\nfd:nothing\n", 33) == 33);
	close(fd);
	fx->supp = supp_load(path);
	unlink(path);
	assert_non_null(fx->supp);
	fx->in.supp = fx->supp;
	traced(fx, 3, "/a", "open", 1);
	traced(fx, 4, "/b", "socket", 1);
	t = text_of(fx, &res);
	assert_string_equal(t,
		"ptleak[77]: FILE DESCRIPTORS: 5 open at exit (3 inherited)\n"
		"ptleak[77]:\n"
		"ptleak[77]: Suppressions used:\n"
		"ptleak[77]:   count      bytes template\n"
		"ptleak[77]:       2          0 help*\n");
	assert_int_equal(res.leaked_fds, 0);
	assert_int_equal(fx->supp->p[0].count, 2);
	free(t);
	/* counted afresh at each report */
	t = text_of(fx, &res);
	assert_int_equal(fx->supp->p[0].count, 2);
	free(t);
}

static void test_before_exec(void **state)
{
	struct fx *fx = *state;
	struct fd_now after[4] = {
		{ 0, "/dev/pts/0", 0, 0 }, { 1, "/dev/pts/0", 0, 0 },
		{ 2, "/dev/pts/0", 0, 0 }, { 3, "/kept", 0, 0 },
	};
	char *t;

	traced(fx, 3, "/kept", "open", 1);
	traced(fx, 4, "/cloexec", "open", 1);
	fds_exec(fx->t, after, 4);
	t = text_of(fx, NULL);
	assert_string_equal(t,
		"ptleak[77]: FILE DESCRIPTORS: 4 open at exit (3 inherited)\n"
		"ptleak[77]: fd 3 -> /kept, opened by open before an exec\n"
		"ptleak[77]:\n");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_text_fd_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_after_heap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untracked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_fds_no_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_min_age, setup, teardown),
		cmocka_unit_test_setup_teardown(test_suppressed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_before_exec, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
