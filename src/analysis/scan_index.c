/*
 * scan_index.c - the scan's lookup index (scan_priv.h): which block a
 * candidate word points into, found without a binary search over every
 * block.  Regions of 4 GiB of the span, each with its buckets (about 8
 * blocks a bucket, or two buckets a block where blocks are big) and the
 * blocks' 4-byte keys (and then sizes); single-level buckets when there
 * are too many regions (LA57) or no memory for them.
 */
#include <stdint.h>
#include <stdlib.h>

#include "scan_priv.h"

void scan_index_free(struct scanner *s)
{
	free(s->reg);
	free(s->key);
	free(s->len);
	free(s->bucket);
	s->reg = NULL;
	s->key = NULL;
	s->len = NULL;
	s->bucket = NULL;
	s->shift = 0;
}

void scan_index_sizes(struct scanner *s)
{
	size_t k;

	if (s->len || !(s->len = malloc(s->n * sizeof(*s->len))))
		return;
	for (k = 0; k < s->n; k++) {
		uint64_t size = size_of(s, k);

		s->len[k] = size < LEN_BIG ? (uint32_t)size : LEN_BIG;
	}
}

/* The regions and their buckets, with the keys (see struct region):
 * about a bucket per 8 blocks; where the blocks average LEN_MIN_AVG
 * bytes or more, two buckets a block (a search of one step or two, not
 * three or four: perl's arenas) and the blocks' sizes.  0, or -1 (no
 * memory, or too many regions: the single-level buckets then). */
static int build_regions(struct scanner *s)
{
	size_t nr = (size_t)((s->span - 1) >> REGION_BITS) + 1, i, k, j, nbt = 0;
	uint64_t bytes = 0;
	struct region *r;
	int big;

	if (nr > MAX_REGIONS)
		return -1;
	s->reg = calloc(nr, sizeof(*s->reg));
	s->key = malloc(s->n * sizeof(*s->key));
	if (!s->reg || !s->key)
		return -1;
	for (k = 0; k < s->n; k++) {
		s->key[k] = (uint32_t)(addr_of(s, k) - s->lo);
		bytes += size_of(s, k);
	}
	/* ptleak's memory a block is 48 bytes at most with small ones
	 * (test memory_per_block_*): more only beside big blocks */
	big = bytes / s->n >= LEN_MIN_AVG;
	/* each region's blocks: its bucket count and size (2 buckets at
	 * least: 2^31 bytes at most each) */
	for (i = 0; i < s->n;) {
		uint64_t a = addr_of(s, i), ext;
		size_t first = i, c, nb = 2;

		k = (size_t)((a - s->lo) >> REGION_BITS);
		while (i < s->n && (addr_of(s, i) - s->lo) >> REGION_BITS == k)
			i++;
		c = i - first;
		while (big ? nb < 2 * c : nb * 8 < c)
			nb <<= 1;
		ext = addr_of(s, i - 1) - a + 1;
		r = &s->reg[k];
		r->base = a;
		r->first = (uint32_t)first;
		while (((ext - 1) >> r->shift) >= nb)
			r->shift++;
		r->nb = (uint32_t)(((ext - 1) >> r->shift) + 1);
		r->boff = (uint32_t)nbt;
		nbt += r->nb + 1;
		/* the bucket after the last: the region's last block */
	}
	/* empty regions: the first block after them */
	for (k = nr, j = s->n; k-- > 0;) {
		if (s->reg[k].nb)
			j = s->reg[k].first;
		else
			s->reg[k].first = (uint32_t)j;
	}
	s->bucket = malloc(nbt * sizeof(*s->bucket));
	if (!s->bucket)
		return -1;
	for (k = 0; k < nr; k++) {
		r = &s->reg[k];
		if (!r->nb)
			continue;
		for (i = 0, j = r->first; i < r->nb; i++) {
			uint64_t start = r->base + ((uint64_t)i << r->shift);

			while (j + 1 < s->n && addr_of(s, j + 1) <= start)
				j++;
			s->bucket[r->boff + i] = (uint32_t)j;
		}
		while (j + 1 < s->n && (addr_of(s, j + 1) - s->lo) >> REGION_BITS == k)
			j++;
		s->bucket[r->boff + r->nb] = (uint32_t)j;
	}
	if (big)
		scan_index_sizes(s);
	s->warm = (uint64_t)nbt * sizeof(*s->bucket) +
		  (uint64_t)s->n * sizeof(*s->key) * (big ? 2 : 1) > WARM_BYTES;
	return 0;
}

void scan_index_buckets(struct scanner *s)
{
	size_t nb = 1, k, j = 0;

	scan_index_free(s);
	while (nb * 2 < s->n)
		nb <<= 1;
	while (s->shift < 63 && ((s->span - 1) >> s->shift) >= nb)
		s->shift++;
	nb = (size_t)((s->span - 1) >> s->shift) + 1;
	s->bucket = malloc((nb + 1) * sizeof(*s->bucket));
	if (!s->bucket)
		return;
	for (k = 0; k < nb; k++) {
		uint64_t start = s->lo + ((uint64_t)k << s->shift);

		while (j + 1 < s->n && addr_of(s, j + 1) <= start)
			j++;
		s->bucket[k] = (uint32_t)j;
	}
	s->bucket[nb] = (uint32_t)(s->n - 1);
}

/* lo and span; the regions, buckets and keys, else (too many regions, no
 * memory) single-level buckets, one per one or two blocks, no keys.
 * The index is optional (speed only). */
void scan_index_build(struct scanner *s)
{
	uint64_t hi, alast = addr_of(s, s->n - 1), slast = size_of(s, s->n - 1);

	s->lo = addr_of(s, 0);
	hi = alast + (slast ? slast : 1);
	if (hi < alast)	/* wraps: up to the top of the space */
		hi = UINT64_MAX;
	s->span = hi - s->lo;
	if (s->n > UINT32_MAX || s->n < 64)
		return;
	if (build_regions(s))
		scan_index_buckets(s);
}
