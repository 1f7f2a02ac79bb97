/* debug.c - PTLEAK_DEBUG (debug.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/debug.h"
#include "base/util.h"

int debug_events, debug_stops, debug_stats, debug_times, debug_die_on_report;
int debug_snapshot_check, debug_snapshot_perturb;

void debug_init(void)
{
	const char *v = getenv("PTLEAK_DEBUG");

	debug_events = v && strstr(v, "events");
	debug_stops = v && strstr(v, "stops");
	debug_stats = v && strstr(v, "stats");
	debug_times = debug_stats || (v && strstr(v, "times"));
	debug_die_on_report = v && strstr(v, "die-on-report");
	debug_snapshot_check = v && strstr(v, "snapshot-check");
	debug_snapshot_perturb = v && strstr(v, "snapshot-perturb");
}

void debug_time(const char *what)
{
	static uint64_t t0;
	struct rusage ru;

	if (!debug_times)
		return;
	if (!t0)
		t0 = now_ns();
	if (getrusage(RUSAGE_SELF, &ru))
		ru.ru_minflt = -1;
	fprintf(stderr, "ptleak-debug: time %.1f ms: %s (%ld page faults)\n",
		(double)(now_ns() - t0) / 1e6, what, ru.ru_minflt);
}
