/*
 * scan.c - classify live heap blocks like valgrind memcheck's leak check.
 *
 * This follows memcheck/mc_leakcheck.c (valgrind 3.x) rule for rule,
 * without its heuristics (--leak-check-heuristics) and without memcheck's
 * definedness bits (valgrind skips words whose V bits say "undefined";
 * we cannot know that, so every readable aligned word is a candidate).
 *
 * Per-block state (one byte, 'mark'): UNREACHED, POSSIBLE, REACHABLE,
 * INDIRECT, plus a PENDING bit (block is to be scanned; valgrind's
 * 'pending') and a STACKED bit (it is on the work stack).  The stack is
 * bounded (STACK_MIN + nblocks / 16 entries, 4 bytes each): a block made
 * pending when it is full is only marked, and when the stack runs dry
 * the marks are swept (from where the last sweep stopped, round the
 * blocks in address order) onto it again.  The classes are a fixpoint:
 * the order blocks are scanned in changes nothing.
 *
 * Candidate pointers: every 8-byte-aligned word of a root range or of a
 * scanned block ([roundup(start, 8), rounddown(end, 8)), as in
 * lc_scan_memory), and every root value (register).  A word W belongs to
 * block B if B.addr <= W < B.addr + B.size, or W == B.addr for a 0-byte
 * block (find_chunk_for treats size 0 as size 1).  W == B.addr is a start
 * pointer, anything else an interior pointer.
 *
 * Phase 1 (lc_push_without_clique_if_a_chunk_ptr + lc_process_markstack):
 *   "prior is definite" is true for roots and registers, and for a block
 *   being scanned iff its state is not POSSIBLE when it is popped.  For a
 *   word pointing to block B:
 *     - B REACHABLE: nothing;
 *     - start pointer and prior definite: B := REACHABLE, push B (again,
 *       if it was POSSIBLE and already scanned: rescan to upgrade what it
 *       points to);
 *     - otherwise (interior pointer, or any pointer from a POSSIBLE
 *       block), if B is UNREACHED: B := POSSIBLE, push B.
 *   So a block reached by a start pointer from a possibly lost block is
 *   itself possibly lost, not still reachable (is_prior_definite is False
 *   there); possibly lost blocks are scanned and propagate "possible".
 *   States only go up (UNREACHED < POSSIBLE < REACHABLE), and every
 *   upgrade rescans, so the result is the fixpoint, independent of order.
 *
 * Phase 2 (cliques, MC_(detect_memory_leaks) + lc_push_with_clique_...):
 *   for each block L still UNREACHED, in address order: push L and
 *   process the stack with clique leader L.  Any pointer (start or
 *   interior alike) from a popped block to a block B that is UNREACHED and
 *   is not L itself: push B, L.indirect += B.size + B.indirect, B :=
 *   INDIRECT (B.indirect is moved, so an earlier leader absorbed by a
 *   later one hands over its whole clique; its own members are already
 *   INDIRECT and are not counted again).  POSSIBLE, REACHABLE and INDIRECT
 *   blocks are never taken.  Leaders left UNREACHED are definitely lost
 *   with their 'indirect' sum; a cycle's leader is its lowest block.
 *
 * Memory is read per range (root range or block) in chunks of up to
 * SCAN_CHUNK bytes (the caller's read caches: roots.c); a short read or -1 makes the rest of that range
 * unreadable (counted in unreadable_bytes for roots; a block's unread
 * bytes just hold no pointers).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scan.h"
#include "base/util.h"

#define SCAN_CHUNK	(1u << 20)

enum {
	M_UNREACHED = 0,
	M_POSSIBLE = 1,
	M_REACHABLE = 2,
	M_INDIRECT = 3,
	M_STATE = 3,
	M_PENDING = 4,
	M_LED = 8,		/* phase 2: was a clique leader, its clique done */
	M_STACKED = 16,
};

#define STACK_MIN	4096

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
	uint64_t *buf;		/* SCAN_CHUNK bytes */
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
	 * bytes a candidate, not the block (about 8 blocks a bucket) */
	uint32_t *key;
	struct region *reg;
	uint32_t *pos;		/* with keys: a chunk's words' candidates */
	int glibc;		/* see scan_input.glibc_chunks */
	uint64_t born_before;	/* of the root range being scanned, 0: none */
	scan_read_fn read;
	scan_skip_fn skip;
	void *ctx;
	struct scan_stats *st;
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

