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
static uint32_t *radix_order(const struct keys *k, size_t n)
{
	enum { BITS = 16, RADIX = 1 << BITS, MAXP = 64 / BITS };
	uint32_t *a, *t = NULL, *swap, (*count)[RADIX] = NULL;
	uint64_t k0, diff = 0;
	unsigned p, np = 0;
	size_t i;

	a = malloc((n ? n : 1) * sizeof(*a));
	if (!a)
		return NULL;
	if (n)
		k0 = key_of(k, 0);
	for (i = 0; i < n; i++)
		diff |= key_of(k, (uint32_t)i) ^ k0;
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
