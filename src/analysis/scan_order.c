/*
 * scan_order.c - the blocks in address order for the scan (scan.h):
 * entry indices of the heap table sorted by address (scan_blocks_of), or
 * an array of scan_block sorted in place (scan_sort_blocks), both by one
 * radix sort; the classes' names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scan.h"
#include "base/util.h"

static int cmp_addr(const void *x, const void *y)
{
	const struct scan_block *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* What a radix sort sorts: entry indices of E, or positions in ARR. */
struct keys {
	const struct heap_entries *e;
	const struct scan_block *arr;
};

static inline uint64_t key_of(const struct keys *k, uint32_t i)
{
	return k->e ? heap_entry(k->e, i)->addr : k->arr[i].addr;
}

/*
 * [0, N) ordered by key (address), stable: an LSD radix sort, 16 bits a
 * pass over the bits where the keys differ (3 passes for addresses in
 * several arenas, 2 for one), the histograms of every pass counted in one
 * sequential pass over the keys.  8 bytes a key while it runs (the order
 * and its copy), 4 after.  NULL: out of memory.
 */
static uint32_t *radix_wide(const struct keys *k, size_t n, uint64_t diff)
{
	enum { BITS = 16, RADIX = 1 << BITS, MAXP = 64 / BITS };
	uint32_t *a, *t = NULL, *swap, (*count)[RADIX] = NULL;
	unsigned p, np = 0;
	size_t i;

	a = malloc((n ? n : 1) * sizeof(*a));
	if (!a)
		return NULL;
	while (np < MAXP && diff >> (np * BITS))
		np++;
	if (np) {
		t = malloc(n * sizeof(*t));
		count = calloc(np, sizeof(*count));
		if (!t || !count) {
			free(a);
			free(t);
			free(count);
			return NULL;
		}
	}
	for (i = 0; i < n; i++) {
		uint64_t key = key_of(k, (uint32_t)i);

		for (p = 0; p < np; p++)
			count[p][(key >> (p * BITS)) & (RADIX - 1)]++;
	}
	for (p = 0; p < np; p++) {
		uint32_t sum = 0, c;
		size_t d;

		for (d = 0; d < RADIX; d++) {
			c = count[p][d];
			count[p][d] = sum;
			sum += c;
		}
	}
	for (p = 0; p < np; p++) {
		unsigned shift = p * BITS;

		if (p == 0) {
			for (i = 0; i < n; i++)
				t[count[0][key_of(k, (uint32_t)i) & (RADIX - 1)]++] =
					(uint32_t)i;
		} else {
			for (i = 0; i < n; i++) {
				uint32_t x = a[i];

				t[count[p][(key_of(k, x) >> shift) & (RADIX - 1)]++] = x;
			}
		}
		swap = a;
		a = t;
		t = swap;
	}
	if (!np)
		for (i = 0; i < n; i++)
			a[i] = (uint32_t)i;
	free(t);
	free(count);
	return a;
}

/*
 * The keys made 32 bits, in the same order, when they can be: the 4 GiB
 * regions they fall in (addr >> 32: the brk heap, thread arenas, mmapped
 * chunks; a few) ranked, the rank above the offset in the region less the
 * low bits all keys share.
 */
#define MAX_RANKS	256
#define MAX_RUNS	8

struct narrow {
	/* the keys' ascending runs in table order: run k from run[k] */
	size_t run[MAX_RUNS];
	unsigned nrun;		/* MAX_RUNS + 1: more */
	uint64_t hi[MAX_RANKS];	/* the regions, sorted */
	unsigned nhi;
	unsigned low;		/* low bits shared by every key */
	unsigned rbits;		/* bits of a rank */
	uint64_t last_hi;	/* a cache of the last region looked up */
	uint32_t last_rank;
};

static inline uint32_t narrow_key(struct narrow *nw, uint64_t key)
{
	uint64_t hi = key >> 32;

	if (hi != nw->last_hi) {
		unsigned lo = 0, up = nw->nhi;

		while (up - lo > 1) {
			unsigned mid = (lo + up) / 2;

			if (nw->hi[mid] <= hi)
				lo = mid;
			else
				up = mid;
		}
		nw->last_hi = hi;
		nw->last_rank = lo;
	}
	return (uint32_t)(((uint64_t)nw->last_rank << (32 - nw->low)) |
			  ((key & 0xffffffffu) >> nw->low));
}

