/*
 * vgopts.c - valgrind's spellings of the leak check's options (vgopts.h).
 *
 * Each is given valgrind's meaning in ptleak's terms: --leak-check=full is
 * ptleak's report, --num-callers its --depth, --log-file its -o, and so
 * on.  Options of valgrind's other tools, or that would change the leak
 * report, are refused by name with one line saying why, exit 64: a
 * command line must not seem to work while doing less than it asks.
 * memcheck's error checks, which only add errors of other kinds than
 * leaks, are accepted with one notice, so that CI command lines run
 * unchanged.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/report.h"
#include "analysis/scan.h"
#include "base/util.h"
#include "cli/vgopts.h"

#define KIND(c) REPORT_KIND(c)
#define ALL_KINDS (KIND(SCAN_DEFINITELY_LOST) | KIND(SCAN_INDIRECTLY_LOST) | \
		   KIND(SCAN_POSSIBLY_LOST) | KIND(SCAN_STILL_REACHABLE))

const char vgopt_usage[] =
	"valgrind's spellings (ptleak can replace valgrind in a command line\n"
	"that uses only the leak check):\n"
	"      --leak-check=no|summary|full  no records / the summaries only /\n"
	"                      every record (default)\n"
	"      --show-leak-kinds=definite,indirect,possible,reachable|all|none\n"
	"      --errors-for-leak-kinds=...  what --error-exitcode counts\n"
	"      --log-file=FILE  = -o FILE;  --num-callers=N  = --depth N\n"
	"      --track-fds=yes|no  descriptors tracked or not (--heap-only)\n"
	"      --trace-children=yes|no  = -f, or not (the default)\n"
	"      --xml=yes --xml-file=FILE  valgrind's XML (protocol 4)\n"
	"      --gen-suppressions=all  a valgrind suppression per record\n"
	"      --pprof FILE    the report as a gzip'd pprof profile\n"
	"  -s                  ERROR SUMMARY and the suppressions used, even\n"
	"                      with -q (also --show-error-list=yes)\n"
	"      --error-markers=BEGIN,END  lines around each loss record\n"
	"Options are also read from ~/.valgrindrc, $VALGRIND_OPTS and\n"
	"./.valgrindrc when the text is valgrind's.\n"
	"File names may contain %p (the target's pid) and %q{VAR}.\n";

/* "yes" 1, "no" 0, else -1 */
static int yes_no(const char *arg)
{
	if (!strcmp(arg, "yes"))
		return 1;
	if (!strcmp(arg, "no"))
		return 0;
	return -1;
}

/*
 * "definite,indirect,possible,reachable" (any of them), "all" or "none"
 * into *MASK: 0, or -1.
 */
static int parse_kinds(const char *arg, unsigned *mask)
{
	static const char *const names[] = {
		[SCAN_DEFINITELY_LOST] = "definite",
		[SCAN_INDIRECTLY_LOST] = "indirect",
		[SCAN_POSSIBLY_LOST] = "possible",
		[SCAN_STILL_REACHABLE] = "reachable",
	};
	const char *p = arg;

	if (!strcmp(arg, "all")) {
		*mask = ALL_KINDS;
		return 0;
	}
	if (!strcmp(arg, "none")) {
		*mask = REPORT_KINDS_NONE;
		return 0;
	}
	*mask = 0;
	while (*p) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (strlen(names[i]) == n && !strncmp(p, names[i], n))
				break;
		if (i == ARRAY_SIZE(names))
			return -1;
		*mask |= KIND(i);
		p += n;
		if (*p == ',' && !*++p)
			return -1;
	}
	return *mask ? 0 : -1;
}

static int kinds_option(const char *opt, const char *arg, unsigned *mask)
{
	char fmt[160];

	if (!parse_kinds(arg, mask))
		return 0;
	snprintf(fmt, sizeof(fmt), "%s wants definite,indirect,possible,"
		 "reachable (any of them), all or none, not '%%s'", opt);
	return usage_error(fmt, arg);
}

void vgopt_add_suppressions(struct options *o, const char *path)
{
	o->suppressions = xrealloc(o->suppressions, (o->nsuppressions + 2) *
				   sizeof(*o->suppressions));
	o->suppressions[o->nsuppressions++] = path;
	o->suppressions[o->nsuppressions] = NULL;
}

