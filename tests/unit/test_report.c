/* test_report.c - the leak report, text and JSON, on synthetic tables. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "tables/heap.h"
#include "output/report.h"
#include "capture.h"
#include "analysis/scan.h"
#include "analysis/suppress.h"
#include "tables/stacks.h"
#include "symbols/symbols.h"

/* ---- a fake symbolizer ---- */

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define EXE "/work/h_basic"

#define PC_MALLOC	0x7f3a1c2a5f30ull	/* "malloc", libc, no line */
#define PC_CALLOC	0x7f3a1c2a6000ull	/* "__libc_calloc", libc */
#define PC_ANON		0x7f3a1c2a7000ull	/* libc, no function */
#define PC_GROW		0x55d0c0a01183ull	/* grow_buffer h_basic.c:14 */
#define PC_MAIN		0x55d0c0a010b4ull	/* main h_basic.c:36 */
#define PC_START	0x7f3a1c229d90ull	/* __libc_start_call_main, libc */
#define PC_HELPER	0x55d0c0a01200ull	/* helper, exe, no line */
#define PC_NOSYM	0x55d0c0a01300ull	/* exe, no function */
#define PC_UNKNOWN	0x1234ull		/* nothing known */
#define PC_NOMOD	0x55d0c0a01400ull	/* function only */
#define PC_LINEONLY	0x55d0c0a01500ull	/* file:line, no function */
#define PC_MAIN2	0x55d0c0a01600ull	/* "main2": not main */
#define PC_F(i)		(0x400000ull + 0x10 * (i))	/* f<i> gen.c:<i> */

struct sym {
	uint64_t pc;
	const char *function, *file;
	int line;
	const char *module;
	uint64_t offset;
};

static const struct sym syms[] = {
	{ PC_MALLOC, "malloc", NULL, 0, LIBC, 0xa5f30 },
	{ PC_CALLOC, "__libc_calloc", NULL, 0, LIBC, 0xa6000 },
	{ PC_ANON, NULL, NULL, 0, LIBC, 0xa7000 },
	{ PC_GROW, "grow_buffer", "h_basic.c", 14, EXE, 0x1183 },
	{ PC_MAIN, "main", "h_basic.c", 36, EXE, 0x10b4 },
	{ PC_START, "__libc_start_call_main", NULL, 0, LIBC, 0x29d90 },
	{ PC_HELPER, "helper", NULL, 0, EXE, 0x1200 },
	{ PC_NOSYM, NULL, NULL, 0, EXE, 0x1300 },
	{ PC_NOMOD, "nomod", NULL, 0, NULL, 0 },
	{ PC_LINEONLY, NULL, "gen.c", 7, NULL, 0 },
	{ PC_MAIN2, "main2", "h_basic.c", 50, EXE, 0x1600 },
};

struct call {
	uint64_t pc;
	int caller;
};

struct namer_ctx {
	struct call calls[64];
	unsigned ncalls;
	char fname[64][16];	/* names of PC_F(i), i < 64 */
};

static void fake_namer(void *vctx, uint64_t pc, int caller,
		       struct frame_info *out)
{
	struct namer_ctx *ctx = vctx;
	size_t i;

	if (ctx->ncalls < 64) {
		ctx->calls[ctx->ncalls].pc = pc;
		ctx->calls[ctx->ncalls].caller = caller;
	}
	ctx->ncalls++;
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		if (syms[i].pc == pc) {
			out->function = syms[i].function;
			out->file = syms[i].file;
			out->line = syms[i].line;
			out->module = syms[i].module;
			out->module_offset = syms[i].offset;
			return;
		}
	}
	if (pc >= PC_F(0) && pc < PC_F(64) && (pc - PC_F(0)) % 0x10 == 0) {
		unsigned k = (unsigned)((pc - PC_F(0)) / 0x10);

		snprintf(ctx->fname[k], sizeof(ctx->fname[k]), "f%u", k);
		out->function = ctx->fname[k];
		out->file = "gen.c";
		out->line = (int)k + 100;
		out->module = EXE;
		out->module_offset = pc - 0x400000;
	}
}

/* ---- fixture ---- */

struct fx {
	struct heap *h;
	struct stacks *s;
	struct namer_ctx nc;
	struct report_input in;
	char dir[64];
	struct scan_block cls[64];	/* the scan's verdicts, sorted */
	struct suppressions *supp;
};

static char *const default_argv[] = { "./h_basic", "a \"b\"", NULL };

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->h = heap_new();
	fx->s = stacks_new();
	fx->in.pid = 1234;
	fx->in.argv = default_argv;
	fx->in.reason = REPORT_EXIT;
	fx->in.exited = 1;
	fx->in.exit_code = 0;
	fx->in.heap = fx->h;
	fx->in.stacks = fx->s;
	fx->in.depth = 16;
	fx->in.namer = fake_namer;
	fx->in.namer_ctx = &fx->nc;
	fx->in.unclassified_why = "no reachability scan yet";
	strcpy(fx->dir, "/tmp/test_report.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	*state = fx;
	return 0;
}

static void rm_in_dir(struct fx *fx, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", fx->dir, name);
	unlink(p);
	rmdir(p);
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	rm_in_dir(fx, "r.json.tmp");
	rm_in_dir(fx, "r.json");
	rm_in_dir(fx, "isdir.json");
	rm_in_dir(fx, "isdir.json.tmp");
	rmdir(fx->dir);
	supp_free(fx->supp);
	heap_delete(fx->h);
	stacks_delete(fx->s);
	free(fx);
	return 0;
}

static void path_in_dir(struct fx *fx, const char *name, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", fx->dir, name);
}

static uint32_t stack(struct fx *fx, unsigned n, ...)
{
	uint64_t pcs[32];
	va_list ap;
	unsigned i;

	assert_true(n <= 32);
	va_start(ap, n);
	for (i = 0; i < n; i++)
		pcs[i] = va_arg(ap, uint64_t);
	va_end(ap);
	return stacks_intern(fx->s, pcs, n);
}

static void alloc(struct fx *fx, uint64_t addr, uint64_t size, uint32_t st,
		  enum alloc_fn fn)
{
	struct heap_block b;

	memset(&b, 0, sizeof(b));
	b.addr = addr;
	b.size = size;
	b.stack = st;
	b.tid = 1234;
	b.fn = (uint8_t)fn;
	b.time_ns = 1;
	heap_alloc(fx->h, &b);
}

/* The scan's verdict on the block at ADDR (kept sorted by addr). */
static void verdict(struct fx *fx, uint64_t addr, uint64_t size,
		    enum scan_class cls, uint64_t indirect)
{
	size_t i = fx->in.nclasses;

	assert_true(i < 64);
	while (i > 0 && fx->cls[i - 1].addr > addr) {
		fx->cls[i] = fx->cls[i - 1];
		i--;
	}
	fx->cls[i].addr = addr;
	fx->cls[i].size = size;
	fx->cls[i].cls = cls;
	fx->cls[i].indirect = indirect;
	fx->in.classes = fx->cls;
	fx->in.nclasses++;
}

