/*
 * test_report_html.c - the HTML report (--html) on synthetic tables: its
 * data blocks exactly, escaping, the source lines and their bounds, the
 * samples' bound.
 *
 * PTLEAK_HTML_KEEP=FILE keeps the many-point report (three stacks over
 * time, a peak snapshot) at FILE: the integration test draws it in a
 * browser.
 */
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
#include "output/report_html.h"
#include "output/timeline.h"
#include "tables/stacks.h"
#include "symbols/symbols.h"

#define EXE "/work/app"
#define PC_MALLOC 0x7f0000001000ull
#define PC_MAIN 0x401000ull
/* PC_AT(L): a frame at line L of the fixture's source file */
#define PC_AT(l) (0x402000ull + 0x10 * (uint64_t)(l))
#define PC_NOFILE 0x403000ull	/* line 5 of a file that is not there */
#define PC_EVIL 0x404000ull	/* a name that would close the <script> */
#define PC_REL 0x405000ull	/* a relative path: never read */

struct fx {
	struct heap *h;
	struct stacks *s;
	struct report_input in;
	struct html_input html;
	char dir[64], src[128], out[128], json[128];
	char fname[64][16];
};

static void namer(void *ctx, uint64_t pc, int caller, struct frame_info *out)
{
	struct fx *fx = ctx;

	memset(out, 0, sizeof(*out));
	out->pc = pc;
	out->module = EXE;
	if (pc == PC_MALLOC) {
		out->function = "malloc";
		out->module = "/lib/libc.so.6";
	} else if (pc == PC_MAIN) {
		out->function = "main";
		out->file = "app.c";
		out->path = fx->src;
		out->line = 3;
	} else if (pc == PC_NOFILE) {
		out->function = "gone";
		out->file = "gone.c";
		out->path = "/nonexistent/gone.c";
		out->line = 5;
	} else if (pc == PC_REL) {
		out->function = "rel";
		out->file = "app.c";
		out->path = "app.c";
		out->line = 2;
	} else if (pc == PC_EVIL) {
		out->function = "</script><script>alert(1)</script>";
	} else if (pc >= PC_AT(0) && pc < PC_AT(64)) {
		unsigned l = (unsigned)((pc - PC_AT(0)) / 0x10);

		snprintf(fx->fname[l], sizeof(fx->fname[l]), "f%u", l);
		out->function = fx->fname[l];
		out->file = "app.c";
		out->path = fx->src;
		out->line = (int)l;
	}
}

static char *const argv0[] = { "/bin/<b>&\"x'", "arg", NULL };

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	FILE *f;
	int i;

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/test_report_html.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->src, sizeof(fx->src), "%s/app.c", fx->dir);
	snprintf(fx->out, sizeof(fx->out), "%s/r.html", fx->dir);
	snprintf(fx->json, sizeof(fx->json), "%s/r.json", fx->dir);
	/* 30 lines "line N"; line 12 is 600 'x' */
	f = fopen(fx->src, "w");
	if (!f)
		return -1;
	for (i = 1; i <= 30; i++) {
		if (i == 12) {
			int k;

			for (k = 0; k < 600; k++)
				putc('x', f);
			putc('\n', f);
		} else {
			fprintf(f, "line %d <%d>\n", i, i);
		}
	}
	fclose(f);
	fx->h = heap_new();
	fx->s = stacks_new();
	fx->in.pid = 42;
	fx->in.argv = argv0;
	fx->in.reason = REPORT_EXIT;
	fx->in.exited = 1;
	fx->in.heap = fx->h;
	fx->in.stacks = fx->s;
	fx->in.depth = 16;
	fx->in.namer = namer;
	fx->in.namer_ctx = fx;
	fx->html.path = fx->out;
	fx->in.html = &fx->html;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	unlink(fx->src);
	unlink(fx->out);
	unlink(fx->json);
	rmdir(fx->dir);
	heap_delete(fx->h);
	stacks_delete(fx->s);
	free(fx);
	return 0;
}

