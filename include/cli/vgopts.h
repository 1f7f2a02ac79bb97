/*
 * vgopts.h - valgrind's spellings of the leak check's options, with
 * valgrind's meaning (SPEC.md: "ptleak can replace valgrind in a command
 * line that uses only the leak check"), and the report files of valgrind's
 * world (--xml-file, --pprof).  options.c puts VGOPT_LONGOPTS in its table
 * and hands these options to vgopt_apply; a valgrind option ptleak cannot
 * honour gets one line and exit 64 (vgopt_other).
 */
#ifndef PTLEAK_VGOPTS_H
#define PTLEAK_VGOPTS_H

#include "session/options.h"

enum {
	VGOPT_LEAK_CHECK = 512,	/* past options.c's own codes */
	VGOPT_SHOW_LEAK_KINDS,
	VGOPT_ERRORS_FOR_LEAK_KINDS,
	VGOPT_LOG_FILE,
	VGOPT_LOG_FD,
	VGOPT_NUM_CALLERS,
	VGOPT_TRACK_FDS,
	VGOPT_TRACE_CHILDREN,
	VGOPT_XML,
	VGOPT_XML_FILE,
	VGOPT_GEN_SUPPRESSIONS,
	VGOPT_TOOL,
	VGOPT_PPROF,
	VGOPT_ERROR_MARKERS,
	VGOPT_SHOW_ERROR_LIST,
};

/* getopt_long entries, for options.c's table */
#define VGOPT_LONGOPTS \
	{ "leak-check", required_argument, NULL, VGOPT_LEAK_CHECK }, \
	{ "show-leak-kinds", required_argument, NULL, VGOPT_SHOW_LEAK_KINDS }, \
	{ "errors-for-leak-kinds", required_argument, NULL, \
	  VGOPT_ERRORS_FOR_LEAK_KINDS }, \
	{ "log-file", required_argument, NULL, VGOPT_LOG_FILE }, \
	{ "log-fd", required_argument, NULL, VGOPT_LOG_FD }, \
	{ "num-callers", required_argument, NULL, VGOPT_NUM_CALLERS }, \
	{ "track-fds", required_argument, NULL, VGOPT_TRACK_FDS }, \
	{ "trace-children", required_argument, NULL, VGOPT_TRACE_CHILDREN }, \
	{ "xml", required_argument, NULL, VGOPT_XML }, \
	{ "xml-file", required_argument, NULL, VGOPT_XML_FILE }, \
	{ "gen-suppressions", required_argument, NULL, VGOPT_GEN_SUPPRESSIONS }, \
	{ "tool", required_argument, NULL, VGOPT_TOOL }, \
	{ "pprof", required_argument, NULL, VGOPT_PPROF }, \
	{ "error-markers", required_argument, NULL, VGOPT_ERROR_MARKERS }, \
	{ "show-error-list", required_argument, NULL, VGOPT_SHOW_ERROR_LIST }

#define VGOPT_FIRST VGOPT_LEAK_CHECK
#define VGOPT_LAST VGOPT_SHOW_ERROR_LIST

/* Help lines for these options (options.c's usage). */
extern const char vgopt_usage[];

/* Option CODE (VGOPT_*) with ARG into O: 0, or EXIT_USAGE after one
 * "ptleak: ..." line. */
int vgopt_apply(struct options *o, int code, const char *arg);

/*
 * ARG is an option getopt_long did not take ("--track-origins=yes",
 * "--show-reachable=yes"), LETTER its letter if it is a short one (else
 * 0).  Returns 0 when it is a valgrind option applied here with its
 * meaning (-s, --show-reachable=yes), asking what ptleak does anyway (-v,
 * --run-libc-freeres=no), or one of memcheck's error checks that would
 * only add errors of other kinds than leaks (--track-origins=yes: noted
 * for vgopt_finish's notice); EXIT_USAGE after "ptleak: ARG cannot be
 * honoured: why" when it is a valgrind option that would change the leak
 * report, -1 when it is no valgrind option.
 */
int vgopt_other(struct options *o, const char *arg, int letter);

/* --suppressions FILE: one more file (any number). */
void vgopt_add_suppressions(struct options *o, const char *path);

/* After every option: combinations (--xml=yes without --xml-file); the
 * one notice line for the options accepted but not honoured (memcheck's
 * error checks: --track-origins=yes ...), unless -q.  0 or EXIT_USAGE
 * after one line. */
int vgopt_finish(struct options *o);

#endif