/* Suppressions TEXT, loaded from a file, into fx->in.supp. */
static void suppressions(struct fx *fx, const char *text)
{
	char path[256];
	FILE *f;

	path_in_dir(fx, "supp.txt", path, sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	supp_free(fx->supp);
	fx->supp = supp_load(path);
	assert_non_null(fx->supp);
	unlink(path);
	fx->in.supp = fx->supp;
}

/* The text report of FX (asserts success); caller frees. */
static char *text_of(struct fx *fx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(report_write(&fx->in, f, NULL, NULL), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(strlen(buf), len);
	return buf;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The JSON report of FX, written to a file in FX's directory. */
static char *json_of(struct fx *fx)
{
	char path[256];
	char *s;

	path_in_dir(fx, "r.json", path, sizeof(path));
	assert_int_equal(report_write(&fx->in, NULL, path, NULL), 0);
	s = read_all(path);
	unlink(path);
	return s;
}

static void check_text(struct fx *fx, const char *expect)
{
	char *got = text_of(fx);

	assert_string_equal(got, expect);
	free(got);
}

/* The records part of the text (from after the HEAP SUMMARY's blank line
 * up to LEAK SUMMARY), with the "ptleak[1234]: " prefixes removed. */
static char *records_of(struct fx *fx)
{
	static const char head[] = "ptleak[1234]:\n";
	char *t = text_of(fx), *p, *end, *out, *o;

	p = strstr(t, head);
	assert_non_null(p);
	p += strlen(head);
	end = strstr(p, "ptleak[1234]: LEAK SUMMARY:\n");
	assert_non_null(end);
	out = o = malloc((size_t)(end - p) + 1);
	assert_non_null(out);
	while (p < end) {
		char *nl = strchr(p, '\n');

		if (!strncmp(p, "ptleak[1234]: ", 14))
			p += 14;
		else if (!strncmp(p, "ptleak[1234]:", 13))
			p += 13;
		else
			fail_msg("unprefixed line: %s", p);
		memcpy(o, p, (size_t)(nl + 1 - p));
		o += nl + 1 - p;
		p = nl + 1;
	}
	*o = '\0';
	free(t);
	return out;
}

static void check_records(struct fx *fx, const char *expect)
{
	char *got = records_of(fx);

	assert_string_equal(got, expect);
	free(got);
}

/*
 * The common small case:
 *   stack 1 = malloc, grow_buffer, main, __libc_start_call_main
 *   stack 2 = calloc (named __libc_calloc), helper, ??? in exe, ???
 * 1,000,000 bytes allocated and freed first (peak), then
 *   200 on stack 1 by malloc, 1,000 + 2,000 on stack 2 by calloc,
 *   200 on stack 1 by realloc.
 */
static void build_small(struct fx *fx)
{
	uint32_t a = stack(fx, 4, PC_MALLOC, PC_GROW, PC_MAIN, PC_START);
	uint32_t b = stack(fx, 4, PC_CALLOC, PC_HELPER, PC_NOSYM, PC_UNKNOWN);

	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	alloc(fx, 0x9000, 1000000, a, AF_MALLOC);
	assert_int_equal(heap_free(fx->h, 0x9000), 1);
	alloc(fx, 0x1000, 200, a, AF_MALLOC);
	alloc(fx, 0x2000, 1000, b, AF_CALLOC);
	alloc(fx, 0x3000, 2000, b, AF_CALLOC);
	alloc(fx, 0x4000, 200, a, AF_REALLOC);
}

/* ---- tests ---- */

static void test_text_full(void **state)
{
	struct fx *fx = *state;

	build_small(fx);
	check_text(fx,
"ptleak[1234]: HEAP SUMMARY:\n"
"ptleak[1234]:     in use at exit: 3,400 bytes in 4 blocks\n"
"ptleak[1234]:   total heap usage: 5 allocs, 1 frees, 1,003,400 bytes allocated\n"
"ptleak[1234]:   peak: 1,000,000 bytes in use\n"
"ptleak[1234]:\n"
"ptleak[1234]: 3,000 bytes in 2 blocks are unclassified in loss record 1 of 3\n"
"ptleak[1234]:    at 0x7f3a1c2a6000: calloc (libc.so.6)\n"
"ptleak[1234]:    by 0x55d0c0a01200: helper (h_basic)\n"
"ptleak[1234]:    by 0x55d0c0a01300: ??? (h_basic+0x1300)\n"
"ptleak[1234]:    by 0x1234: ???\n"
"ptleak[1234]:\n"
"ptleak[1234]: 200 bytes in 1 block are unclassified in loss record 2 of 3\n"
"ptleak[1234]:    at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"ptleak[1234]:    by 0x55d0c0a01183: grow_buffer (h_basic.c:14)\n"
"ptleak[1234]:    by 0x55d0c0a010b4: main (h_basic.c:36)\n"
"ptleak[1234]:\n"
"ptleak[1234]: 200 bytes in 1 block are unclassified in loss record 3 of 3\n"
"ptleak[1234]:    at 0x7f3a1c2a5f30: realloc (libc.so.6)\n"
"ptleak[1234]:    by 0x55d0c0a01183: grow_buffer (h_basic.c:14)\n"
"ptleak[1234]:    by 0x55d0c0a010b4: main (h_basic.c:36)\n"
"ptleak[1234]:\n"
"ptleak[1234]: LEAK SUMMARY:\n"
"ptleak[1234]:    definitely lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:    indirectly lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:      possibly lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:    still reachable: 0 bytes in 0 blocks\n"
"ptleak[1234]:       unclassified: 3,400 bytes in 4 blocks (no reachability scan yet)\n");
}

#define ZERO "{\"bytes\":0,\"blocks\":0}"
#define ZERO_SUMMARY \
	"\"definitely_lost\":" ZERO ",\"indirectly_lost\":" ZERO \
	",\"possibly_lost\":" ZERO ",\"still_reachable\":" ZERO \
	",\"suppressed\":" ZERO

static void test_json_full(void **state)
{
	struct fx *fx = *state;
	char *got;

	build_small(fx);
	got = json_of(fx);
	assert_string_equal(got,
"{\"version\":1,\"tool\":\"ptleak\",\"reason\":\"exit\","
"\"target\":{\"pid\":1234,\"argv\":[\"./h_basic\",\"a \\\"b\\\"\"],\"exit\":{\"code\":0},\"resources\":null},"
"\"heap\":{\"in_use\":{\"bytes\":3400,\"blocks\":4},"
"\"totals\":{\"allocs\":5,\"frees\":1,\"bytes_allocated\":1003400,\"unknown_frees\":0},"
"\"peak\":{\"bytes\":1000000},"
"\"census\":null,"
"\"summary\":{" ZERO_SUMMARY ",\"unclassified\":{\"bytes\":3400,\"blocks\":4}},"
"\"records\":["
"{\"kind\":\"unclassified\",\"bytes\":3000,\"blocks\":2,\"direct_bytes\":3000,\"indirect_bytes\":0,"
"\"before_attach\":false,\"type\":null,\"allocator\":\"calloc\",\"stack\":["
"{\"pc\":\"0x55d0c0a01200\",\"function\":\"helper\",\"file\":null,\"line\":null,\"module\":\"" EXE "\"},"
"{\"pc\":\"0x55d0c0a01300\",\"function\":null,\"file\":null,\"line\":null,\"module\":\"" EXE "\"},"
"{\"pc\":\"0x1234\",\"function\":null,\"file\":null,\"line\":null,\"module\":null}]},"
"{\"kind\":\"unclassified\",\"bytes\":200,\"blocks\":1,\"direct_bytes\":200,\"indirect_bytes\":0,"
"\"before_attach\":false,\"type\":null,\"allocator\":\"malloc\",\"stack\":["
"{\"pc\":\"0x55d0c0a01183\",\"function\":\"grow_buffer\",\"file\":\"h_basic.c\",\"line\":14,\"module\":\"" EXE "\"},"
"{\"pc\":\"0x55d0c0a010b4\",\"function\":\"main\",\"file\":\"h_basic.c\",\"line\":36,\"module\":\"" EXE "\"}]},"
"{\"kind\":\"unclassified\",\"bytes\":200,\"blocks\":1,\"direct_bytes\":200,\"indirect_bytes\":0,"
"\"before_attach\":false,\"type\":null,\"allocator\":\"realloc\",\"stack\":["
"{\"pc\":\"0x55d0c0a01183\",\"function\":\"grow_buffer\",\"file\":\"h_basic.c\",\"line\":14,\"module\":\"" EXE "\"},"
"{\"pc\":\"0x55d0c0a010b4\",\"function\":\"main\",\"file\":\"h_basic.c\",\"line\":36,\"module\":\"" EXE "\"}]}"
"],\"growth\":[],\"tracked\":true,\"why\":null},\"fds\":null,\"threads\":[]}\n");
	free(got);
}

/* Text and JSON in one call give the same as separately, and the namer
 * is asked once per shown frame. */
static void test_text_and_json_together(void **state)
{
	struct fx *fx = *state;
	char path[256], *t1, *j1, *t2, *j2, *buf = NULL;
	size_t len = 0;
	FILE *f;

	build_small(fx);
	t1 = text_of(fx);
	j1 = json_of(fx);
	fx->nc.ncalls = 0;
	path_in_dir(fx, "r.json", path, sizeof(path));
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report_write(&fx->in, f, path, NULL), 0);
	fclose(f);
	t2 = buf;
	j2 = read_all(path);
	assert_string_equal(t1, t2);
	assert_string_equal(j1, j2);
	assert_int_equal(fx->nc.ncalls, 4 + 3 + 3);
	free(t1);
	free(t2);
	free(j1);
	free(j2);
}

static void test_grouping(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 2, PC_MALLOC, PC_F(1));
	uint32_t b = stack(fx, 2, PC_MALLOC, PC_F(2));

	/* same stack + fn: one record; same stack, other fn: another */
	alloc(fx, 0x100, 10, a, AF_MALLOC);
	alloc(fx, 0x200, 20, a, AF_MALLOC);
	alloc(fx, 0x300, 40, a, AF_CALLOC);
	alloc(fx, 0x400, 5, b, AF_MALLOC);
	check_records(fx,
"40 bytes in 1 block are unclassified in loss record 1 of 3\n"
"   at 0x7f3a1c2a5f30: calloc (libc.so.6)\n"
"   by 0x400010: f1 (gen.c:101)\n"
"\n"
"30 bytes in 2 blocks are unclassified in loss record 2 of 3\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400010: f1 (gen.c:101)\n"
"\n"
"5 bytes in 1 block are unclassified in loss record 3 of 3\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400020: f2 (gen.c:102)\n"
"\n");
}

/* bytes desc, then blocks desc, then stack id asc, then fn asc */
static void test_order_ties(void **state)
{
	struct fx *fx = *state;
	uint32_t s1 = stack(fx, 2, PC_MALLOC, PC_F(1));
	uint32_t s2 = stack(fx, 2, PC_MALLOC, PC_F(2));
	uint32_t s3 = stack(fx, 2, PC_MALLOC, PC_F(3));
	uint32_t s4 = stack(fx, 2, PC_MALLOC, PC_F(4));

	assert_int_equal(s1, 1);
	assert_int_equal(s4, 4);
	/* inserted in an order unlike the expected one */
	alloc(fx, 0x100, 100, s4, AF_MALLOC);		/* 100/1 s4 */
	alloc(fx, 0x200, 100, s3, AF_CALLOC);		/* 100/1 s3 calloc */
	alloc(fx, 0x300, 100, s3, AF_MALLOC);		/* 100/1 s3 malloc */
	alloc(fx, 0x400, 50, s2, AF_MALLOC);		/* 100/2 s2 */
	alloc(fx, 0x500, 50, s2, AF_MALLOC);
	alloc(fx, 0x600, 10, s1, AF_MALLOC);		/* 10/1 s1 */
	alloc(fx, 0x700, 200, s1, AF_REALLOC);	/* 200/1 s1 */
	check_records(fx,
"200 bytes in 1 block are unclassified in loss record 1 of 6\n"
"   at 0x7f3a1c2a5f30: realloc (libc.so.6)\n"
"   by 0x400010: f1 (gen.c:101)\n"
"\n"
"100 bytes in 2 blocks are unclassified in loss record 2 of 6\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400020: f2 (gen.c:102)\n"
"\n"
"100 bytes in 1 block are unclassified in loss record 3 of 6\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400030: f3 (gen.c:103)\n"
"\n"
"100 bytes in 1 block are unclassified in loss record 4 of 6\n"
"   at 0x7f3a1c2a5f30: calloc (libc.so.6)\n"
"   by 0x400030: f3 (gen.c:103)\n"
"\n"
"100 bytes in 1 block are unclassified in loss record 5 of 6\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400040: f4 (gen.c:104)\n"
"\n"
"10 bytes in 1 block are unclassified in loss record 6 of 6\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400010: f1 (gen.c:101)\n"
"\n");
}

static void test_depth_cut(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 5, PC_MALLOC, PC_F(1), PC_F(2), PC_F(3), PC_F(4));
	char *t;

	alloc(fx, 0x100, 8, a, AF_MALLOC);
	fx->in.depth = 3;
	check_records(fx,
"8 bytes in 1 block are unclassified in loss record 1 of 1\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400010: f1 (gen.c:101)\n"
"   by 0x400020: f2 (gen.c:102)\n"
"\n");
	/* frames beyond the depth are not even named */
	fx->nc.ncalls = 0;
	free(text_of(fx));
	assert_int_equal(fx->nc.ncalls, 3);

	fx->in.depth = 1;
	check_records(fx,
"8 bytes in 1 block are unclassified in loss record 1 of 1\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"\n");

	fx->in.depth = 5;
	t = records_of(fx);
	assert_non_null(strstr(t, "   by 0x400040: f4 (gen.c:104)\n\n"));
	free(t);

	/* 0: no frames at all */
	fx->in.depth = 0;
	check_records(fx,
"8 bytes in 1 block are unclassified in loss record 1 of 1\n"
"\n");
	t = json_of(fx);
	assert_non_null(strstr(t, "\"allocator\":\"malloc\",\"stack\":[]}"));
	free(t);
}

static void test_cut_after_main(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 6, PC_MALLOC, PC_F(1), PC_MAIN, PC_START,
			   PC_F(5), PC_F(6));
	/* "main2" is not "main": no cut */
	uint32_t b = stack(fx, 4, PC_MALLOC, PC_MAIN2, PC_START, PC_F(7));
	char *t, *p;

	alloc(fx, 0x100, 20, a, AF_MALLOC);
	alloc(fx, 0x200, 10, b, AF_MALLOC);
	check_records(fx,
"20 bytes in 1 block are unclassified in loss record 1 of 2\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400010: f1 (gen.c:101)\n"
"   by 0x55d0c0a010b4: main (h_basic.c:36)\n"
"\n"
"10 bytes in 1 block are unclassified in loss record 2 of 2\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x55d0c0a01600: main2 (h_basic.c:50)\n"
"   by 0x7f3a1c229d90: __libc_start_call_main (libc.so.6)\n"
"   by 0x400070: f7 (gen.c:107)\n"
"\n");
	t = json_of(fx);
	assert_non_null(strstr(t,
"{\"pc\":\"0x55d0c0a010b4\",\"function\":\"main\",\"file\":\"h_basic.c\","
"\"line\":36,\"module\":\"" EXE "\"}]}"));
	/* only record 2 goes below main2 */
	p = strstr(t, "\"pc\":\"0x7f3a1c229d90\"");
	assert_non_null(p);
	assert_null(strstr(p + 1, "\"pc\":\"0x7f3a1c229d90\""));
	assert_null(strstr(t, "0x400050"));
	free(t);

	/* main within the depth and the depth reached at main: same */
	fx->in.depth = 3;
	t = records_of(fx);
	assert_non_null(strstr(t,
"   by 0x55d0c0a010b4: main (h_basic.c:36)\n"
"\n10 bytes"));
	free(t);
}

