/*
 * rec_drain.c - the recorder's consumer: ring records (rechook.h) to the
 * heap table (heap.h) and the descriptor probes (fdprobe.h), the same
 * calls the breakpoint engine makes, so that reports do not know which
 * engine ran.
 *
 * Stacks: rec_stacks.c; the operations run on the tables: rec_ops.c.
 *
 * Lanes (docs/recorder.md, "Lanes"): each lane's records are taken from
 * its ring into its queue, then run in the order of their times across
 * the lanes, each up to the bound below which no record can still come.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakpoints/fdprobe.h"
#include "recorder/ring.h"
#include "rec_op.h"
#include "rec_priv.h"
#include "tables/stacks.h"
#include "base/util.h"

/*
 * A record is run when every other lane's next record is later than it
 * by EPS TSC ticks at least (0.8-4 us at 1-5 GHz): a thread's time is
 * read without a fence, and the CPU may read it early by what it has in
 * flight (a cache miss or two, well under 1 us), so a record that
 * depends on another's (a malloc handed the block another thread's
 * free gave back) may have a time up to that much earlier than it.
 */
#define EPS 4000ull
/* records taken from a lane and not run yet, at most (power of two): a
 * lane's QCAP records span more than EPS (a thread makes one in 10 ns
 * at the very least), or two full queues could wait for each other */
#define QCAP 1024

/* A lane's queue: its records are ops[head], ... (mod QCAP), n of them */
struct rec_queue {
	struct op *ops;
	unsigned head, n;
	uint64_t last_t;	/* the time of the lane's last record taken */
};

struct rec_queues {
	/* together: the merge reads every lane's at every record */
	struct rec_queue q[REC_NLANES];
	uint64_t mark[REC_NLANES];	/* rec_mark()'s heads */
	uint64_t run;			/* records run so far */
	/* a line more a lane: the lanes' heads not in one cache set */
	struct op ops[REC_NLANES][QCAP + 1];
};

static const struct rec_fn *fn_of(const struct recorder *R, uint64_t fn)
{
	unsigned i;

	for (i = 0; i < R->nfns; i++)
		if (R->fns[i].fn == (uint32_t)fn)
			return &R->fns[i];
	return NULL;
}

static uint64_t product(uint64_t a, uint64_t b, int *overflow)
{
	unsigned __int128 m = (unsigned __int128)a * b;

	*overflow = m >> 64 != 0;
	return (uint64_t)m;
}

/* Lane L's producers' position: every record reserved so far below. */
static uint64_t lane_head(const struct recorder *R, unsigned l)
{
	return __atomic_load_n(&rec_lane(R, l)->head, __ATOMIC_ACQUIRE);
}

/* Bytes reserved in lane L and not taken yet (0: taken up to its head;
 * the target writes head: a pace, never a bound). */
static uint64_t lane_left(const struct recorder *R, unsigned l)
{
	return lane_head(R, l) - ring_tail(R->rd[l]);
}

/* The sum of the lanes' heads: it moves whenever a record is reserved. */
static uint64_t heads_sum(const struct recorder *R)
{
	uint64_t sum = 0;
	unsigned l;

	for (l = 0; l < R->nlanes; l++)
		sum += lane_head(R, l);
	return sum;
}

uint64_t rec_checkpoint(struct recorder *R)
{
	uint64_t now = now_ns(), tsc = ring_arch_tsc(), heads;

	if (!R || !R->area || R->broken)
		return now;
	heads = heads_sum(R);
	/* nothing reserved since the last mark: it dates every record
	 * before it already (a target that stops allocating must not grow
	 * the list at every drain) */
	if (R->nmarks > R->firstmark && R->marks[R->nmarks - 1].heads == heads)
		return now;
	if (R->firstmark && R->firstmark == R->nmarks)
		R->firstmark = R->nmarks = 0;
	if (R->nmarks == R->amarks && R->firstmark) {
		/* drop the used ones first */
		memmove(R->marks, R->marks + R->firstmark,
			(R->nmarks - R->firstmark) * sizeof(*R->marks));
		R->nmarks -= R->firstmark;
		R->firstmark = 0;
	}
	if (R->nmarks == R->amarks) {
		R->amarks = R->amarks ? 2 * R->amarks : 64;
		R->marks = xrealloc(R->marks, R->amarks * sizeof(*R->marks));
	}
	R->marks[R->nmarks].tsc = tsc;
	R->marks[R->nmarks].ns = now;
	R->marks[R->nmarks].heads = heads;
	R->nmarks++;
	return now;
}