static int leak_check(struct options *o, const char *arg)
{
	if (!strcmp(arg, "full") || !strcmp(arg, "yes")) {
		o->leak_check = LEAK_CHECK_FULL;
	} else if (!strcmp(arg, "summary")) {
		o->leak_check = LEAK_CHECK_SUMMARY;
	} else if (!strcmp(arg, "no")) {
		o->leak_check = LEAK_CHECK_NO;
	} else {
		return usage_error("--leak-check wants no, summary or full, not '%s'",
				   arg);
	}
	return 0;
}

int vgopt_apply(struct options *o, int code, const char *arg)
{
	unsigned long v;
	char *end;
	int b;

	/* valgrind's text by default (options.c), unless the option only
	 * asks for a file of valgrind's world beside ptleak's text */
	if (code != VGOPT_PPROF && code != VGOPT_XML && code != VGOPT_XML_FILE)
		o->vg_spelled = 1;
	switch (code) {
	case VGOPT_LEAK_CHECK:
		o->leak_check_set = 1;
		return leak_check(o, arg);
	case VGOPT_ERROR_MARKERS: {
		const char *comma = strchr(arg, ',');

		/* valgrind's: BEGIN[,END], either may be empty */
		free((char *)o->marker_begin);
		o->marker_begin = xstrdup(arg);
		if (comma)
			((char *)o->marker_begin)[comma - arg] = '\0';
		o->marker_end = comma ? comma + 1 : NULL;
		if (!*o->marker_begin) {
			free((char *)o->marker_begin);
			o->marker_begin = NULL;
		}
		if (o->marker_end && !*o->marker_end)
			o->marker_end = NULL;
		return 0;
	}
	case VGOPT_SHOW_LEAK_KINDS:
		return kinds_option("--show-leak-kinds", arg, &o->show_kinds);
	case VGOPT_ERRORS_FOR_LEAK_KINDS:
		return kinds_option("--errors-for-leak-kinds", arg,
				    &o->error_kinds);
	case VGOPT_LOG_FILE:
		o->output = arg;
		return 0;
	case VGOPT_LOG_FD:
		/* the report goes to stderr already; another descriptor of
		 * ptleak's is no file ptleak could name */
		if (strcmp(arg, "2"))
			return usage_error("--log-fd=%s: ptleak writes its report to "
					   "stderr (2) or a file (--log-file)", arg);
		o->output = NULL;
		return 0;
	case VGOPT_NUM_CALLERS:
		v = strtoul(arg, &end, 10);
		if (*arg < '0' || *arg > '9' || *end || v < 1 || v > 500)
			return usage_error("--num-callers wants a number from 1 to "
					   "500, not '%s'", arg);
		o->depth = v > 256 ? 256 : (unsigned)v;	/* ptleak keeps 256 */
		return 0;
	case VGOPT_TRACK_FDS:
		if (!strcmp(arg, "all"))
			return usage_error("--track-fds=%s cannot be honoured: ptleak "
					   "never reports the descriptors the program "
					   "inherited (use --track-fds=yes)", arg);
		if ((b = yes_no(arg)) < 0)
			return usage_error("--track-fds wants yes or no, not '%s'", arg);
		o->heap_only = !b;
		o->track_fds_set = 1;
		return 0;
	case VGOPT_TRACE_CHILDREN:
		if ((b = yes_no(arg)) < 0)
			return usage_error("--trace-children wants yes or no, not '%s'",
					   arg);
		o->follow_forks = b;	/* = -f */
		return 0;
	case VGOPT_XML:
		if ((b = yes_no(arg)) < 0)
			return usage_error("--xml wants yes or no, not '%s'", arg);
		o->xml = b;
		return 0;
	case VGOPT_SHOW_ERROR_LIST:
		if ((b = yes_no(arg)) < 0)
			return usage_error("--show-error-list wants yes or no, not '%s'",
					   arg);
		o->list_errors = b;
		return 0;
	case VGOPT_XML_FILE:
		o->xml_file = arg;
		return 0;
	case VGOPT_GEN_SUPPRESSIONS:
		if (!strcmp(arg, "all") || !strcmp(arg, "no")) {
			o->gen_suppressions = !strcmp(arg, "all");
			return 0;
		}
		if (!strcmp(arg, "yes"))
			return usage_error("--gen-suppressions=%s cannot be honoured: "
					   "ptleak asks no questions (use "
					   "--gen-suppressions=all)", arg);
		return usage_error("--gen-suppressions wants all or no, not '%s'",
				   arg);
	case VGOPT_TOOL:
		if (strcmp(arg, "memcheck"))
			return usage_error("--tool=%s cannot be honoured: ptleak is "
					   "memcheck's leak check only", arg);
		return 0;
	case VGOPT_PPROF:
		o->pprof = arg;
		return 0;
	}
	return usage_error("internal error: option %s", "?");
}