static uint64_t born_of(const struct scanner *s, size_t k)
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
 */
static inline size_t locate(const struct scanner *s, uint64_t w)
{
	const struct region *r = &s->reg[(w - s->lo) >> REGION_BITS];
	uint64_t off;
	size_t k, lo, hi;
	uint32_t base, wo;

	if (!r->nb || w < r->base)
		return (size_t)r->first - 1;
	off = w - r->base;
	k = (size_t)(off >> r->shift);
	if (k >= r->nb)
		return s->bucket[r->boff + r->nb];
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
	return lo;
}

static inline long holder(const struct scanner *s, uint64_t w, size_t lo);

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

static inline void push(struct scanner *s, size_t i)
{
	uint8_t *m = mark_of(s, i);

	if (!(*m & M_PENDING)) {
		*m |= M_PENDING;
		if (s->top < s->cap) {
			*m |= M_STACKED;
			s->stack[s->top++] = (uint32_t)i;
		} else {
			s->spilled++;
		}
	}
}

static inline void set_state(struct scanner *s, size_t i, int state)
{
	uint8_t *m = mark_of(s, i);

	*m = (uint8_t)((*m & ~M_STATE) | state);
}

/* ---- former leaders' indirect bytes ---- */

/* Leader at position POS (leaders come in address order: the list stays
 * sorted) has BYTES.  0, or -1 (no memory). */
static int ind_put(struct scanner *s, size_t pos, uint64_t bytes)
{
	if (s->nind == s->aind) {
		size_t n = s->aind ? s->aind * 2 : 1024;
		struct scan_indirect *p = realloc(s->ind, n * sizeof(*p));

		if (!p)
			return -1;
		s->ind = p;
		s->aind = n;
	}
	s->ind[s->nind].id = pos;
	s->ind[s->nind++].bytes = bytes;
	return 0;
}

/* The bytes of the former leader at position POS, taken (0 from then
 * on). */
static uint64_t ind_take(struct scanner *s, size_t pos)
{
	size_t lo = 0, hi = s->nind;
	uint64_t v;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ind[mid].id < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->nind || s->ind[lo].id != pos)
		return 0;
	v = s->ind[lo].bytes;
	s->ind[lo].bytes = 0;
	return v;
}

/* Phase 1 (lc_push_without_clique_if_a_chunk_ptr) for word W, pointing
 * at or into block I (-1: none). */
static inline void reach_at(struct scanner *s, uint64_t w, long i,
			    int prior_definite)
{
	int state;

	if (i < 0 || (s->born_before && born_of(s, (size_t)i) >= s->born_before))
		return;
	state = *mark_of(s, (size_t)i) & M_STATE;
	if (state == M_REACHABLE)
		return;
	if (w == addr_of(s, (size_t)i) && prior_definite) {
		set_state(s, (size_t)i, M_REACHABLE);
		push(s, (size_t)i);
	} else if (state == M_UNREACHED) {
		set_state(s, (size_t)i, M_POSSIBLE);
		push(s, (size_t)i);
	}
}

/* Phase 2 (lc_push_with_clique_if_a_chunk_ptr) for a word pointing at
 * or into block I (-1: none). */
static inline void gather_at(struct scanner *s, long i, size_t leader)
{
	uint8_t m;

	if (i < 0 || (size_t)i == leader)
		return;
	m = *mark_of(s, (size_t)i);
	if ((m & M_STATE) != M_UNREACHED)
		return;
	/* a former leader's clique is whole: what it points to is already
	 * INDIRECT (taken with it, below) or never takeable, so it is not
	 * read again (valgrind reads it again, to the same result) */
	s->acc += size_of(s, (size_t)i);
	if (!(m & M_LED))
		push(s, (size_t)i);
	else
		s->acc += ind_take(s, (size_t)i);
	set_state(s, (size_t)i, M_INDIRECT);
}

