/* options.c - command-line parsing. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/options.h"
#include "output/report.h"
#include "base/util.h"
#include "cli/vgopts.h"
#include "cli/vgrc.h"

#ifndef PTLEAK_VERSION
#define PTLEAK_VERSION "0.1"
#endif
/* every engine is built in on x86-64 (--engine) */
#define PTLEAK_ENGINES "recorder breakpoints"

enum { OPT_JSON = 256, OPT_DEPTH, OPT_VERSION, OPT_SHOW_REACHABLE, OPT_NO_SCAN,
       OPT_ERROR_EXITCODE, OPT_SUPPRESSIONS, OPT_REPORT_ON_SIGNAL, OPT_MIN_AGE,
       OPT_DURATION, OPT_FD_ONLY, OPT_HEAP_ONLY, OPT_ENGINE, OPT_HTML, OPT_TEXT,
       OPT_ERRORS_FOR_GROWTH };
/* memory over time */
enum { OPT_TIMELINE = 1024, OPT_INTERVAL, OPT_EVENTS, OPT_LIVE, OPT_FOLDED };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "quiet", no_argument, NULL, 'q' },
	{ "show-reachable", no_argument, NULL, OPT_SHOW_REACHABLE },
	{ "no-scan", no_argument, NULL, OPT_NO_SCAN },
	{ "error-exitcode", required_argument, NULL, OPT_ERROR_EXITCODE },
	{ "errors-for-growth", required_argument, NULL, OPT_ERRORS_FOR_GROWTH },
	{ "suppressions", required_argument, NULL, OPT_SUPPRESSIONS },
	{ "pid", required_argument, NULL, 'p' },
	{ "report-on-signal", optional_argument, NULL, OPT_REPORT_ON_SIGNAL },
	{ "min-age", required_argument, NULL, OPT_MIN_AGE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "fd-only", no_argument, NULL, OPT_FD_ONLY },
	{ "heap-only", no_argument, NULL, OPT_HEAP_ONLY },
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "text", required_argument, NULL, OPT_TEXT },
	{ "timeline", required_argument, NULL, OPT_TIMELINE },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "events", required_argument, NULL, OPT_EVENTS },
	{ "live", no_argument, NULL, OPT_LIVE },
	{ "folded", required_argument, NULL, OPT_FOLDED },
	{ "follow-forks", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	VGOPT_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char usage[] =
	"usage: ptleak [OPTION]... PROGRAM [ARG]...\n"
	"       ptleak [OPTION]... -p PID\n"
	"Run PROGRAM under ptrace, or attach to process PID, and report the heap\n"
	"blocks and file descriptors it never freed.\n"
	"\n"
	"  -p, --pid PID       attach to every thread of PID; SIGINT, SIGTERM or\n"
	"                      SIGHUP to ptleak report, detach and leave it running\n"
	"      --report-on-signal[=SIG]  SIG (default USR1) sent to the target\n"
	"                      makes a report instead of reaching it\n"
	"      --min-age SECONDS  report only blocks and fds older than this\n"
	"      --duration SECONDS  report and detach after SECONDS\n"
	"      --fd-only       file descriptors only (the allocator not hooked)\n"
	"      --heap-only     heap only (no descriptor breakpoints)\n"
	"      --engine=auto|recorder|breakpoints  how allocator calls are seen:\n"
	"                      code injected into the target that records them\n"
	"                      (no stop per call), int3 breakpoints, or auto\n"
	"                      (default: the recorder wherever it can be injected)\n"
	"  -f, --follow-forks  trace every child process too, each with its own\n"
	"                      report (a file name's %p is the pid)\n"
	"  -o, --output FILE   text report to FILE instead of stderr\n"
	"      --text=ptleak|valgrind  the text report's format: ptleak's, or\n"
	"                      memcheck's own (the default when valgrind's\n"
	"                      spellings are used)\n"
	"      --json FILE     also write the report as JSON to FILE\n"
	"      --html FILE     also write the report as one self-contained HTML\n"
	"                      file: summary, heap/RSS chart, records, sources\n"
	"      --depth N       frames kept per stack (default 16)\n"
	"      --show-reachable  also list still reachable blocks\n"
	"      --no-scan       no reachability scan: records are unclassified\n"
	"      --error-exitcode N  exit N when lost blocks or leaked fds were found\n"
	"      --errors-for-growth BYTES_PER_S  --error-exitcode counts a stack\n"
	"                      whose memory grows this fast or faster (GROWTH)\n"
	"      --suppressions FILE  leak:GLOB and fd:GLOB lines, or valgrind's\n"
	"                      suppressions: records to leave out (repeatable)\n"
	"      --timeline FILE  heap, RSS, fds and threads over time as CSV\n"
	"      --interval MS   time between samples (default 100)\n"
	"      --events FILE   every heap event as CSV\n"
	"      --live          a status line on stderr every interval (250 ms at least)\n"
	"      --folded FILE   in-use bytes by stack, collapsed (flame graphs)\n"
	"  -q, --quiet         nothing on stderr but the report\n"
	"  -h, --help          this help\n"
	"      --version       version and engines\n"
	"\n"
	"SIGUSR1 to ptleak makes a report at any time.\n"
	"\n"
	"Exit status: PROGRAM's own, 128+N if it died of signal N (0 after a\n"
	"detach); 1 when ptleak itself fails, 64 for a usage error.\n"
	"\n";

/* ARG as a whole decimal number in [MIN, MAX] into *V: 0, or -1. */
static int parse_number(const char *arg, unsigned long min, unsigned long max,
			unsigned long *v)
{
	char *end;

	*v = strtoul(arg, &end, 10);
	return *arg < '0' || *arg > '9' || *end || *v < min || *v > max ? -1 : 0;
}

/* ARG as seconds (decimal fraction allowed, >= 0) into *V: 0, or -1. */
static int parse_seconds(const char *arg, double *v)
{
	char *end;

	*v = strtod(arg, &end);
	return *arg < '0' || *arg > '9' || *end || !(*v >= 0 && *v < 1e9) ? -1 : 0;
}

/* "USR1", "SIGUSR1", "10", "RTMIN+2": the signal's number, or 0. */
static int parse_signal(const char *arg)
{
	static const struct { const char *name; int sig; } names[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
		{ "KILL", SIGKILL }, { "STOP", SIGSTOP },
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "PIPE", SIGPIPE },
		{ "ALRM", SIGALRM }, { "TERM", SIGTERM }, { "CHLD", SIGCHLD },
		{ "CONT", SIGCONT }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN },
		{ "TTOU", SIGTTOU }, { "URG", SIGURG }, { "XCPU", SIGXCPU },
		{ "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
		{ "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR },
		{ "SYS", SIGSYS },
	};
	unsigned long v;
	unsigned i;

	if (!parse_number(arg, 1, (unsigned long)SIGRTMAX, &v))
		return (int)v;
	if (!strncmp(arg, "SIG", 3))
		arg += 3;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(arg, names[i].name))
			return names[i].sig;
	if (!strncmp(arg, "RTMIN", 5)) {
		if (!arg[5])
			return SIGRTMIN;
		if (arg[5] == '+' && !parse_number(arg + 6, 1,
				(unsigned long)(SIGRTMAX - SIGRTMIN), &v))
			return SIGRTMIN + (int)v;
	}
	return 0;
}