static int bad(struct recorder *R)
{
	R->bad++;
	return 0;
}

/* The last op queued in Q, not run yet, or NULL */
static struct op *queued_last(struct rec_queue *q)
{
	return q->n ? &q->ops[(q->head + q->n - 1) & (QCAP - 1)] : NULL;
}

/* A free of ADDR by TID at time T that is the last queued op's own (an
 * allocation of ADDR by TID up to EPS before): that op freed, 1. */
static int freed_at_once(struct rec_queue *q, uint64_t addr, int32_t tid,
			 uint64_t t)
{
	struct op *p = queued_last(q);

	if (!p || p->type != REC_ALLOC || p->flags || p->a[OP_ADDR] != addr ||
	    p->tid != tid || t - p->t > EPS)
		return 0;
	p->flags = OP_FREED;
	p->tf = t;
	return 1;
}

/* The lane's time for a record of time T: never before the lane's
 * earlier records, their order stands (docs/recorder.md, "Lanes"). */
static uint64_t lane_time(struct rec_queue *q, uint64_t t)
{
	if (t < q->last_t)
		t = q->last_t;
	q->last_t = t;
	return t;
}

/* Q's next op, cleared, for a record at POS of time T by TID. */
static struct op *queue_op(struct rec_queue *q, uint64_t pos, uint64_t t,
			   int32_t tid, unsigned type, unsigned fn)
{
	struct op *o = &q->ops[(q->head + q->n) & (QCAP - 1)];

	o->t = t;
	o->pos = pos;
	o->a[0] = o->a[1] = o->a[2] = 0;
	o->stack = 0;
	o->tid = tid;
	o->type = (uint8_t)type;
	o->fn = (uint8_t)fn;
	o->flags = 0;
	return o;
}

/*
 * The free that amended allocation record REC (its last word, the
 * free's time: rechook.h, REC_OPEN_HDR) of the block at ADDR, queued
 * now as the record it stands for would have been: the lane's next.
 */
static void take_amended(struct rec_queue *q, const struct ring_rec *rec,
			 uint64_t addr, int32_t tid, unsigned fn)
{
	uint64_t t = lane_time(q, rec->w[rec->nwords - 1]);
	struct op *o;

	if (freed_at_once(q, addr, tid, t))
		return;
	o = queue_op(q, rec->pos, t, tid, REC_FREE, fn);
	o->a[OP_OLD] = addr;
	q->n++;
}

