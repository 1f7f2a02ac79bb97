/*
 * vgopts.c - valgrind's spellings of the leak check's options (vgopts.h).
 *
 * Each is given valgrind's meaning in ptleak's terms: --leak-check=full is
 * ptleak's report, --num-callers its --depth, --log-file its -o, and so
 * on.  Options of valgrind's other tools, or of memcheck's error checks,
 * are refused by name with one line saying why, exit 64: a command line
 * must not seem to work while doing less than it asks.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "scan.h"
#include "util.h"
#include "vgopts.h"

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
	"      --xml=yes --xml-file=FILE  valgrind's XML (protocol 4)\n"
	"      --gen-suppressions=all  a valgrind suppression per record\n"
	"      --pprof FILE    the report as a gzip'd pprof profile\n"
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
		o->no_scan = 1;	/* as valgrind: no leak search at all */
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

	switch (code) {
	case VGOPT_LEAK_CHECK:
		return leak_check(o, arg);
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
		return 0;
	case VGOPT_TRACE_CHILDREN:
		if ((b = yes_no(arg)) < 0)
			return usage_error("--trace-children wants yes or no, not '%s'",
					   arg);
		if (b)
			return usage_error("--trace-children=%s cannot be honoured yet: "
					   "ptleak does not follow children in this "
					   "build (no -f)", arg);
		return 0;
	case VGOPT_XML:
		if ((b = yes_no(arg)) < 0)
			return usage_error("--xml wants yes or no, not '%s'", arg);
		o->xml = b;
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
 * valgrind options (core and memcheck) that ptleak cannot honour, and
 * why; matched by name before any '='.
 */
static const struct {
	const char *name;
	const char *why;
} unhonoured[] = {
	{ "track-origins", "ptleak checks leaks, not uses of undefined values" },
	{ "undef-value-errors", "ptleak checks leaks, not uses of undefined values" },
	{ "expensive-definedness-checks", "ptleak checks leaks, not uses of undefined values" },
	{ "partial-loads-ok", "ptleak does not check memory accesses" },
	{ "freelist-vol", "ptleak does not check memory accesses" },
	{ "freelist-big-blocks", "ptleak does not check memory accesses" },
	{ "malloc-fill", "ptleak does not change the program's memory" },
	{ "free-fill", "ptleak does not change the program's memory" },
	{ "redzone-size", "ptleak does not change the program's allocator" },
	{ "alignment", "ptleak does not change the program's allocator" },
	{ "replacement-malloc", "ptleak does not change the program's allocator" },
	{ "keep-stacktraces", "ptleak keeps allocation stacks only" },
	{ "show-mismatched-frees", "ptleak does not check frees" },
	{ "ignore-ranges", "ptleak does not check memory accesses" },
	{ "ignore-range-below-sp", "ptleak does not check memory accesses" },
	{ "leak-check-heuristics", "ptleak's scan has no heuristics" },
	{ "show-leak-heuristics", "ptleak's scan has no heuristics" },
	{ "leak-resolution", "ptleak groups records by their whole stack (high)" },
	{ "run-libc-freeres", "ptleak does not run code in the program" },
	{ "run-cxx-freeres", "ptleak does not run code in the program" },
	{ "vgdb", "no gdbserver in ptleak" },
	{ "vgdb-error", "no gdbserver in ptleak" },
	{ "db-attach", "no debugger attach in ptleak" },
	{ "smc-check", "ptleak runs the program's own code natively" },
	{ "fair-sched", "ptleak does not schedule the program's threads" },
	{ "trace-children-skip", "ptleak does not follow children in this build" },
	{ "trace-children-skip-by-arg", "ptleak does not follow children in this build" },
	{ "child-silent-after-fork", "ptleak does not follow children in this build" },
	{ "xml-fd", "ptleak writes XML to a file (--xml-file)" },
	{ "xml-socket", "ptleak writes XML to a file (--xml-file)" },
	{ "log-socket", "ptleak writes its report to stderr or a file" },
	{ "show-below-main", "ptleak's stacks end at main" },
	{ "max-stackframe", "ptleak runs the program's own code natively" },
	{ "main-stacksize", "ptleak does not change the program's stack" },
	{ "sim-hints", "ptleak runs the program's own code natively" },
	{ "soname-synonyms", "ptleak finds the allocator where the dynamic linker binds it" },
	{ "demangle", "ptleak's reports name C++ functions demangled" },
	{ "time-stamp", "ptleak's reports carry their own time" },
	{ "show-error-list", "ptleak lists the suppressions it used always" },
	{ "error-limit", "ptleak reports leaks only" },
	{ "exit-on-first-error", "ptleak reports leaks only" },
	{ "default-suppressions", "ptleak has no default suppressions" },
	{ "read-var-info", "ptleak reports leaks only" },
	{ "read-inline-info", "ptleak does not show inlined frames" },
	{ "verbose", "ptleak has no verbose mode" },
};

int vgopt_other(struct options *o, const char *arg)
{
	const char *name = arg + 2, *eq;
	size_t n, i;
	int b;

	if (strncmp(arg, "--", 2))
		return -1;
	eq = strchr(name, '=');
	n = eq ? (size_t)(eq - name) : strlen(name);
	/* valgrind's older spellings of --show-leak-kinds */
	if (eq && (b = yes_no(eq + 1)) >= 0) {
		if (n == 14 && !strncmp(name, "show-reachable", n)) {
			o->show_reachable = b;
			return 0;
		}
		if (n == 18 && !strncmp(name, "show-possibly-lost", n)) {
			if (!o->show_kinds)
				o->show_kinds = KIND(SCAN_DEFINITELY_LOST) |
						KIND(SCAN_INDIRECTLY_LOST) |
						KIND(SCAN_POSSIBLY_LOST);
			if (b)
				o->show_kinds |= KIND(SCAN_POSSIBLY_LOST);
			else
				o->show_kinds &= ~KIND(SCAN_POSSIBLY_LOST);
			return 0;
		}
	}
	for (i = 0; i < ARRAY_SIZE(unhonoured); i++) {
		if (strlen(unhonoured[i].name) != n ||
		    strncmp(name, unhonoured[i].name, n))
			continue;
		char fmt[160];

		snprintf(fmt, sizeof(fmt), "%%s cannot be honoured: %s",
			 unhonoured[i].why);
		return usage_error(fmt, arg);
	}
	return -1;
}

int vgopt_finish(struct options *o)
{
	if (o->xml && !o->xml_file)
		return usage_error("%s", "--xml=yes needs --xml-file=FILE (ptleak "
				   "writes valgrind's XML to a file)");
	return 0;
}