/*
 * The words of a chunk are looked up in two passes, each warming the
 * caches ahead of it (a scan of a pointer-dense heap is bound by cache
 * misses, which this overlaps; speed only): the first finds each word's
 * candidate block by the buckets and keys (word k + 2 * PF_DIST: its
 * bucket; k + PF_DIST: its keys), the second takes it (k + 2 * PF_DIST:
 * its place in the order; k + PF_DIST: its block and mark).  Without keys
 * (few blocks far apart) one pass warms the first candidate only.
 */
#define PF_DIST 16

static inline void warm_block(const struct scanner *s, size_t j)
{
	if (s->b->order) {
		__builtin_prefetch(heap_entry(&s->b->e, s->b->order[j]));
		__builtin_prefetch(&s->mark[s->b->order[j]]);
	} else {
		__builtin_prefetch(&s->b->arr[j]);
		__builtin_prefetch(&s->mark[j]);
	}
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

/* Phase 1 (LEADER (size_t)-1) or 2 for word W in block I (-1: none). */
static inline void take_word(struct scanner *s, uint64_t w, long i,
			     int prior_definite, size_t leader)
{
	if (leader == (size_t)-1)
		reach_at(s, w, i, prior_definite);
	else
		gather_at(s, i, leader);
}

/* The M in-span words W, with keys: the two passes (POS: SCAN_CHUNK / 8). */
static void take_keyed(struct scanner *s, const uint64_t *w, size_t m,
		       int prior_definite, size_t leader)
{
	uint32_t *pos = s->pos;
	size_t k;

	for (k = 0; k < m; k++) {
		if (k + 2 * PF_DIST < m)
			__builtin_prefetch(&s->bucket[region_bucket(s, w[k + 2 * PF_DIST])]);
		if (k + PF_DIST < m)
			__builtin_prefetch(&s->key[s->bucket[region_bucket(s, w[k + PF_DIST])]]);
		pos[k] = (uint32_t)locate(s, w[k]);
	}
	for (k = 0; k < m; k++) {
		if (s->b->order && k + 2 * PF_DIST < m)
			__builtin_prefetch(&s->b->order[pos[k + 2 * PF_DIST]]);
		if (k + PF_DIST < m)
			warm_block(s, pos[k + PF_DIST]);
		take_word(s, w[k], holder(s, w[k], pos[k]), prior_definite, leader);
	}
}

/*
 * Look at the NW words at W (overwritten): LEADER == (size_t)-1: phase 1
 * with PRIOR_DEFINITE; else phase 2 for that clique leader.
 */
static void scan_words(struct scanner *s, uint64_t *w, size_t nw,
		       int prior_definite, size_t leader)
{
	size_t k, m;

	/* keep only the words inside the heap's span (in place) */
	for (k = m = 0; k < nw; k++)
		if (w[k] - s->lo < s->span)
			w[m++] = w[k];
	if (s->key) {
		take_keyed(s, w, m, prior_definite, leader);
		return;
	}
	for (k = 0; k < m; k++) {
		if (s->bucket && k + 2 * PF_DIST < m)
			__builtin_prefetch(&s->bucket[bucket_of(s, w[k + 2 * PF_DIST])]);
		if (s->bucket && k + PF_DIST < m)
			warm_block(s, s->bucket[bucket_of(s, w[k + PF_DIST])]);
		take_word(s, w[k], find_block(s, w[k]), prior_definite, leader);
	}
}

/*
 * Scan the aligned words of [start, end) (see scan_words).  Returns the
 * number of bytes of the aligned range that could not be read.
 */
static uint64_t scan_range(struct scanner *s, uint64_t start, uint64_t end,
			   int prior_definite, size_t leader)
{
	uint64_t a = (start + 7) & ~(uint64_t)7;
	uint64_t e = end & ~(uint64_t)7;

	if (start > UINT64_MAX - 7 || a >= e)
		return 0;
	while (a < e) {
		size_t len = e - a > SCAN_CHUNK ? SCAN_CHUNK : (size_t)(e - a);
		uint64_t zeros = s->skip && len == SCAN_CHUNK ?
				 s->skip(s->ctx, a, e - a) & ~7ull : 0;
		long got;

		if (zeros) {
			a += zeros > e - a ? e - a : zeros;
			continue;
		}
		got = s->read(s->ctx, a, s->buf, len);

		if (got < 0)
			got = 0;
		if ((size_t)got > len)
			got = (long)len;
		s->st->bytes_scanned += (uint64_t)got;
		scan_words(s, s->buf, (size_t)got / 8, prior_definite, leader);
		if ((size_t)got < len)
			return e - a - (uint64_t)got;
		a += len;
	}
	return 0;
}

/* The regions and their buckets, with the keys (see struct region):
 * about a bucket per 8 blocks.  0, or -1 (no memory, or too many
 * regions: the single-level buckets then). */
static int build_regions(struct scanner *s)
{
	size_t nr = (size_t)((s->span - 1) >> REGION_BITS) + 1, i, k, j, nbt = 0;
	struct region *r;

	if (nr > MAX_REGIONS)
		return -1;
	s->reg = calloc(nr, sizeof(*s->reg));
	s->key = malloc(s->n * sizeof(*s->key));
	s->pos = malloc(SCAN_CHUNK / 8 * sizeof(*s->pos));
	if (!s->reg || !s->key || !s->pos)
		return -1;
	/* each region's blocks: its bucket count and size (2 buckets at
	 * least: 2^31 bytes at most each) */
	for (i = 0; i < s->n;) {
		uint64_t a = addr_of(s, i), ext;
		size_t first = i, c, nb = 2;

		k = (size_t)((a - s->lo) >> REGION_BITS);
		while (i < s->n && (addr_of(s, i) - s->lo) >> REGION_BITS == k)
			i++;
		c = i - first;
		while (nb * 8 < c)
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
	for (k = 0; k < s->n; k++)
		s->key[k] = (uint32_t)(addr_of(s, k) - s->lo);
	return 0;
}

/* Build the regions, buckets and keys; else (too many regions, no
 * memory) single-level buckets, one per one or two blocks, no keys.
 * Optional (speed only). */
static void build_buckets(struct scanner *s)
{
	size_t nb = 1, k, j = 0;

	if (s->n > UINT32_MAX || s->n < 64)
		return;
	if (!build_regions(s))
		return;
	free(s->reg);
	free(s->key);
	free(s->pos);
	free(s->bucket);
	s->reg = NULL;
	s->key = NULL;
	s->pos = NULL;
	s->bucket = NULL;
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

/* The stack refilled with spilled blocks (see the top), as many as fit. */
static void refill(struct scanner *s)
{
	while (s->spilled && s->top < s->cap) {
		uint8_t *m = mark_of(s, s->sweep);

		if ((*m & (M_PENDING | M_STACKED)) == M_PENDING) {
			*m |= M_STACKED;
			s->stack[s->top++] = (uint32_t)s->sweep;
			s->spilled--;
		}
		if (++s->sweep == s->n)
			s->sweep = 0;
	}
}

static void process_stack(struct scanner *s, size_t leader)
{
	for (;;) {
		size_t i;
		uint8_t *m;
		uint64_t a, size;
		int definite;

		if (!s->top && s->spilled)
			refill(s);
		if (!s->top)
			break;
		i = s->stack[--s->top];
		m = mark_of(s, i);
		a = addr_of(s, i);
		size = size_of(s, i);
		*m &= (uint8_t)~(M_PENDING | M_STACKED);
		definite = (*m & M_STATE) != M_POSSIBLE;
		if (size)
			scan_range(s, a, size > UINT64_MAX - a ? UINT64_MAX
				   : a + size, definite, leader);
	}
}

static void scanner_free(struct scanner *s)
{
	free(s->stack);
	free(s->ind);
	free(s->key);
	free(s->reg);
	free(s->pos);
	free(s->buf);
	free(s->bucket);
}

void scan_result_free(struct scan_result *r)
{
	free(r->cls);
	free(r->ind);
	memset(r, 0, sizeof(*r));
}

static int cmp_ind(const void *x, const void *y)
{
	const struct scan_indirect *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

/* The marks (by id) made classes in place, the former leaders' bytes a
 * sorted list: OUT. */
static void verdicts(struct scanner *s, struct scan_result *out)
{
	size_t i, n = 0;

	for (i = 0; i < s->n; i++) {
		static const uint8_t cls[4] = {
			[M_UNREACHED] = SCAN_DEFINITELY_LOST,
			[M_POSSIBLE] = SCAN_POSSIBLY_LOST,
			[M_REACHABLE] = SCAN_STILL_REACHABLE,
			[M_INDIRECT] = SCAN_INDIRECTLY_LOST,
		};

		s->mark[i] = cls[s->mark[i] & M_STATE];
	}
	/* the leaders left with bytes (a taken one holds 0), by id */
	for (i = 0; i < s->nind; i++)
		if (s->ind[i].bytes) {
			s->ind[n].id = scan_blocks_id(s->b, s->ind[i].id);
			s->ind[n].bytes = s->ind[i].bytes;
			n++;
		}
	if (n > 1 && s->b->order)
		qsort(s->ind, n, sizeof(*s->ind), cmp_ind);
	out->cls = s->mark;
	out->n = s->n;
	out->ind = s->ind;
	out->nind = n;
	s->mark = NULL;
	s->ind = NULL;
}

static int classify(struct scanner *s, const struct scan_input *in,
		    struct scan_stats *st, struct scan_result *out)
{
	uint64_t hi, a0, alast, slast;
	size_t i;

	s->mark = calloc(s->n, 1);
	s->cap = s->n / 16 + STACK_MIN;
	if (s->cap > s->n)
		s->cap = s->n;
	s->stack = malloc(s->cap * sizeof(*s->stack));
	s->buf = malloc(SCAN_CHUNK);
	if (!s->mark || !s->stack || !s->buf || s->n > UINT32_MAX) {
		free(s->mark);
		scanner_free(s);
		return error("out of memory scanning %zu blocks", s->n);
	}

	a0 = addr_of(s, 0);
	alast = addr_of(s, s->n - 1);
	slast = size_of(s, s->n - 1);
	s->lo = a0;
	hi = alast + (slast ? slast : 1);
	if (hi < alast)	/* wraps: up to the top of the space */
		hi = UINT64_MAX;
	s->span = hi - s->lo;
	build_buckets(s);

	/* Phase 1: roots, registers, then everything they reach. */
	for (i = 0; i < in->nroots; i++) {
		s->born_before = in->roots[i].born_before;
		st->unreadable_bytes += scan_range(s, in->roots[i].start,
						   in->roots[i].end, 1,
						   (size_t)-1);
	}
	s->born_before = 0;
	for (i = 0; i < in->nvalues; i++)
		reach_at(s, in->root_values[i], find_block(s, in->root_values[i]), 1);
	process_stack(s, (size_t)-1);

	/* Phase 2: cliques of the unreached, leaders in address order. */
	for (i = 0; i < s->n; i++) {
		uint8_t *m = mark_of(s, i);

		if ((*m & M_STATE) != M_UNREACHED)
			continue;
		*m |= M_LED;
		s->acc = 0;
		push(s, i);
		process_stack(s, i);
		if (s->acc && ind_put(s, i, s->acc)) {
			free(s->mark);
			scanner_free(s);
			return error("out of memory scanning %zu blocks", s->n);
		}
	}
	verdicts(s, out);
	scanner_free(s);
	return 0;
}

int scan_classify(struct scan_input *in, struct scan_stats *st)
{
	struct scan_stats dummy;
	struct scan_blocks arr;
	struct scan_result res;
	struct scanner s;
	size_t i, j;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	memset(&s, 0, sizeof(s));
	memset(&res, 0, sizeof(res));
	if (!in->set) {
		memset(&arr, 0, sizeof(arr));
		arr.arr = in->blocks;
		arr.n = in->nblocks;
	}
	s.b = in->set ? in->set : &arr;
	s.n = s.b->n;
	s.read = in->read;
	s.skip = in->skip;
	s.glibc = in->glibc_chunks;
	s.ctx = in->ctx;
	s.st = st;
	if (s.n && classify(&s, in, st, &res))
		return -1;
	if (in->set) {
		*in->result = res;
		return 0;
	}
	/* the array: its verdicts in place */
	for (i = j = 0; i < s.n; i++) {
		in->blocks[i].cls = (enum scan_class)res.cls[i];
		in->blocks[i].indirect = 0;
		if (j < res.nind && res.ind[j].id == i)
			in->blocks[i].indirect = res.ind[j++].bytes;
	}
	scan_result_free(&res);
	return 0;
}
