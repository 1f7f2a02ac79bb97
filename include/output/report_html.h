/*
 * report_html.h - the HTML report (--html FILE): one self-contained file,
 * written atomically at every report like --json, that a browser opens
 * from disk.
 *
 * The file holds:
 *   - the JSON report itself (report.h, SPEC.md), in
 *     <script type="application/json" id="ptleak-report">;
 *   - in <script type="application/json" id="ptleak-extra">: the time
 *     series (struct html_series), the resources, the stacks holding the
 *     most memory at the report and at the peak, those stacks' frames, and
 *     the source lines around every frame with a file:line (read at report
 *     time, bounded: HTML_SRC_* below);
 *   - the style and the script that draw it (src/html/, embedded at build
 *     time), with a Content-Security-Policy that forbids any fetch.
 * Every '<' in the data is written "\u003c": no "</script>" nor "<!--"
 * in a name can end the data block.  The script writes text with
 * textContent only.
 *
 * report_write (report.h) drives it: with in->html set, the JSON report
 * goes to a temporary file first (html_sink_open), from which the --json
 * file and the HTML file are both made (html_sink_commit).
 */
#ifndef PTLEAK_REPORT_HTML_H
#define PTLEAK_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "output/outfile.h"
#include "symbols/symbols.h"

struct report_input;

/* Source lines embedded around a frame's line, and the bounds. */
#define HTML_SRC_CONTEXT 5		/* lines before and after */
#define HTML_SRC_LINE_MAX 500		/* bytes kept of a line ("..." cut) */
#define HTML_SRC_BUDGET (256 * 1024)	/* bytes of source in one report */
#define HTML_SRC_MAX_LOCS 2048		/* distinct file:line looked up */
#define HTML_TOP_STACKS 20		/* stacks in the "most memory" trees */

/*
 * The time series of the chart: N samples, by time.  Any array may be
 * NULL (not sampled).  NSTACKS stacks (stacks.h ids, STACK_IDS) are
 * followed over time: STACK_BYTES[i * NSTACKS + k] is what stack K held
 * at sample I.  The snapshot at the peak: NPEAK stacks and what each held
 * at PEAK_MS (NPEAK 0: none).  N 0: the report says "no samples".
 */
struct html_series {
	size_t n;
	const uint64_t *ms;		/* since tracing started */
	const uint64_t *heap_bytes;
	const uint64_t *heap_blocks;
	const uint64_t *rss_kb;
	size_t nstacks;
	const uint32_t *stack_ids;
	const uint64_t *stack_bytes;	/* n x nstacks */
	size_t npeak;
	uint64_t peak_ms;
	const uint32_t *peak_ids;
	const uint64_t *peak_bytes;
	const uint64_t *peak_blocks;	/* NULL: not known */
	/* the growing stacks of the report (growth.h), followed over time:
	 * n x ngrow bytes in use, HTML_UNKNOWN at a sample where the stack
	 * was neither among the largest nor the most recently growing */
	size_t ngrow;
	const uint32_t *grow_ids;
	const uint64_t *grow_bytes;
};

#define HTML_UNKNOWN UINT64_MAX

/* The process's resources at the report (known 0: not measured). */
struct html_resources {
	int known;
	double user_s, sys_s;		/* CPU time */
	uint64_t max_rss_kb;		/* peak resident set (VmHWM) */
};

struct html_input {
	const char *path;		/* --html FILE */
	const struct html_series *series;	/* NULL: no samples */
	const struct html_resources *res;	/* NULL: not measured */
};

/*
 * The timeline's samples (timeline.h) as a series: every sample kept,
 * and the HTML_FEED_STACKS stacks whose in-use bytes were the largest in
 * some sample, followed over time (a stack at a sample where it was not
 * among that sample's TL_TOP largest counts 0 there); RSS unknown at a
 * sample (the process gone) is the last known.  F holds the arrays S
 * points into until html_feed_free(F).  TL may be NULL (no samples).
 */
#define HTML_FEED_STACKS 8

struct html_feed_stack {
	uint32_t id;
	uint64_t max;
};

struct html_feed {
	uint64_t *ms, *heap_bytes, *heap_blocks, *rss_kb, *stack_bytes;
	uint32_t ids[HTML_FEED_STACKS];
	uint32_t *grow_ids;
	uint64_t *grow_bytes;
};

struct timeline;
int html_feed_series(const struct timeline *tl, struct html_series *s,
		     struct html_feed *f);
/*
 * The curves of the N growing stacks G (growth.h) into S (after
 * html_feed_series, same F): each stack's bytes in use at every sample
 * where the timeline kept it (TL_TOP, TL_HOT), HTML_UNKNOWN elsewhere.
 */
struct growth_entry;
void html_feed_growth(const struct timeline *tl, const struct growth_entry *g,
		      size_t n, struct html_series *s, struct html_feed *f);
void html_feed_free(struct html_feed *f);

/* Where report_write's JSON goes (see above). */
struct html_sink {
	const struct html_input *html;	/* NULL: JSON only, straight out */
	const char *json_path;		/* NULL: no --json */
	struct outfile out;		/* JSON_PATH's, without html */
	FILE *f;			/* the JSON is written here */
	/* the source locations the report's frames named (with html) */
	struct html_locs *locs;
	void (*namer)(void *ctx, uint64_t pc, int caller,
		      struct frame_info *out);
	void *namer_ctx;
};

/*
 * Open the JSON's stream into SINK->f for JSON_PATH (may be NULL) and
 * HTML (may be NULL; not both).  With HTML, *IN's namer is wrapped into
 * SINK's so that every file:line named is noted (IN is a copy that
 * report_write uses instead).  0, or -1 (message).
 */
int html_sink_open(struct html_sink *sink, const char *json_path,
		   const struct html_input *html, struct report_input *in);

/* The JSON is complete: write the --json file and the HTML file.  0, or
 * -1 (message; what could be written is). */
int html_sink_commit(struct html_sink *sink, const struct report_input *in);

/* Undo html_sink_open after an error before commit. */
void html_sink_abort(struct html_sink *sink);

#endif