static void test_frame0_allocator_name(void **state)
{
	struct fx *fx = *state;
	/* namer gives: a different name (alias), no name (only a module),
	 * nothing at all */
	uint32_t a = stack(fx, 2, PC_CALLOC, PC_F(1));
	uint32_t b = stack(fx, 2, PC_ANON, PC_F(2));
	uint32_t c = stack(fx, 2, PC_UNKNOWN, PC_F(3));
	char *t;
	unsigned i;

	alloc(fx, 0x100, 30, a, AF_MALLOC);
	alloc(fx, 0x200, 20, b, AF_POSIX_MEMALIGN);
	alloc(fx, 0x300, 10, c, AF_PVALLOC);
	check_records(fx,
"30 bytes in 1 block are unclassified in loss record 1 of 3\n"
"   at 0x7f3a1c2a6000: malloc (libc.so.6)\n"
"   by 0x400010: f1 (gen.c:101)\n"
"\n"
"20 bytes in 1 block are unclassified in loss record 2 of 3\n"
"   at 0x7f3a1c2a7000: posix_memalign (libc.so.6)\n"
"   by 0x400020: f2 (gen.c:102)\n"
"\n"
"10 bytes in 1 block are unclassified in loss record 3 of 3\n"
"   at 0x1234: pvalloc\n"
"   by 0x400030: f3 (gen.c:103)\n"
"\n");

	/* frame 0 is named as the innermost frame, the others as callers */
	fx->nc.ncalls = 0;
	free(text_of(fx));
	assert_int_equal(fx->nc.ncalls, 6);
	for (i = 0; i < 6; i++)
		assert_int_equal(fx->nc.calls[i].caller, i % 2);
	assert_int_equal(fx->nc.calls[0].pc, PC_CALLOC);
	assert_int_equal(fx->nc.calls[1].pc, PC_F(1));

	/* the JSON stack lists the callers: the allocator is "allocator" */
	t = json_of(fx);
	assert_non_null(strstr(t,
"\"allocator\":\"malloc\",\"stack\":[{\"pc\":\"0x400010\",\"function\":\"f1\""));
	assert_non_null(strstr(t,
"\"allocator\":\"posix_memalign\",\"stack\":[{\"pc\":\"0x400020\",\"function\":\"f2\""));
	assert_non_null(strstr(t,
"\"allocator\":\"pvalloc\",\"stack\":[{\"pc\":\"0x400030\",\"function\":\"f3\""));
	assert_null(strstr(t, "__libc_calloc"));
	free(t);
}

