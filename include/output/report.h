/*
 * report.h - the leak report: text (valgrind-like) and JSON (SPEC.md).
 *
 * Input is what the tables hold (heap.h, stacks.h) plus a function that
 * names a PC; nothing here knows about ptrace, so the report is tested on
 * synthetic tables.
 */
#ifndef PTLEAK_REPORT_H
#define PTLEAK_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "analysis/census.h"
#include "tables/fds.h"
#include "tables/growth.h"
#include "tables/heap.h"
#include "target/procstat.h"
#include "analysis/scan.h"
#include "tables/stacks.h"
#include "analysis/suppress.h"
#include "symbols/symbols.h"

struct fd_report;

enum report_reason { REPORT_EXIT, REPORT_SIGNAL, REPORT_DETACH, REPORT_EXEC };

/* valgrind's --leak-check: every record listed, the summaries only, or
 * no leak summary at all (the heap summary stays) */
enum report_leak_check { LEAK_CHECK_FULL, LEAK_CHECK_SUMMARY, LEAK_CHECK_NO };

/* Kinds of records (report_input.show_kinds, error_kinds): bit 1 << enum
 * scan_class; 0 is the default, so "none" is its own bit. */
#define REPORT_KIND(cls) (1u << (cls))
#define REPORT_KINDS_NONE (1u << 31)

/* The one frame of a record of blocks made before the attach (the
 * census's): no stack is known. */
#define REPORT_BEFORE_FRAME "[before attach]"

/* When the counts of a report hold: "now", "at detach", "at exit"
 * ("in use now", "open at exit"). */
const char *report_when(enum report_reason reason);

/* Names PC into *OUT (see sym_lookup); CALLER as there. */
typedef void (*report_namer)(void *ctx, uint64_t pc, int caller,
			     struct frame_info *out);

struct report_input {
	pid_t pid;
	char *const *argv;		/* the target's argv, NULL-terminated */
	enum report_reason reason;
	unsigned number;		/* 1, 2, ... in this session (0: none shown) */
	time_t wall;			/* when it was made */
	uint64_t elapsed_ns;		/* since tracing started */
	uint64_t now_ns;		/* now_ns() when it was made: ages */
	uint64_t min_age_ns;		/* --min-age: younger blocks and fds
					 * are left out of the records and the
					 * summary */
	int exited;			/* target.exit known */
	int exit_code;			/* if exited and !exit_signal */
	int exit_signal;		/* died of this signal (0: exited) */
	const struct heap *heap;	/* NULL: heap not tracked ("heap": null) */
	/* -p: the census of the heap at the attach ("census"), NULL:
	 * launched ("census": null) */
	const struct census *census;
	const struct stacks *stacks;
	unsigned depth;			/* frames shown per stack at most */
	report_namer namer;
	void *namer_ctx;
	const char *unclassified_why;	/* why no reachability scan was made */
	/* the scan's verdicts by heap entry (scan_process); else CLASSES,
	 * the verdict on every live block, sorted by addr; both NULL: no
	 * scan, every record "unclassified" */
	const struct scan_result *scan;
	const struct scan_block *classes;
	size_t nclasses;
	int show_reachable;		/* list still reachable records too */
	struct suppressions *supp;	/* NULL: none; its counts are updated */
	/* descriptors (report_fds.c), NULL: not tracked ("fds": null, no
	 * text section); records are listed by fd, inherited ones never */
	const struct fdtable *fds;
	/* why the heap / the descriptors could not be seen (no allocator
	 * found, memory unreadable, calls not recorded), NULL: they were.
	 * The report says so instead of "no leaks are possible" (text:
	 * "heap NOT tracked: WHY"; JSON: "tracked": false, "why") */
	const char *heap_untracked;
	const char *fds_untracked;
	/* per thread (report_threads.h): the heap table's threads in a
	 * THREADS section and "threads" (0: none, "threads": []) */
	int threads;
	/* the process's CPU times, wall time, peak RSS (procstat.h); NULL:
	 * not known ("resources": null) */
	const struct proc_resources *resources;
	/* --html: its file and data (report_html.h); NULL: none */
	const struct html_input *html;
	/* valgrind's choices (vgopts.h); 0: ptleak's defaults */
	unsigned show_kinds;		/* REPORT_KIND bits of the records
					 * listed (unclassified ones always) */
	unsigned error_kinds;		/* ... counted in report_result.lost_* */
	int leak_check;			/* enum report_leak_check */
	int gen_suppressions;		/* text: a valgrind suppression after
					 * each record listed (vgsupp.h) */
	const struct report_sink *sink;	/* NULL, or the first of the sinks
					 * told the records (report_sink) */
	/* the stacks growing (growth.h), fastest first: a GROWTH section,
	 * "heap.growth" */
	const struct growth_entry *growth;
	size_t ngrowth;
	double errors_for_growth;	/* bytes/s: an entry this fast or faster
					 * counts in report_result.growing
					 * (0: none counts) */
	/* how long the target's threads were held for this report (JSON
	 * "report.pause_ms"); a live report made without a snapshot of the
	 * target says why (one text line: its threads were held for the
	 * whole scan), NULL: made from one, or not a live report */
	double pause_ms;
	int snapshot;			/* made from a snapshot */
	const char *snapshot_why;
};

