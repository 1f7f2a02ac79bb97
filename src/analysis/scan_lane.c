/*
 * scan_lane.c - the scan's reading and lookups (scan_priv.h), on the main
 * thread and, with scan_input.threads 2, a worker thread.
 *
 * A batch's jobs (runs of units) are taken by the lanes through one
 * atomic word (the batch's number, its job count and the next job), so a
 * worker the system does not run in time leaves its share to the main
 * thread instead of making it wait; the main thread waits only for the
 * jobs the worker has started.  A lane reads its units into its buffer,
 * keeps the words inside the heap's span and looks them up (the keyed
 * lookup in two passes, each warming the caches ahead of it where the
 * index is too big for them), giving
 * hits: the positions of the blocks pointed at or into.  Lanes only read
 * the scanner (blocks, index); marks and the work stack are the main
 * thread's (scan.c applies the hits after the batch).  A unit of a block
 * read ahead (scan_pre.c) is not read: its hits are those kept then;
 * while blocks are read ahead, each job's hits are kept at its end.
 *
 * The worker blocks every signal: ptleak's handlers (and a report
 * child's) run on the main thread only.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "scan_priv.h"
#include "base/util.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

struct scan_workers {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	unsigned gen;		/* under mu: the batch published */
	int quit;		/* under mu */
	/* gen << 32 | jobs << 16 | next job (atomic) */
	uint64_t next;
	unsigned ndone, want;	/* jobs the worker finished (atomic), of */
	int split;		/* the worker takes the odd jobs (tests) */
	struct scanner *s;
};

/*
 * The words of a lane's buffer looked up in two passes.  The first finds
 * each word's block and tells the hit from the index alone (keys and
 * sizes: no block entry read), remembering the words that have the same
 * answer as the last one looked up (the block's start to the next's: a
 * heap of arenas points into the same block again and again); a word it
 * cannot tell (no keys, a block of 4 GiB or more, a word before its
 * region's blocks) is left to the second, which appends each unit's hits
 * to the lane's list.
 */
#define PF_DIST 16
/* a word's answer: a hit, none, or the block to ask holder() about */
#define POS_NONE	(1ull << 63)
#define POS_ASK		(1ull << 62)

static inline void warm_entry(const struct scanner *s, size_t j)
{
	if (s->b->order)
		__builtin_prefetch(heap_entry(&s->b->e, s->b->order[j]));
	else
		__builtin_prefetch(&s->b->arr[j]);
}

static inline size_t bucket_of(const struct scanner *s, uint64_t w)
{
	return (size_t)((w - s->lo) >> s->shift);
}

/* With regions: the index of W's bucket (a nearby one when W is outside
 * every bucket: warming the caches only). */
static inline size_t region_bucket(const struct scanner *s, uint64_t w)
{
	const struct region *r = &s->reg[(w - s->lo) >> REGION_BITS];
	uint64_t k;

	if (!r->nb || w < r->base)
		return r->boff;
	k = (w - r->base) >> r->shift;
	return r->boff + (size_t)(k < r->nb ? k : r->nb);
}

/* W's answer in block P at A of LEN bytes (LEN_BIG: holder's), the last
 * block at or below W. */
static inline uint64_t answer(const struct scanner *s, uint64_t w, size_t p,
			      uint64_t a, uint32_t len)
{
	uint64_t off = w - a;

	if (len == LEN_BIG)
		return (uint64_t)p | POS_ASK;
	if (!off)
		return (uint64_t)p | HIT_START;
	if (off < len && !(s->glibc && scan_glibc_next_header(len, off)))
		return (uint64_t)p;
	return POS_NONE;
}

/* The first pass with the keys. */
static void answers_keyed(const struct scanner *s, const uint64_t *w,
			  uint64_t *pos, size_t m)
{
	uint64_t from = 0, to = 0, a = 0;
	uint32_t len = 0;
	size_t k, p = 0;

	for (k = 0; k < m; k++) {
		uint64_t x = w[k];

		if (x - from < to - from) {
			pos[k] = answer(s, x, p, a, len);
			continue;
		}
		if (s->warm && k + 2 * PF_DIST < m)
			__builtin_prefetch(&s->bucket[region_bucket(s, w[k + 2 * PF_DIST])]);
		if (s->warm && k + PF_DIST < m) {
			size_t j = s->bucket[region_bucket(s, w[k + PF_DIST])];

			__builtin_prefetch(&s->key[j]);
			if (s->len)
				__builtin_prefetch(&s->len[j]);
		}
		p = locate_in(s, x, &from, &to);
		a = from;
		len = s->len && from != to ? s->len[p] : LEN_BIG;
		pos[k] = answer(s, x, p, a, len);
	}
}