/* Frame lines when less is known; "main" is a caller frame name only. */
static void test_unknown_forms(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 7, PC_MALLOC, PC_GROW, PC_HELPER, PC_NOSYM,
			   PC_NOMOD, PC_LINEONLY, PC_UNKNOWN);
	char *t;

	alloc(fx, 0x100, 1, a, AF_MALLOC);
	check_records(fx,
"1 bytes in 1 block are unclassified in loss record 1 of 1\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x55d0c0a01183: grow_buffer (h_basic.c:14)\n"
"   by 0x55d0c0a01200: helper (h_basic)\n"
"   by 0x55d0c0a01300: ??? (h_basic+0x1300)\n"
"   by 0x55d0c0a01400: nomod\n"
"   by 0x55d0c0a01500: ??? (gen.c:7)\n"
"   by 0x1234: ???\n"
"\n");
	t = json_of(fx);
	assert_non_null(strstr(t,
"{\"pc\":\"0x55d0c0a01400\",\"function\":\"nomod\",\"file\":null,\"line\":null,\"module\":null},"
"{\"pc\":\"0x55d0c0a01500\",\"function\":null,\"file\":\"gen.c\",\"line\":7,\"module\":null},"
"{\"pc\":\"0x1234\",\"function\":null,\"file\":null,\"line\":null,\"module\":null}]}"));
	free(t);

	/* no namer at all: only addresses (the allocator still named) */
	fx->in.namer = NULL;
	check_records(fx,
"1 bytes in 1 block are unclassified in loss record 1 of 1\n"
"   at 0x7f3a1c2a5f30: malloc\n"
"   by 0x55d0c0a01183: ???\n"
"   by 0x55d0c0a01200: ???\n"
"   by 0x55d0c0a01300: ???\n"
"   by 0x55d0c0a01400: ???\n"
"   by 0x55d0c0a01500: ???\n"
"   by 0x1234: ???\n"
"\n");
}

/* A block with no stack (id 0) is a record with no frames. */
static void test_no_stack(void **state)
{
	struct fx *fx = *state;
	char *t;

	alloc(fx, 0x100, 64, 0, AF_CALLOC);
	check_records(fx,
"64 bytes in 1 block are unclassified in loss record 1 of 1\n"
"\n");
	t = json_of(fx);
	assert_non_null(strstr(t,
"\"records\":[{\"kind\":\"unclassified\",\"bytes\":64,\"blocks\":1,"
"\"direct_bytes\":64,\"indirect_bytes\":0,\"before_attach\":false,\"type\":null,\"allocator\":\"calloc\",\"stack\":[]}]"));
	free(t);
}

static void test_singular_block(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 1, PC_MALLOC);

	alloc(fx, 0x100, 1, a, AF_MALLOC);
	check_text(fx,
"ptleak[1234]: HEAP SUMMARY:\n"
"ptleak[1234]:     in use at exit: 1 bytes in 1 block\n"
"ptleak[1234]:   total heap usage: 1 allocs, 0 frees, 1 bytes allocated\n"
"ptleak[1234]:   peak: 1 bytes in use\n"
"ptleak[1234]:\n"
"ptleak[1234]: 1 bytes in 1 block are unclassified in loss record 1 of 1\n"
"ptleak[1234]:    at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"ptleak[1234]:\n"
"ptleak[1234]: LEAK SUMMARY:\n"
"ptleak[1234]:    definitely lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:    indirectly lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:      possibly lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:    still reachable: 0 bytes in 0 blocks\n"
"ptleak[1234]:       unclassified: 1 bytes in 1 block (no reachability scan yet)\n");

	/* no reason given: no parenthesis */
	fx->in.unclassified_why = NULL;
	{
		char *t = text_of(fx);

		assert_non_null(strstr(t,
"ptleak[1234]:       unclassified: 1 bytes in 1 block\n"));
		free(t);
	}
}

static void test_all_freed(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 1, PC_MALLOC);
	char *t;

	alloc(fx, 0x100, 1500, a, AF_MALLOC);
	alloc(fx, 0x200, 100, a, AF_CALLOC);
	heap_free(fx->h, 0x100);
	heap_free(fx->h, 0x200);
	check_text(fx,
"ptleak[1234]: HEAP SUMMARY:\n"
"ptleak[1234]:     in use at exit: 0 bytes in 0 blocks\n"
"ptleak[1234]:   total heap usage: 2 allocs, 2 frees, 1,600 bytes allocated\n"
"ptleak[1234]:   peak: 1,600 bytes in use\n"
"ptleak[1234]:\n"
"ptleak[1234]: All heap blocks were freed -- no leaks are possible\n");
	/* and the namer is never called */
	assert_int_equal(fx->nc.ncalls, 0);

	fx->in.exited = 0;
	t = json_of(fx);
	assert_string_equal(t,
"{\"version\":1,\"tool\":\"ptleak\",\"reason\":\"exit\","
"\"target\":{\"pid\":1234,\"argv\":[\"./h_basic\",\"a \\\"b\\\"\"],\"exit\":null,\"resources\":null},"
"\"heap\":{\"in_use\":{\"bytes\":0,\"blocks\":0},"
"\"totals\":{\"allocs\":2,\"frees\":2,\"bytes_allocated\":1600,\"unknown_frees\":0},"
"\"peak\":{\"bytes\":1600},"
"\"census\":null,"
"\"summary\":{" ZERO_SUMMARY ",\"unclassified\":" ZERO "},"
"\"records\":[],\"growth\":[],\"tracked\":true,\"why\":null},\"fds\":null,\"threads\":[]}\n");
	free(t);
}

/* --min-age on a machine up for 10 s: a block made before the attach
 * (a census block: no birth time) is older than the attach and kept
 * (usage.md), even at a --min-age over the machine's uptime; a block
 * made 5 s ago is not; one made 10 s ago is at 6 s. */
static void test_min_age_census(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 1, PC_MALLOC);
	struct heap_block b;

	memset(&b, 0, sizeof(b));
	b.addr = 0x1000;
	b.size = 40;
	b.fn = AF_MALLOC;
	b.before = 1;
	heap_census(fx->h, &b);
	b.before = 0;
	b.stack = a;
	b.addr = 0x2000;
	b.size = 7;
	b.time_ns = 5000000000ull;
	heap_alloc(fx->h, &b);
	alloc(fx, 0x3000, 9, a, AF_MALLOC);
	fx->in.reason = REPORT_SIGNAL;
	fx->in.exited = 0;
	fx->in.now_ns = 10000000000ull;
	fx->in.elapsed_ns = 3000000000ull;
	fx->in.min_age_ns = 6000000000ull;
	check_records(fx,
"40 bytes in 1 block are unclassified in loss record 1 of 2 (age over 3.000 s)\n"
"   made before ptleak attached\n"
"\n"
"9 bytes in 1 block are unclassified in loss record 2 of 2 (age 10.000 to 10.000 s)\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"\n");
	fx->in.min_age_ns = 3600000000000ull;
	check_records(fx,
"40 bytes in 1 block are unclassified in loss record 1 of 1 (age over 3.000 s)\n"
"   made before ptleak attached\n"
"\n");
}

static void test_untracked(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 1, PC_MALLOC);
	struct report_result res;
	char *t;

	/* nothing seen: never "no leaks are possible" */
	fx->in.heap_untracked = "no allocator function found in ./s (stripped static executable?)";
	check_text(fx,
"ptleak[1234]: HEAP SUMMARY:\n"
"ptleak[1234]:     in use at exit: 0 bytes in 0 blocks\n"
"ptleak[1234]:   total heap usage: 0 allocs, 0 frees, 0 bytes allocated\n"
"ptleak[1234]:   peak: 0 bytes in use\n"
"ptleak[1234]:\n"
"ptleak[1234]: heap NOT tracked: no allocator function found in ./s (stripped static executable?)\n");
	memset(&res, 0xff, sizeof(res));
	assert_int_equal(report_write(&fx->in, NULL, NULL, &res), 0);
	assert_int_equal(res.untracked, 1);
	assert_int_equal(res.lost_bytes, 0);
	t = json_of(fx);
	assert_non_null(strstr(t, "\"records\":[],\"growth\":[],\"tracked\":false,\"why\":"
		"\"no allocator function found in ./s (stripped static executable?)\"},"
		"\"fds\":null,\"threads\":[]}\n"));
	free(t);

	/* some calls seen, some not: the records, and the line first */
	alloc(fx, 0x100, 10, a, AF_MALLOC);
	fx->in.heap_untracked = "1 allocator call was not recorded (first: x)";
	t = text_of(fx);
	assert_non_null(strstr(t,
"ptleak[1234]:\n"
"ptleak[1234]: heap NOT tracked: 1 allocator call was not recorded (first: x)\n"
"ptleak[1234]: 10 bytes in 1 block are unclassified in loss record 1 of 1\n"));
	free(t);

	/* tracked: the result says so */
	fx->in.heap_untracked = NULL;
	assert_int_equal(report_write(&fx->in, NULL, NULL, &res), 0);
	assert_int_equal(res.untracked, 0);
	/* the fds part alone counts too */
	fx->in.heap = NULL;
	fx->in.heap_untracked = "ignored: no heap";
	assert_int_equal(report_write(&fx->in, NULL, NULL, &res), 0);
	assert_int_equal(res.untracked, 0);
}

