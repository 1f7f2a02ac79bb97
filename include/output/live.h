/*
 * live.h - --live: one status line on stderr about the traced process.
 *
 * On a terminal the line is redrawn in place (carriage return, erase to
 * the end of the line) and erased before anything else is printed; on a
 * pipe or a file it is one line per call.
 */
#ifndef PTLEAK_LIVE_H
#define PTLEAK_LIVE_H

#include <stdint.h>
#include <stdio.h>

#include "output/timeline.h"

struct live {
	FILE *f;
	int tty;		/* redrawn in place */
	int drawn;		/* a line is on the terminal */
	int have_prev;
	struct tl_sample prev;
	uint64_t prev_calls;	/* allocator calls up to PREV */
};

/* Status lines on F (a terminal or not). */
void live_init(struct live *l, FILE *f);
/* The line for sample S, CALLS allocator calls so far (TL_UNKNOWN
 * figures are left out): elapsed time, heap in use and its growth per
 * second since the last line, blocks, RSS, threads, fds, the fastest
 * growing stack's rate (growth.h; when one grows), calls/s. */
void live_show(struct live *l, const struct tl_sample *s, uint64_t calls);
/* The line as text (no newline) into BUF: what live_show prints. */
void live_format(char *buf, size_t len, const struct tl_sample *s,
		 const struct tl_sample *prev, uint64_t calls,
		 uint64_t prev_calls);
/* Erase the line on a terminal (before a report or a message). */
void live_erase(struct live *l);

#endif
