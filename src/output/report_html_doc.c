/*
 * report_html_doc.c - the HTML report's document (report_html.h): the
 * page, the JSON report and the extra data (series, top stacks, their
 * frames, source lines) as JSON blocks, the style and the script.
 *
 * The data blocks go through a stream that writes every '<' as "\u003c"
 * (inside JSON strings, the only place a '<' can be): nothing in them can
 * close the <script> element.  The style and script are the files of
 * src/html/, embedded by the Makefile (html_assets.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/html_assets.h"
#include "output/json.h"
#include "output/report.h"
#include "output/report_fds.h"
#include "output/report_html.h"
#include "report_html_priv.h"
#include "tables/stacks.h"
#include "base/util.h"

/* ---- '<' escaped ---- */

static ssize_t esc_write(void *cookie, const char *buf, size_t n)
{
	FILE *f = cookie;
	size_t i, from = 0;

	for (i = 0; i < n; i++) {
		if (buf[i] != '<')
			continue;
		if (fwrite(buf + from, 1, i - from, f) != i - from ||
		    fputs("\\u003c", f) < 0)
			return -1;
		from = i + 1;
	}
	if (fwrite(buf + from, 1, n - from, f) != n - from)
		return -1;
	return (ssize_t)n;
}

static FILE *esc_open(FILE *f)
{
	cookie_io_functions_t io = { .write = esc_write };
	FILE *e = fopencookie(f, "w", io);

	if (!e)
		error("cannot write the HTML report: %s", strerror(errno));
	return e;
}

/* S with &<>"' as entities, for the page's own text. */
static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* no control characters in a title */
			putc((unsigned char)*s < 0x20 ? '?' : *s, f);
		}
	}
}

/* ---- the stacks shown ---- */

struct top {
	uint32_t id;
	uint64_t bytes, blocks;
};

struct stack_sum {
	struct top *v;
	size_t n, alloc;
	uint32_t *slots;	/* index + 1 */
	size_t mask;
};

static void sum_grow(struct stack_sum *s)
{
	size_t n = s->mask ? (s->mask + 1) * 2 : 1024, i;

	free(s->slots);
	s->slots = xcalloc(n, sizeof(*s->slots));
	s->mask = n - 1;
	for (i = 0; i < s->n; i++) {
		size_t k = (size_t)hash64(s->v[i].id) & s->mask;

		while (s->slots[k])
			k = (k + 1) & s->mask;
		s->slots[k] = (uint32_t)(i + 1);
	}
}

static int sum_block(const struct heap_block *b, void *ctx)
{
	struct stack_sum *s = ctx;
	size_t k = (size_t)hash64(b->stack) & s->mask;

	for (; s->slots[k]; k = (k + 1) & s->mask) {
		struct top *t = &s->v[s->slots[k] - 1];

		if (t->id == b->stack) {
			t->bytes += b->size;
			t->blocks++;
			return 0;
		}
	}
	grow_array((void **)&s->v, &s->alloc, s->n + 1, sizeof(*s->v));
	s->v[s->n] = (struct top){ b->stack, b->size, 1 };
	s->n++;
	if (s->n * 4 > (s->mask + 1) * 3)
		sum_grow(s);
	else
		s->slots[k] = (uint32_t)s->n;
	return 0;
}

