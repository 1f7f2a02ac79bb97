/*
 * report_vgtext.h - the text report as memcheck writes it (SPEC.md:
 * "valgrind's text"), a sink of the report's records (report.h) like the
 * XML one: every line "==PID== " (blank ones too), the banner, HEAP
 * SUMMARY, the loss records in memcheck's order and numbers, LEAK
 * SUMMARY and its hints, ERROR SUMMARY with the leak records counted as
 * errors as memcheck counts them; -q, -s, --error-markers as memcheck
 * honours them.  With --track-fds=yes the descriptors come first, as
 * memcheck's FILE DESCRIPTORS; ptleak's own sections (threads,
 * resources) follow the ERROR SUMMARY, in the same prefix.
 *
 * Measured against valgrind 3.19 (tests/integration/cases_vgtext.py).
 */
#ifndef PTLEAK_REPORT_VGTEXT_H
#define PTLEAK_REPORT_VGTEXT_H

#include <stdio.h>
#include <sys/types.h>

#include "output/report.h"

struct vgtext_opts {
	int verbosity;		/* 0: -q, 1: the default (-v: as 1) */
	int list_errors;	/* -s (--show-error-list=yes) */
	const char *marker_begin, *marker_end;	/* --error-markers, NULL: none */
	int track_fds;		/* --track-fds=yes: FILE DESCRIPTORS first */
	int banner;		/* the banner first (the process's first text) */
	int log_file;		/* --log-file: "Parent PID:" in the banner */
	const char *version;	/* ptleak's, for the banner */
};

struct vgtext;

/*
 * A writer of the report IN is about to make, on F (the process's text
 * report).  IN->sink is then to be set to vgtext_sink's; report_write
 * then gets no ptleak text (TEXT NULL).
 */
struct vgtext *vgtext_open(FILE *f, const struct report_input *in,
			   const struct vgtext_opts *o);

/*
 * memcheck's banner for process PID running ARGV on F, and the blank line
 * after it: written when the program starts (valgrind's is), else by the
 * first report (vgtext_opts.banner).  LOG_FILE: "Parent PID:" too.
 */
void vgtext_banner(FILE *f, pid_t pid, char *const *argv, int log_file,
		   const char *version);

/* TEXT, lines written for ptleak's text ("ptleak[PID]: ..."), on F in
 * memcheck's prefix ("==PID== ..."); TEXT is cut into lines in place. */
void vgtext_relay(FILE *f, pid_t pid, char *text);

/* The sink (REPORT_SINK_ALL) that writes the text. */
const struct report_sink *vgtext_sink(struct vgtext *v);

/* After report_write: the errors memcheck would count (not suppressed
 * leak records of --errors-for-leak-kinds with --leak-check=full, the
 * number in "ERROR SUMMARY: N errors"), what --error-exitcode looks at.
 * Frees V. */
unsigned long vgtext_close(struct vgtext *v);

#endif