/* ARGV's options into O (zeroed first): 0, 1 (--help, --version) or
 * EXIT_USAGE; options_parse then resolves what depends on all of them. */
static int parse_argv(struct options *o, int argc, char **argv)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->depth = 16;
	o->interval_ms = 100;
	opterr = 0;
	/* '+': options stop at PROGRAM, whose own options are its own */
	while ((c = getopt_long(argc, argv, "+:fo:p:qh", longopts, NULL)) != -1) {
		unsigned long v;

		switch (c) {
		case 'f':
			o->follow_forks = 1;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case OPT_HTML:
			o->html = optarg;
			break;
		case OPT_DEPTH:
			if (parse_number(optarg, 1, 256, &v))
				return usage_error("--depth wants a number from 1 to 256, not '%s'",
						   optarg);
			o->depth = (unsigned)v;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case OPT_SHOW_REACHABLE:
			o->show_reachable = 1;
			break;
		case OPT_NO_SCAN:
			o->no_scan = 1;
			break;
		case OPT_ERROR_EXITCODE:
			if (parse_number(optarg, 1, 255, &v))
				return usage_error("--error-exitcode wants a number from 1 to 255, not '%s'",
						   optarg);
			o->error_exitcode = (int)v;
			break;
		case OPT_SUPPRESSIONS:
			vgopt_add_suppressions(o, optarg);
			break;
		case VGOPT_FIRST ... VGOPT_LAST:
			if (vgopt_apply(o, c, optarg))
				return EXIT_USAGE;
			break;
		case 'p':
			if (parse_number(optarg, 1, INT_MAX, &v))
				return usage_error("-p wants a process id, not '%s'",
						   optarg);
			o->pid = (int)v;
			break;
		case OPT_REPORT_ON_SIGNAL:
			o->report_signal = optarg ? parse_signal(optarg) : SIGUSR1;
			if (!o->report_signal)
				return usage_error("--report-on-signal: unknown signal '%s'",
						   optarg);
			if (o->report_signal == SIGKILL || o->report_signal == SIGSTOP)
				return usage_error("--report-on-signal: %s cannot be caught",
						   optarg);
			break;
		case OPT_ERRORS_FOR_GROWTH:
			if (parse_seconds(optarg, &o->errors_for_growth) ||
			    !(o->errors_for_growth > 0))
				return usage_error("--errors-for-growth wants bytes per "
						   "second (more than 0), not '%s'",
						   optarg);
			break;
		case OPT_MIN_AGE:
			if (parse_seconds(optarg, &o->min_age))
				return usage_error("--min-age wants seconds, not '%s'",
						   optarg);
			break;
		case OPT_DURATION:
			if (parse_seconds(optarg, &o->duration) || !o->duration)
				return usage_error("--duration wants seconds (more than 0), not '%s'",
						   optarg);
			break;
		case OPT_FD_ONLY:
			o->fd_only = 1;
			break;
		case OPT_HEAP_ONLY:
			o->heap_only = 1;
			break;
		case OPT_ENGINE:
			if (!strcmp(optarg, "auto"))
				o->engine = ENGINE_AUTO;
			else if (!strcmp(optarg, "recorder"))
				o->engine = ENGINE_RECORDER;
			else if (!strcmp(optarg, "breakpoints"))
				o->engine = ENGINE_BREAKPOINTS;
			else
				return usage_error("--engine wants auto, recorder or "
						   "breakpoints, not '%s'", optarg);
			break;
		case OPT_TEXT:
			if (!strcmp(optarg, "ptleak"))
				o->text = TEXT_PTLEAK;
			else if (!strcmp(optarg, "valgrind"))
				o->text = TEXT_VALGRIND;
			else
				return usage_error("--text wants ptleak or valgrind, "
						   "not '%s'", optarg);
			break;
		case OPT_TIMELINE:
			o->timeline = optarg;
			break;
		case OPT_INTERVAL:
			if (parse_number(optarg, 10, 3600000, &v))
				return usage_error("--interval wants milliseconds from 10 "
						   "to 3600000, not '%s'", optarg);
			o->interval_ms = (unsigned)v;
			break;
		case OPT_EVENTS:
			o->events = optarg;
			break;
		case OPT_LIVE:
			o->live = 1;
			break;
		case OPT_FOLDED:
			o->folded = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			fputs(vgopt_usage, stdout);
			return 1;
		case OPT_VERSION:
			printf("ptleak %s\nengines: %s\n", PTLEAK_VERSION, PTLEAK_ENGINES);
			return 1;
		case ':':
			/* a long option's optopt is its value, not a letter */
			if (optopt > 0 && optopt < 128)
				return usage_error("option '-%s' needs an argument",
						   (char[]){ (char)optopt, 0 });
			return usage_error("option '%s' needs an argument",
					   argv[optind - 1]);
		default:
			c = vgopt_other(o, argv[optind - 1],
					optopt > 0 && optopt < 128 ? optopt : 0);
			if (c >= 0) {
				if (c)
					return c;
				break;
			}
			if (optopt > 0 && optopt < 128)
				return usage_error("unrecognized option '-%s'",
						   (char[]){ (char)optopt, 0 });
			return usage_error("unrecognized option '%s'",
					   argv[optind - 1]);
		}
	}
	if (o->pid) {
		if (optind < argc)
			return usage_error("-p PID and a program to run exclude each other "
					   "('%s')", argv[optind]);
		return 0;
	}
	if (optind >= argc)
		return usage_error("%s", "no program to run (try 'ptleak --help')");
	o->argv = argv + optind;
	o->argc = argc - optind;
	return 0;
}

