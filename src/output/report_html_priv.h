/*
 * report_html_priv.h - shared by report_html.c (the plumbing),
 * report_html_doc.c (the document) and report_html_src.c (the source
 * lines); see include/output/report_html.h.
 */
#ifndef PTLEAK_REPORT_HTML_PRIV_H
#define PTLEAK_REPORT_HTML_PRIV_H

#include <stdint.h>
#include <stdio.h>

#include "output/report.h"
#include "output/report_html.h"

#define HTML_LOC_SLOTS 4096	/* power of two, > 1.5 x HTML_SRC_MAX_LOCS */
#define HTML_LOC_LINES (2 * HTML_SRC_CONTEXT + 1)

/* A file:line that a frame of the report named, and its source lines. */
struct html_loc {
	const char *module, *file;	/* as the frame has them (namer-owned) */
	const char *path;		/* what is read: frame_info.path, or file */
	int line;
	int first;			/* line number of text[0] */
	unsigned nlines;
	char *text[HTML_LOC_LINES];
	char *why;			/* no lines: why not (NULL: read) */
};

struct html_locs {
	struct html_loc *v;		/* HTML_SRC_MAX_LOCS */
	size_t n;
	uint32_t *slots;		/* HTML_LOC_SLOTS: index + 1, 0 empty */
};

/* ---- report_html_src.c ---- */

/* An empty set of locations (HTML_SRC_MAX_LOCS at most); freed by
 * html_locs_free (NULL is no set). */
struct html_locs *html_locs_new(void);
void html_locs_free(struct html_locs *l);

/* The namer the report is given while an HTML page is made: CTX is the
 * html_sink; the sink's own namer names PC, and its file:line is noted. */
void html_noting_namer(void *ctx, uint64_t pc, int caller,
		       struct frame_info *out);

/* Name PC through the report's namer, noting its file:line. */
void html_name(struct html_sink *sink, uint64_t pc, int caller,
	       struct frame_info *out);

/* Read the source lines of every location noted (bounded: report_html.h). */
void html_locs_read(struct html_locs *l);

/* ---- report_html_doc.c ---- */

/* Write the document to F; COPY_JSON(SINK, F) copies the JSON report
 * into it.  0, or -1 (message). */
int html_doc_write(struct html_sink *sink, const struct report_input *in,
		   FILE *f, int (*copy_json)(struct html_sink *, FILE *));

#endif