static uint32_t stack(struct fx *fx, uint64_t a, uint64_t b)
{
	uint64_t pcs[3] = { PC_MALLOC, a, b };

	return stacks_intern(fx->s, pcs, b ? 3 : 2);
}

static void alloc(struct fx *fx, uint64_t addr, uint64_t size, uint32_t st)
{
	struct heap_block blk;

	memset(&blk, 0, sizeof(blk));
	blk.addr = addr;
	blk.size = size;
	blk.stack = st;
	blk.fn = AF_MALLOC;
	heap_alloc(fx->h, &blk);
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
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static char *write_report(struct fx *fx, const char *json_path)
{
	assert_int_equal(report_write(&fx->in, NULL, json_path, NULL), 0);
	return slurp(fx->out);
}

/* The text of data block ID (between its tags). */
static char *block(const char *doc, const char *id)
{
	char open[128];
	const char *s, *e;
	char *b;

	snprintf(open, sizeof(open),
		 "<script type=\"application/json\" id=\"%s\">\n", id);
	s = strstr(doc, open);
	assert_non_null(s);
	s += strlen(open);
	e = strstr(s, "</script>");
	assert_non_null(e);
	b = strndup(s, (size_t)(e - s));
	assert_non_null(b);
	return b;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* Appends to a growing string. */
struct sb {
	char *s;
	size_t n;
	FILE *f;
};

static void sb_open(struct sb *b)
{
	b->f = open_memstream(&b->s, &b->n);
	assert_non_null(b->f);
}

static char *sb_done(struct sb *b)
{
	fclose(b->f);
	return b->s;
}

#define NPTS 1000
#define NSTK 3

/* 1000 samples and three stacks over time: the series exactly. */
static void test_many_points(void **state)
{
	struct fx *fx = *state;
	static uint64_t ms[NPTS], hb[NPTS], hk[NPTS], rss[NPTS];
	static uint64_t sbytes[NPTS * NSTK];
	uint32_t ids[NSTK], peak_ids[2];
	uint64_t peak_bytes[2] = { 100, 7000 }, peak_blocks[2] = { 1, 7 };
	struct html_series se;
	struct sb want;
	char *doc, *extra, *w, *keep = getenv("PTLEAK_HTML_KEEP");
	size_t i, k;

	for (k = 0; k < NSTK; k++)
		ids[k] = stack(fx, PC_AT(10 + k), PC_MAIN);
	alloc(fx, 0x1000, 300, ids[0]);
	alloc(fx, 0x2000, 200, ids[1]);
	alloc(fx, 0x3000, 100, ids[2]);
	alloc(fx, 0x4000, 50, ids[2]);
	for (i = 0; i < NPTS; i++) {
		ms[i] = i * 10;
		hk[i] = i % 17;
		rss[i] = 1000 + i;
		for (k = 0; k < NSTK; k++)
			sbytes[i * NSTK + k] = (k + 1) * ((i * 37) % 1000);
		hb[i] = sbytes[i * NSTK] + sbytes[i * NSTK + 1] + sbytes[i * NSTK + 2];
	}
	memset(&se, 0, sizeof(se));
	se.n = NPTS;
	se.ms = ms;
	se.heap_bytes = hb;
	se.heap_blocks = hk;
	se.rss_kb = rss;
	se.nstacks = NSTK;
	se.stack_ids = ids;
	se.stack_bytes = sbytes;
	peak_ids[0] = ids[0];
	peak_ids[1] = ids[2];
	se.npeak = 2;
	se.peak_ms = 4560;
	se.peak_ids = peak_ids;
	se.peak_bytes = peak_bytes;
	se.peak_blocks = peak_blocks;
	fx->html.series = &se;
	doc = write_report(fx, NULL);
	extra = block(doc, "ptleak-extra");

	sb_open(&want);
	fputs("\"series\":{\"ms\":[", want.f);
	for (i = 0; i < NPTS; i++)
		fprintf(want.f, "%s%zu", i ? "," : "", i * 10);
	fputs("],\"heap_bytes\":[", want.f);
	for (i = 0; i < NPTS; i++)
		fprintf(want.f, "%s%zu", i ? "," : "", 6 * ((i * 37) % 1000));
	fputs("],\"heap_blocks\":[", want.f);
	for (i = 0; i < NPTS; i++)
		fprintf(want.f, "%s%zu", i ? "," : "", i % 17);
	fputs("],\"rss_kb\":[", want.f);
	for (i = 0; i < NPTS; i++)
		fprintf(want.f, "%s%zu", i ? "," : "", 1000 + i);
	fprintf(want.f, "],\"stacks\":[%u,%u,%u],\"stack_bytes\":[", ids[0],
		ids[1], ids[2]);
	for (i = 0; i < NPTS; i++) {
		size_t v = (i * 37) % 1000;

		fprintf(want.f, "%s[%zu,%zu,%zu]", i ? "," : "", v, 2 * v, 3 * v);
	}
	/* no stack grows in this report: no curve of one */
	fputs("],\"growth\":[]}", want.f);
	/* the peak: largest first; at the report: by stack, largest first */
	fprintf(want.f, ",\"peak\":{\"ms\":4560,\"stacks\":["
		"{\"id\":%u,\"bytes\":7000,\"blocks\":7},"
		"{\"id\":%u,\"bytes\":100,\"blocks\":1}]},"
		"\"top\":[{\"id\":%u,\"bytes\":300,\"blocks\":1},"
		"{\"id\":%u,\"bytes\":200,\"blocks\":1},"
		"{\"id\":%u,\"bytes\":150,\"blocks\":2}]",
		ids[2], ids[0], ids[0], ids[1], ids[2]);
	w = sb_done(&want);
	if (!strstr(extra, w))
		fail_msg("series not found in: %.600s", extra);
	/* the frames of a stack, main last */
	{
		char one[512];

		snprintf(one, sizeof(one), "\"%u\":[{\"pc\":\"0x7f0000001000\","
			 "\"function\":\"malloc\",\"file\":null,\"line\":null,"
			 "\"module\":\"/lib/libc.so.6\"},{\"pc\":\"0x4020a0\","
			 "\"function\":\"f10\",\"file\":\"app.c\",\"line\":10,"
			 "\"module\":\"/work/app\"},{\"pc\":\"0x401000\","
			 "\"function\":\"main\",\"file\":\"app.c\",\"line\":3,"
			 "\"module\":\"/work/app\"}]", ids[0]);
		assert_non_null(strstr(extra, one));
	}
	if (keep) {
		FILE *f = fopen(keep, "w");

		assert_non_null(f);
		fputs(doc, f);
		fclose(f);
	}
	free(w);
	free(extra);
	free(doc);
}

/* Source lines: +-5 around the line, a long line cut at 500 bytes, the
 * file's start, a file that cannot be read, a line past the end. */
static void test_sources(void **state)
{
	struct fx *fx = *state;
	struct sb want;
	char *doc, *extra, *w, cwd[4096];
	int i;

	alloc(fx, 0x1000, 10, stack(fx, PC_AT(12), PC_MAIN));
	alloc(fx, 0x2000, 10, stack(fx, PC_NOFILE, PC_MAIN));
	alloc(fx, 0x3000, 10, stack(fx, PC_AT(40), PC_MAIN));
	alloc(fx, 0x4000, 10, stack(fx, PC_REL, PC_MAIN));
	/* an app.c in ptleak's directory must not be what is read */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(fx->dir), 0);
	doc = write_report(fx, NULL);
	assert_int_equal(chdir(cwd), 0);
	extra = block(doc, "ptleak-extra");

	sb_open(&want);
	fprintf(want.f, "{\"module\":\"/work/app\",\"file\":\"app.c\",\"line\":12,"
		"\"path\":\"%s\",\"first\":7,\"lines\":[", fx->src);
	for (i = 7; i <= 17; i++) {
		if (i == 12) {
			int k;

			fputs(",\"", want.f);
			for (k = 0; k < 500; k++)
				putc('x', want.f);
			fputs("...\"", want.f);
		} else {
			/* '<' is written \u003c in the data blocks */
			fprintf(want.f, "%s\"line %d \\u003c%d>\"", i > 7 ? "," : "",
				i, i);
		}
	}
	fputs("],\"why\":null}", want.f);
	w = sb_done(&want);
	if (!strstr(extra, w))
		fail_msg("line 12 not found in: %s", extra);
	free(w);

	/* main's line 3: from line 1 */
	sb_open(&want);
	fprintf(want.f, "{\"module\":\"/work/app\",\"file\":\"app.c\",\"line\":3,"
		"\"path\":\"%s\",\"first\":1,\"lines\":[", fx->src);
	for (i = 1; i <= 8; i++)
		fprintf(want.f, "%s\"line %d \\u003c%d>\"", i > 1 ? "," : "", i, i);
	fputs("],\"why\":null}", want.f);
	w = sb_done(&want);
	assert_non_null(strstr(extra, w));
	free(w);

	assert_non_null(strstr(extra,
		"{\"module\":\"/work/app\",\"file\":\"gone.c\",\"line\":5,"
		"\"path\":\"/nonexistent/gone.c\",\"first\":0,\"lines\":[],"
		"\"why\":\"cannot read /nonexistent/gone.c: No such file or directory\"}"));
	assert_non_null(strstr(extra,
		"{\"module\":\"/work/app\",\"file\":\"app.c\",\"line\":2,"
		"\"path\":\"app.c\",\"first\":0,\"lines\":[],"
		"\"why\":\"cannot read app.c: the debug information gives no directory\"}"));
	sb_open(&want);
	fprintf(want.f, "{\"module\":\"/work/app\",\"file\":\"app.c\",\"line\":40,"
		"\"path\":\"%s\",\"first\":0,\"lines\":[],\"why\":\"%s has 30 lines, "
		"not 40: not the file this was built from?\"}", fx->src, fx->src);
	w = sb_done(&want);
	assert_non_null(strstr(extra, w));
	/* each location once: main is in three stacks */
	assert_int_equal(count(extra, "\"file\":\"app.c\",\"line\":3,\"path\""), 1);
	free(w);
	free(extra);
	free(doc);
}

/* No name, no argument can end a data block or enter the page as HTML;
 * the JSON report is the --json file byte for byte. */
static void test_escaping(void **state)
{
	struct fx *fx = *state;
	char *doc, *rep, *json;

	alloc(fx, 0x1000, 10, stack(fx, PC_EVIL, PC_MAIN));
	doc = write_report(fx, fx->json);
	/* the two data blocks and the script: three ends, no more */
	assert_int_equal(count(doc, "</script>"), 3);
	assert_null(strstr(doc, "<script>alert"));
	assert_non_null(strstr(doc, "\\u003c/script>\\u003cscript>alert(1)\\u003c/script>"));
	assert_non_null(strstr(doc, "<title>ptleak: &lt;b&gt;&amp;&quot;x&#39; (pid 42)</title>"));
	rep = block(doc, "ptleak-report");
	json = slurp(fx->json);
	assert_null(strchr(rep, '<'));
	/* the same but for '<' */
	{
		char *p;

		while ((p = strstr(rep, "\\u003c"))) {
			*p = '<';
			memmove(p + 1, p + 6, strlen(p + 6) + 1);
		}
		assert_string_equal(rep, json);
	}
	/* nothing fetched: no URL but the SVG namespace */
	assert_non_null(strstr(doc, "default-src 'none'"));
	assert_null(strstr(doc, "src=\""));
	assert_null(strstr(doc, "href="));
	free(json);
	free(rep);
	free(doc);
}

/* Without samples, the page is told so. */
static void test_no_samples(void **state)
{
	struct fx *fx = *state;
	char *doc, *extra;

	doc = write_report(fx, NULL);
	extra = block(doc, "ptleak-extra");
	assert_non_null(strstr(extra, "\"series\":null,\"peak\":null,\"top\":[],"
				      "\"stacks\":{},\"sources\":[]"));
	assert_non_null(strstr(extra, "\"resources\":null"));
	free(extra);
	free(doc);
}

/* The timeline's samples as the chart's series: the stacks largest in
 * some sample followed over time (0 where a sample did not list them),
 * the heap unknown (--fd-only) leaves the heap out, an unknown RSS is the
 * last known. */
static void test_feed(void **state)
{
	struct timeline *tl = timeline_new();
	struct tl_sample sm;
	struct html_series se;
	struct html_feed f;
	uint32_t pk_ids[2] = { 7, 9 };
	uint64_t pk_bytes[2] = { 500, 100 };

	(void)state;
	memset(&sm, 0, sizeof(sm));
	sm.ms = 100; sm.heap_bytes = 600; sm.heap_blocks = 2; sm.rss_kb = 1000;
	sm.ntop = 2; sm.top_stack[0] = 7; sm.top_bytes[0] = 500;
	sm.top_stack[1] = 9; sm.top_bytes[1] = 100;
	timeline_add(tl, &sm, 0);
	timeline_set_peak(tl, 100, 600, pk_ids, pk_bytes, 2);
	sm.ms = 200; sm.heap_bytes = 300; sm.heap_blocks = 1; sm.rss_kb = TL_UNKNOWN;
	sm.ntop = 1; sm.top_stack[0] = 9; sm.top_bytes[0] = 300;
	timeline_add(tl, &sm, 1);

	assert_int_equal(html_feed_series(tl, &se, &f), 0);
	assert_int_equal(se.n, 2);
	assert_int_equal(se.ms[0], 100);
	assert_int_equal(se.ms[1], 200);
	assert_int_equal(se.heap_bytes[1], 300);
	assert_int_equal(se.heap_blocks[0], 2);
	assert_int_equal(se.rss_kb[0], 1000);
	assert_int_equal(se.rss_kb[1], 1000);
	/* 7 peaked at 500, 9 at 300: in that order */
	assert_int_equal(se.nstacks, 2);
	assert_int_equal(se.stack_ids[0], 7);
	assert_int_equal(se.stack_ids[1], 9);
	assert_int_equal(se.stack_bytes[0 * 2 + 0], 500);
	assert_int_equal(se.stack_bytes[0 * 2 + 1], 100);
	assert_int_equal(se.stack_bytes[1 * 2 + 0], 0);
	assert_int_equal(se.stack_bytes[1 * 2 + 1], 300);
	assert_int_equal(se.npeak, 2);
	assert_int_equal(se.peak_ms, 100);
	assert_int_equal(se.peak_ids[0], 7);
	assert_int_equal(se.peak_bytes[1], 100);
	html_feed_free(&f);

	/* --fd-only: no heap figures, no stacks */
	timeline_reset(tl);
	memset(&sm, 0, sizeof(sm));
	sm.ms = 50; sm.heap_bytes = sm.heap_blocks = TL_UNKNOWN; sm.rss_kb = 10;
	timeline_add(tl, &sm, 1);
	assert_int_equal(html_feed_series(tl, &se, &f), 0);
	assert_int_equal(se.n, 1);
	assert_null(se.heap_bytes);
	assert_null(se.heap_blocks);
	assert_int_equal(se.nstacks, 0);
	assert_int_equal(se.rss_kb[0], 10);
	html_feed_free(&f);

	assert_int_equal(html_feed_series(NULL, &se, &f), 0);
	assert_int_equal(se.n, 0);
	html_feed_free(&f);
	timeline_delete(tl);
}

/* An unwritable --html: -1 with a message, the --json still written. */
static void test_unwritable(void **state)
{
	struct fx *fx = *state;
	char bad[160];

	snprintf(bad, sizeof(bad), "%s/no/such/dir/r.html", fx->dir);
	fx->html.path = bad;
	assert_int_equal(report_write(&fx->in, NULL, fx->json, NULL), -1);
	assert_int_equal(access(fx->json, R_OK), 0);
	assert_int_equal(access(bad, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_many_points, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_samples, setup, teardown),
		cmocka_unit_test(test_feed),
		cmocka_unit_test_setup_teardown(test_unwritable, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