static int cmp_top(const void *pa, const void *pb)
{
	const struct top *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* The stacks holding the most bytes in the live heap: *N of them. */
static struct top *top_at_report(const struct report_input *in, size_t *n)
{
	struct stack_sum s;

	memset(&s, 0, sizeof(s));
	*n = 0;
	if (!in->heap)
		return NULL;
	sum_grow(&s);
	heap_foreach(in->heap, sum_block, &s);
	free(s.slots);
	if (s.n)	/* s.v may be NULL: not for qsort */
		qsort(s.v, s.n, sizeof(*s.v), cmp_top);
	*n = s.n < HTML_TOP_STACKS ? s.n : HTML_TOP_STACKS;
	return s.v;
}

/* The peak snapshot's biggest stacks: *N of them. */
static struct top *top_at_peak(const struct html_series *se, size_t *n)
{
	struct top *v;
	size_t i;

	*n = 0;
	if (!se || !se->npeak || !se->peak_ids || !se->peak_bytes)
		return NULL;
	v = xcalloc(se->npeak, sizeof(*v));
	for (i = 0; i < se->npeak; i++)
		v[i] = (struct top){ se->peak_ids[i], se->peak_bytes[i],
				     se->peak_blocks ? se->peak_blocks[i] : 0 };
	qsort(v, se->npeak, sizeof(*v), cmp_top);
	*n = se->npeak < HTML_TOP_STACKS ? se->npeak : HTML_TOP_STACKS;
	return v;
}

/* A stack's frames, named (at most in->depth, none below "main"). */
struct named {
	uint32_t id;
	unsigned n;
	struct frame_info *f;
};

struct doc {
	struct html_sink *sink;
	const struct report_input *in;
	const struct html_series *se;
	struct top *top, *peak;
	size_t ntop, npeak;
	struct named *stk;
	size_t nstk, astk;
};

static void name_stack(struct doc *d, uint32_t id)
{
	const uint64_t *pcs = NULL;
	struct named *s;
	unsigned n = 0, i;
	size_t k;

	for (k = 0; k < d->nstk; k++)
		if (d->stk[k].id == id)
			return;
	if (d->in->stacks)
		n = stacks_get(d->in->stacks, id, &pcs);
	if (n > d->in->depth)
		n = d->in->depth;
	grow_array((void **)&d->stk, &d->astk, d->nstk + 1, sizeof(*d->stk));
	s = &d->stk[d->nstk++];
	s->id = id;
	s->f = xcalloc(n + 1, sizeof(*s->f));
	for (i = 0; i < n; i++) {
		html_name(d->sink, pcs[i], i != 0, &s->f[i]);
		s->f[i].pc = pcs[i];
		if (s->f[i].function && !strcmp(s->f[i].function, "main")) {
			i++;
			break;
		}
	}
	s->n = i;
}

static void name_stacks(struct doc *d)
{
	size_t i;

	for (i = 0; i < d->ntop; i++)
		name_stack(d, d->top[i].id);
	for (i = 0; i < d->npeak; i++)
		name_stack(d, d->peak[i].id);
	for (i = 0; d->se && i < d->se->nstacks; i++)
		name_stack(d, d->se->stack_ids[i]);
}

/* ---- the extra data ---- */

static void json_u64s(struct json *j, const char *key, const uint64_t *v,
		      size_t n)
{
	size_t i;

	if (key)
		json_key(j, key);
	if (!v) {
		json_null(j);
		return;
	}
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_uint(j, v[i]);
	json_array_end(j);
}

static void json_series(struct json *j, const struct html_series *se,
			const struct report_input *in)
{
	size_t i, k, q;

	json_key(j, "series");
	if (!se || !se->n) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_u64s(j, "ms", se->ms, se->n);
	json_u64s(j, "heap_bytes", se->heap_bytes, se->n);
	json_u64s(j, "heap_blocks", se->heap_blocks, se->n);
	json_u64s(j, "rss_kb", se->rss_kb, se->n);
	json_key(j, "stacks");
	json_array_begin(j);
	for (k = 0; se->stack_bytes && k < se->nstacks; k++)
		json_uint(j, se->stack_ids[k]);
	json_array_end(j);
	json_key(j, "stack_bytes");
	json_array_begin(j);
	for (i = 0; se->stack_bytes && se->nstacks && i < se->n; i++)
		json_u64s(j, NULL, se->stack_bytes + i * se->nstacks,
			  se->nstacks);
	json_array_end(j);
	/* the growing stacks' curves, in heap.growth's order (what
	 * suppressions left): one array of bytes per stack, null where the
	 * sample did not keep it */
	json_key(j, "growth");
	json_array_begin(j);
	for (q = 0; q < in->ngrowth; q++) {
		for (k = 0; k < se->ngrow; k++)
			if (se->grow_ids[k] == in->growth[q].stack)
				break;
		if (k == se->ngrow) {
			json_null(j);
			continue;
		}
		json_array_begin(j);
		for (i = 0; i < se->n; i++) {
			uint64_t v = se->grow_bytes[i * se->ngrow + k];

			if (v == HTML_UNKNOWN)
				json_null(j);
			else
				json_uint(j, v);
		}
		json_array_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

static void json_tops(struct json *j, const char *key, const struct top *t,
		      size_t n, int blocks_known)
{
	size_t i;

	json_key(j, key);
	json_array_begin(j);
	for (i = 0; i < n; i++) {
		json_object_begin(j);
		json_key(j, "id");
		json_uint(j, t[i].id);
		json_key(j, "bytes");
		json_uint(j, t[i].bytes);
		json_key(j, "blocks");
		if (blocks_known)
			json_uint(j, t[i].blocks);
		else
			json_null(j);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_sources(struct json *j, const struct html_locs *l)
{
	size_t i;
	unsigned k;

	json_key(j, "sources");
	json_array_begin(j);
	for (i = 0; i < l->n; i++) {
		const struct html_loc *s = &l->v[i];

		json_object_begin(j);
		json_key(j, "module");
		json_string(j, s->module);
		json_key(j, "file");
		json_string(j, s->file);
		json_key(j, "line");
		json_int(j, s->line);
		json_key(j, "path");
		json_string(j, s->path);
		json_key(j, "first");
		json_int(j, s->why ? 0 : s->first);
		json_key(j, "lines");
		json_array_begin(j);
		for (k = 0; k < s->nlines; k++)
			json_string(j, s->text[k]);
		json_array_end(j);
		json_key(j, "why");
		json_string(j, s->why);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_extra(struct doc *d, struct json *j)
{
	const struct html_resources *res = d->sink->html->res;
	size_t i;
	unsigned k;

	json_object_begin(j);
	json_key(j, "version");
	json_int(j, 1);
	json_key(j, "resources");
	if (res && res->known) {
		json_object_begin(j);
		json_key(j, "user_s");
		json_seconds(j, res->user_s);
		json_key(j, "sys_s");
		json_seconds(j, res->sys_s);
		json_key(j, "max_rss_kb");
		json_uint(j, res->max_rss_kb);
		json_object_end(j);
	} else {
		json_null(j);
	}
	json_series(j, d->se, d->in);
	json_key(j, "peak");
	if (d->npeak) {
		json_object_begin(j);
		json_key(j, "ms");
		json_uint(j, d->se->peak_ms);
		json_tops(j, "stacks", d->peak, d->npeak,
			  d->se->peak_blocks != NULL);
		json_object_end(j);
	} else {
		json_null(j);
	}
	json_tops(j, "top", d->top, d->ntop, 1);
	json_key(j, "stacks");
	json_object_begin(j);
	for (i = 0; i < d->nstk; i++) {
		char id[16];

		snprintf(id, sizeof(id), "%u", d->stk[i].id);
		json_key(j, id);
		json_array_begin(j);
		for (k = 0; k < d->stk[i].n; k++)
			report_json_frame(j, &d->stk[i].f[k]);
		json_array_end(j);
	}
	json_object_end(j);
	json_sources(j, d->sink->locs);
	json_key(j, "limits");
	json_object_begin(j);
	json_key(j, "context");
	json_int(j, HTML_SRC_CONTEXT);
	json_key(j, "line_max");
	json_int(j, HTML_SRC_LINE_MAX);
	json_key(j, "budget");
	json_int(j, HTML_SRC_BUDGET);
	json_key(j, "max_locations");
	json_int(j, HTML_SRC_MAX_LOCS);
	json_object_end(j);
	json_object_end(j);
}

/* ---- the page ---- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static void page_head(FILE *f, const struct report_input *in)
{
	const char *prog = in->argv && in->argv[0] ? base_name(in->argv[0]) :
			   "process";

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      /* self-contained: the page may fetch nothing at all */
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"generator\" content=\"ptleak\">\n<title>ptleak: ", f);
	html_text(f, prog);
	fprintf(f, " (pid %d)</title>\n<style>\n", (int)in->pid);
	fputs(html_css, f);
	fputs("</style>\n</head>\n<body>\n<header><h1>ptleak: ", f);
	html_text(f, prog);
	fprintf(f, " <span class=\"pid\">pid %d</span></h1></header>\n", (int)in->pid);
	fputs("<noscript><p>This report is drawn by its inline script. The data "
	      "is in this file's ptleak-report (the JSON report) and "
	      "ptleak-extra blocks.</p></noscript>\n"
	      "<main id=\"app\"></main>\n", f);
}

static int page_data(struct doc *d, FILE *f,
		     int (*copy_json)(struct html_sink *, FILE *))
{
	FILE *e = esc_open(f);
	struct json j;
	int err;

	if (!e)
		return -1;
	fputs("<script type=\"application/json\" id=\"ptleak-report\">\n", f);
	err = copy_json(d->sink, e);
	fflush(e);
	fputs("</script>\n<script type=\"application/json\" id=\"ptleak-extra\">\n", f);
	json_init(&j, e);
	json_extra(d, &j);
	fflush(e);
	fputs("</script>\n", f);
	if (fclose(e) && !err)
		err = errno ? errno : EIO;
	if (err)
		return error("cannot write the HTML report: %s", strerror(err));
	return 0;
}

int html_doc_write(struct html_sink *sink, const struct report_input *in,
		   FILE *f, int (*copy_json)(struct html_sink *, FILE *))
{
	struct doc d;
	size_t i;
	int ret;

	memset(&d, 0, sizeof(d));
	d.sink = sink;
	d.in = in;
	d.se = sink->html->series;
	d.top = top_at_report(in, &d.ntop);
	d.peak = top_at_peak(d.se, &d.npeak);
	name_stacks(&d);
	html_locs_read(sink->locs);

	page_head(f, in);
	ret = page_data(&d, f, copy_json);
	fputs("<script>\n", f);
	fputs(html_js, f);
	fputs("</script>\n</body>\n</html>\n", f);

	for (i = 0; i < d.nstk; i++)
		free(d.stk[i].f);
	free(d.stk);
	free(d.top);
	free(d.peak);
	return ret;
}
