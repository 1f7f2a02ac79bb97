/*
 * scan_priv.h - the scanner's state, shared by scan.c (the rules: marks,
 * phases, verdicts), scan_index.c (the lookup index: regions, buckets,
 * keys) and scan_lane.c (reading memory and looking its words up, on one
 * or two threads).
 */
#ifndef PTLEAK_SCAN_PRIV_H
#define PTLEAK_SCAN_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/scan.h"

/*
 * The work is done in batches: the main thread takes up to BATCH_BYTES
 * of ranges (root ranges, popped blocks) as units of at most UNIT_MAX
 * bytes (a bigger range is cut), groups them in jobs of about JOB_BYTES,
 * and the lanes (the main thread and, with scan_input.threads 2, a
 * worker) take the jobs: each reads its units' memory and looks their
 * words up, giving hits (the words that point at or into a block).  The
 * main thread then applies the hits, unit by unit in order: marks,
 * pushes (the rules never run on the worker).  Reads of a root range are
 * asked whether the memory is untouched (scan_input.skip) every
 * SCAN_CHUNK bytes, as before batches.
 */
#define SCAN_CHUNK	(1u << 20)
#define UNIT_MAX	(128u << 10)
#define JOB_BYTES	(128u << 10)
#define BATCH_BYTES	(1u << 20)
#define BATCH_UNITS	8192
/* the blocks read ahead go in batches of PRE_BATCH bytes (scan_pre.c) */
#define PRE_BATCH	(8u << 20)
#define BATCH_JOBS	((PRE_BATCH + UNIT_MAX) / JOB_BYTES + 2)
/* a lane's word buffer: flushed (looked up) when full and at a job's end */
#define LANE_WORDS	(UNIT_MAX / 8)
/* a lane's hits in one batch: at most its words */
#define LANE_HITS	((BATCH_BYTES + UNIT_MAX) / 8)

/*
 * With keys, the buckets are per region: 4 GiB of the span from lo (the
 * brk heap, each thread arena's heaps, the mmapped chunks are far apart,
 * and buckets over the whole span put a heap in one bucket).  A region
 * with blocks: its first block's address and position, its NB buckets
 * of 2^SHIFT bytes from there (bucket[BOFF + k]: the last of its blocks
 * at or below the bucket's start; bucket[BOFF + NB]: its last block).
 * An empty one: NB 0, FIRST the position of the first block after it.
 */
#define REGION_BITS	32
#define MAX_REGIONS	65536

struct region {
	uint64_t base;
	uint32_t first, boff, nb;
	uint8_t shift;
};

/* A piece of a range to read: the aligned words [start, end). */
struct scan_unit {
	uint64_t start, end;
	uint64_t rend;		/* the end of the range it is cut from */
	uint64_t born_before;	/* of a root range (scan_range) */
	uint32_t rid;		/* the range: consecutive units of one share it */
	uint8_t definite;	/* phase 1: prior definite */
	uint8_t root;		/* a root range: unreadable bytes counted */
	uint8_t lane;		/* out: the lane that read it */
	uint64_t got;		/* out: bytes read from start */
	uint32_t h0, h1;	/* out: its hits in its lane's list */
	uint32_t w0, w1;	/* its words in the lane's buffer (inside) */
	uint32_t blk;		/* the block it is of (PRE_NONE: a root range) */
	uint8_t pre;		/* out: its hits are the block's read ahead
				 * (h0, h1: in scan_pre.hits) */
};

/* A hit: the position of the block a word points at or into, with
 * HIT_START if at its first byte.  A unit's hits come once each, as far
 * as a filter of 2^RECENT_LOG2 recent ones tells (scan_lane.c). */
#define RECENT_LOG2	6
#define HIT_START	(1ull << 32)

