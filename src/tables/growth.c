/*
 * growth.c - stacks whose memory in use keeps growing (growth.h).
 *
 * A stack's bytes in use b(t) is a step function: constant between two of
 * its events.  The least-squares line through it over its window [0, X]
 * (x: seconds since its first allocation) needs only
 *     S0 = int b dx,   S1 = int x b dx,   S2 = int b^2 dx,
 * each advanced at an event by the constant piece since the last one; X
 * is its last event (a report at exit comes after a shutdown that no
 * longer allocates there: that flat tail is not its rate):
 *     slope = (S1/X - X/2 * S0/X) / (X^2/12)
 *     R^2   = cov^2 / (var_x * var_b),  var_x = X^2/12,
 *                                        var_b = S2/X - (S0/X)^2.
 * The same for the blocks in use (their slope only).  Nothing is
 * sampled, nothing decays; a report only reads.
 */
#include <stdlib.h>
#include <string.h>

#include "tables/growth.h"
#include "base/util.h"

/* the recently growing stacks growth_fastest looks at */
#define HOT_MAX 32
#define HOT_FLAG 0x80000000u

struct gstack {
	double s0, s1, s2;	/* bytes: int b, int x b, int b^2 */
	double n0, n1;		/* blocks: int n, int x n */
	uint64_t first_ns;	/* its first event: x = 0 */
	uint64_t last_ns;	/* the integrals run up to here */
	uint64_t high_ns;	/* its last new maximum of bytes in use */
	uint64_t bytes, max_bytes;
	/* the process's allocations (growth.nallocs) at its first event and
	 * at its last new maximum */
	uint64_t first_alloc, high_alloc;
	uint32_t blocks;
	uint32_t nhigh;		/* new maxima; HOT_FLAG: in the hot set */
};

struct growth {
	struct gstack *st;	/* [stack id] */
	size_t n;
	uint64_t nallocs;	/* allocations told, every stack's */
	uint32_t hot[HOT_MAX];	/* stack ids, 0: empty */
};

struct growth *growth_new(void)
{
	return xcalloc(1, sizeof(struct growth));
}

void growth_free(struct growth *g)
{
	if (!g)
		return;
	free(g->st);
	free(g);
}

void growth_reset(struct growth *g)
{
	free(g->st);
	memset(g, 0, sizeof(*g));
}