/* The first pass: the answers of the M words W (in span) at POS. */
static void answers(const struct scanner *s, const uint64_t *w, uint64_t *pos,
		    size_t m)
{
	size_t k;

	if (s->key) {
		answers_keyed(s, w, pos, m);
		return;
	}
	for (k = 0; k < m; k++) {
		long i;

		if (s->bucket && k + 2 * PF_DIST < m)
			__builtin_prefetch(&s->bucket[bucket_of(s, w[k + 2 * PF_DIST])]);
		if (s->bucket && k + PF_DIST < m)
			warm_entry(s, s->bucket[bucket_of(s, w[k + PF_DIST])]);
		i = find_block(s, w[k]);
		pos[k] = i < 0 ? POS_NONE : (uint64_t)i |
			 (w[k] == addr_of(s, (size_t)i) ? HIT_START : 0);
	}
}

/* Word W's hit from its answer V (POS_ASK: holder's), or POS_NONE. */
static inline uint64_t settle(const struct scanner *s, uint64_t w, uint64_t v)
{
	long i;

	if (!(v & POS_ASK))
		return v;
	i = holder(s, w, (uint32_t)v);
	if (i < 0)
		return POS_NONE;
	return (uint64_t)i | (w == addr_of(s, (size_t)i) ? HIT_START : 0);
}

/*
 * 1 if hit V came already in this unit, as far as a filter of RECENT
 * slots (direct-mapped; *SEEN: the unit's slots in use) tells: applied
 * twice, a hit changes nothing (scan.c: its block's state only goes up,
 * the unit's rule is one), and a heap of arenas points into the same
 * blocks again and again (perl's: 57% of its 1.6 M hits, 16 ms of the
 * main thread's time applying them).
 */
static inline int seen_again(struct scan_lane *l, uint64_t *seen, uint64_t v)
{
	unsigned q = (unsigned)((v * 0x9E3779B97F4A7C15ull) >> (64 - RECENT_LOG2));

	if ((*seen >> q) & 1 && l->recent[q] == v)
		return 1;
	l->recent[q] = v;
	*seen |= 1ull << q;
	return 0;
}

static void lookup(const struct scanner *s, struct scan_lane *l,
		   const uint32_t *ord, size_t nu, size_t m)
{
	const uint64_t *w = l->buf;
	const uint64_t *pos = l->pos;
	size_t k, j;

	answers(s, w, l->pos, m);
	for (j = 0; j < nu; j++) {
		struct scan_unit *x = &s->unit[ord[j]];
		uint64_t bb = x->born_before, seen = 0;

		if (x->pre)
			continue;	/* its hits taken already */
		x->h0 = (uint32_t)l->nhits;
		for (k = x->w0; k < x->w1; k++) {
			uint64_t v = pos[k];

			/* the entries holder() reads, warmed ahead */
			if (s->b->order && k + 2 * PF_DIST < m &&
			    (pos[k + 2 * PF_DIST] & POS_ASK))
				__builtin_prefetch(&s->b->order[(uint32_t)pos[k + 2 * PF_DIST]]);
			if (k + PF_DIST < m && (pos[k + PF_DIST] & POS_ASK))
				warm_entry(s, (uint32_t)pos[k + PF_DIST]);
			if (v & (POS_NONE | POS_ASK) && (v = settle(s, w[k], v)) & POS_NONE)
				continue;
			if (bb && born_of(s, (uint32_t)v) >= bb)
				continue;
			if (seen_again(l, &seen, v))
				continue;
			l->hits[l->nhits++] = v;
		}
		x->h1 = (uint32_t)l->nhits;
	}
}

int scan_lookup_words(const struct scan_blocks *b, int glibc, int kind,
		      const uint64_t *w, size_t n, int64_t *out)
{
	struct scanner s;
	uint64_t *pos = malloc((n ? n : 1) * sizeof(*pos));
	size_t k, m = 0;
	uint64_t *in = calloc(n ? n : 1, sizeof(*in));

	if (!pos || !in || !b->n) {
		free(pos);
		free(in);
		return -1;
	}
	memset(&s, 0, sizeof(s));
	s.b = b;
	s.n = b->n;
	s.glibc = glibc;
	scan_index_build(&s);
	if (kind < 2 && s.key) {	/* the buckets alone, or nothing */
		scan_index_free(&s);
		if (kind == 1)
			scan_index_buckets(&s);
	} else if (kind == 2) {
		free(s.len);
		s.len = NULL;
	} else if (s.key) {
		scan_index_sizes(&s);
	}
	for (k = 0; k < n; k++)
		if (w[k] - s.lo < s.span)
			in[m++] = w[k];
	answers(&s, in, pos, m);
	for (k = m = 0; k < n; k++) {
		uint64_t v = POS_NONE;

		if (w[k] - s.lo < s.span) {
			v = settle(&s, w[k], pos[m]);
			m++;
		}
		out[k] = v & POS_NONE ? -1 : (int64_t)v;
	}
	scan_index_free(&s);
	free(pos);
	free(in);
	return 0;
}