static void test_thousands(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 1, PC_MALLOC);
	uint32_t b = stack(fx, 1, PC_CALLOC);
	char *t;
	uint64_t i;

	alloc(fx, 0x10, 12345678901ull, a, AF_MALLOC);
	for (i = 0; i < 1234; i++)
		alloc(fx, 0x100000 + i * 16, 999, b, AF_CALLOC);
	t = text_of(fx);
	assert_non_null(strstr(t,
"ptleak[1234]:     in use at exit: 12,346,911,667 bytes in 1,235 blocks\n"
"ptleak[1234]:   total heap usage: 1,235 allocs, 0 frees, 12,346,911,667 bytes allocated\n"
"ptleak[1234]:   peak: 12,346,911,667 bytes in use\n"));
	assert_non_null(strstr(t,
"ptleak[1234]: 12,345,678,901 bytes in 1 block are unclassified in loss record 1 of 2\n"));
	assert_non_null(strstr(t,
"ptleak[1234]: 1,232,766 bytes in 1,234 blocks are unclassified in loss record 2 of 2\n"));
	assert_non_null(strstr(t,
"ptleak[1234]:       unclassified: 12,346,911,667 bytes in 1,235 blocks (no reachability scan yet)\n"));
	free(t);
	t = json_of(fx);
	assert_non_null(strstr(t, "\"in_use\":{\"bytes\":12346911667,\"blocks\":1235}"));
	free(t);
}

static void test_reason_labels(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 1, PC_MALLOC);
	char *t;

	alloc(fx, 0x100, 1, a, AF_MALLOC);

	fx->in.reason = REPORT_SIGNAL;
	fx->in.exited = 0;
	t = text_of(fx);
	assert_non_null(strstr(t,
"ptleak[1234]: HEAP SUMMARY:\n"
"ptleak[1234]:         in use now: 1 bytes in 1 block\n"
"ptleak[1234]:   total heap usage:"));
	free(t);
	t = json_of(fx);
	assert_non_null(strstr(t, "{\"version\":1,\"tool\":\"ptleak\",\"reason\":\"signal\",\"target\":{\"pid\":1234,\"argv\":[\"./h_basic\",\"a \\\"b\\\"\"],\"exit\":null,\"resources\":null},\"heap\":{"));
	free(t);

	fx->in.reason = REPORT_DETACH;
	t = text_of(fx);
	assert_non_null(strstr(t,
"ptleak[1234]: HEAP SUMMARY:\n"
"ptleak[1234]:   in use at detach: 1 bytes in 1 block\n"
"ptleak[1234]:   total heap usage:"));
	free(t);
	t = json_of(fx);
	assert_non_null(strstr(t, "\"reason\":\"detach\",\"target\""));
	free(t);

	/* died of a signal */
	fx->in.reason = REPORT_EXIT;
	fx->in.exited = 1;
	fx->in.exit_code = 0;
	fx->in.exit_signal = 11;
	fx->in.pid = 42;
	fx->in.argv = NULL;
	t = json_of(fx);
	assert_non_null(strstr(t, "{\"version\":1,\"tool\":\"ptleak\",\"reason\":\"exit\",\"target\":{\"pid\":42,\"argv\":[],\"exit\":{\"signal\":11},\"resources\":null},\"heap\":{"));
	free(t);
	fx->in.exit_signal = 0;
	fx->in.exit_code = 3;
	t = json_of(fx);
	assert_non_null(strstr(t, "\"exit\":{\"code\":3},\"resources\":null},\"heap\":{"));
	free(t);
	t = text_of(fx);
	assert_non_null(strstr(t, "ptleak[42]:     in use at exit: 1 bytes in 1 block\n"));
	assert_null(strstr(t, "1234"));
	free(t);
}

static void test_heap_null(void **state)
{
	struct fx *fx = *state;
	char *t;

	fx->in.heap = NULL;
	t = text_of(fx);
	assert_string_equal(t, "");
	free(t);
	t = json_of(fx);
	assert_string_equal(t,
"{\"version\":1,\"tool\":\"ptleak\",\"reason\":\"exit\","
"\"target\":{\"pid\":1234,\"argv\":[\"./h_basic\",\"a \\\"b\\\"\"],\"exit\":{\"code\":0},\"resources\":null},"
"\"heap\":null,\"fds\":null,\"threads\":[]}\n");
	free(t);
}

static void test_atomic_write(void **state)
{
	struct fx *fx = *state;
	char path[256], tmp[300], *t, *err;
	struct stat st;
	struct cap c;
	FILE *f;

	build_small(fx);
	path_in_dir(fx, "r.json", path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);

	/* an existing file is replaced whole */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("old contents that are longer than nothing at all\n", f);
	fclose(f);
	assert_int_equal(report_write(&fx->in, NULL, path, NULL), 0);
	assert_int_equal(stat(tmp, &st), -1);
	assert_int_equal(errno, ENOENT);
	t = read_all(path);
	assert_true(!strncmp(t, "{\"version\":1,", 13));
	assert_true(strlen(t) > 100 && !strcmp(t + strlen(t) - 25, "\"fds\":null,\"threads\":[]}\n"));
	free(t);

	/* a directory that does not exist: -1, a message, no file */
	snprintf(path, sizeof(path), "%s/nonexistent/r.json", fx->dir);
	cap_begin(&c);
	assert_int_equal(report_write(&fx->in, NULL, path, NULL), -1);
	err = cap_end(&c);
	snprintf(tmp, sizeof(tmp), "ptleak: cannot write %s: %s\n", path,
		 strerror(ENOENT));
	assert_string_equal(err, tmp);
	free(err);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(stat(tmp, &st), -1);

	/* the text is still written when the JSON cannot be */
	{
		char *buf = NULL;
		size_t len = 0;

		f = open_memstream(&buf, &len);
		cap_begin(&c);
		assert_int_equal(report_write(&fx->in, f, path, NULL), -1);
		free(cap_end(&c));
		fclose(f);
		assert_non_null(strstr(buf, "LEAK SUMMARY:"));
		free(buf);
	}

	/* rename fails (the target is a non-empty directory): -1 and the
	 * temp file is removed */
	path_in_dir(fx, "isdir.json", path, sizeof(path));
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(tmp, sizeof(tmp), "%s/x", path);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fclose(f);
	cap_begin(&c);
	assert_int_equal(report_write(&fx->in, NULL, path, NULL), -1);
	err = cap_end(&c);
	assert_true(!strncmp(err, "ptleak: cannot write ", 21));
	assert_non_null(strstr(err, "isdir.json: "));
	free(err);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(stat(tmp, &st), -1);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	snprintf(tmp, sizeof(tmp), "%s/x", path);
	unlink(tmp);
}

/* A text stream that fails (disk full) makes the report fail. */
static void test_text_write_error(void **state)
{
	struct fx *fx = *state;
	struct cap c;
	char *err;
	FILE *f = fopen("/dev/full", "w");

	if (!f)
		skip();
	build_small(fx);
	cap_begin(&c);
	assert_int_equal(report_write(&fx->in, f, NULL, NULL), -1);
	err = cap_end(&c);
	assert_true(!strncmp(err, "ptleak: cannot write the report: ", 33));
	free(err);
	fclose(f);
}

/* 10^5 blocks in 10^3 stacks x 2 allocators: grouping must not be
 * quadratic (about a millisecond or two; a quadratic scan takes seconds). */