/* Is ptleak run under a name with "valgrind" in it (a link named
 * valgrind: CTest and meson know the tool by its name)? */
static int named_valgrind(const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	base = base ? base + 1 : argv0;
	return base && strstr(base, "valgrind");
}

/*
 * The valgrind text: the command line again with valgrind's rc files and
 * $VALGRIND_OPTS in front of it (valgrind's order: the command line
 * wins).  0, or what parse_argv returns.
 */
static int with_valgrind_rc(struct options *o, int argc, char **argv)
{
	char *text, **words, **nargv;
	size_t n = vgrc_read(&text, &words);
	int ret, i;

	if (!n)
		return 0;
	for (i = 0; (size_t)i < n; i++)
		if (words[i][0] != '-' || !words[i][1]) {
			ret = usage_error("'%s' in ~/.valgrindrc, $VALGRIND_OPTS or "
					  "./.valgrindrc is no option", words[i]);
			free(words);
			free(text);
			return ret;
		}
	nargv = xcalloc(n + (size_t)argc + 1, sizeof(*nargv));
	nargv[0] = argv[0];
	memcpy(nargv + 1, words, n * sizeof(*nargv));
	for (i = 1; i < argc; i++)
		nargv[n + (size_t)i] = argv[i];
	free(words);
	options_free(o);
	optind = 0;	/* getopt starts afresh */
	ret = parse_argv(o, argc + (int)n, nargv);
	o->rc_argv = nargv;
	o->rc_text = text;
	if (!ret && o->text == TEXT_AUTO)
		o->text = TEXT_VALGRIND;
	return ret;
}