struct scan_lane {
	void *ctx;		/* its read context */
	uint64_t *buf;		/* LANE_WORDS words */
	size_t populated;	/* bytes of buf faulted in */
	uint64_t *stage;	/* UNIT_MAX bytes: a span of units read */
	size_t staged;		/* bytes of stage faulted in */
	uint32_t *ord;		/* BATCH_UNITS: a job's units in reading order */
	uint64_t *pos;		/* LANE_WORDS: the words' answers (lookup) */
	uint64_t *hits;		/* LANE_HITS */
	size_t nhits;
	unsigned gen;		/* the batch its hits are of */
	uint64_t recent[1u << RECENT_LOG2];	/* lookup's filter */
};

/*
 * Blocks read ahead (scan_pre.c): before phase 1, the blocks of PRE_MIN
 * (scan_input.preread_min) to PRE_MAX bytes are read in address order,
 * through the lanes as any batch, and their hits kept, 4 bytes each
 * (the position, PRE_START at the block's first byte), up to
 * scan_input.preread bytes of them; a unit of such a block then takes
 * its hits from there instead of reading it (run_job).  In address
 * order a heap of arenas is read 128 KiB a system call, not a block a
 * window in the order pointers lead to it, and nothing is copied but
 * the hits (perl's 48 MB of arenas: 3.5 MB of hits; a copy of the blocks
 * cost 52 MB of fresh pages, 7-100 ms of CPU to zero on these VMs).
 * Every block is read once at least anyway (phase 2 reads the rest): the
 * reads are the same, in another order.
 */
#define PRE_MIN		1024
#define PRE_MAX		(32u << 10)
#define PRE_NONE	UINT32_MAX
#define PRE_START	(1u << 31)

struct scan_pre {
	uint32_t *pos;		/* the blocks read ahead: positions, ascending */
	uint32_t *at, *cnt;	/* block i's hits: hits[at[i], at[i] + cnt[i]) */
	uint32_t *got;		/* its bytes read from its first word */
	size_t n;		/* blocks read ahead (pos[0..n)) */
	uint32_t *hits;		/* reserved: cap bytes, populated up to ready */
	size_t nhits;		/* kept (atomic while the lanes keep them) */
	size_t cap, ready;
	int pass;		/* the blocks being read ahead (run_job keeps
				 * each job's hits) */
};

struct scan_workers;

struct scanner {
	const struct scan_blocks *b;
	size_t n;
	uint8_t *mark;		/* [id] */
	uint32_t *stack;	/* positions, cap of them */
	size_t top, cap;
	size_t spilled;		/* pending blocks not on the stack */
	size_t sweep;		/* where the next sweep starts */
	/* phase 2: the clique leader's indirect bytes so far; a former
	 * leader's (M_LED) in ind, by position (sorted: leaders come in
	 * address order; 0 bytes once taken) */
	uint64_t acc;
	struct scan_indirect *ind;
	size_t nind, aind;
	uint64_t lo, span;	/* candidate words: w - lo < span */
	/*
	 * Lookup accelerator: bucket[k] is the last block whose addr <= lo +
	 * (k << shift), so the block holding W lies in bucket[k] ..
	 * bucket[k + 1] for k = (W - lo) >> shift; binary search there.
	 */
	uint32_t *bucket;
	unsigned shift;
	/* with buckets of 2^31 bytes or less: key[k] = (uint32_t)(addr of
	 * block k - lo), so the search in a bucket reads 4 contiguous
	 * bytes a candidate, not the block (about 8 blocks a bucket; 1/2
	 * where blocks average LEN_MIN_AVG bytes or more) */
	uint32_t *key;
	/* with the keys, when the blocks average LEN_MIN_AVG bytes or more:
	 * len[k] = the size of block k, LEN_BIG if 2^32 - 1 or more
	 * (size_of then), so the lanes tell a hit from the keys and these,
	 * not from the blocks' entries */
	uint32_t *len;
	struct region *reg;
	/* the keyed lookup warms the caches ahead (the index is bigger
	 * than WARM_BYTES: out of the L2 cache; an index that fits it
	 * costs more warmed, ~10%: the warming's own loads) */
	int warm;
	int glibc;		/* see scan_input.glibc_chunks */
	scan_read_fn read;
	scan_skip_fn skip;
	void *ctx;
	struct scan_stats *st;
	/* the batch */
	struct scan_unit *unit;	/* BATCH_UNITS */
	size_t nunit;
	uint32_t job[BATCH_JOBS + 1];	/* job k: units [job[k], job[k + 1]) */
	size_t njob;
	unsigned gen;		/* batches so far */
	struct scan_lane lane[2];	/* [0] the main thread's, [1] the worker's */
	int threads;		/* scan_input.threads */
	struct scan_workers *w;	/* the worker, once started */
	struct scan_pre pre;
	uint64_t pre_bytes;	/* read ahead (the worker's start) */
};