static void test_many_blocks(void **state)
{
	struct fx *fx = *state;
	uint32_t ids[1000];
	struct timespec t0, t1;
	unsigned i;
	char *t, *p;
	int n;

	for (i = 0; i < 1000; i++)
		ids[i] = stack(fx, 3, PC_MALLOC, 0x500000ull + i * 8, PC_MAIN);
	for (i = 0; i < 100000; i++)
		alloc(fx, 0x10000000ull + i * 32ull, 1 + i % 7, ids[i % 1000],
		      i % 2000 < 1000 ? AF_MALLOC : AF_CALLOC);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	t = text_of(fx);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("report of 100000 blocks / 2000 records: %.1f ms\n",
		      (t1.tv_sec - t0.tv_sec) * 1e3 +
		      (t1.tv_nsec - t0.tv_nsec) / 1e6);
	assert_non_null(strstr(t, "in loss record 2,000 of 2,000\n"));
	assert_null(strstr(t, "of 2,001"));
	/* sum of 1 + i % 7 over 100000 blocks */
	assert_non_null(strstr(t,
"ptleak[1234]:       unclassified: 399,995 bytes in 100,000 blocks"));
	for (n = 0, p = t; (p = strstr(p, " blocks are unclassified in loss record")); p++)
		n++;
	assert_int_equal(n, 2000);
	free(t);
}

/* ---- with a reachability scan ---- */

/*
 *   stack 1 = malloc, grow_buffer, main, __libc_start_call_main
 *   stack 2 = calloc (__libc_calloc), helper, ??? in exe, ???
 *   stack 3 = malloc, f1;  stack 4 = malloc, f2
 * blocks and verdicts:
 *   0x1000 1,200  s1 malloc  definitely lost, 1,224 indirect
 *   0x2000   100  s3 malloc  indirectly lost
 *   0x2100 1,124  s3 malloc  indirectly lost
 *   0x3000 4,096  s4 malloc  still reachable
 *   0x4000    50  s2 calloc  possibly lost
 *   0x4100    30  s2 calloc  definitely lost
 *   0x5000    10  s1 malloc  still reachable (same stack and fn as
 *                            0x1000, another class: another record)
 * records by bytes: 1 s4 reachable 4,096; 2 s1 definite 2,424;
 * 3 s3 indirect 1,224; 4 s2 possible 50; 5 s2 definite 30;
 * 6 s1 reachable 10.
 */
static void build_scanned(struct fx *fx)
{
	uint32_t s1 = stack(fx, 4, PC_MALLOC, PC_GROW, PC_MAIN, PC_START);
	uint32_t s2 = stack(fx, 4, PC_CALLOC, PC_HELPER, PC_NOSYM, PC_UNKNOWN);
	uint32_t s3 = stack(fx, 2, PC_MALLOC, PC_F(1));
	uint32_t s4 = stack(fx, 2, PC_MALLOC, PC_F(2));

	/* inserted unsorted: the verdicts are kept sorted */
	alloc(fx, 0x5000, 10, s1, AF_MALLOC);
	verdict(fx, 0x5000, 10, SCAN_STILL_REACHABLE, 0);
	alloc(fx, 0x1000, 1200, s1, AF_MALLOC);
	verdict(fx, 0x1000, 1200, SCAN_DEFINITELY_LOST, 1224);
	alloc(fx, 0x2100, 1124, s3, AF_MALLOC);
	verdict(fx, 0x2100, 1124, SCAN_INDIRECTLY_LOST, 0);
	alloc(fx, 0x2000, 100, s3, AF_MALLOC);
	verdict(fx, 0x2000, 100, SCAN_INDIRECTLY_LOST, 0);
	alloc(fx, 0x3000, 4096, s4, AF_MALLOC);
	verdict(fx, 0x3000, 4096, SCAN_STILL_REACHABLE, 0);
	alloc(fx, 0x4000, 50, s2, AF_CALLOC);
	verdict(fx, 0x4000, 50, SCAN_POSSIBLY_LOST, 0);
	alloc(fx, 0x4100, 30, s2, AF_CALLOC);
	verdict(fx, 0x4100, 30, SCAN_DEFINITELY_LOST, 0);
}

#define SCANNED_HEAD \
"ptleak[1234]: HEAP SUMMARY:\n" \
"ptleak[1234]:     in use at exit: 6,610 bytes in 7 blocks\n" \
"ptleak[1234]:   total heap usage: 7 allocs, 0 frees, 6,610 bytes allocated\n" \
"ptleak[1234]:   peak: 6,610 bytes in use\n" \
"ptleak[1234]:\n"

#define REC_S2(what, k) \
what " in loss record " k " of 6\n" \
"   at 0x7f3a1c2a6000: calloc (libc.so.6)\n" \
"   by 0x55d0c0a01200: helper (h_basic)\n" \
"   by 0x55d0c0a01300: ??? (h_basic+0x1300)\n" \
"   by 0x1234: ???\n" \
"\n"

static void test_scanned_text(void **state)
{
	struct fx *fx = *state;
	struct report_result res;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	build_scanned(fx);
	memset(&res, 0xff, sizeof(res));
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report_write(&fx->in, f, NULL, &res), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, SCANNED_HEAD
"ptleak[1234]: 2,424 (1,200 direct, 1,224 indirect) bytes in 1 block are definitely lost in loss record 2 of 6\n"
"ptleak[1234]:    at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"ptleak[1234]:    by 0x55d0c0a01183: grow_buffer (h_basic.c:14)\n"
"ptleak[1234]:    by 0x55d0c0a010b4: main (h_basic.c:36)\n"
"ptleak[1234]:\n"
"ptleak[1234]: 1,224 bytes in 2 blocks are indirectly lost in loss record 3 of 6\n"
"ptleak[1234]:    at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"ptleak[1234]:    by 0x400010: f1 (gen.c:101)\n"
"ptleak[1234]:\n"
"ptleak[1234]: 50 bytes in 1 block are possibly lost in loss record 4 of 6\n"
"ptleak[1234]:    at 0x7f3a1c2a6000: calloc (libc.so.6)\n"
"ptleak[1234]:    by 0x55d0c0a01200: helper (h_basic)\n"
"ptleak[1234]:    by 0x55d0c0a01300: ??? (h_basic+0x1300)\n"
"ptleak[1234]:    by 0x1234: ???\n"
"ptleak[1234]:\n"
"ptleak[1234]: 30 bytes in 1 block are definitely lost in loss record 5 of 6\n"
"ptleak[1234]:    at 0x7f3a1c2a6000: calloc (libc.so.6)\n"
"ptleak[1234]:    by 0x55d0c0a01200: helper (h_basic)\n"
"ptleak[1234]:    by 0x55d0c0a01300: ??? (h_basic+0x1300)\n"
"ptleak[1234]:    by 0x1234: ???\n"
"ptleak[1234]:\n"
"ptleak[1234]: LEAK SUMMARY:\n"
"ptleak[1234]:    definitely lost: 1,230 bytes in 2 blocks\n"
"ptleak[1234]:    indirectly lost: 1,224 bytes in 2 blocks\n"
"ptleak[1234]:      possibly lost: 50 bytes in 1 block\n"
"ptleak[1234]:    still reachable: 4,106 bytes in 2 blocks\n"
"ptleak[1234]:         suppressed: 0 bytes in 0 blocks\n");
	free(buf);
	/* still reachable records, not listed, are not named */
	assert_int_equal(fx->nc.ncalls, 3 + 2 + 4 + 4);
	/* lost: definitely + indirectly + possibly, direct bytes */
	assert_int_equal(res.lost_bytes, 1200 + 30 + 1224 + 50);
	assert_int_equal(res.lost_blocks, 5);
}

static void test_scanned_show_reachable(void **state)
{
	struct fx *fx = *state;

	build_scanned(fx);
	fx->in.show_reachable = 1;
	check_records(fx,
"4,096 bytes in 1 block are still reachable in loss record 1 of 6\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400020: f2 (gen.c:102)\n"
"\n"
"2,424 (1,200 direct, 1,224 indirect) bytes in 1 block are definitely lost in loss record 2 of 6\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x55d0c0a01183: grow_buffer (h_basic.c:14)\n"
"   by 0x55d0c0a010b4: main (h_basic.c:36)\n"
"\n"
"1,224 bytes in 2 blocks are indirectly lost in loss record 3 of 6\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400010: f1 (gen.c:101)\n"
"\n"
REC_S2("50 bytes in 1 block are possibly lost", "4")
REC_S2("30 bytes in 1 block are definitely lost", "5")
"10 bytes in 1 block are still reachable in loss record 6 of 6\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x55d0c0a01183: grow_buffer (h_basic.c:14)\n"
"   by 0x55d0c0a010b4: main (h_basic.c:36)\n"
"\n");
	{
		char *t = text_of(fx);

		/* the summary does not depend on --show-reachable */
		assert_non_null(strstr(t,
"ptleak[1234]: LEAK SUMMARY:\n"
"ptleak[1234]:    definitely lost: 1,230 bytes in 2 blocks\n"
"ptleak[1234]:    indirectly lost: 1,224 bytes in 2 blocks\n"
"ptleak[1234]:      possibly lost: 50 bytes in 1 block\n"
"ptleak[1234]:    still reachable: 4,106 bytes in 2 blocks\n"
"ptleak[1234]:         suppressed: 0 bytes in 0 blocks\n"));
		assert_null(strstr(t, "unclassified"));
		assert_null(strstr(t, "Suppressions used"));
		free(t);
	}
}