/* The regions of the N keys into NW, and the bits where the keys differ
 * (*DIFF).  0: the keys fit 32 bits; -1: not. */
static int narrow_init(struct narrow *nw, const struct keys *k, size_t n,
		       uint64_t *diff)
{
	uint64_t k0 = n ? key_of(k, 0) : 0, d = 0, prev = 0;
	int fits = 1;
	size_t i;

	nw->nhi = 0;
	nw->last_hi = UINT64_MAX;
	nw->nrun = 1;
	nw->run[0] = 0;
	for (i = 0; i < n; i++) {
		uint64_t key = key_of(k, (uint32_t)i), hi = key >> 32;
		unsigned j;

		if (key < prev && nw->nrun <= MAX_RUNS) {
			if (nw->nrun < MAX_RUNS)
				nw->run[nw->nrun] = i;
			nw->nrun++;
		}
		prev = key;
		d |= key ^ k0;
		if (!fits || hi == nw->last_hi)
			continue;
		nw->last_hi = hi;
		for (j = 0; j < nw->nhi && nw->hi[j] < hi; j++)
			;
		if (j < nw->nhi && nw->hi[j] == hi)
			continue;
		if (nw->nhi == MAX_RANKS) {
			fits = 0;
			continue;
		}
		memmove(&nw->hi[j + 1], &nw->hi[j], (nw->nhi - j) * sizeof(nw->hi[0]));
		nw->hi[j] = hi;
		nw->nhi++;
	}
	*diff = d;
	nw->last_hi = UINT64_MAX;
	nw->low = 0;
	while (nw->low < 31 && !((d >> nw->low) & 1))
		nw->low++;
	nw->rbits = 0;
	while ((1u << nw->rbits) < nw->nhi)
		nw->rbits++;
	return fits && nw->rbits + 32 - nw->low <= 32 ? 0 : -1;
}

/*
 * [0, N) ordered by key, stable, from the NW->nrun ascending runs of the
 * keys in table order (a heap allocated in one go, not freed: its blocks
 * come in address order): merged, the keys read in table order.  4 bytes
 * a key.  NULL: out of memory.
 */
static uint32_t *merge_runs(const struct keys *k, size_t n,
			    const struct narrow *nw)
{
	size_t pos[MAX_RUNS], end[MAX_RUNS], o;
	uint64_t head[MAX_RUNS];
	uint32_t *a = malloc(n * sizeof(*a));
	unsigned r, nr = nw->nrun;

	if (!a)
		return NULL;
	for (r = 0; r < nr; r++) {
		pos[r] = nw->run[r];
		end[r] = r + 1 < nr ? nw->run[r + 1] : n;
		head[r] = key_of(k, (uint32_t)pos[r]);
	}
	for (o = 0; o < n; o++) {
		unsigned best = MAX_RUNS;

		/* on equal keys the earlier run: stable */
		for (r = 0; r < nr; r++)
			if (pos[r] < end[r] && (best == MAX_RUNS || head[r] < head[best]))
				best = r;
		if (best == MAX_RUNS)
			break;	/* the runs cover [0, N): not reached */
		a[o] = (uint32_t)pos[best]++;
		if (pos[best] < end[best])
			head[best] = key_of(k, (uint32_t)pos[best]);
	}
	return a;
}

/*
 * [0, N) ordered by key (address), stable.  Keys in a few ascending runs
 * (merge_runs): merged.  Else keys made 32 bits (struct
 * narrow): an LSD radix sort in two passes of 16 bits, the keys read in
 * table order only (the second pass's digit carried beside the first's
 * order: no key read in a random order); 10 bytes a key while it runs,
 * 4 after.  Else radix_wide.  NULL: out of memory.
 */
