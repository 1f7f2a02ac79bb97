/*
 * timeline.c - the samples of a run, bounded (timeline.h): a fixed array
 * of TL_MAX samples, thinned by half whenever it is full.
 */
#include <stdlib.h>
#include <string.h>

#include "output/timeline.h"
#include "base/util.h"

struct timeline {
	struct tl_sample *s;	/* TL_MAX of them */
	size_t n;
	unsigned stride;	/* keep one offered sample in STRIDE */
	uint64_t offered;	/* since the stride last changed */
	struct tl_peak peak;
};

struct timeline *timeline_new(void)
{
	struct timeline *tl = xcalloc(1, sizeof(*tl));

	tl->s = xcalloc(TL_MAX, sizeof(*tl->s));
	tl->stride = 1;
	return tl;
}

void timeline_delete(struct timeline *tl)
{
	if (!tl)
		return;
	free(tl->s);
	free(tl);
}

void timeline_reset(struct timeline *tl)
{
	tl->n = 0;
	tl->stride = 1;
	tl->offered = 0;
	memset(&tl->peak, 0, sizeof(tl->peak));
}

/* Full: keep samples 0, 2, 4, ... and half as many from now on. */
static void thin(struct timeline *tl)
{
	size_t i;

	for (i = 0; 2 * i < tl->n; i++)
		tl->s[i] = tl->s[2 * i];
	tl->n = i;
	tl->stride *= 2;
	/* the sample being added is the first of the new stride */
	tl->offered = 1;
}

void timeline_add(struct timeline *tl, const struct tl_sample *s, int last)
{
	if (!last && tl->offered++ % tl->stride)
		return;
	if (tl->n == TL_MAX)
		thin(tl);
	tl->s[tl->n++] = *s;
}

size_t timeline_count(const struct timeline *tl)
{
	return tl->n;
}

const struct tl_sample *timeline_get(const struct timeline *tl, size_t i)
{
	return i < tl->n ? &tl->s[i] : NULL;
}

unsigned timeline_stride(const struct timeline *tl)
{
	return tl->stride;
}

int timeline_above_peak(const struct timeline *tl, uint64_t heap_bytes)
{
	return heap_bytes > tl->peak.heap_bytes;
}

void timeline_set_peak(struct timeline *tl, uint64_t ms, uint64_t heap_bytes,
		       const uint32_t *stack, const uint64_t *bytes, unsigned n)
{
	if (n > TL_PEAK_TOP)
		n = TL_PEAK_TOP;
	tl->peak.ms = ms;
	tl->peak.heap_bytes = heap_bytes;
	tl->peak.n = n;
	memcpy(tl->peak.stack, stack, n * sizeof(*stack));
	memcpy(tl->peak.bytes, bytes, n * sizeof(*bytes));
}

const struct tl_peak *timeline_peak(const struct timeline *tl)
{
	return &tl->peak;
}