static int take(void *ctx, const struct ring_rec *rec)
{
	struct drain *d = ctx;
	struct recorder *R = d->R;
	struct rec_queue *q = d->q;
	const uint64_t *w = rec->w;
	/* an open record's last word is its amendment's */
	unsigned nw = rec->nwords - rec->npcs - rec->open, kind;	/* checked below */
	const struct rec_fn *f;
	struct op *o;
	uint64_t t;
	int overflow = 0;

	d->n++;
	/* the target wrote every word: a record that fails a check is
	 * counted and skipped */
	if (rec->npcs + rec->open > rec->nwords || nw < 3 ||
	    (rec->open && rec->type != REC_ALLOC) || !(f = fn_of(R, w[0])))
		return bad(R);
	kind = REC_FN_KIND(w[0]);
	t = lane_time(q, w[1]);
	if (rec->type == REC_FREE &&
	    (!w[2] || freed_at_once(q, w[2], (int32_t)(w[0] >> 32), t)))
		return 0;
	o = queue_op(q, rec->pos, t, (int32_t)(w[0] >> 32), rec->type,
		     REC_FN_TAG(w[0]));
	switch (rec->type) {
	case REC_FREE:
	case REC_REALLOC_BEGIN:
		o->a[OP_OLD] = w[2];
		break;
	case REC_ALLOC:
		if (nw < 6)
			return bad(R);
		if (!w[2])
			return 0;	/* a failed call */
		o->a[OP_ADDR] = w[2];
		o->a[OP_SIZE] = kind == REC_FN_CALLOC ? product(w[3], w[4], &overflow) :
				kind == REC_FN_MEMALIGN ? w[4] : w[3];
		o->stack = rec_stack_of(R, d->st, f, w[5], w + nw, rec->npcs);
		break;
	case REC_REALLOC_END:
		if (nw < 7)
			return bad(R);
		o->a[OP_OLD] = w[2];
		o->a[OP_SIZE] = kind == REC_FN_REALLOCARRAY ?
				product(w[3], w[4], &overflow) : w[3];
		o->flags = overflow ? OP_OVERFLOW : 0;
		o->a[OP_ADDR] = w[5];
		o->stack = rec_stack_of(R, d->st, f, w[6], w + nw, rec->npcs);
		break;
	case REC_MEMALIGN:
		if (nw < 8)
			return bad(R);
		if (w[5] || !w[6])
			return 0;	/* failed */
		o->a[OP_ADDR] = w[6];
		o->a[OP_SIZE] = w[4];
		o->stack = rec_stack_of(R, d->st, f, w[7], w + nw, rec->npcs);
		o->type = REC_ALLOC;
		break;
	case REC_FD_OPEN:
		/* fn tid a0 a1 result v0 v1 hash */
		if (nw < 8)
			return bad(R);
		if (!d->fp)
			return 0;
		o->a[0] = w[4];
		o->v0 = (int)w[5];
		o->v1 = (int)w[6];
		o->stack = rec_stack_of(R, d->st, f, w[7], w + nw, rec->npcs);
		break;
	case REC_FD_CLOSE:
		/* fn tid a0 a1 a2 v */
		if (nw < 6)
			return bad(R);
		if (!d->fp)
			return 0;
		o->a[0] = w[2], o->a[1] = w[3], o->a[2] = w[4];
		o->v0 = (int)w[5];
		break;
	default:
		return bad(R);
	}
	if (rec->type != REC_FD_OPEN && rec->type != REC_FD_CLOSE)
		heap_prefetch(d->h, o->a[OP_OLD] ? o->a[OP_OLD] : o->a[OP_ADDR]);
	q->n++;
	/* an ALLOC's: checked above */
	if (rec->amended) {
		R->amended++;
		take_amended(q, rec, o->a[OP_ADDR], o->tid, o->fn);
	}
	/* full (a record makes two ops at most): stop taking */
	return q->n + 2 > QCAP;
}

static struct rec_queues *queues(struct recorder *R)
{
	unsigned l;

	if (!R->queues) {
		R->queues = xcalloc(1, sizeof(*R->queues));
		for (l = 0; l < REC_NLANES; l++)
			R->queues->q[l].ops = R->queues->ops[l];
	}
	return R->queues;
}

/* Is a queued record of another lane than B, of time up to TF, one of
 * the block at ADDR (or a descriptor's with that number: no matter)? */
static int touched(const struct rec_queues *Q, unsigned nlanes,
		   const struct rec_queue *b, uint64_t addr, uint64_t tf)
{
	const struct rec_queue *q = Q->q, *end = Q->q + nlanes;
	const struct op *o;
	unsigned k;

	for (; q < end; q++) {
		if (!q->n || q == b || q->ops[q->head].t > tf)
			continue;
		for (k = 0; k < q->n; k++) {
			o = &q->ops[(q->head + k) & (QCAP - 1)];
			if (o->t > tf)
				break;
			if (o->a[OP_OLD] == addr || o->a[OP_ADDR] == addr)
				return 1;
		}
	}
	return 0;
}