static inline uint64_t addr_of(const struct scanner *s, size_t k)
{
	return scan_blocks_addr(s->b, k);
}

static inline uint64_t size_of(const struct scanner *s, size_t k)
{
	return scan_blocks_size(s->b, k);
}

static inline uint8_t *mark_of(const struct scanner *s, size_t k)
{
	return &s->mark[scan_blocks_id(s->b, k)];
}

static inline uint64_t born_of(const struct scanner *s, size_t k)
{
	const struct scan_blocks *b = s->b;

	return b->order ? heap_entry_time(&b->e, heap_entry(&b->e, b->order[k])) :
	       b->arr[k].born;
}

/*
 * The last block at or below W (in span, keys built): W's region (4 GiB
 * from lo), then among the blocks of its bucket there, by their keys.  A
 * word before a region's first block is in the last block before it, if
 * anywhere.  The first candidate (bucket[k]) may start below the bucket
 * and is never compared; the others start in (bucket start, bucket end],
 * and so does W: their offsets from the bucket's start fit 32 bits.
 *
 * With FROM (and TO): [*FROM, *TO) the words with the same answer, from
 * the block's start (its region's start plus its key) to the next
 * block's or to the region's end (0: the top of the space); *TO == *FROM
 * for a word before its region's first block (a block of another region).
 */
static inline size_t locate_in(const struct scanner *s, uint64_t w,
			       uint64_t *from, uint64_t *to)
{
	const struct region *r = &s->reg[(w - s->lo) >> REGION_BITS];
	uint64_t off, rbase = w - (uint32_t)(w - s->lo);
	size_t k, lo, hi, last;
	uint32_t base, wo;

	if (!r->nb || w < r->base) {
		if (from)
			*from = *to = 0;
		return (size_t)r->first - 1;
	}
	off = w - r->base;
	k = (size_t)(off >> r->shift);
	last = s->bucket[r->boff + r->nb];
	if (k >= r->nb) {
		lo = last;
	} else {
		lo = s->bucket[r->boff + k];
		hi = (size_t)s->bucket[r->boff + k + 1] + 1;
		base = (uint32_t)(r->base - s->lo + ((uint64_t)k << r->shift));
		wo = (uint32_t)(off - ((uint64_t)k << r->shift));

		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if ((uint32_t)(s->key[mid] - base) <= wo)
				lo = mid;
			else
				hi = mid;
		}
	}
	if (from) {
		*from = rbase + s->key[lo];
		*to = lo < last ? rbase + s->key[lo + 1] :
		      rbase + (1ull << REGION_BITS);
	}
	return lo;
}

static inline size_t locate(const struct scanner *s, uint64_t w)
{
	return locate_in(s, w, NULL, NULL);
}

#define WARM_BYTES	(512u << 10)
#define LEN_BIG		UINT32_MAX
#define LEN_MIN_AVG	256

/* Block LO (the last at or below W) if W points at or into it, else -1. */
static inline long holder(const struct scanner *s, uint64_t w, size_t lo)
{
	uint64_t a, size;

	a = addr_of(s, lo);
	if (w == a)
		return (long)lo;
	size = size_of(s, lo);
	if (w > a && w - a < size) {
		if (s->glibc && scan_glibc_next_header(size, w - a))
			return -1;
		return (long)lo;
	}
	return -1;
}

