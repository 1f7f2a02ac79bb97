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

#include "report.h"
#include "report_html.h"
#include "report_html_priv.h"
#include "util.h"

/* ---- samples ---- */

void html_points_add(struct html_points *p, uint64_t ms, uint64_t heap_bytes,
		     uint64_t heap_blocks, uint64_t rss_kb)
{
	if (p->n == HTML_POINTS_MAX) {
		size_t i, k = 0;

		/* every other one, the last kept: bounded whatever the rate */
		for (i = 1; i < p->n; i += 2, k++) {
			p->ms[k] = p->ms[i];
			p->heap_bytes[k] = p->heap_bytes[i];
			p->heap_blocks[k] = p->heap_blocks[i];
			p->rss_kb[k] = p->rss_kb[i];
		}
		p->n = k;
	}
	p->ms[p->n] = ms;
	p->heap_bytes[p->n] = heap_bytes;
	p->heap_blocks[p->n] = heap_blocks;
	p->rss_kb[p->n] = rss_kb;
	p->n++;
}

void html_points_series(const struct html_points *p, struct html_series *s)
{
	memset(s, 0, sizeof(*s));
	s->n = p->n;
	s->ms = p->ms;
	s->heap_bytes = p->heap_bytes;
	s->heap_blocks = p->heap_blocks;
	s->rss_kb = p->rss_kb;
}

/* ---- resources ---- */

int html_proc_resources(pid_t pid, struct html_resources *res,
			uint64_t *rss_kb)
{
	unsigned long long hwm = 0, utime, stime, rss;
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	char path[64], buf[1024], *p;
	size_t n;
	FILE *f;
	int ok;

	memset(res, 0, sizeof(*res));
	*rss_kb = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after "pid (comm) ": comm may hold spaces and parentheses */
	p = strrchr(buf, ')');
	ok = p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu %*d %*d %*d %*d %*d %*d %*u %*u %llu",
			 &utime, &stime, &rss) == 3;
	if (!ok || tick <= 0)
		return -1;
	proc_status_field(pid, "VmHWM:", 10, &hwm);
	res->known = 1;
	res->user_s = (double)utime / (double)tick;
	res->sys_s = (double)stime / (double)tick;
	res->max_rss_kb = hwm;
	*rss_kb = rss * (unsigned long long)page / 1024;
	return 0;
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
