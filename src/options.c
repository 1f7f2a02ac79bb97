/* options.c - command-line parsing. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "util.h"

#ifndef PTLEAK_VERSION
#define PTLEAK_VERSION "0.1"
#endif

enum { OPT_JSON = 256, OPT_DEPTH, OPT_VERSION, OPT_SHOW_REACHABLE, OPT_NO_SCAN,
       OPT_ERROR_EXITCODE, OPT_SUPPRESSIONS };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "quiet", no_argument, NULL, 'q' },
	{ "show-reachable", no_argument, NULL, OPT_SHOW_REACHABLE },
	{ "no-scan", no_argument, NULL, OPT_NO_SCAN },
	{ "error-exitcode", required_argument, NULL, OPT_ERROR_EXITCODE },
	{ "suppressions", required_argument, NULL, OPT_SUPPRESSIONS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static const char usage[] =
	"usage: ptleak [OPTION]... PROGRAM [ARG]...\n"
	"Run PROGRAM under ptrace and report the heap blocks it never freed.\n"
	"\n"
	"  -o, --output FILE   text report to FILE instead of stderr\n"
	"      --json FILE     also write the report as JSON to FILE\n"
	"      --depth N       frames kept per stack (default 16)\n"
	"      --show-reachable  also list still reachable blocks\n"
	"      --no-scan       no reachability scan: records are unclassified\n"
	"      --error-exitcode N  exit N when lost blocks were found\n"
	"      --suppressions FILE  leak:GLOB lines: records to leave out\n"
	"  -q, --quiet         nothing on stderr but the report\n"
	"  -h, --help          this help\n"
	"      --version       version\n"
	"\n"
	"Exit status: PROGRAM's own, 128+N if it died of signal N; 1 when ptleak\n"
	"itself fails, 64 for a usage error.\n";

static int usage_error(const char *fmt, const char *arg)
{
	fputs("ptleak: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

/* ARG as a whole decimal number in [MIN, MAX] into *V: 0, or -1. */
static int parse_number(const char *arg, unsigned long min, unsigned long max,
			unsigned long *v)
{
	char *end;

	*v = strtoul(arg, &end, 10);
	return *arg < '0' || *arg > '9' || *end || *v < min || *v > max ? -1 : 0;
}

int options_parse(struct options *o, int argc, char **argv)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->depth = 16;
	opterr = 0;
	/* '+': options stop at PROGRAM, whose own options are its own */
	while ((c = getopt_long(argc, argv, "+:o:qh", longopts, NULL)) != -1) {
		unsigned long v;

		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case OPT_JSON:
			o->json = optarg;
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
			o->suppressions = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case OPT_VERSION:
			printf("ptleak %s\n", PTLEAK_VERSION);
			return 1;
		case ':':
			/* a long option's optopt is its value, not a letter */
			if (optopt > 0 && optopt < 128)
				return usage_error("option '-%s' needs an argument",
						   (char[]){ (char)optopt, 0 });
			return usage_error("option '%s' needs an argument",
					   argv[optind - 1]);
		default:
			if (optopt > 0 && optopt < 128)
				return usage_error("unrecognized option '-%s'",
						   (char[]){ (char)optopt, 0 });
			return usage_error("unrecognized option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("%s", "no program to run (try 'ptleak --help')");
	o->argv = argv + optind;
	o->argc = argc - optind;
	return 0;
}
