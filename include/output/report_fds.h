/*
 * report_fds.h - the file-descriptor part of the report (report.h); used
 * by report.c and report_json.c, in this order:
 *
 *   fdrep_collect   the records to list (by fd, not inherited, old
 *                   enough), their frames named once, fd: suppressions
 *                   matched and counted (their counts reset first)
 *   fdrep_text      "FILE DESCRIPTORS: N open at exit (M inherited)" and
 *                   one "fd 3 -> /dev/null, opened by open" record each,
 *                   with frames as the heap records'
 *   fdrep_json      the value of the "fds" key
 *   fdrep_free
 *
 * Also the frame writers shared with the heap records (report.c,
 * report_json.c).
 */
#ifndef PTLEAK_REPORT_FDS_H
#define PTLEAK_REPORT_FDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "tables/fds.h"
#include "output/json.h"
#include "output/report.h"
#include "symbols/symbols.h"

struct fd_listed {
	const struct fd_rec *rec;
	struct frame_info *frames;	/* frame 0: the function's entry */
	unsigned nframes;
};

struct fd_report {
	const struct report_input *in;
	struct fd_listed *recs;
	size_t nrecs, alloc;
	uint64_t open, inherited;	/* every open descriptor */
	uint64_t suppressed;
};

void fdrep_collect(struct fd_report *fr, const struct report_input *in);
void fdrep_text(const struct fd_report *fr, FILE *text);
void fdrep_json(const struct fd_report *fr, struct json *j);
void fdrep_free(struct fd_report *fr);

/* Shared with the rest of the report (report_common.c). */

/*
 * The frames of STACK named into *FRAMES (grown as grow_array grows it,
 * *ALLOC its room); returns how many to show: at most in->depth, none
 * below the first "main".  FIRST (NULL: none) names frame 0 in place of
 * its symbol (the allocator or descriptor function called).
 */
unsigned report_stack_frames(const struct report_input *in, uint32_t stack,
			    const char *first, struct frame_info **frames,
			    size_t *alloc);

/* "   at 0x...: fn (file:line)" (I == 0) or "   by ..." after the
 * "ptleak[PID]: " prefix, on F. */
void report_text_frame(FILE *f, pid_t pid, unsigned i,
		       const struct frame_info *fi);
/* "tracked": !WHY, "why": WHY (a string or null): the last keys of
 * "heap" and "fds" */
void report_json_tracked(struct json *j, const char *why);
/* {"pc", "function", "file", "line", "module"} */
void report_json_frame(struct json *j, const struct frame_info *fi);

#endif
