/*
 * report_html.c - the HTML report's plumbing (report_html.h): where the
 * JSON goes when --html is given, the samples ptleak takes itself, the
 * process's resources, and the source lines around the frames named.
 *
 * The document itself is written by report_html_doc.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/report.h"
#include "output/report_html.h"
#include "output/timeline.h"
#include "report_html_priv.h"
#include "base/util.h"

/* ---- samples: the timeline's (timeline.h) ---- */

static int by_bytes_desc(const void *x, const void *y)
{
	const struct html_feed_stack *a = x, *b = y;

	return a->max < b->max ? 1 : a->max > b->max ? -1 :
	       a->id < b->id ? -1 : a->id > b->id;
}

/* The HTML_FEED_STACKS stacks whose largest in-use bytes in any sample
 * were the largest, into F->ids; their count. */
static size_t pick_stacks(const struct timeline *tl, size_t n,
			  struct html_feed *f)
{
	struct html_feed_stack *c = xcalloc(n * TL_TOP + 1, sizeof(*c));
	size_t nc = 0, i, k, j;

	for (i = 0; i < n; i++) {
		const struct tl_sample *sm = timeline_get(tl, i);

		for (k = 0; k < sm->ntop && k < TL_TOP; k++) {
			for (j = 0; j < nc && c[j].id != sm->top_stack[k]; j++)
				;
			if (j == nc)
				c[nc++].id = sm->top_stack[k];
			if (sm->top_bytes[k] > c[j].max)
				c[j].max = sm->top_bytes[k];
		}
	}
	qsort(c, nc, sizeof(*c), by_bytes_desc);
	for (j = 0; j < nc && j < HTML_FEED_STACKS; j++)
		f->ids[j] = c[j].id;
	free(c);
	return j;
}

int html_feed_series(const struct timeline *tl, struct html_series *s,
		     struct html_feed *f)
{
	size_t n = tl ? timeline_count(tl) : 0, i, k, m;
	const struct tl_peak *pk = tl ? timeline_peak(tl) : NULL;
	uint64_t rss = 0;
	int heap = 1;

	memset(s, 0, sizeof(*s));
	memset(f, 0, sizeof(*f));
	if (!n)
		return 0;
	f->ms = xcalloc(n, sizeof(*f->ms));
	f->heap_bytes = xcalloc(n, sizeof(*f->heap_bytes));
	f->heap_blocks = xcalloc(n, sizeof(*f->heap_blocks));
	f->rss_kb = xcalloc(n, sizeof(*f->rss_kb));
	m = pick_stacks(tl, n, f);
	f->stack_bytes = xcalloc(n * (m ? m : 1), sizeof(*f->stack_bytes));
	for (i = 0; i < n; i++) {
		const struct tl_sample *sm = timeline_get(tl, i);

		f->ms[i] = sm->ms;
		if (sm->heap_bytes == TL_UNKNOWN)
			heap = 0;
		f->heap_bytes[i] = sm->heap_bytes;
		f->heap_blocks[i] = sm->heap_blocks;
		/* the process gone (its last sample): its last RSS known */
		if (sm->rss_kb != TL_UNKNOWN)
			rss = sm->rss_kb;
		f->rss_kb[i] = rss;
		for (k = 0; k < m; k++) {
			unsigned j;

			for (j = 0; j < sm->ntop && j < TL_TOP; j++)
				if (sm->top_stack[j] == f->ids[k])
					f->stack_bytes[i * m + k] = sm->top_bytes[j];
		}
	}
	s->n = n;
	s->ms = f->ms;
	s->heap_bytes = heap ? f->heap_bytes : NULL;
	s->heap_blocks = heap ? f->heap_blocks : NULL;
	s->rss_kb = f->rss_kb;
	s->nstacks = heap ? m : 0;
	s->stack_ids = f->ids;
	s->stack_bytes = f->stack_bytes;
	if (heap && pk && pk->n) {
		s->npeak = pk->n;
		s->peak_ms = pk->ms;
		s->peak_ids = pk->stack;
		s->peak_bytes = pk->bytes;
	}
	return 0;
}

void html_feed_free(struct html_feed *f)
{
	free(f->ms);
	free(f->heap_bytes);
	free(f->heap_blocks);
	free(f->rss_kb);
	free(f->stack_bytes);
	memset(f, 0, sizeof(*f));
}

/* ---- the locations named ---- */

