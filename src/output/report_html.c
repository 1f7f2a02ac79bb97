/*
 * report_html.c - the HTML report's plumbing (report_html.h): where the
 * JSON goes when --html is given, the samples ptleak takes itself, the
 * process's resources.
 *
 * The document itself is written by report_html_doc.c, the source lines
 * around the frames named are read by report_html_src.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/report.h"
#include "output/report_html.h"
#include "output/timeline.h"
#include "tables/growth.h"
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
	free(f->grow_ids);
	free(f->grow_bytes);
	memset(f, 0, sizeof(*f));
}

void html_feed_growth(const struct timeline *tl, const struct growth_entry *g,
		      size_t n, struct html_series *s, struct html_feed *f)
{
	size_t ns = tl ? timeline_count(tl) : 0, i, k;
	unsigned j;

	if (!ns || !n || !s->heap_bytes)
		return;
	f->grow_ids = xcalloc(n, sizeof(*f->grow_ids));
	f->grow_bytes = xcalloc(ns * n, sizeof(*f->grow_bytes));
	for (k = 0; k < n; k++)
		f->grow_ids[k] = g[k].stack;
	for (i = 0; i < ns; i++) {
		const struct tl_sample *sm = timeline_get(tl, i);

		for (k = 0; k < n; k++) {
			uint64_t v = HTML_UNKNOWN;

			for (j = 0; j < sm->nhot && j < TL_HOT; j++)
				if (sm->hot_stack[j] == g[k].stack)
					v = sm->hot_bytes[j];
			for (j = 0; j < sm->ntop && j < TL_TOP; j++)
				if (sm->top_stack[j] == g[k].stack)
					v = sm->top_bytes[j];
			f->grow_bytes[i * n + k] = v;
		}
	}
	s->ngrow = n;
	s->grow_ids = f->grow_ids;
	s->grow_bytes = f->grow_bytes;
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
	sink->locs = html_locs_new();
	sink->namer = in->namer;
	sink->namer_ctx = in->namer_ctx;
	in->namer = html_noting_namer;
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
		html_locs_free(sink->locs);
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