/*
 * Allocation O freed at once (OP_FREED) at the head of its lane: to the
 * batch as one operation, or, if a record of another lane may come
 * between the two in time (its free is past W, its lane's bound) or one
 * does and is of its address, its allocation alone, O left its free in
 * its place.  T2: the earliest time queued in another lane.  1 if O left
 * the queue.
 */
static int run_freed(struct drain *d, struct rec_queues *Q, unsigned nlanes,
		     struct rec_queue *best, struct op *o, uint64_t W,
		     uint64_t t2)
{
	struct op *a;

	if (o->tf <= W && (o->tf < t2 ||
			   !touched(Q, nlanes, best, o->a[OP_ADDR], o->tf))) {
		d->ops[d->nops++] = o;
		return 1;
	}
	a = &d->split[d->nsplit++];
	*a = *o;
	a->flags = 0;
	d->ops[d->nops++] = a;
	o->type = REC_FREE;
	o->a[OP_OLD] = o->a[OP_ADDR];
	o->a[OP_ADDR] = o->a[OP_SIZE] = 0;
	o->stack = 0;
	o->t = o->tf;
	o->flags = 0;
	return 0;
}

/*
 * Run the queued records, oldest first across the lanes (a lane's own
 * are in its order: their times never go down), those of lane L up to
 * time WL[L].  The number run.
 */
static long run(struct drain *d, struct rec_queues *Q, unsigned nlanes,
		const uint64_t *Wl)
{
	struct rec_queue *q, *best;
	uint64_t t, t2, lim, W = 0;
	unsigned l;
	long n = 0;

	for (;;) {
		best = NULL;
		t = t2 = UINT64_MAX;
		for (l = 0; l < nlanes; l++) {
			q = &Q->q[l];
			if (!q->n)
				continue;
			if (q->ops[q->head].t < t) {
				t2 = t;
				t = q->ops[q->head].t;
				best = q;
				W = Wl[l];
			} else if (q->ops[q->head].t < t2) {
				t2 = q->ops[q->head].t;
			}
		}
		if (!best || t > W)
			break;
		/* a run of the best lane's, up to the next lane's first */
		lim = t2 < W ? t2 : W;
		while (best->n && best->ops[best->head].t <= lim) {
			struct op *o = &best->ops[best->head];
			int left = 1;

			if (o->flags & OP_FREED)
				left = run_freed(d, Q, nlanes, best, o, W, t2);
			else
				d->ops[d->nops++] = o;
			if (left) {
				best->head = (best->head + 1) & (QCAP - 1);
				best->n--;
				n++;
			}
			if (d->nops == BATCH)
				rec_ops_run(d);
		}
	}
	/* the batch's ops live in the queues: run before more are taken */
	rec_ops_run(d);
	Q->run += (uint64_t)n;
	return n;
}

/*
 * WL[l] := the time up to which lane l's records may run: less EPS, the
 * earliest time any other lane's next record can have.  A lane taken up
 * to its head (read after D, the drain's time) has its next records
 * after D; one whose ring holds more (a record being written, or its
 * queue full) after its last record taken.  A lane's own records wait
 * for none of its own.
 */
static void bounds(struct recorder *R, struct rec_queues *Q, uint64_t D,
		   uint64_t *Wl)
{
	uint64_t b, m1 = UINT64_MAX, m2 = UINT64_MAX;
	unsigned l, at = 0;

	for (l = 0; l < R->nlanes; l++) {
		b = !lane_left(R, l) ? D : Q->q[l].last_t;
		if (b < m1) {
			m2 = m1;
			m1 = b;
			at = l;
		} else if (b < m2) {
			m2 = b;
		}
	}
	for (l = 0; l < R->nlanes; l++) {
		b = l == at ? m2 : m1;
		Wl[l] = b == UINT64_MAX ? b : b > EPS ? b - EPS : 0;
	}
}

