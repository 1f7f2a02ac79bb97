/*
 * timeline.h - the samples of a run, kept in ptleak's memory for the
 * whole run (the HTML report's charts; --timeline streams its CSV
 * apart, every sample).
 *
 * Bounded: at most TL_MAX samples are kept.  When the store is full,
 * every other one is dropped and from then on only every 2nd (4th, ...)
 * sample offered is kept, so the kept ones stay evenly spread over the
 * whole run.  A sample offered as the last (the final report's) is always
 * kept.  Besides, the store keeps the top TL_PEAK_TOP stacks at the
 * sample where heap_bytes was highest ("the stacks at the peak").
 *
 * Nothing here reads the target: the sampler (sampler.h) fills the
 * samples from ptleak's tables and /proc.
 */
#ifndef PTLEAK_TIMELINE_H
#define PTLEAK_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define TL_MAX 4096		/* samples kept at most (even) */
#define TL_TOP 8		/* stacks per sample, the largest */
#define TL_HOT 8		/* stacks per sample, the most recently growing */
#define TL_PEAK_TOP 50		/* stacks of the peak snapshot */
#define TL_UNKNOWN UINT64_MAX	/* a figure not tracked (--fd-only's heap,
				 * --heap-only's fds, a process gone) */

struct tl_sample {
	uint64_t ms;			/* since tracing started */
	uint64_t heap_bytes, heap_blocks;	/* in use */
	uint64_t rss_kb, vm_kb;		/* /proc/PID/statm */
	uint64_t fds;			/* open descriptors */
	uint64_t threads;		/* live threads */
	/* the fastest growing stack at the sample (growth_fastest): its id
	 * (0: none growing), rate and bytes in use */
	uint32_t grow_stack;
	double grow_bps;
	uint64_t grow_bytes;
	/* the bytes in use of the stacks that made a new maximum most
	 * recently (growth_hot): the curves of the growing stacks */
	unsigned nhot;
	uint32_t hot_stack[TL_HOT];
	uint64_t hot_bytes[TL_HOT];
	/* the in-use bytes of the NTOP largest stacks (stacks.h ids),
	 * largest first */
	unsigned ntop;
	uint32_t top_stack[TL_TOP];
	uint64_t top_bytes[TL_TOP];
};

/* The stacks at the peak: the sample where heap_bytes was highest. */
struct tl_peak {
	uint64_t ms, heap_bytes;	/* ms 0 and heap_bytes 0: no peak yet */
	unsigned n;
	uint32_t stack[TL_PEAK_TOP];	/* largest first */
	uint64_t bytes[TL_PEAK_TOP];
};

struct timeline;

struct timeline *timeline_new(void);
void timeline_delete(struct timeline *tl);
/* Forget every sample and the peak (an exec: a new image). */
void timeline_reset(struct timeline *tl);

/* Offer sample S (copied); LAST: the final report's, always kept. */
void timeline_add(struct timeline *tl, const struct tl_sample *s, int last);
/* Samples kept, oldest first: timeline_get(tl, 0 .. count - 1). */
size_t timeline_count(const struct timeline *tl);
const struct tl_sample *timeline_get(const struct timeline *tl, size_t i);
/* One sample kept per this many offered now (1, 2, 4, ...). */
unsigned timeline_stride(const struct timeline *tl);

/* Would a sample with HEAP_BYTES be the new peak? */
int timeline_above_peak(const struct timeline *tl, uint64_t heap_bytes);
/* The new peak: at MS, HEAP_BYTES in use, STACK[i] holding BYTES[i]
 * (N <= TL_PEAK_TOP, largest first). */
void timeline_set_peak(struct timeline *tl, uint64_t ms, uint64_t heap_bytes,
		       const uint32_t *stack, const uint64_t *bytes, unsigned n);
const struct tl_peak *timeline_peak(const struct timeline *tl);

#endif
