/*
 * report_html_src.c - the HTML report's source lines (report_html_priv.h):
 * every file:line a frame of the report names is noted as the report is
 * written (a namer wrapped around the report's), and the lines around
 * each read at the end, bounded (report_html.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/report.h"
#include "output/report_html.h"
#include "report_html_priv.h"
#include "base/util.h"

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
void html_noting_namer(void *ctx, uint64_t pc, int caller,
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
	html_noting_namer(sink, pc, caller, out);
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

void html_locs_free(struct html_locs *l)
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

struct html_locs *html_locs_new(void)
{
	struct html_locs *l = xcalloc(1, sizeof(*l));

	l->v = xcalloc(HTML_SRC_MAX_LOCS, sizeof(*l->v));
	l->slots = xcalloc(HTML_LOC_SLOTS, sizeof(*l->slots));
	return l;
}
