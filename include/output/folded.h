/*
 * folded.h - --folded FILE: the heap's in-use bytes at a report as
 * collapsed stacks, the input of flamegraph.pl, inferno and speedscope:
 *
 *     main;parse;xstrdup;malloc 1234
 *
 * one line per allocation stack and allocator, outermost frame first,
 * frames named by function (else "module+0xoffset", else the address),
 * at most DEPTH frames and none below main, as in the report; ';' in a
 * name becomes ':'.  Written atomically (outfile.h) at every report.
 */
#ifndef PTLEAK_FOLDED_H
#define PTLEAK_FOLDED_H

#include "tables/heap.h"
#include "output/report.h"
#include "tables/stacks.h"

/* 0, or -1 (message). */
int folded_write(const char *path, const struct heap *h,
		 const struct stacks *stacks, unsigned depth,
		 report_namer namer, void *ctx);

#endif