static uint32_t *radix_order(const struct keys *k, size_t n)
{
	enum { RADIX = 1 << 16 };
	uint32_t *a, *t, *c0, *c1, sum0 = 0, sum1 = 0;
	struct narrow *nw = malloc(sizeof(*nw));
	uint16_t *dig;
	uint64_t diff;
	int narrowed;
	size_t i;

	if (!nw)
		return NULL;
	if (n < 2) {
		free(nw);
		return radix_wide(k, n, 0);
	}
	narrowed = !narrow_init(nw, k, n, &diff);
	if (nw->nrun <= MAX_RUNS || !narrowed) {
		a = nw->nrun <= MAX_RUNS ? merge_runs(k, n, nw) : radix_wide(k, n, diff);
		free(nw);
		return a;
	}
	a = malloc(n * sizeof(*a));
	t = malloc(n * sizeof(*t));
	dig = malloc(n * sizeof(*dig));
	c0 = calloc(2 * RADIX, sizeof(*c0));
	if (!a || !t || !dig || !c0) {
		free(a);
		free(t);
		free(dig);
		free(c0);
		free(nw);
		return NULL;
	}
	c1 = c0 + RADIX;
	for (i = 0; i < n; i++) {
		uint32_t key = narrow_key(nw, key_of(k, (uint32_t)i));

		c0[key & 0xffff]++;
		c1[key >> 16]++;
	}
	for (i = 0; i < RADIX; i++) {
		uint32_t x0 = c0[i], x1 = c1[i];

		c0[i] = sum0;
		c1[i] = sum1;
		sum0 += x0;
		sum1 += x1;
	}
	for (i = 0; i < n; i++) {
		uint32_t key = narrow_key(nw, key_of(k, (uint32_t)i));
		uint32_t p = c0[key & 0xffff]++;

		t[p] = (uint32_t)i;
		dig[p] = (uint16_t)(key >> 16);
	}
	for (i = 0; i < n; i++)
		a[c1[dig[i]]++] = t[i];
	free(t);
	free(dig);
	free(c0);
	free(nw);
	return a;
}

/*
 * The blocks sorted through radix_order, then permuted in place, cycle by
 * cycle (no second copy of the blocks).
 */
void scan_sort_blocks(struct scan_block *b, size_t n)
{
	struct keys k = { NULL, b };
	uint32_t *a;
	size_t i;

	if (n < 2)
		return;
	a = n <= UINT32_MAX ? radix_order(&k, n) : NULL;
	if (!a) {
		qsort(b, n, sizeof(*b), cmp_addr);
		return;
	}
	/* position i takes block a[i]; a[j] = j marks j done */
	for (i = 0; i < n; i++) {
		struct scan_block tmp;
		size_t j = i;

		if (a[i] == i)
			continue;
		tmp = b[i];
		for (;;) {
			size_t x = a[j];

			a[j] = (uint32_t)j;
			if (x == i) {
				b[j] = tmp;
				break;
			}
			b[j] = b[x];
			j = x;
		}
	}
	free(a);
}

int scan_blocks_of(struct scan_blocks *b, const struct heap *heap)
{
	struct keys k;

	memset(b, 0, sizeof(*b));
	heap_entries(heap, &b->e);
	b->n = b->e.n;
	if (b->n > UINT32_MAX)
		return error("out of memory sorting %zu blocks", b->n);
	k.e = &b->e;
	k.arr = NULL;
	b->order = radix_order(&k, b->n);
	if (!b->order)
		return error("out of memory sorting %zu blocks", b->n);
	return 0;
}

long scan_blocks_find(const struct scan_blocks *b, uint64_t w, int glibc)
{
	size_t lo = 0, hi = b->n;
	uint64_t a, size;

	/* the last block at or below W */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (scan_blocks_addr(b, mid) <= w)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo--)
		return -1;
	a = scan_blocks_addr(b, lo);
	if (w == a)
		return (long)lo;
	size = scan_blocks_size(b, lo);
	if (w - a < size && !(glibc && scan_glibc_next_header(size, w - a)))
		return (long)lo;
	return -1;
}

void scan_blocks_free(struct scan_blocks *b)
{
	free(b->order);
	b->order = NULL;
}

const char *scan_class_key(enum scan_class c)
{
	switch (c) {
	case SCAN_DEFINITELY_LOST:
		return "definitely_lost";
	case SCAN_INDIRECTLY_LOST:
		return "indirectly_lost";
	case SCAN_POSSIBLY_LOST:
		return "possibly_lost";
	case SCAN_STILL_REACHABLE:
		return "still_reachable";
	}
	return "unknown";
}

const char *scan_class_words(int c)
{
	switch (c) {
	case SCAN_DEFINITELY_LOST:
		return "definitely lost";
	case SCAN_INDIRECTLY_LOST:
		return "indirectly lost";
	case SCAN_POSSIBLY_LOST:
		return "possibly lost";
	case SCAN_STILL_REACHABLE:
		return "still reachable";
	}
	return NULL;
}