/*
 * valgrind options (core and memcheck) ptleak has no option for, matched
 * by name before any '=': the values that ask what ptleak does anyway
 * (accepted, nothing to do; "*": any, NULL: none), and why the others
 * cannot be honoured: refused, or (NOTE) accepted with the notice when
 * they only change what memcheck would add to the leak check (errors of
 * other kinds, its own emulation).
 */
#define NOTE 1
static const struct {
	const char *name;
	const char *same;	/* "no", "yes|no", "*" or NULL */
	const char *why;
	int note;		/* NOTE: other values accepted, noted */
} others[] = {
	{ "verbose", "*", NULL, 0 },
	{ "error-limit", "yes|no", NULL, 0 },	/* leaks only: no limit */
	{ "child-silent-after-fork", "yes|no", NULL, 0 },	/* no child traced */
	{ "read-var-info", "yes|no", NULL, 0 },	/* memory errors only */
	{ "keep-debuginfo", "yes|no", NULL, 0 },
	{ "demangle", "yes", "ptleak's reports name C++ functions demangled", 0 },
	{ "show-below-main", "no", "ptleak's stacks end at main", 0 },
	{ "leak-resolution", "high", "ptleak groups records by their whole stack (high)", 0 },
	{ "run-libc-freeres", "no", "ptleak does not run code in the program", 0 },
	{ "run-cxx-freeres", "no", "ptleak does not run code in the program", 0 },
	{ "default-suppressions", "no", "ptleak has no default suppressions", 0 },
	{ "read-inline-info", "no", "ptleak does not show inlined frames", 0 },
	{ "track-origins", "no", "ptleak checks leaks, not uses of undefined values", NOTE },
	{ "undef-value-errors", "no", "ptleak checks leaks, not uses of undefined values", NOTE },
	{ "expensive-definedness-checks", NULL, "ptleak checks leaks, not uses of undefined values", NOTE },
	{ "partial-loads-ok", NULL, "ptleak does not check memory accesses", NOTE },
	{ "freelist-vol", NULL, "ptleak does not check memory accesses", NOTE },
	{ "freelist-big-blocks", NULL, "ptleak does not check memory accesses", NOTE },
	{ "ignore-ranges", NULL, "ptleak does not check memory accesses", NOTE },
	{ "ignore-range-below-sp", NULL, "ptleak does not check memory accesses", NOTE },
	{ "malloc-fill", NULL, "ptleak does not change the program's memory", NOTE },
	{ "free-fill", NULL, "ptleak does not change the program's memory", NOTE },
	{ "redzone-size", NULL, "ptleak does not change the program's allocator", NOTE },
	{ "alignment", NULL, "ptleak does not change the program's allocator", 0 },
	{ "keep-stacktraces", NULL, "ptleak keeps allocation stacks only", NOTE },
	{ "show-mismatched-frees", NULL, "ptleak does not check frees", NOTE },
	{ "leak-check-heuristics", NULL, "ptleak's scan has no heuristics", 0 },
	{ "show-leak-heuristics", NULL, "ptleak's scan has no heuristics", 0 },
	{ "vgdb", "no", "no gdbserver in ptleak", 0 },
	{ "vgdb-error", NULL, "no gdbserver in ptleak", 0 },
	{ "db-attach", "no", "no debugger attach in ptleak", 0 },
	{ "smc-check", NULL, "ptleak runs the program's own code natively", NOTE },
	{ "max-stackframe", NULL, "ptleak runs the program's own code natively", NOTE },
	{ "sim-hints", NULL, "ptleak runs the program's own code natively", 0 },
	{ "fair-sched", NULL, "ptleak does not schedule the program's threads", NOTE },
	{ "main-stacksize", NULL, "ptleak does not change the program's stack", NOTE },
	{ "trace-children-skip", NULL, "ptleak's -f (--trace-children=yes) follows every child, it has no skip list", 0 },
	{ "trace-children-skip-by-arg", NULL, "ptleak's -f (--trace-children=yes) follows every child, it has no skip list", 0 },
	{ "xml-fd", NULL, "ptleak writes XML to a file (--xml-file)", 0 },
	{ "xml-socket", NULL, "ptleak writes XML to a file (--xml-file)", 0 },
	{ "xml-user-comment", NULL, "ptleak's XML has no user comment", 0 },
	{ "log-socket", NULL, "ptleak writes its report to stderr or a file", 0 },
	{ "soname-synonyms", NULL, "ptleak finds the allocator where the dynamic linker binds it", 0 },
	{ "fullpath-after", NULL, "ptleak shows source files by their base name", 0 },
	{ "time-stamp", "no", "ptleak's reports carry their own time", 0 },
	{ "exit-on-first-error", "no", "ptleak reports leaks only, at the end", 0 },
};