#define SCANNED_SUMMARY(dl, il, pl, sr, sup) \
"\"summary\":{\"definitely_lost\":" dl ",\"indirectly_lost\":" il \
",\"possibly_lost\":" pl ",\"still_reachable\":" sr ",\"suppressed\":" sup \
",\"unclassified\":" ZERO "}"

static void test_scanned_json(void **state)
{
	struct fx *fx = *state;
	char *t;

	build_scanned(fx);
	t = json_of(fx);
	assert_non_null(strstr(t, SCANNED_SUMMARY(
		"{\"bytes\":1230,\"blocks\":2}", "{\"bytes\":1224,\"blocks\":2}",
		"{\"bytes\":50,\"blocks\":1}", "{\"bytes\":4106,\"blocks\":2}",
		ZERO) ",\"records\":["
"{\"kind\":\"definitely_lost\",\"bytes\":2424,\"blocks\":1,\"direct_bytes\":1200,\"indirect_bytes\":1224,"
"\"before_attach\":false,\"type\":null,\"allocator\":\"malloc\",\"stack\":["
"{\"pc\":\"0x55d0c0a01183\",\"function\":\"grow_buffer\",\"file\":\"h_basic.c\",\"line\":14,\"module\":\"" EXE "\"},"
"{\"pc\":\"0x55d0c0a010b4\",\"function\":\"main\",\"file\":\"h_basic.c\",\"line\":36,\"module\":\"" EXE "\"}]},"
"{\"kind\":\"indirectly_lost\",\"bytes\":1224,\"blocks\":2,\"direct_bytes\":1224,\"indirect_bytes\":0,"
"\"before_attach\":false,\"type\":null,\"allocator\":\"malloc\",\"stack\":["
"{\"pc\":\"0x400010\",\"function\":\"f1\",\"file\":\"gen.c\",\"line\":101,\"module\":\"" EXE "\"}]},"
"{\"kind\":\"possibly_lost\",\"bytes\":50,\"blocks\":1,\"direct_bytes\":50,\"indirect_bytes\":0,"
"\"before_attach\":false,\"type\":null,\"allocator\":\"calloc\",\"stack\":["));
	assert_non_null(strstr(t,
"{\"kind\":\"definitely_lost\",\"bytes\":30,\"blocks\":1,\"direct_bytes\":30,\"indirect_bytes\":0,"
"\"before_attach\":false,\"type\":null,\"allocator\":\"calloc\",\"stack\":["));
	assert_non_null(strstr(t, "\"module\":null}]}],\"growth\":[],\"tracked\":true,\"why\":null},\"fds\":null,\"threads\":[]}\n"));
	assert_null(strstr(t, "still_reachable\",\"bytes"));
	assert_null(strstr(t, "\"kind\":\"unclassified\""));
	free(t);

	/* with --show-reachable: still reachable records listed first and last */
	fx->in.show_reachable = 1;
	t = json_of(fx);
	assert_non_null(strstr(t, "\"records\":["
"{\"kind\":\"still_reachable\",\"bytes\":4096,\"blocks\":1,\"direct_bytes\":4096,\"indirect_bytes\":0,"
"\"before_attach\":false,\"type\":null,\"allocator\":\"malloc\",\"stack\":["
"{\"pc\":\"0x400020\",\"function\":\"f2\",\"file\":\"gen.c\",\"line\":102,\"module\":\"" EXE "\"}]},"
"{\"kind\":\"definitely_lost\",\"bytes\":2424,"));
	assert_non_null(strstr(t,
"{\"kind\":\"still_reachable\",\"bytes\":10,\"blocks\":1,\"direct_bytes\":10,\"indirect_bytes\":0,"
"\"before_attach\":false,\"type\":null,\"allocator\":\"malloc\",\"stack\":["
"{\"pc\":\"0x55d0c0a01183\",\"function\":\"grow_buffer\",\"file\":\"h_basic.c\",\"line\":14,\"module\":\"" EXE "\"},"
"{\"pc\":\"0x55d0c0a010b4\",\"function\":\"main\",\"file\":\"h_basic.c\",\"line\":36,\"module\":\"" EXE "\"}]}"
"],\"growth\":[],\"tracked\":true,\"why\":null},\"fds\":null,\"threads\":[]}\n"));
	free(t);
}

/* A live block the scan has no verdict on counts as definitely lost with
 * no indirect bytes; blocks of one stack and allocator in different
 * classes make different records; no scan, a reachable-only heap. */
static void test_scanned_edge(void **state)
{
	struct fx *fx = *state;
	uint32_t a = stack(fx, 2, PC_MALLOC, PC_F(1));
	struct report_result res;
	char *t;

	alloc(fx, 0x100, 8, a, AF_MALLOC);
	verdict(fx, 0x100, 8, SCAN_STILL_REACHABLE, 0);
	alloc(fx, 0x200, 8, a, AF_MALLOC);
	verdict(fx, 0x200, 8, SCAN_STILL_REACHABLE, 0);
	check_records(fx, "");
	t = text_of(fx);
	assert_non_null(strstr(t, 
"ptleak[1234]: HEAP SUMMARY:\n"
"ptleak[1234]:     in use at exit: 16 bytes in 2 blocks\n"
"ptleak[1234]:   total heap usage: 2 allocs, 0 frees, 16 bytes allocated\n"
"ptleak[1234]:   peak: 16 bytes in use\n"
"ptleak[1234]:\n"
"ptleak[1234]: LEAK SUMMARY:\n"
"ptleak[1234]:    definitely lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:    indirectly lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:      possibly lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:    still reachable: 16 bytes in 2 blocks\n"
"ptleak[1234]:         suppressed: 0 bytes in 0 blocks\n"));
	free(t);
	assert_int_equal(fx->nc.ncalls, 0);
	assert_int_equal(report_write(&fx->in, NULL, NULL, &res), 0);
	assert_int_equal(res.lost_bytes, 0);
	assert_int_equal(res.lost_blocks, 0);

	alloc(fx, 0x300, 5, a, AF_MALLOC);	/* no verdict */
	check_records(fx,
"5 bytes in 1 block are definitely lost in loss record 2 of 2\n"
"   at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"   by 0x400010: f1 (gen.c:101)\n"
"\n");
	assert_int_equal(report_write(&fx->in, NULL, NULL, &res), 0);
	assert_int_equal(res.lost_bytes, 5);
	assert_int_equal(res.lost_blocks, 1);

	/* without a scan nothing is "lost" */
	fx->in.classes = NULL;
	fx->in.nclasses = 0;
	assert_int_equal(report_write(&fx->in, NULL, NULL, &res), 0);
	assert_int_equal(res.lost_bytes, 0);
	assert_int_equal(res.lost_blocks, 0);
}

