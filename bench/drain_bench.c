/*
 * drain_bench.c - the recorder's consumer alone (rec_drain.c): ns and,
 * under callgrind, instructions per record for bench/alloc_loop's
 * records, malloc+free pairs of four sizes from 4 threads, each in its
 * own lane, their times interleaved as 4 threads on 2 CPUs make them
 * (two at a time, by slices).
 *
 *   drain_bench [ROUNDS [separate]]   default 200; each round 4 x 4,096 pairs
 *
 * Each pair is one record, an allocation amended by its free, as the
 * hooks make most of them (rechook.h, REC_OPEN_HDR; the first round's
 * first, whose stacks are new, aside), or with "separate" two records,
 * as they did before (and still do where the record was taken first).
 *
 * The records are written here, by this thread: they come from its
 * cache, not from another CPU's as in a target (bench/side_by_side's
 * attached loop measures that); this is the consumer's own work.
 * Exits 1 if a round does not end with the exact counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "recorder/ring.h"
#include "tables/heap.h"
#include "tables/stacks.h"
#include "../src/recorder/rec_priv.h"

#define LANES	4
#define PAIRS	4096

static struct rec_fn fns[2];
static int separate;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct recorder *setup(void)
{
	struct recorder *R = rec_new(getpid(), 16);
	unsigned l;

	R->area = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (R->area == MAP_FAILED)
		return NULL;
	R->conf = (struct rec_conf *)(R->area + AREA_CONF);
	fns[0] = (struct rec_fn){ .name = "malloc", .addr = 0x401000,
		.fn = REC_FN_TAGGED(REC_FN_MALLOC, 1, AF_MALLOC) };
	fns[1] = (struct rec_fn){ .name = "free", .addr = 0x401200,
		.fn = REC_FN_TAGGED(REC_FN_FREE, 1, AF_FREE) };
	R->fns = fns;
	R->nfns = 2;
	R->main_lo = 0x400000;
	R->main_hi = 0x400800;
	for (l = 0; l < LANES; l++) {
		ring_init(rec_lane(R, l), RING_LOG2);
		R->rd[l] = ring_reader_new(rec_lane(R, l), ring_mem_size(RING_LOG2));
	}
	R->nlanes = LANES;
	return R;
}

/* Lane L's pair I of round N at time T */
static int pair(struct recorder *R, unsigned n, unsigned l, unsigned i,
		uint64_t t)
{
	static const uint64_t sizes[4] = { 24, 200, 1500, 5000 };
	uint64_t w[6 + 4], f[3], tid = 100 + l;
	uint64_t addr = 0x10000000 + l * 0x100000 + (i & 3) * 0x2000;
	unsigned k, npcs = n == 0 && i < 4 ? 4 : 0;

	w[0] = fns[0].fn | tid << 32;
	w[1] = t;
	w[2] = addr, w[3] = sizes[i & 3], w[4] = 0;
	w[5] = 0x5000 + (i & 3) * 16 + l;
	for (k = 0; k < npcs; k++)
		w[6 + k] = 0x400100 + 16 * k + (i & 3);
	if (!npcs && !separate) {
		struct ring *r = rec_lane(R, l);
		struct ring_res res;

		if (ring_reserve(r, REC_ALLOC, 0, 7, &res))
			return -1;
		for (k = 0; k < 6; k++)
			ring_put(r, &res, k, w[k]);
		ring_commit_open(r, &res);
		return ring_amend(r, res.pos, REC_OPEN_HDR, t + 20);
	}
	if (ring_produce(rec_lane(R, l), REC_ALLOC, npcs, w, 6 + npcs))
		return -1;
	f[0] = fns[1].fn | tid << 32;
	f[1] = t + 20;
	f[2] = addr;
	return ring_produce(rec_lane(R, l), REC_FREE, 0, f, 3);
}

/* Round N's records: lane l's thread 100 + l allocates and frees blocks
 * of 24, 200, 1500, 5000 bytes at its own addresses, 4 stacks; two
 * lanes at a time (2 CPUs), their pairs interleaved, for SLICE pairs,
 * then the other two */
#define SLICE 256
static int fill(struct recorder *R, unsigned n, uint64_t *t)
{
	unsigned i, j, l;

	for (i = 0; i < PAIRS; i += SLICE)
		for (l = 0; l < LANES; l += 2)
			for (j = i; j < i + SLICE; j++) {
				if (pair(R, n, l, j, *t) ||
				    pair(R, n, l + 1, j, *t + 5))
					return -1;
				*t += 50;
			}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 200, n;
	struct recorder *R = setup();
	struct heap *h = heap_new();
	struct stacks *st = stacks_new();
	const struct heap_stats *s;
	double t0, busy = 0;
	uint64_t t = 1000000, lost, recs = 0;
	long got, want;

	if (!R)
		return 1;
	separate = argc > 2 && !strcmp(argv[2], "separate");
	for (n = 0; n < rounds; n++) {
		if (fill(R, n, &t))
			return 1;
		t0 = now();
		got = rec_drain(R, h, NULL, st, &lost);
		busy += now() - t0;
		want = separate ? 2 * LANES * PAIRS :
		       LANES * PAIRS + (n ? 0 : LANES * 4);
		if (got != want)
			return fprintf(stderr, "round %u: %ld records\n", n, got), 1;
		recs += (uint64_t)got;
	}
	s = heap_stats(h);
	if (s->allocs != rounds * LANES * PAIRS || s->frees != s->allocs ||
	    s->in_use_blocks || s->unknown_frees)
		return fprintf(stderr, "counts: %lu allocs %lu frees\n",
			       (unsigned long)s->allocs, (unsigned long)s->frees), 1;
	printf("drain: %.1f ns a pair, %.1f a record (%lu records, %u lanes, %s)\n",
	       busy * 1e9 / (double)s->allocs, busy * 1e9 / (double)recs,
	       (unsigned long)recs, LANES, separate ? "separate" : "amended");
	return 0;
}
