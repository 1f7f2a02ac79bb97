/*
 * report_threads.h - the report's per-thread part and the process's
 * resources (report.h); used by report.c and report_json.c:
 *
 *   rthreads_text      "THREADS: ..." and the top RTHREADS_TOP threads by
 *                      bytes in use (then bytes allocated), one line for
 *                      the rest
 *   rthreads_json      the value of the "threads" key: every thread
 *   rresources_text    a blank line and "RESOURCES: ...", the report's
 *                      last line
 *   rresources_json    the value of "target"'s "resources" key
 */
#ifndef PTLEAK_REPORT_THREADS_H
#define PTLEAK_REPORT_THREADS_H

#include <stdio.h>

#include "output/json.h"
#include "output/report.h"

#define RTHREADS_TOP 10

/* Nothing without a heap or with no thread that allocated or freed. */
void rthreads_text(const struct report_input *in, FILE *text);
void rthreads_json(const struct report_input *in, struct json *j);
/* Nothing (text) or null (JSON) when in->resources is NULL or unknown. */
void rresources_text(const struct report_input *in, FILE *text);
void rresources_json(const struct report_input *in, struct json *j);

#endif