static uint64_t hash_str(uint64_t h, const char *s)
{
	while (s && *s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static uint64_t loc_hash(const char *module, const char *file, int line)
{
	return hash64(hash_str(hash_str(0xcbf29ce484222325ull, module), file) ^
		      (uint64_t)line);
}

/* Note FI's file:line (once per module, file, line; HTML_SRC_MAX_LOCS at
 * most: the others are said "not embedded" by the page). */
static void locs_note(struct html_locs *l, const struct frame_info *fi)
{
	size_t k, i;

	if (!fi->file || fi->line <= 0 || l->n == HTML_SRC_MAX_LOCS)
		return;
	k = (size_t)loc_hash(fi->module, fi->file, fi->line) &
	    (HTML_LOC_SLOTS - 1);
	while (l->slots[k]) {
		struct html_loc *o = &l->v[l->slots[k] - 1];

		if (o->line == fi->line && same(o->file, fi->file) &&
		    same(o->module, fi->module))
			return;
		k = (k + 1) & (HTML_LOC_SLOTS - 1);
	}
	i = l->n++;
	memset(&l->v[i], 0, sizeof(l->v[i]));
	l->v[i].module = fi->module;
	l->v[i].file = fi->file;
	l->v[i].path = fi->path ? fi->path : fi->file;
	l->v[i].line = fi->line;
	l->slots[k] = (uint32_t)(i + 1);
}

/* The report's namer, wrapped: what it names is noted. */
static void noting_namer(void *ctx, uint64_t pc, int caller,
			 struct frame_info *out)
{
	struct html_sink *sink = ctx;

	if (sink->namer) {
		sink->namer(sink->namer_ctx, pc, caller, out);
	} else {
		memset(out, 0, sizeof(*out));
		out->pc = pc;
	}
	locs_note(sink->locs, out);
}

void html_name(struct html_sink *sink, uint64_t pc, int caller,
	       struct frame_info *out)
{
	noting_namer(sink, pc, caller, out);
}

/* ---- source lines ---- */

static int cmp_loc(const void *pa, const void *pb)
{
	const struct html_loc *a = *(struct html_loc *const *)pa;
	const struct html_loc *b = *(struct html_loc *const *)pb;
	int c = strcmp(a->path, b->path);

	return c ? c : (a->line > b->line) - (a->line < b->line);
}

/*
 * The next line of F into BUF (HTML_SRC_LINE_MAX bytes kept, then "..."
 * and the rest skipped: bounded whatever the file); its length, or -1 at
 * the end of the file.
 */
static int read_line(FILE *f, char *buf)
{
	int c, n = 0, cut = 0;

	while ((c = getc_unlocked(f)) != EOF && c != '\n') {
		if (n < HTML_SRC_LINE_MAX)
			buf[n++] = (char)c;
		else
			cut = 1;
	}
	if (c == EOF && !n && !cut)
		return -1;
	if (n && buf[n - 1] == '\r')
		n--;
	if (cut) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return n;
}

static void loc_drop(struct html_loc *l, const char *why)
{
	unsigned i;

	for (i = 0; i < l->nlines; i++)
		free(l->text[i]);
	l->nlines = 0;
	free(l->why);
	l->why = xstrdup(why);
}

/*
 * Read the lines around LOCS[0..N-1] (one path, by line) from their
 * file; *BUDGET is what may still be embedded.
 */
static void read_file_locs(struct html_loc **locs, size_t n, size_t *budget)
{
	char buf[HTML_SRC_LINE_MAX + 4], why[600];
	size_t lo = 0, j;
	int len, k = 0;
	FILE *f = NULL;

	/* relative to where the compiler ran, which the line table does not
	 * say: never to ptleak's own directory */
	if (locs[0]->path[0] == '/')
		f = fopen(locs[0]->path, "re");
	if (!f) {
		snprintf(why, sizeof(why), "cannot read %s: %s", locs[0]->path,
			 locs[0]->path[0] == '/' ? strerror(errno) :
			 "the debug information gives no directory");
		for (j = 0; j < n; j++)
			loc_drop(locs[j], why);
		return;
	}
	while (lo < n && (len = read_line(f, buf)) >= 0) {
		k++;
		while (lo < n && locs[lo]->line + HTML_SRC_CONTEXT < k)
			lo++;
		for (j = lo; j < n && locs[j]->line - HTML_SRC_CONTEXT <= k; j++) {
			struct html_loc *l = locs[j];

			if (l->why)
				continue;
			if (*budget < (size_t)len + 1) {
				loc_drop(l, "not embedded: the report's source lines are over their bound");
				continue;
			}
			*budget -= (size_t)len + 1;
			if (!l->nlines)
				l->first = k;
			l->text[l->nlines++] = xstrdup(buf);
		}
	}
	fclose(f);
	for (j = 0; j < n; j++)
		if (!locs[j]->why && locs[j]->first + (int)locs[j]->nlines <=
				     locs[j]->line) {
			snprintf(why, sizeof(why), "%s has %d lines, not %d: "
				 "not the file this was built from?",
				 locs[j]->path, k, locs[j]->line);
			loc_drop(locs[j], why);
		}
}

void html_locs_read(struct html_locs *l)
{
	struct html_loc **by = xcalloc(l->n + 1, sizeof(*by));
	size_t budget = HTML_SRC_BUDGET, i, j;

	for (i = 0; i < l->n; i++)
		by[i] = &l->v[i];
	qsort(by, l->n, sizeof(*by), cmp_loc);
	for (i = 0; i < l->n; i = j) {
		for (j = i + 1; j < l->n && !strcmp(by[j]->path, by[i]->path); j++)
			;
		read_file_locs(by + i, j - i, &budget);
	}
	free(by);
}

static void locs_free(struct html_locs *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++) {
		unsigned k;

		for (k = 0; k < l->v[i].nlines; k++)
			free(l->v[i].text[k]);
		free(l->v[i].why);
	}
	free(l->v);
	free(l->slots);
	free(l);
}

/* ---- the sink ---- */

int html_sink_open(struct html_sink *sink, const char *json_path,
		   const struct html_input *html, struct report_input *in)
{
	memset(sink, 0, sizeof(*sink));
	sink->json_path = json_path;
	sink->html = html;
	if (!html) {
		if (outfile_open(&sink->out, json_path))
			return -1;
		sink->f = sink->out.f;
		return 0;
	}
	sink->f = tmpfile();
	if (!sink->f)
		return error("cannot write the HTML report: no temporary file "
			     "(%s): set TMPDIR to a writable directory",
			     strerror(errno));
	sink->locs = xcalloc(1, sizeof(*sink->locs));
	sink->locs->v = xcalloc(HTML_SRC_MAX_LOCS, sizeof(*sink->locs->v));
	sink->locs->slots = xcalloc(HTML_LOC_SLOTS, sizeof(*sink->locs->slots));
	sink->namer = in->namer;
	sink->namer_ctx = in->namer_ctx;
	in->namer = noting_namer;
	in->namer_ctx = sink;
	return 0;
}

/* The JSON in SINK->f, from its start, onto TO: 0, or an errno. */
static int copy_json(struct html_sink *sink, FILE *to)
{
	char buf[65536];
	size_t n;

	if (fflush(sink->f) || fseek(sink->f, 0, SEEK_SET))
		return errno ? errno : EIO;
	while ((n = fread(buf, 1, sizeof(buf), sink->f)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			return errno ? errno : EIO;
	return ferror(sink->f) ? EIO : 0;
}

int html_sink_commit(struct html_sink *sink, const struct report_input *in)
{
	struct outfile of;
	int ret = 0, err;

	if (!sink->html)
		return outfile_commit(&sink->out);
	if (sink->json_path) {
		if (outfile_open(&of, sink->json_path)) {
			ret = -1;
		} else {
			err = copy_json(sink, of.f);
			if (err)
				ret = error("cannot write %s: %s", sink->json_path,
					    strerror(err));
			if (outfile_commit(&of))
				ret = -1;
		}
	}
	if (outfile_open(&of, sink->html->path)) {
		ret = -1;
	} else {
		if (html_doc_write(sink, in, of.f, copy_json))
			ret = -1;
		if (outfile_commit(&of))
			ret = -1;
	}
	html_sink_abort(sink);
	return ret;
}

void html_sink_abort(struct html_sink *sink)
{
	if (sink->html) {
		if (sink->f)
			fclose(sink->f);
		locs_free(sink->locs);
	} else if (sink->out.f) {
		fclose(sink->out.f);
		if (sink->out.tmp)
			unlink(sink->out.tmp);
		free(sink->out.tmp);
		free(sink->out.dest);
	}
	sink->f = NULL;
	sink->locs = NULL;
	sink->out.f = NULL;
}