/* The pages of BUF up to BYTES mapped before a read fills them (*DONE:
 * how far they are): a page fault costs ~12 us on these VMs, populating
 * ~0.6 us. */
static void populate(void *buf, size_t *done, size_t bytes)
{
	uintptr_t from, to;

	if (bytes <= *done)
		return;
	from = ((uintptr_t)buf + *done) & ~(uintptr_t)4095;
	to = ((uintptr_t)buf + bytes + 4095) & ~(uintptr_t)4095;
	madvise((void *)from, to - from, MADV_POPULATE_WRITE);
	*done = bytes;
}

/* Units this small and this close (in address order) are read as one
 * span: the blocks of a heap allocated in one go, popped in a row. */
#define JOIN_MAX	4096
#define JOIN_GAP	64

/* Unit X's bytes at SRC (GOT of them) into the lane's words from *FILL:
 * those inside the heap's span. */
static void take_words(const struct scanner *s, struct scan_lane *l,
		       struct scan_unit *x, const uint64_t *src, long got,
		       size_t *fill, int li)
{
	size_t len = (size_t)(x->end - x->start), i, nw, f = *fill;
	uint64_t lo = s->lo, span = s->span, *buf = l->buf;

	if (got < 0)
		got = 0;
	if ((size_t)got > len)
		got = (long)len;
	x->got = (uint64_t)got;
	x->lane = (uint8_t)li;
	x->w0 = (uint32_t)f;
	nw = (size_t)got / 8;
	for (i = 0; i < nw; i++) {
		uint64_t w = src[i];

		buf[f] = w;
		f += w - lo < span;
	}
	x->w1 = (uint32_t)f;
	*fill = f;
}

/* The hits of lane L's job (units ORD[0..N)) kept (scan_pre_read's
 * pass: the lanes keep them in turn), the lane's list emptied. */
static void pre_keep(struct scanner *s, struct scan_lane *l,
		     const uint32_t *ord, size_t n)
{
	struct scan_pre *p = &s->pre;
	size_t j, h, at;

	at = __atomic_fetch_add(&p->nhits, l->nhits, __ATOMIC_RELAXED);
	for (j = 0; j < n; j++) {
		const struct scan_unit *x = &s->unit[ord[j]];

		p->at[x->rid] = (uint32_t)(at + x->h0);
		p->cnt[x->rid] = x->h1 - x->h0;
		p->got[x->rid] = (uint32_t)x->got;
	}
	for (h = 0; h < l->nhits; h++)
		p->hits[at + h] = (uint32_t)l->hits[h] |
				  (l->hits[h] & HIT_START ? PRE_START : 0);
	l->nhits = 0;
}

/* Unit X (lane LI's): if its block was read ahead (scan_pre.c; X the
 * whole block), X->pre 1, its got, its hits s->pre.hits[h0, h1) (not
 * the lane's); else 0. */
static int pre_take(const struct scanner *s, struct scan_unit *x, int li)
{
	const struct scan_pre *p = &s->pre;
	size_t lo = 0, hi = p->n;
	uint64_t a, e;

	if (x->blk == PRE_NONE || !p->n)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->pos[mid] < x->blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->n || p->pos[lo] != x->blk ||
	    !pre_eligible(s, x->blk, 0, &a, &e) || x->start != a || x->end != e)
		return 0;
	x->got = p->got[lo];
	x->lane = (uint8_t)li;
	x->w0 = x->w1 = 0;
	x->h0 = p->at[lo];
	x->h1 = p->at[lo] + p->cnt[lo];
	x->pre = 1;
	return 1;
}

/* Job K of the batch on lane LI: its units read (in address order when
 * they come in reverse, neighbours as one span) and looked up. */
