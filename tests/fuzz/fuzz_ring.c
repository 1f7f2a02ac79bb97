/*
 * fuzz_ring - the recorder's consumer (ring.c, rec_drain.c) on a ring the
 * target wrote: rec_drain(), rec_skip_holes(), rec_drain() again.
 *
 * Input: byte 0 with bit 7 set writes bytes 1-8 over the shared header's
 * word (byte 0 & 31) first; the rest (at most 256 KiB) is the ring's data
 * from position 0, head just past it.  Byte 0 with bits 6 and 7 set:
 * the rest is cut in two, lane 0's data and lane 1's (two lanes, merged
 * by their records' times: drained, holes skipped, drained, then a quiet
 * drain).  The patched functions are
 * malloc, calloc, realloc, free, posix_memalign, reallocarray, and the
 * descriptor functions open (an FD_RET), pipe (PAIR0) and close, as
 * ids FN_BASE + kind (the fuzzer finds them by their comparisons).
 * Returns the records taken, -1 if the ring was found corrupt (times 1,000
 * the records skipped as bad, added).
 */
#include <sys/mman.h>

#include "fuzz.h"
#include "breakpoints/fdprobe.h"
#include "recorder/ring.h"
#include "tables/heap.h"
#include "tables/stacks.h"
#include "../../src/recorder/rec_priv.h"

#define MAX_DATA (256u << 10)

static struct recorder *R;
static struct rec_fn fns[9];

static void setup(void)
{
	static const unsigned kinds[9][2] = {
		{ REC_FN_MALLOC, AF_MALLOC }, { REC_FN_CALLOC, AF_CALLOC },
		{ REC_FN_REALLOC, AF_REALLOC }, { REC_FN_FREE, AF_FREE },
		{ REC_FN_POSIX_MEMALIGN, AF_POSIX_MEMALIGN },
		{ REC_FN_REALLOCARRAY, AF_REALLOCARRAY },
		{ REC_FN_FD_RET, 0 }, { REC_FN_FD_PAIR0, 1 }, { REC_FN_FD_CLOSE, 2 },
	};
	unsigned i;

	R = rec_new(getpid(), 16);
	R->area = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (R->area == MAP_FAILED)
		abort();
	R->conf = (struct rec_conf *)(R->area + AREA_CONF);
	for (i = 0; i < 9; i++) {
		fns[i].name = "fn";
		fns[i].addr = 0x401000 + 0x100 * i;
		fns[i].fn = REC_FN_TAGGED(kinds[i][0], 1, kinds[i][1]);
	}
	R->fns = fns;
	R->nfns = 9;
	R->main_lo = 0x400000;
	R->main_hi = 0x400800;
}

/* Lane L: an empty ring, its data DATA (LEN bytes), head past it; its
 * reader. */
static struct ring *lane_fill(unsigned l, const uint8_t *data, size_t len,
			      size_t *used)
{
	struct ring *r = rec_lane(R, l);

	memset(r, 0, RING_DATA_OFF + *used);
	ring_init(r, RING_LOG2);
	R->rd[l] = ring_reader_new(r, ring_mem_size(RING_LOG2));
	*used = len < MAX_DATA ? len : MAX_DATA;
	memcpy((char *)r + RING_DATA_OFF, data, *used);
	r->head += (*used + 7) & ~7ull;
	return r;
}

FUZZ(ring)
{
	static size_t used[2];
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	struct fdprobe *fp = fdprobe_new();
	uint64_t lost, v = 0;
	size_t half = 0;
	int two = size >= 9 && (data[0] & 0xc0) == 0xc0, word = -1;
	long n, got = 0;

	if (!R)
		setup();
	R->broken = 0;
	R->bad = 0;
	R->why = NULL;
	memset(R->lane_lost, 0, sizeof(R->lane_lost));
	memset(R->lane_head, 0, sizeof(R->lane_head));
	if (size >= 9 && data[0] & 0x80) {
		memcpy(&v, data + 1, 8);
		word = data[0] & 31;
		data += 9, size -= 9;
	}
	if (two)
		half = size / 2 & ~7ul;
	lane_fill(0, data + half, size - half, &used[0]);
	if (word >= 0)
		((uint64_t *)rec_lane(R, 0))[word] = v;
	R->nlanes = 1;
	if (two) {
		lane_fill(1, data, half, &used[1]);
		R->nlanes = 2;
	}
	n = rec_drain(R, h, fp, st, &lost);
	got = n < 0 ? -1 : n;
	if (n >= 0 && rec_skip_holes(R) > 0 &&
	    (n = rec_drain(R, h, fp, st, &lost)) >= 0)
		got += n;
	if (n >= 0 && two && (n = rec_drain_quiet(R, h, fp, st, &lost)) >= 0)
		got += n;
	if (n < 0)
		got = -1;
	got += 1000 * (long)rec_bad(R);
	ring_reader_delete(R->rd[0]);
	R->rd[0] = NULL;
	if (R->rd[1])
		ring_reader_delete(R->rd[1]);
	R->rd[1] = NULL;
	R->nlanes = 1;
	free(R->queues);
	R->queues = NULL;
	/* nothing carried over to the next input */
	free(R->reallocs);
	R->reallocs = NULL;
	R->nreallocs = R->areallocs = 0;
	free(R->walked_of.e);
	free(R->stack_of.e);
	memset(&R->walked_of, 0, sizeof(R->walked_of));
	memset(&R->stack_of, 0, sizeof(R->stack_of));
	memset(R->stack_memo, 0, sizeof(R->stack_memo));
	stacks_delete(R->walked);
	R->walked = stacks_new();
	free(R->marks);
	R->marks = NULL;
	R->nmarks = R->amarks = R->firstmark = 0;
	fdprobe_delete(fp);
	stacks_delete(st);
	heap_delete(h);
	return got;
}