size_t growth_stack_bytes(void)
{
	return sizeof(struct gstack);
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* The integrals of S run on, values unchanged, up to T. */
static void advance(struct gstack *s, uint64_t t)
{
	double xa, xb, dx, sq;

	if (t <= s->last_ns)
		return;
	xa = secs(s->last_ns - s->first_ns);
	xb = secs(t - s->first_ns);
	dx = xb - xa;
	sq = (xb * xb - xa * xa) / 2;
	s->s0 += (double)s->bytes * dx;
	s->s1 += (double)s->bytes * sq;
	s->s2 += (double)s->bytes * (double)s->bytes * dx;
	s->n0 += (double)s->blocks * dx;
	s->n1 += (double)s->blocks * sq;
	s->last_ns = t;
}

/* STACK joins the hot set in place of the one whose last maximum is the
 * oldest. */
static void hot_add(struct growth *g, uint32_t stack)
{
	unsigned i, oldest = 0;

	for (i = 0; i < HOT_MAX; i++) {
		if (!g->hot[i]) {
			oldest = i;
			break;
		}
		if (g->st[g->hot[i]].high_ns < g->st[g->hot[oldest]].high_ns)
			oldest = i;
	}
	if (g->hot[oldest])
		g->st[g->hot[oldest]].nhigh &= ~HOT_FLAG;
	g->hot[oldest] = stack;
	g->st[stack].nhigh |= HOT_FLAG;
}

void growth_alloc(struct growth *g)
{
	g->nallocs++;
}

/* Stack STACK's entry, made if new, run on to TIME_NS */
static struct gstack *at(struct growth *g, uint32_t stack, uint64_t time_ns)
{
	struct gstack *s;

	if (stack >= g->n) {
		size_t n = g->n ? g->n : 1024;

		while (n <= stack)
			n *= 2;
		g->st = xrealloc(g->st, n * sizeof(*g->st));
		memset(g->st + g->n, 0, (n - g->n) * sizeof(*g->st));
		g->n = n;
	}
	s = &g->st[stack];
	if (!s->first_ns) {
		s->first_ns = s->last_ns = time_ns ? time_ns : 1;
		s->first_alloc = g->nallocs;
	}
	advance(s, time_ns);
	return s;
}

/* S (STACK's) had BYTES in use a moment: a new maximum? */
static void high(struct growth *g, struct gstack *s, uint32_t stack,
		 uint64_t bytes)
{
	if (bytes <= s->max_bytes)
		return;
	s->max_bytes = bytes;
	s->high_ns = s->last_ns;
	s->high_alloc = g->nallocs;
	s->nhigh++;
	if ((s->nhigh & ~HOT_FLAG) >= GROWTH_MIN_HIGHS && !(s->nhigh & HOT_FLAG))
		hot_add(g, stack);
}

void growth_note(struct growth *g, uint32_t stack, int64_t dbytes,
		 int32_t dblocks, uint64_t time_ns)
{
	struct gstack *s;

	if (!stack)
		return;
	s = at(g, stack, time_ns);
	s->bytes += (uint64_t)dbytes;
	s->blocks += (uint32_t)dblocks;
	high(g, s, stack, s->bytes);
}

void growth_note_pair(struct growth *g, uint32_t stack, uint64_t bytes,
		      uint64_t time_ns)
{
	struct gstack *s;

	if (!stack)
		return;
	s = at(g, stack, time_ns);
	high(g, s, stack, s->bytes + bytes);
}

/* Stack S (id STACK) at NOW_NS, NALLOCS allocations told, by the rule
 * of growth.h: 1 and *E, or 0. */
static int fit(const struct gstack *s, uint32_t stack, uint64_t now_ns,
	       uint64_t nallocs, struct growth_entry *e)
{
	double x, mean, cov, var_x, var_b, slope, recent;

	if (!s->first_ns || now_ns < s->first_ns + GROWTH_MIN_WINDOW_NS ||
	    (s->nhigh & ~HOT_FLAG) < GROWTH_MIN_HIGHS)
		return 0;
	recent = secs(now_ns - s->first_ns) * GROWTH_RECENT;
	if (recent < secs(GROWTH_RECENT_MIN_NS))
		recent = secs(GROWTH_RECENT_MIN_NS);
	/* stopped: the program went on allocating elsewhere, for long */
	if (now_ns > s->high_ns && secs(now_ns - s->high_ns) > recent &&
	    (double)(nallocs - s->high_alloc) >
	    GROWTH_RECENT * (double)(nallocs - s->first_alloc))
		return 0;
	if ((double)s->bytes < GROWTH_MIN_KEPT * (double)s->max_bytes ||
	    s->last_ns < s->first_ns + GROWTH_MIN_WINDOW_NS)
		return 0;
	x = secs(s->last_ns - s->first_ns);
	mean = s->s0 / x;
	cov = s->s1 / x - x / 2 * mean;
	var_x = x * x / 12;
	var_b = s->s2 / x - mean * mean;
	slope = cov / var_x;
	if (!(slope > 0) || !(var_b > 0))
		return 0;
	e->r2 = cov * cov / (var_x * var_b);
	if (e->r2 < GROWTH_MIN_R2)
		return 0;
	e->stack = stack;
	e->bytes_per_s = slope;
	e->blocks_per_s = (s->n1 / x - x / 2 * (s->n0 / x)) / var_x;
	e->in_use_bytes = s->bytes;
	e->in_use_blocks = s->blocks;
	e->first_ns = s->first_ns;
	e->last_ns = s->last_ns;
	return 1;
}

size_t growth_list(const struct growth *g, uint64_t now_ns,
		   struct growth_entry *out, size_t max)
{
	struct growth_entry e;
	size_t i, n = 0, k;

	for (i = 1; i < g->n && max; i++) {
		if (!fit(&g->st[i], (uint32_t)i, now_ns, g->nallocs, &e))
			continue;
		if (n == max && e.bytes_per_s <= out[n - 1].bytes_per_s)
			continue;
		/* insertion into OUT, fastest first; a tie: the older stack */
		k = n < max ? n++ : n - 1;
		while (k > 0 && out[k - 1].bytes_per_s < e.bytes_per_s) {
			out[k] = out[k - 1];
			k--;
		}
		out[k] = e;
	}
	return n;
}

int growth_fastest(const struct growth *g, uint64_t now_ns,
		   struct growth_entry *e)
{
	struct growth_entry c;
	unsigned i;
	int found = 0;

	for (i = 0; i < HOT_MAX; i++) {
		if (!g->hot[i] ||
		    !fit(&g->st[g->hot[i]], g->hot[i], now_ns, g->nallocs, &c))
			continue;
		if (!found || c.bytes_per_s > e->bytes_per_s)
			*e = c;
		found = 1;
	}
	return found;
}

unsigned growth_hot(const struct growth *g, uint32_t *ids, uint64_t *bytes,
		    unsigned max)
{
	unsigned i, n = 0, k;

	for (i = 0; i < HOT_MAX; i++) {
		uint32_t s = g->hot[i];

		if (!s)
			continue;
		if (n == max && g->st[s].high_ns <= g->st[ids[n - 1]].high_ns)
			continue;
		k = n < max ? n++ : n - 1;
		while (k > 0 && g->st[ids[k - 1]].high_ns < g->st[s].high_ns) {
			ids[k] = ids[k - 1];
			k--;
		}
		ids[k] = s;
	}
	for (k = 0; k < n; k++)
		bytes[k] = g->st[ids[k]].bytes;
	return n;
}