static void run_job(struct scanner *s, int li, size_t k)
{
	struct scan_lane *l = &s->lane[li];
	size_t u0 = s->job[k], n = s->job[k + 1] - u0, j, e, first = 0, fill = 0;
	const struct scan_unit *unit = s->unit;
	uint32_t *ord = l->ord;
	int desc = n > 1;

	if (l->gen != s->gen) {
		l->gen = s->gen;
		l->nhits = 0;
	}
	for (j = 0; j + 1 < n && desc; j++)
		desc = unit[u0 + j + 1].start < unit[u0 + j].start;
	for (j = 0; j < n; j++) {
		ord[j] = (uint32_t)(desc ? u0 + n - 1 - j : u0 + j);
		/* the blocks read ahead: their hits are kept */
		pre_take(s, &s->unit[ord[j]], li);
	}
	for (j = 0; j < n; j = e) {
		struct scan_unit *x = &s->unit[ord[j]];
		uint64_t a = x->start, end = x->end;
		const uint64_t *src;
		long got;

		if (x->pre) {
			e = j + 1;
			continue;
		}
		for (e = j + 1; e < n && x->end - x->start <= JOIN_MAX; e++) {
			const struct scan_unit *y = &unit[ord[e]];

			if (y->pre || y->end - y->start > JOIN_MAX || y->start < end ||
			    y->start - end > JOIN_GAP || y->end - a > UNIT_MAX)
				break;
			end = y->end;
		}
		if (fill + (end - a) / 8 > LANE_WORDS) {
			lookup(s, l, ord + first, j - first, fill);
			first = j;
			fill = 0;
		}
		if (e == j + 1) {
			populate(l->buf, &l->populated, fill * 8 + (end - a));
			got = s->read(l->ctx, a, l->buf + fill, (size_t)(end - a));
			take_words(s, l, x, l->buf + fill, got, &fill, li);
			continue;
		}
		populate(l->stage, &l->staged, end - a);
		got = s->read(l->ctx, a, l->stage, (size_t)(end - a));
		src = l->stage;
		for (; j < e; j++) {
			struct scan_unit *y = &s->unit[ord[j]];
			uint64_t off = y->start - a;

			if (got >= 0 && (uint64_t)got >= y->end - a) {
				take_words(s, l, y, src + off / 8, (long)(y->end - y->start),
					   &fill, li);
			} else {
				/* the span came short: this one alone */
				populate(l->buf, &l->populated, fill * 8 + (y->end - y->start));
				take_words(s, l, y, l->buf + fill,
					   s->read(l->ctx, y->start, l->buf + fill,
						   (size_t)(y->end - y->start)), &fill, li);
			}
		}
	}
	lookup(s, l, ord + first, n - first, fill);
	if (s->pre.pass)
		pre_keep(s, l, ord, n);
}

void scan_jobs(struct scanner *s)
{
	uint64_t job = 0;
	size_t u;

	s->njob = 0;
	s->job[0] = 0;
	for (u = 0; u < s->nunit; u++) {
		job += s->unit[u].end - s->unit[u].start;
		if (job >= JOB_BYTES && u + 1 < s->nunit) {
			s->job[++s->njob] = (uint32_t)(u + 1);
			job = 0;
		}
	}
	s->job[++s->njob] = (uint32_t)s->nunit;
}

