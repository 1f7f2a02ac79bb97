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

#include "fds.h"
#include "heap.h"
#include "scan.h"
#include "stacks.h"
#include "suppress.h"
#include "symbols.h"

enum report_reason { REPORT_EXIT, REPORT_SIGNAL, REPORT_DETACH, REPORT_EXEC };

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
	const struct stacks *stacks;
	unsigned depth;			/* frames shown per stack at most */
	report_namer namer;
	void *namer_ctx;
	const char *unclassified_why;	/* why no reachability scan was made */
	/* the scan's verdict on every live block, sorted by addr (the blocks
	 * of heap_foreach); NULL: no scan, every record "unclassified" */
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
};

/* What the report found, for --error-exitcode. */
struct report_result {
	uint64_t lost_bytes;		/* definitely + indirectly + possibly
					 * lost, not suppressed */
	uint64_t lost_blocks;
	uint64_t leaked_fds;		/* listed fd records (not inherited,
					 * not suppressed, old enough) */
	int untracked;			/* heap_untracked or fds_untracked */
};

/*
 * Write the text report to TEXT (NULL: none) and, if JSON_PATH, the JSON
 * report atomically (JSON_PATH.tmp, then rename).  0 or -1 (message).
 */
int report_write(const struct report_input *in, FILE *text,
		 const char *json_path, struct report_result *res);

#endif