/* A record, as report_sink sees it (report_xml.c, report_vgtext.c). */
struct report_record {
	int cls;			/* enum scan_class, -1: unclassified */
	uint64_t bytes;			/* direct */
	uint64_t indirect;
	uint64_t blocks;
	size_t number, total;		/* loss record NUMBER of TOTAL */
	const struct frame_info *frames;	/* [0]: the allocator */
	unsigned nframes;		/* 0 when not listed (REPORT_SINK_ALL)
					 * or the record has no stack */
	int listed;			/* shown: --leak-check=full, a kind of
					 * --show-leak-kinds, not suppressed */
	int supp;			/* index in report_input.supp of the
					 * pattern that suppressed it, -1: none */
	/* what makes it one record (report_digest.h): the stack's id in
	 * report_input.stacks (0: none), the allocator; a census record's
	 * type, else EACH (its blocks' size, untyped), BEFORE: made before
	 * the attach */
	uint32_t stack;
	uint8_t fn, before;
	uint16_t type;
	uint64_t each;
};

/* What a sink hears before the first record and after the last. */
struct report_totals {
	const struct report_input *in;
	size_t nrecs;			/* every record, listed or not */
	/* not suppressed, direct bytes; [enum scan_class], [4]: unclassified */
	uint64_t cls_bytes[5], cls_blocks[5];
	uint64_t supp_bytes, supp_blocks;	/* suppressed records' */
	const struct fd_report *fds;	/* NULL: no descriptors (report_fds.h) */
	/* the GROWTH section (ptleak's text, "ptleak[PID]: " lines) onto F;
	 * NULL: no stack grows */
	void (*growth_text)(const struct report_totals *t, FILE *f);
	void *priv;			/* growth_text's */
};

/* REPORT_SINK_ALL: every record, suppressed and unlisted ones too, in
 * memcheck's order (smallest first: total bytes, then its kinds
 * reachable, possible, indirect, definite, then blocks) and numbered in
 * it, as valgrind numbers its loss records.  0: the records listed, in
 * the report's order (largest first) and numbers. */
#define REPORT_SINK_ALL 1u
/* With REPORT_SINK_ALL: no record's frames named (nframes 0), its keys
 * only (report_digest.h). */
#define REPORT_SINK_KEYS 2u

/* Another writer of the same records.  begin and end may be NULL; every
 * record is told between them.  Sinks are chained by NEXT
 * (report_input.sink: the first). */
struct report_sink {
	const struct report_sink *next;
	void (*begin)(void *ctx, const struct report_totals *t);
	void (*record)(void *ctx, const struct report_record *rec);
	void (*end)(void *ctx, const struct report_totals *t);
	void *ctx;
	unsigned flags;			/* REPORT_SINK_ALL or 0 */
};

/* What the report found, for --error-exitcode. */
struct report_result {
	uint64_t lost_bytes;		/* definitely + indirectly + possibly
					 * lost, not suppressed */
	uint64_t lost_blocks;
	uint64_t leaked_fds;		/* listed fd records (not inherited,
					 * not suppressed, old enough) */
	int untracked;			/* heap_untracked or fds_untracked */
	uint64_t growing;		/* growth entries listed at or above
					 * errors_for_growth */
};

/*
 * Write the text report to TEXT (NULL: none) and, if JSON_PATH, the JSON
 * report atomically (JSON_PATH.tmp, then rename); likewise the HTML
 * report if in->html.  0 or -1 (message).
 */
int report_write(const struct report_input *in, FILE *text,
		 const char *json_path, struct report_result *res);

#endif