static void test_suppressed(void **state)
{
	struct fx *fx = *state;
	struct report_result res;
	char *buf = NULL, *t;
	size_t len = 0;
	FILE *f;

	build_scanned(fx);
	suppressions(fx,
		"# test\n"
		"leak:grow_*\n"		/* s1: both records */
		"leak:nothing\n"	/* unused: not in the table */
		"fd:helper\n"		/* not for leaks */
		"leak:f1\n");		/* s3 */
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report_write(&fx->in, f, NULL, &res), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, SCANNED_HEAD
"ptleak[1234]: 50 bytes in 1 block are possibly lost in loss record 4 of 6\n"
"ptleak[1234]:    at 0x7f3a1c2a6000: calloc (libc.so.6)\n"
"ptleak[1234]:    by 0x55d0c0a01200: helper (h_basic)\n"
"ptleak[1234]:    by 0x55d0c0a01300: ??? (h_basic+0x1300)\n"
"ptleak[1234]:    by 0x1234: ???\n"
"ptleak[1234]:\n"
"ptleak[1234]: 30 bytes in 1 block are definitely lost in loss record 5 of 6\n"
"ptleak[1234]:    at 0x7f3a1c2a6000: calloc (libc.so.6)\n"
"ptleak[1234]:    by 0x55d0c0a01200: helper (h_basic)\n"
"ptleak[1234]:    by 0x55d0c0a01300: ??? (h_basic+0x1300)\n"
"ptleak[1234]:    by 0x1234: ???\n"
"ptleak[1234]:\n"
"ptleak[1234]: LEAK SUMMARY:\n"
"ptleak[1234]:    definitely lost: 30 bytes in 1 block\n"
"ptleak[1234]:    indirectly lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:      possibly lost: 50 bytes in 1 block\n"
"ptleak[1234]:    still reachable: 4,096 bytes in 1 block\n"
"ptleak[1234]:         suppressed: 2,434 bytes in 4 blocks\n"
"ptleak[1234]:\n"
"ptleak[1234]: Suppressions used:\n"
"ptleak[1234]:   count      bytes template\n"
"ptleak[1234]:       2       1210 grow_*\n"
"ptleak[1234]:       1       1224 f1\n");
	free(buf);
	assert_int_equal(res.lost_bytes, 80);
	assert_int_equal(res.lost_blocks, 2);
	/* the counts: records and their direct bytes (an indirect block has
	 * its own record), adding up to summary.suppressed: 1,210 + 1,224 */
	assert_int_equal(fx->supp->p[0].count, 2);
	assert_int_equal(fx->supp->p[0].bytes, 1210);
	assert_int_equal(fx->supp->p[1].count, 0);
	assert_int_equal(fx->supp->p[2].count, 0);
	assert_int_equal(fx->supp->p[3].count, 1);
	assert_int_equal(fx->supp->p[3].bytes, 1224);

	/* every record named once to match, the two listed ones again */
	assert_int_equal(fx->nc.ncalls, (2 + 3 + 2 + 4 + 4 + 3) + (4 + 4));

	/* a second report counts afresh; suppressed records stay hidden
	 * with --show-reachable */
	fx->in.show_reachable = 1;
	t = text_of(fx);
	assert_non_null(strstr(t,
"ptleak[1234]: 4,096 bytes in 1 block are still reachable in loss record 1 of 6\n"));
	assert_null(strstr(t, "loss record 2 of 6"));
	assert_null(strstr(t, "loss record 3 of 6"));
	assert_null(strstr(t, "loss record 6 of 6"));
	assert_non_null(strstr(t,
"ptleak[1234]:       2       1210 grow_*\n"
"ptleak[1234]:       1       1224 f1\n"));
	free(t);
	assert_int_equal(fx->supp->p[0].count, 2);

	t = json_of(fx);
	assert_non_null(strstr(t, SCANNED_SUMMARY(
		"{\"bytes\":30,\"blocks\":1}", ZERO,
		"{\"bytes\":50,\"blocks\":1}", "{\"bytes\":4096,\"blocks\":1}",
		"{\"bytes\":2434,\"blocks\":4}") ",\"records\":["
"{\"kind\":\"still_reachable\",\"bytes\":4096,"));
	assert_null(strstr(t, "grow_buffer"));
	assert_null(strstr(t, "\"f1\""));
	free(t);
}

/* Suppressions match the frames as shown: frame 0 is the allocator's
 * name, the depth cut and the cut after main apply. */
static void test_suppress_shown_frames(void **state)
{
	struct fx *fx = *state;
	char *t;

	build_scanned(fx);

	/* the allocator: frame 0 is "calloc" though the symbol is
	 * __libc_calloc */
	suppressions(fx, "leak:__libc_calloc\nleak:__libc_start_call_main\n");
	t = text_of(fx);
	assert_non_null(strstr(t, "suppressed: 0 bytes in 0 blocks\n"));
	assert_null(strstr(t, "Suppressions used"));
	free(t);
	suppressions(fx, "leak:calloc\n");
	t = text_of(fx);
	assert_non_null(strstr(t, "suppressed: 80 bytes in 2 blocks\n"));
	assert_non_null(strstr(t, "      2         80 calloc\n"));
	free(t);

	/* beyond the depth: not matched */
	suppressions(fx, "leak:main\n");
	fx->in.depth = 2;
	t = text_of(fx);
	assert_non_null(strstr(t, "suppressed: 0 bytes in 0 blocks\n"));
	free(t);
	fx->in.depth = 3;
	t = text_of(fx);
	assert_non_null(strstr(t, "suppressed: 1,210 bytes in 2 blocks\n"));
	free(t);

	/* a source file: s1 only */
	suppressions(fx, "leak:h_basic.?\n");
	t = text_of(fx);
	assert_non_null(strstr(t, "suppressed: 1,210 bytes in 2 blocks\n"));
	free(t);
	/* a module basename, a module path: every stack has a frame in EXE */
	suppressions(fx, "leak:h_bas?c\n");
	t = text_of(fx);
	assert_non_null(strstr(t, "suppressed: 6,610 bytes in 7 blocks\n"));
	free(t);
	suppressions(fx, "leak:/work/*\n");
	t = text_of(fx);
	assert_non_null(strstr(t, "suppressed: 6,610 bytes in 7 blocks\n"));
	assert_non_null(strstr(t,
"ptleak[1234]:    still reachable: 0 bytes in 0 blocks\n"));
	/* direct bytes: summary.suppressed's */
	assert_non_null(strstr(t, "      6       6610 /work/*\n"));
	free(t);
}

/* Without a scan, suppressed records leave "unclassified". */
static void test_suppressed_unscanned(void **state)
{
	struct fx *fx = *state;
	char *t;

	build_small(fx);
	suppressions(fx, "leak:helper\n");
	check_text(fx,
"ptleak[1234]: HEAP SUMMARY:\n"
"ptleak[1234]:     in use at exit: 3,400 bytes in 4 blocks\n"
"ptleak[1234]:   total heap usage: 5 allocs, 1 frees, 1,003,400 bytes allocated\n"
"ptleak[1234]:   peak: 1,000,000 bytes in use\n"
"ptleak[1234]:\n"
"ptleak[1234]: 200 bytes in 1 block are unclassified in loss record 2 of 3\n"
"ptleak[1234]:    at 0x7f3a1c2a5f30: malloc (libc.so.6)\n"
"ptleak[1234]:    by 0x55d0c0a01183: grow_buffer (h_basic.c:14)\n"
"ptleak[1234]:    by 0x55d0c0a010b4: main (h_basic.c:36)\n"
"ptleak[1234]:\n"
"ptleak[1234]: 200 bytes in 1 block are unclassified in loss record 3 of 3\n"
"ptleak[1234]:    at 0x7f3a1c2a5f30: realloc (libc.so.6)\n"
"ptleak[1234]:    by 0x55d0c0a01183: grow_buffer (h_basic.c:14)\n"
"ptleak[1234]:    by 0x55d0c0a010b4: main (h_basic.c:36)\n"
"ptleak[1234]:\n"
"ptleak[1234]: LEAK SUMMARY:\n"
"ptleak[1234]:    definitely lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:    indirectly lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:      possibly lost: 0 bytes in 0 blocks\n"
"ptleak[1234]:    still reachable: 0 bytes in 0 blocks\n"
"ptleak[1234]:         suppressed: 3,000 bytes in 2 blocks\n"
"ptleak[1234]:       unclassified: 400 bytes in 2 blocks (no reachability scan yet)\n"
"ptleak[1234]:\n"
"ptleak[1234]: Suppressions used:\n"
"ptleak[1234]:   count      bytes template\n"
"ptleak[1234]:       1       3000 helper\n");
	t = json_of(fx);
	assert_non_null(strstr(t, "\"summary\":{" 
	"\"definitely_lost\":" ZERO ",\"indirectly_lost\":" ZERO
	",\"possibly_lost\":" ZERO ",\"still_reachable\":" ZERO
	",\"suppressed\":"
		"{\"bytes\":3000,\"blocks\":2},\"unclassified\":{\"bytes\":400,\"blocks\":2}}"));
	free(t);

	/* an empty suppressions file changes nothing and names nothing more */
	suppressions(fx, "# none\n");
	fx->nc.ncalls = 0;
	t = text_of(fx);
	assert_non_null(strstr(t, "suppressed: 0 bytes in 0 blocks\n"));
	assert_non_null(strstr(t, "unclassified: 3,400 bytes in 4 blocks"));
	free(t);
	assert_int_equal(fx->nc.ncalls, 4 + 3 + 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_text_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_and_json_together, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grouping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_order_ties, setup, teardown),
		cmocka_unit_test_setup_teardown(test_depth_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_after_main, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame0_allocator_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_forms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_singular_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_freed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_min_age_census, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untracked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thousands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reason_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heap_null, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_write_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scanned_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scanned_show_reachable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scanned_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scanned_edge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_suppressed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_suppress_shown_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_suppressed_unscanned, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
