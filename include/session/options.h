/* options.h - the command line (see ../shared/SPEC.md and docs/ptleak.1). */
#ifndef PTLEAK_OPTIONS_H
#define PTLEAK_OPTIONS_H


struct options {
	unsigned depth;		/* frames kept per stack */
	const char *output;	/* text report file, NULL = stderr */
	const char *json;	/* JSON report file or NULL */
	const char *html;	/* --html: HTML report file or NULL */
	int quiet;
	int show_reachable;	/* --show-reachable */
	int no_scan;		/* --no-scan */
	int error_exitcode;	/* --error-exitcode N, 0: not given */
	int pid;		/* -p PID: attach (then argv is NULL) */
	int report_signal;	/* --report-on-signal[=SIG], 0: not given */
	double errors_for_growth;	/* --errors-for-growth: bytes/s (0: off) */
	double min_age;		/* --min-age SECONDS: younger blocks/fds left out */
	double duration;	/* --duration SECONDS: detach after (0: never) */
	int fd_only;		/* --fd-only: no allocator breakpoints */
	int heap_only;		/* --heap-only: no descriptor breakpoints */
	int follow_forks;	/* -f: every child process traced too (and,
				 * with valgrind's text, every fork child) */
	enum engine {
		ENGINE_AUTO,	/* the recorder where it can be, else breakpoints */
		ENGINE_RECORDER,	/* the recorder, or an error */
		ENGINE_BREAKPOINTS,	/* int3 probes only */
	} engine;		/* --engine */
	/* valgrind's spellings and reports (vgopts.h) */
	const char **suppressions; /* --suppressions FILE, each of them */
	unsigned nsuppressions;
	unsigned show_kinds;	/* records listed: bits 1 << enum scan_class;
				 * 0: definite, indirect, possible (and
				 * reachable with --show-reachable) */
	unsigned error_kinds;	/* what --error-exitcode counts, the same
				 * bits; 0: definite, indirect, possible */
	int leak_check;		/* enum report_leak_check (report.h) */
	int xml;		/* --xml=yes: --xml-file is written */
	const char *xml_file;	/* --xml-file FILE */
	int gen_suppressions;	/* --gen-suppressions=all */
	const char *pprof;	/* --pprof FILE */
	/* valgrind's text (report_vgtext.h) */
	enum text_format {
		TEXT_AUTO,	/* valgrind's when its spellings are used */
		TEXT_PTLEAK,
		TEXT_VALGRIND,
	} text;			/* --text, TEXT_AUTO resolved by options_parse */
	int vg_spelled;		/* a spelling only valgrind has was used */
	int list_errors;	/* -s, --show-error-list=yes */
	const char *marker_begin, *marker_end;	/* --error-markers=B,E */
	int leak_check_set;	/* --leak-check given */
	int track_fds_set;	/* --track-fds given */
	int vg_exec_untraced;	/* valgrind's text without --trace-children=yes:
				 * fork children traced (follow_forks), an
				 * exec not followed, as valgrind */
	char *notices;		/* options accepted but not honoured, for the
				 * one notice line (malloc'd) */
	char **rc_argv;		/* the command line with valgrind's rc files and
				 * $VALGRIND_OPTS in front (malloc'd) */
	char *rc_text;		/* their words (malloc'd) */
	/* memory over time (docs/usage.md) */
	const char *timeline;	/* --timeline FILE: the samples as CSV */
	unsigned interval_ms;	/* --interval MS between samples (default 100) */
	const char *events;	/* --events FILE: every heap event as CSV */
	int live;		/* --live: a status line on stderr */
	const char *folded;	/* --folded FILE: in-use bytes as collapsed stacks */
	char **argv;		/* PROGRAM ARGS..., NULL-terminated */
	int argc;
};

/*
 * Parse ARGV into O.  Returns 0 to run, 1 when --help or --version was
 * printed (exit 0), or EXIT_USAGE after printing one "ptleak: ..." line.
 */
int options_parse(struct options *o, int argc, char **argv);

/* What options_parse allocated in O (its list of suppression files). */
void options_free(struct options *o);

#endif