/* The next job of batch GEN for the taker (-1: none left). */
static long take(struct scan_workers *w, unsigned gen)
{
	uint64_t v = __atomic_load_n(&w->next, __ATOMIC_ACQUIRE);

	for (;;) {
		unsigned next = (unsigned)(v & 0xffff), jobs = (unsigned)(v >> 16) & 0xffff;

		if ((unsigned)(v >> 32) != gen || next >= jobs)
			return -1;
		if (__atomic_compare_exchange_n(&w->next, &v, v + (w->split ? 2 : 1), 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return (long)next;
	}
}

static void finished(struct scan_workers *w)
{
	unsigned want = w->want;

	if (__atomic_add_fetch(&w->ndone, 1, __ATOMIC_ACQ_REL) == want) {
		pthread_mutex_lock(&w->mu);
		pthread_cond_signal(&w->done);
		pthread_mutex_unlock(&w->mu);
	}
}

static void *worker_main(void *arg)
{
	struct scan_workers *w = arg;
	unsigned seen = 0;

	for (;;) {
		long k;

		pthread_mutex_lock(&w->mu);
		while (w->gen == seen && !w->quit)
			pthread_cond_wait(&w->go, &w->mu);
		seen = w->gen;
		if (w->quit) {
			pthread_mutex_unlock(&w->mu);
			return NULL;
		}
		pthread_mutex_unlock(&w->mu);
		while ((k = take(w, seen)) >= 0) {
			run_job(w->s, 1, (size_t)k);
			finished(w);
		}
	}
}

static struct scan_lane *lane_alloc(struct scan_lane *l, void *ctx)
{
	l->ctx = ctx;
	l->buf = malloc(LANE_WORDS * sizeof(*l->buf));
	l->pos = malloc(LANE_WORDS * sizeof(*l->pos));
	l->hits = malloc(LANE_HITS * sizeof(*l->hits));
	l->stage = malloc(UNIT_MAX);
	l->ord = malloc(BATCH_UNITS * sizeof(*l->ord));
	l->populated = l->staged = 0;
	l->gen = 0;
	return l->buf && l->pos && l->hits && l->stage && l->ord ? l : NULL;
}

static void lane_free(struct scan_lane *l)
{
	free(l->stage);
	free(l->ord);
	free(l->buf);
	free(l->pos);
	free(l->hits);
	memset(l, 0, sizeof(*l));
}

int scan_lanes_init(struct scanner *s, const struct scan_input *in)
{
	s->threads = in->threads;
	s->unit = malloc(BATCH_UNITS * sizeof(*s->unit));
	if (!s->unit || !lane_alloc(&s->lane[0], in->ctx))
		return -1;
	/* the worker's lane: its own read context, else none */
	s->lane[1].ctx = in->ctx_worker;
	if (!in->ctx_worker)
		s->threads = 1;
	return 0;
}

/* The worker started (once), every signal blocked in it.  0, or -1 (one
 * thread from then on). */
static int start_worker(struct scanner *s)
{
	struct scan_workers *w;

	if (s->w)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w || !lane_alloc(&s->lane[1], s->lane[1].ctx)) {
		free(w);
		s->threads = 1;
		return -1;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->go, NULL);
	pthread_cond_init(&w->done, NULL);
	w->s = s;
	w->split = s->threads == SCAN_THREADS_SPLIT;
	if (util_thread_start(&w->th, worker_main, w)) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->go);
		pthread_cond_destroy(&w->done);
		free(w);
		s->threads = 1;
		return -1;
	}
	s->w = w;
	return 0;
}

/*
 * The worker is started once the scan has read WORKER_AFTER bytes: a
 * thread's start and its join cost 0.1-0.2 ms, up to 1.5 ms on a loaded
 * machine (the join waits for a worker not run yet), more than a small
 * scan takes (a program's roots, a few hundred KiB: 0.2-0.4 ms); a big
 * one reads its first MiB alone (~1 ms).  SCAN_THREADS_SPLIT (tests): at
 * once.
 */
#define WORKER_AFTER BATCH_BYTES

void scan_lanes_run(struct scanner *s)
{
	struct scan_workers *w;
	size_t k;
	long j;

	s->gen++;
	if (s->njob < 2 || (s->threads != 2 && s->threads != SCAN_THREADS_SPLIT) ||
	    (s->threads == 2 && !s->w &&
	     s->st->bytes_scanned + s->pre_bytes < WORKER_AFTER) ||
	    start_worker(s)) {
		for (k = 0; k < s->njob; k++)
			run_job(s, 0, k);
		return;
	}
	w = s->w;
	pthread_mutex_lock(&w->mu);
	w->want = w->split ? (unsigned)(s->njob / 2) : (unsigned)s->njob;
	__atomic_store_n(&w->ndone, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&w->next, (uint64_t)s->gen << 32 | (uint64_t)s->njob << 16 |
			 (w->split ? 1 : 0), __ATOMIC_RELEASE);
	w->gen = s->gen;
	pthread_cond_signal(&w->go);
	pthread_mutex_unlock(&w->mu);
	if (w->split) {
		for (k = 0; k < s->njob; k += 2)
			run_job(s, 0, k);
	} else {
		while ((j = take(w, s->gen)) >= 0) {
			run_job(s, 0, (size_t)j);
			finished(w);
		}
	}
	pthread_mutex_lock(&w->mu);
	while (__atomic_load_n(&w->ndone, __ATOMIC_ACQUIRE) != w->want)
		pthread_cond_wait(&w->done, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

void scan_lanes_free(struct scanner *s)
{
	struct scan_workers *w = s->w;

	if (w) {
		pthread_mutex_lock(&w->mu);
		w->quit = 1;
		pthread_cond_signal(&w->go);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->th, NULL);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->go);
		pthread_cond_destroy(&w->done);
		free(w);
		s->w = NULL;
	}
	lane_free(&s->lane[0]);
	lane_free(&s->lane[1]);
	free(s->unit);
	s->unit = NULL;
}