/* The lanes' lost counts into R->lost: 0, or -1 (R broken) if one is
 * not what a producer can make of it: smaller than at the last drain,
 * or grown by more records than its head grew by 8 bytes (a lost record
 * is reserved first; its count is read before its head, the producer's
 * increment a release after its reservation), with a head the ring's
 * reader finds sane (else a scribbled head would let any count by). */
static int lanes_lost(struct recorder *R)
{
	uint64_t sum = 0, n, head;
	unsigned l;

	for (l = 0; l < R->nlanes; l++) {
		n = __atomic_load_n(&rec_lane(R, l)->lost, __ATOMIC_ACQUIRE);
		head = lane_head(R, l);
		if (n < R->lane_lost[l] || head < R->lane_head[l] ||
		    !ring_head_ok(R->rd[l], head) ||
		    n - R->lane_lost[l] > (head - R->lane_head[l]) / 8) {
			R->why = "a lane's count of lost records is not one its "
				 "producers can make";
			R->broken = 1;
			return -1;
		}
		R->lane_lost[l] = n;
		R->lane_head[l] = head;
		sum += n;
	}
	R->lost = sum;
	return 0;
}

static long drain(struct recorder *R, struct heap *h, struct fdprobe *fp,
		  struct stacks *st, uint64_t *lost, int quiet)
{
	static struct drain d;
	struct rec_queues *Q;
	uint64_t goal[REC_NLANES], Wl[REC_NLANES], D;
	unsigned l, room;
	long taken, ran;
	int got;

	if (lost)
		*lost = R ? R->lost : 0;
	if (!R || !R->rd[0] || R->broken)
		return 0;
	Q = queues(R);
	d.R = R, d.h = h, d.fp = fp, d.st = st, d.n = 0, d.nops = 0;
	d.now = rec_checkpoint(R);
	D = ring_arch_tsc();
	/* what was reserved before now, not more: threads that allocate
	 * faster than ptleak consumes would keep it here for ever (its
	 * events, signals and reports waiting) */
	for (l = 0; l < R->nlanes; l++)
		goal[l] = lane_head(R, l);
	do {
		taken = 0;
		for (l = 0; l < R->nlanes; l++) {
			d.q = &Q->q[l];
			room = QCAP - d.q->n;
			if (room < 2 || ring_tail(R->rd[l]) >= goal[l])
				continue;
			got = ring_consume(R->rd[l], take, &d, room);
			if (got < 0) {
				R->broken = 1;
				return -1;
			}
			taken += got;
		}
		/* one lane: its order is the only one; everything stopped
		 * out of the hooks: nothing can come before what is here */
		if (quiet || R->nlanes == 1)
			memset(Wl, 0xff, sizeof(Wl));
		else
			bounds(R, Q, D, Wl);
		ran = run(&d, Q, R->nlanes, Wl);
	} while (taken || ran);
	if (lanes_lost(R) < 0)
		return -1;
	if (lost)
		*lost = R->lost;
	return d.n;
}

long rec_drain(struct recorder *R, struct heap *h, struct fdprobe *fp,
	       struct stacks *st, uint64_t *lost)
{
	return drain(R, h, fp, st, lost, 0);
}

long rec_drain_quiet(struct recorder *R, struct heap *h, struct fdprobe *fp,
		     struct stacks *st, uint64_t *lost)
{
	return drain(R, h, fp, st, lost, 1);
}

uint64_t rec_bad(const struct recorder *R)
{
	return R ? R->bad : 0;
}