/* Index of the block W points at or into, or -1. */
static inline long find_block(const struct scanner *s, uint64_t w)
{
	size_t lo = 0, hi = s->n;

	if (w - s->lo >= s->span)
		return -1;
	if (s->key) {
		lo = locate(s, w);
		hi = lo + 1;
	} else if (s->bucket) {
		size_t k = (size_t)((w - s->lo) >> s->shift);

		lo = s->bucket[k];
		hi = (size_t)s->bucket[k + 1] + 1;
	}
	/* last block with addr <= w */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr_of(s, mid) <= w)
			lo = mid;
		else
			hi = mid;
	}
	return holder(s, w, lo);
}

/* scan_index.c: lo and span (the blocks' extent), and the regions,
 * buckets, keys and sizes, or single-level buckets, or none (few blocks,
 * no memory: binary searches).  Speed only. */
void scan_index_build(struct scanner *s);
/* The single-level buckets (index freed first). */
void scan_index_buckets(struct scanner *s);
/* With the keys: the sizes (len), whatever the blocks' average. */
void scan_index_sizes(struct scanner *s);
void scan_index_free(struct scanner *s);

/* The words the scan reads of [START, END): the aligned ones, [*A, *E);
 * 0 if none (lc_scan_memory's rounding). */
static inline int range_words(uint64_t start, uint64_t end, uint64_t *a,
			      uint64_t *e)
{
	if (start > UINT64_MAX - 7)
		return 0;
	*a = (start + 7) & ~7ull;
	*e = end & ~7ull;
	return *a < *e;
}

/* The end of block K: its address plus its size (UINT64_MAX if that
 * wraps). */
static inline uint64_t block_end(const struct scanner *s, size_t k)
{
	uint64_t start = addr_of(s, k), size = size_of(s, k);

	return size > UINT64_MAX - start ? UINT64_MAX : start + size;
}

/* Block K's words [*A, *E), as next_range takes them (scan.c), if it is
 * read ahead: MIN to PRE_MAX bytes, a word at least (scan_pre.c). */
static inline int pre_eligible(const struct scanner *s, size_t k,
			       uint64_t min, uint64_t *a, uint64_t *e)
{
	uint64_t size = size_of(s, k);

	return size >= min && size <= PRE_MAX &&
	       range_words(addr_of(s, k), block_end(s, k), a, e);
}

/* scan_pre.c (its pass through scan_lane.c's lanes, which take the
 * hits kept) */
/* The blocks of MIN (0: PRE_MIN) to PRE_MAX bytes read ahead, their hits
 * kept, up to CAP bytes of them (0: none).  Speed only: without memory,
 * fewer or none. */
void scan_pre_read(struct scanner *s, uint64_t cap, uint32_t min);
void scan_pre_free(struct scanner *s);

/* scan_lane.c */
/* The batch's units (s->unit[0..nunit)) in jobs of about JOB_BYTES. */
void scan_jobs(struct scanner *s);
/* The lanes' buffers (and the worker's context).  0, or -1 (no memory). */
int scan_lanes_init(struct scanner *s, const struct scan_input *in);
/* The batch's jobs read and looked up (units' got, lane, h0, h1). */
void scan_lanes_run(struct scanner *s);
/* The worker stopped and joined; the buffers freed. */
void scan_lanes_free(struct scanner *s);
/*
 * For the unit tests: words W[0..N-1] looked up as a lane does against
 * the blocks B (GLIBC: scan_input.glibc_chunks) with the index KIND: 3
 * the regions (where built) with the sizes, 2 without, 1 the
 * single-level buckets, 0 none.  OUT[k]:
 * the block's position, with HIT_START at its first byte, or -1.  0, or
 * -1 (no memory, no blocks).
 */
int scan_lookup_words(const struct scan_blocks *b, int glibc, int kind,
		      const uint64_t *w, size_t n, int64_t *out);

#endif
