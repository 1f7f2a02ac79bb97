/*
 * growth.h - which allocation stacks keep more and more memory in use:
 * per stack, its bytes and blocks in use over time, kept as running
 * integrals (no samples), so that a report can fit a line through them.
 *
 * Fed by the heap table at every change of a stack's bytes in use (O(1),
 * a few multiplications); nothing per sample, nothing per stack until a
 * report asks.  Memory: GROWTH_STACK_BYTES per stack id ever seen.
 *
 * The rule (docs/usage.md, "Growth"): a stack is growing at a report at
 * time T when, over its window [F, L] (F: its first allocation, L: its
 * last allocation or free),
 *  - the window is at least GROWTH_MIN_WINDOW_NS long;
 *  - the least-squares line through its bytes in use (a step function of
 *    time, fitted exactly: integrals, not samples) rises;
 *  - that line explains at least GROWTH_MIN_R2 of the variance of its
 *    bytes in use (steady growth, not a level with noise around it);
 *  - its bytes in use reached a new maximum at least GROWTH_MIN_HIGHS
 *    times (not a single step);
 *  - it has not stopped: it stopped if, since its last new maximum, more
 *    than GROWTH_RECENT of the window has passed (and at least
 *    GROWTH_RECENT_MIN_NS) while the program made more than
 *    GROWTH_RECENT of the window's allocations elsewhere (a stack that
 *    grew, then stopped while the program went on, is not listed; a
 *    program that stopped allocating altogether, or whose slow shutdown
 *    only frees, leaves its stacks as they were);
 *  - it still holds at least GROWTH_MIN_KEPT of its maximum (a stack
 *    that gave its memory back is not growing).
 * Its rate is the line's slope: bytes (and blocks) per second.
 */
#ifndef PTLEAK_GROWTH_H
#define PTLEAK_GROWTH_H

#include <stddef.h>
#include <stdint.h>

#define GROWTH_MIN_WINDOW_NS	2000000000ull
#define GROWTH_MIN_R2		0.8
#define GROWTH_MIN_HIGHS	10
#define GROWTH_RECENT		0.25
#define GROWTH_RECENT_MIN_NS	1000000000ull
#define GROWTH_MIN_KEPT		0.5
/* at most this many entries in a report */
#define GROWTH_MAX		20

struct growth;

/* A stack found growing (growth_list). */
struct growth_entry {
	uint32_t stack;		/* interned stack id (stacks.h) */
	double bytes_per_s;	/* the fitted line's slope */
	double blocks_per_s;
	double r2;		/* the share of the variance the line explains */
	uint64_t in_use_bytes, in_use_blocks;	/* at the report */
	uint64_t first_ns;	/* its window: its first allocation ... */
	uint64_t last_ns;	/* ... to its last allocation or free */
};

struct growth *growth_new(void);
void growth_free(struct growth *g);
/* Forget every stack (an exec). */
void growth_reset(struct growth *g);

/* An allocation was made (every one, counted: growth.h's "stopped"),
 * before its growth_note if it has one. */
void growth_alloc(struct growth *g);

/*
 * Stack STACK's bytes in use changed by DBYTES and its blocks by DBLOCKS
 * at TIME_NS (now_ns()).  Times earlier than the stack's last change
 * (events of other threads drained out of order) count as that change's.
 */
void growth_note(struct growth *g, uint32_t stack, int64_t dbytes,
		 int32_t dblocks, uint64_t time_ns);
/* growth_note(STACK, BYTES, 1, TIME_NS) then growth_note(STACK, -BYTES,
 * -1, TIME_NS): a block freed at once, one step. */
void growth_note_pair(struct growth *g, uint32_t stack, uint64_t bytes,
		      uint64_t time_ns);

/*
 * The stacks growing at NOW_NS (the rule above), fastest first: at most
 * MAX into OUT; returns how many.  Walks every stack: for reports.
 */
size_t growth_list(const struct growth *g, uint64_t now_ns,
		   struct growth_entry *out, size_t max);

/*
 * The fastest growing stack among the few that reached a new maximum
 * most recently (a bounded set kept as they do: cheap enough for every
 * --live line): 1 with *E, or 0 if none of them is growing.
 */
int growth_fastest(const struct growth *g, uint64_t now_ns,
		   struct growth_entry *e);

/* The stacks that made a new maximum most recently (at most MAX of the
 * hot set, newest maximum first): their ids and bytes in use, for the
 * curves of the growing stacks.  Returns how many. */
unsigned growth_hot(const struct growth *g, uint32_t *ids, uint64_t *bytes,
		    unsigned max);

/* Bytes kept per stack id (for the memory bound). */
size_t growth_stack_bytes(void);

#endif