const char *rec_why(const struct recorder *R)
{
	const char *why;
	unsigned l;

	if (R && R->why)
		return R->why;
	for (l = 0; R && l < R->nlanes; l++)
		if (R->rd[l] && (why = ring_why(R->rd[l])))
			return why;
	return NULL;
}

int rec_blocked(const struct recorder *R)
{
	unsigned l;

	if (!R || !R->rd[0] || R->broken)
		return 0;
	for (l = 0; l < R->nlanes; l++)
		if (lane_left(R, l) || (R->queues && R->queues->q[l].n))
			return 1;
	return 0;
}

long rec_skip_holes(struct recorder *R)
{
	long n = 0;
	unsigned l;
	int got;

	if (!R || !R->rd[0] || R->broken)
		return 0;
	for (l = 0; l < R->nlanes; l++) {
		while ((got = ring_skip(R->rd[l])) > 0)
			n += got;
		if (got < 0) {
			R->broken = 1;
			break;
		}
	}
	return n;
}

void rec_mark(struct recorder *R)
{
	unsigned l;

	if (!R || !R->rd[0])
		return;
	for (l = 0; l < R->nlanes; l++)
		queues(R)->mark[l] = lane_head(R, l);
}

int rec_caught_up(const struct recorder *R)
{
	const struct rec_queue *q;
	unsigned l;

	if (!R || !R->rd[0] || R->broken || !R->queues)
		return 1;
	for (l = 0; l < R->nlanes; l++) {
		q = &R->queues->q[l];
		if (ring_tail(R->rd[l]) < R->queues->mark[l] ||
		    (q->n && q->ops[q->head].pos < R->queues->mark[l]))
			return 0;
	}
	return 1;
}

uint64_t rec_progress(const struct recorder *R)
{
	uint64_t n = 0;
	unsigned l;

	if (!R || !R->rd[0])
		return 0;
	for (l = 0; l < R->nlanes; l++)
		n += ring_tail(R->rd[l]);
	return n + (R->queues ? R->queues->run : 0);
}

unsigned rec_fill(const struct recorder *R)
{
	uint64_t used;
	unsigned l, f, max = 0;

	if (!R || !R->rd[0] || R->broken)
		return 0;
	for (l = 0; l < R->nlanes; l++) {
		used = lane_left(R, l);
		f = used >= (1ull << RING_LOG2) ? 256 :
		    (unsigned)(used >> (RING_LOG2 - 8));
		if (f > max)
			max = f;
	}
	return max;
}

long rec_drain_pace(long ns, unsigned fill)
{
	if (fill >= 64)
		ns /= 2;
	else if (fill < 16)
		ns *= 2;
	return ns < REC_DRAIN_MIN_NS ? REC_DRAIN_MIN_NS :
	       ns > REC_DRAIN_MAX_NS ? REC_DRAIN_MAX_NS : ns;
}

void rec_debug_ring(const struct recorder *R)
{
	const struct ring *r;
	unsigned l;

	for (l = 0; l < R->nlanes; l++) {
		r = rec_lane(R, l);
		if (l && !r->head)
			continue;
		fprintf(stderr, "ptleak-debug: ring %u: enabled %u head %llu tail "
			"%llu heartbeat %u lost %llu dropped %llu sleeps %llu "
			"waiters %u\n", l, r->enabled,
			(unsigned long long)r->head, (unsigned long long)r->tail,
			r->heartbeat, (unsigned long long)r->lost,
			(unsigned long long)r->dropped,
			(unsigned long long)r->sleeps, r->waiters);
	}
	fprintf(stderr, "ptleak-debug: operations: %llu run; %llu "
		"allocations amended by their free (a record for both)\n",
		(unsigned long long)(R->queues ? R->queues->run : 0),
		(unsigned long long)R->amended);
	fprintf(stderr, "ptleak-debug: stack set: %llu of %llu entries, %zu "
		"hashes given\n", (unsigned long long)R->ss_count,
		1ull << R->ss_log2, R->ss_n);
	rec_debug_scache(R);
}