int options_parse(struct options *o, int argc, char **argv)
{
	int ret = parse_argv(o, argc, argv);

	if (ret)
		return ret;
	if (o->text == TEXT_AUTO && (o->vg_spelled || named_valgrind(argv[0])))
		o->text = TEXT_VALGRIND;
	if (o->text == TEXT_VALGRIND && (ret = with_valgrind_rc(o, argc, argv)))
		return ret;
	if (o->text != TEXT_VALGRIND) {
		o->text = TEXT_PTLEAK;
	} else {
		/* valgrind's defaults: the summaries only, definite and
		 * possible leaks shown and counted, no descriptors */
		unsigned dp = REPORT_KIND(SCAN_DEFINITELY_LOST) |
			      REPORT_KIND(SCAN_POSSIBLY_LOST);

		if (!o->leak_check_set)
			o->leak_check = LEAK_CHECK_SUMMARY;
		if (!o->show_kinds)
			o->show_kinds = dp;
		if (!o->error_kinds)
			o->error_kinds = dp;
		if (!o->track_fds_set && !o->fd_only)
			o->heap_only = 1;
		/* valgrind follows every fork; an exec only with
		 * --trace-children=yes (-f) */
		o->vg_exec_untraced = !o->follow_forks;
		o->follow_forks = 1;
	}
	if (vgopt_finish(o))
		return EXIT_USAGE;
	if (o->fd_only && o->heap_only)
		return usage_error("%s", "--fd-only and --heap-only exclude each other");
	return 0;
}
