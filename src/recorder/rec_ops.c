/*
 * rec_ops.c - the recorder's consumer runs its operations (rec_op.h) on
 * the heap table and the descriptor probes: the calls the breakpoint
 * engine makes, so that reports do not know which engine ran.
 */
#include <stdint.h>

#include "breakpoints/fdprobe.h"
#include "rec_op.h"
#include "rec_priv.h"
#include "base/util.h"

static struct rec_realloc *realloc_find(struct recorder *R, uint64_t tid,
					uint64_t old)
{
	size_t i;

	for (i = R->nreallocs; i > 0; i--)
		if (R->reallocs[i - 1].tid == tid && R->reallocs[i - 1].old == old)
			return &R->reallocs[i - 1];
	return NULL;
}

/* The time of a record of time T: the first checkpoint after it (the
 * drain's own, last, comes after every record it takes); T 0 (the
 * process's only thread wrote it: rec_conf.need_tsc): the drain's. */
static uint64_t time_of(struct recorder *R, uint64_t t, uint64_t now)
{
	if (!t)
		return now;
	while (R->firstmark < R->nmarks && R->marks[R->firstmark].tsc <= t)
		R->firstmark++;
	return R->firstmark < R->nmarks ? R->marks[R->firstmark].ns : now;
}

/*
 * The batch's slots were prefetched as its records came: now the
 * entries of the blocks it frees, and the slots of the entries their
 * removals will move (the last ones, as many as the frees outnumber the
 * allocations so far).
 */
static void prefetch_frees(const struct drain *d)
{
	const struct op *o;
	unsigned i;
	long back = 0;

	for (i = 0; i < d->nops; i++) {
		o = d->ops[i];
		switch (o->type) {
		case REC_FD_OPEN:
		case REC_FD_CLOSE:
			break;
		case REC_FREE:
		case REC_REALLOC_BEGIN:
			heap_prefetch_free(d->h, o->a[OP_OLD], back++);
			break;
		default:
			if (!(o->flags & OP_FREED))
				back--;
		}
	}
}

/* A reallocation begun (O): its old block out of the table, held for
 * its end, for a begin left by longjmp, back live first */
static void realloc_begin(struct drain *d, const struct op *o)
{
	struct recorder *R = d->R;
	uint64_t tid = (uint32_t)o->tid;
	struct rec_realloc *q;

	if ((q = realloc_find(R, tid, o->a[OP_OLD])) && q->live)
		heap_alloc(d->h, &q->held);
	if (!q && R->nreallocs == REC_MAX_REALLOCS) {
		/* more begins without an end than threads could leave: the
		 * target wrote them */
		R->bad++;
		return;
	}
	if (!q) {
		if (R->nreallocs == R->areallocs) {
			R->areallocs = R->areallocs ? 2 * R->areallocs : 16;
			R->reallocs = xrealloc(R->reallocs, R->areallocs *
					       sizeof(*R->reallocs));
		}
		q = &R->reallocs[R->nreallocs++];
	}
	q->tid = tid;
	q->old = o->a[OP_OLD];
	q->live = heap_realloc_begin(d->h, o->a[OP_OLD], &q->held);
}

/* Its end (O, made at TIME_NS) */
static void realloc_end(struct drain *d, const struct op *o, uint64_t time_ns)
{
	struct recorder *R = d->R;
	struct rec_realloc held = { 0 }, *q;
	struct heap_block b = op_block(o, time_ns);

	q = realloc_find(R, (uint32_t)o->tid, o->a[OP_OLD]);
	if (q) {
		held = *q;
		*q = R->reallocs[--R->nreallocs];
	}
	heap_realloc_end(d->h, o->a[OP_OLD], held.live, &held.held,
			 o->flags & OP_OVERFLOW ? 1 : o->a[OP_SIZE], &b);
}

/* An allocation (O, made at TIME_NS), and its free if it is the next
 * operation NX or O's own (OP_FREED): then no entry in the table.  1 if
 * NX was run. */
static int alloc(struct drain *d, const struct op *o, const struct op *nx,
		 uint64_t time_ns)
{
	struct heap_block b = op_block(o, time_ns);

	if (o->flags & OP_FREED) {
		if (heap_alloc_free(d->h, &b, o->tid, time_ns)) {
			heap_alloc(d->h, &b);
			heap_free_by(d->h, b.addr, o->tid, time_ns);
		}
		return 0;
	}
	if (nx && nx->type == REC_FREE && nx->a[OP_OLD] == b.addr &&
	    !heap_alloc_free(d->h, &b, nx->tid, time_of(d->R, nx->t, d->now)))
		return 1;
	heap_alloc(d->h, &b);
	return 0;
}

/* Run the batch's operations, in order. */
void rec_ops_run(struct drain *d)
{
	struct recorder *R = d->R;
	const struct op *o;
	uint64_t ns;
	unsigned i;

	if (R->slow_drain) {
		uint64_t until = now_ns() + 1000ull * d->nops;

		while (now_ns() < until)
			;
	}
	if (heap_prefetch_worth(d->h))
		prefetch_frees(d);
	for (i = 0; i < d->nops; i++) {
		o = d->ops[i];
		ns = time_of(R, o->t, d->now);
		switch (o->type) {
		case REC_FD_OPEN:
			fdprobe_rec_open(d->fp, R->pid, (pid_t)o->tid, o->fn,
					 o->a[0], o->v0, o->v1, o->stack, ns);
			break;
		case REC_FD_CLOSE:
			fdprobe_rec_close(d->fp, o->fn, o->a[0], o->a[1],
					  o->a[2], o->v0);
			break;
		case REC_FREE:
			heap_free_by(d->h, o->a[OP_OLD], o->tid, ns);
			break;
		case REC_REALLOC_BEGIN:
			realloc_begin(d, o);
			break;
		case REC_REALLOC_END:
			realloc_end(d, o, ns);
			break;
		default:
			i += alloc(d, o, i + 1 < d->nops ? d->ops[i + 1] : NULL, ns);
		}
	}
	d->nops = d->nsplit = 0;
}

size_t rec_held(const struct recorder *R, struct heap_block *out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; R && i < R->nreallocs; i++) {
		if (!R->reallocs[i].live)
			continue;
		if (out && n < max)
			out[n] = R->reallocs[i].held;
		n++;
	}
	return out && n > max ? max : n;
}
