/*
 * events_log.h - --events FILE: every heap event as a CSV row
 *
 *     ms,tid,event,size,address,old_address,caller
 *
 * streamed (a buffer of EVLOG_BUF bytes, one write() when it is full:
 * ptleak's memory stays bounded however long the run), fed by the heap
 * table's observer (heap.h), so both engines write the same rows:
 *
 *   an allocation    malloc|calloc|...,size,address,,caller
 *   realloc(p, n)    free,size of p,p,,caller (p was live), then
 *                    realloc,n,new address,p,caller
 *   free(p)          free,size,p,,           (no stack is taken for a free)
 *   free(unknown)    free,,p,,               (not counted in the report's
 *                                             frees: allocated before
 *                                             tracing, or glibc's recycling)
 *
 * ms counts from the start of tracing; caller is "function (file:line)"
 * of the first frame outside the allocator.  While the program runs a
 * caller is written as its address; evlog_finish names each distinct one
 * once and rewrites the file (PATH.tmp, renamed onto PATH).  A path that
 * is not a regular file (a FIFO, /dev/stdout) cannot be rewritten: its
 * callers stay addresses.
 */
#ifndef PTLEAK_EVENTS_LOG_H
#define PTLEAK_EVENTS_LOG_H

#include <stdint.h>

#include "tables/heap.h"
#include "output/report.h"
#include "tables/stacks.h"

#define EVLOG_BUF (256 * 1024)

struct evlog;

/* Create PATH and write its header: the log, or NULL (message). */
struct evlog *evlog_open(const char *path);
/* Log every event of H from now on; STACKS names the callers' stacks,
 * START_NS (now_ns()) is ms 0. */
void evlog_attach(struct evlog *l, struct heap *h, const struct stacks *stacks,
		  uint64_t start_ns);
/* The events written so far (the header not counted). */
uint64_t evlog_rows(const struct evlog *l);
/*
 * The last event was logged: flush, then name the callers with NAMER
 * (NULL: "0x..." addresses) and rewrite the file.  Later events are not
 * logged.  0, or -1 (message).
 */
int evlog_finish(struct evlog *l, report_namer namer, void *ctx);
/* Close (finished or not: unfinished callers stay "@address") and free. */
void evlog_close(struct evlog *l);

#endif
