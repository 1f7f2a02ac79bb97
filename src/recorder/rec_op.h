/*
 * rec_op.h - the recorder's consumer, inside: a record decoded into an
 * operation on the tables (rec_drain.c takes and orders them, rec_ops.c
 * runs them).  Private to src/recorder.
 */
#ifndef PTLEAK_REC_OP_H
#define PTLEAK_REC_OP_H

#include <stdint.h>

#include "tables/heap.h"

struct recorder;
struct fdprobe;
struct stacks;
struct rec_queue;

/* reallocs begun, not ended (longjmp out of realloc leaves them): a
 * linear search, so a target that sends only begins is cut here */
#define REC_MAX_REALLOCS 4096

/*
 * A record decoded, its stack interned, waiting in a batch: the heap
 * table's slots of a batch are prefetched before its operations run in
 * order (the table of a big program is too big for the caches: each
 * operation was a cache miss, half the consumer's time).  One cache
 * line: the queues are the consumer's main traffic.
 */
struct op {
	uint64_t t;		/* its time, not below its lane's earlier ones */
	uint64_t pos;		/* its place in its lane's ring */
	/* FREE, REALLOC_BEGIN, REALLOC_END: the old address; ALLOC,
	 * REALLOC_END: the new one and its size; FD_CLOSE: the arguments,
	 * FD_OPEN: the result in a[0] */
	uint64_t a[3];
	uint32_t stack;		/* ALLOC, REALLOC_END, FD_OPEN */
	int32_t tid;
	union {
		struct {
			int32_t v0, v1;	/* FD_*: the descriptors the hook read */
		};
		uint64_t tf;	/* ALLOC, OP_FREED: the free's time */
	};
	uint8_t type;
	uint8_t fn;		/* heap.h's enum alloc_fn; FD_*: fdprobe's
				 * index of the function */
	uint8_t flags;		/* OP_* */
};

#define OP_OLD	 0	/* a[OP_OLD] */
#define OP_ADDR	 1
#define OP_SIZE	 2
/* ALLOC: freed at TF by its thread's next record, that lane's next one
 * too, within EPS (take): one operation, unless another lane's record
 * between them in time is of the same address (run) */
#define OP_FREED	1u
/* REALLOC_END: the size overflowed (heap_realloc_end gets 1) */
#define OP_OVERFLOW	2u

/* O's allocation as the heap table takes it, made at TIME_NS */
static inline struct heap_block op_block(const struct op *o, uint64_t time_ns)
{
	return (struct heap_block){ .addr = o->a[OP_ADDR], .size = o->a[OP_SIZE],
				    .time_ns = time_ns, .stack = o->stack,
				    .tid = o->tid, .fn = o->fn };
}

/* operations in a batch, at most */
#define BATCH 64

struct drain {
	struct recorder *R;
	struct heap *h;
	struct fdprobe *fp;
	struct stacks *st;
	uint64_t now;
	long n;
	struct op *ops[BATCH];
	unsigned nops;
	struct op split[BATCH];	/* allocations split from their frees */
	unsigned nsplit;
	struct rec_queue *q;	/* the lane being taken from */
};

/* Run the batch's operations D->ops, in order; the batch emptied. */
void rec_ops_run(struct drain *d);

#endif