/* Is VALUE (NULL: none given) one of SAME's ("yes|no", "*")? */
static int same_value(const char *same, const char *value)
{
	size_t n;

	if (!same)
		return 0;
	if (!strcmp(same, "*"))
		return 1;
	if (!value)
		return 0;
	n = strlen(value);
	while (*same) {
		size_t k = strcspn(same, "|");

		if (k == n && !strncmp(same, value, n))
			return 1;
		same += k + !!same[k];
	}
	return 0;
}

/*
 * valgrind's older spellings of --show-leak-kinds, as memcheck applies
 * them (mc_main.c) to the kinds so far (its default: definite,
 * possible): --show-reachable=yes is all, =no takes reachable out;
 * --show-possibly-lost adds or takes out possible.  0, or -1 (not one).
 */
static int old_spelling(struct options *o, const char *name, size_t n, int b)
{
	unsigned base = o->show_kinds && o->show_kinds != REPORT_KINDS_NONE ?
			o->show_kinds : 0;

	if (!o->show_kinds)
		base = KIND(SCAN_DEFINITELY_LOST) | KIND(SCAN_POSSIBLY_LOST);
	if (n == 14 && !strncmp(name, "show-reachable", n)) {
		o->show_reachable = 0;
		o->show_kinds = b ? ALL_KINDS : base & ~KIND(SCAN_STILL_REACHABLE);
	} else if (n == 18 && !strncmp(name, "show-possibly-lost", n)) {
		o->show_kinds = b ? base | KIND(SCAN_POSSIBLY_LOST) :
				    base & ~KIND(SCAN_POSSIBLY_LOST);
	} else {
		return -1;
	}
	if (!o->show_kinds)
		o->show_kinds = REPORT_KINDS_NONE;
	return 0;
}

int vgopt_other(struct options *o, const char *arg, int letter)
{
	const char *name = arg + 2, *eq;
	size_t n, i;
	int b;

	/* -v: memcheck's text at its default verbosity; -s: ERROR SUMMARY
	 * and the suppressions used, also with -q */
	if (letter == 'v' || letter == 's') {
		o->vg_spelled = 1;
		o->list_errors |= letter == 's';
		return 0;
	}
	if (letter || strncmp(arg, "--", 2))
		return -1;
	eq = strchr(name, '=');
	n = eq ? (size_t)(eq - name) : strlen(name);
	o->vg_spelled = 1;	/* unless -1 below: then no option at all */
	if (eq && (b = yes_no(eq + 1)) >= 0 && !old_spelling(o, name, n, b))
		return 0;

	for (i = 0; i < ARRAY_SIZE(others); i++) {
		char fmt[160];

		if (strlen(others[i].name) != n || strncmp(name, others[i].name, n))
			continue;
		if (same_value(others[i].same, eq ? eq + 1 : NULL))
			return 0;
		if (others[i].note) {
			size_t had = o->notices ? strlen(o->notices) : 0;

			o->notices = xrealloc(o->notices, had + strlen(arg) + 2);
			snprintf(o->notices + had, strlen(arg) + 2, "%s%s",
				 had ? " " : "", arg);
			return 0;
		}
		snprintf(fmt, sizeof(fmt), "%%s cannot be honoured: %s",
			 others[i].why);
		return usage_error(fmt, arg);
	}
	return -1;
}

int vgopt_finish(struct options *o)
{
	if (o->notices && !o->quiet)
		fprintf(stderr, "ptleak: accepted, not honoured (memcheck's checks "
			"of other errors than leaks): %s\n", o->notices);
	if (o->leak_check == LEAK_CHECK_NO)
		o->no_scan = 1;	/* as valgrind: no leak search at all */
	if (o->xml && !o->xml_file)
		return usage_error("%s", "--xml=yes needs --xml-file=FILE (ptleak "
				   "writes valgrind's XML to a file)");
	return 0;
}

void options_free(struct options *o)
{
	free(o->suppressions);
	o->suppressions = NULL;
	o->nsuppressions = 0;
	free(o->notices);
	o->notices = NULL;
	free((char *)o->marker_begin);
	o->marker_begin = o->marker_end = NULL;
	free(o->rc_argv);
	o->rc_argv = NULL;
	free(o->rc_text);
	o->rc_text = NULL;
}
