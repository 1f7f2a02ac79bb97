/*
 * scan.c - classify live heap blocks like valgrind memcheck's leak check.
 *
 * This follows memcheck/mc_leakcheck.c (valgrind 3.x) rule for rule,
 * without its heuristics (--leak-check-heuristics) and without memcheck's
 * definedness bits (valgrind skips words whose V bits say "undefined";
 * we cannot know that, so every readable aligned word is a candidate).
 *
 * Per-block state (one byte, 'mark'): UNREACHED, POSSIBLE, REACHABLE,
 * INDIRECT, plus a PENDING bit (block is on the work stack; valgrind's
 * 'pending').  A block is pushed at most once while pending, so the stack
 * never holds more than nblocks entries and never grows.
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
};

struct scanner {
	struct scan_block *b;
	size_t n;
	uint8_t *mark;
	size_t *stack;
	size_t top;
	uint64_t *buf;		/* SCAN_CHUNK bytes */
	uint64_t lo, span;	/* candidate words: w - lo < span */
	/*
	 * Lookup accelerator: bucket[k] is the last block whose addr <= lo +
	 * (k << shift), so the block holding W lies in bucket[k] ..
	 * bucket[k + 1] for k = (W - lo) >> shift; binary search there.
	 */
	uint32_t *bucket;
	unsigned shift;
	int glibc;		/* see scan_input.glibc_chunks */
	uint64_t born_before;	/* of the root range being scanned, 0: none */
	scan_read_fn read;
	scan_skip_fn skip;
	void *ctx;
	struct scan_stats *st;
};

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

/* Index of the block W points at or into, or -1. */
static inline long find_block(const struct scanner *s, uint64_t w)
{
	size_t lo = 0, hi = s->n;
	const struct scan_block *b;

	if (w - s->lo >= s->span)
		return -1;
	if (s->bucket) {
		size_t k = (size_t)((w - s->lo) >> s->shift);

		lo = s->bucket[k];
		hi = (size_t)s->bucket[k + 1] + 1;
	}
	/* last block with addr <= w */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->b[mid].addr <= w)
			lo = mid;
		else
			hi = mid;
	}
	b = &s->b[lo];
	if (w == b->addr)
		return (long)lo;
	if (w > b->addr && w - b->addr < b->size) {
		/* glibc: chunk = max(32, (size + 8 + 15) & ~15) bytes from
		 * addr - 16; the next chunk's header is at addr - 16 + chunk */
		if (s->glibc && w - b->addr ==
		    (b->size + 23 < 32 ? 32 : (b->size + 23) & ~15ull) - 16)
			return -1;
		return (long)lo;
	}
	return -1;
}

static inline void push(struct scanner *s, size_t i)
{
	if (!(s->mark[i] & M_PENDING)) {
		s->mark[i] |= M_PENDING;
		s->stack[s->top++] = i;
	}
}

static inline void set_state(struct scanner *s, size_t i, int state)
{
	s->mark[i] = (uint8_t)((s->mark[i] & ~M_STATE) | state);
}

/* Phase 1: lc_push_without_clique_if_a_chunk_ptr. */
static inline void reach(struct scanner *s, uint64_t w, int prior_definite)
{
	long i = find_block(s, w);
	int state;

	if (i < 0 || (s->born_before && s->b[i].born >= s->born_before))
		return;
	state = s->mark[i] & M_STATE;
	if (state == M_REACHABLE)
		return;
	if (w == s->b[i].addr && prior_definite) {
		set_state(s, (size_t)i, M_REACHABLE);
		push(s, (size_t)i);
	} else if (state == M_UNREACHED) {
		set_state(s, (size_t)i, M_POSSIBLE);
		push(s, (size_t)i);
	}
}

/* Phase 2: lc_push_with_clique_if_a_chunk_ptr. */
static inline void gather(struct scanner *s, uint64_t w, size_t leader)
{
	long i = find_block(s, w);

	if (i < 0 || (size_t)i == leader ||
	    (s->mark[i] & M_STATE) != M_UNREACHED)
		return;
	/* a former leader's clique is whole: what it points to is already
	 * INDIRECT (taken with it, below) or never takeable, so it is not
	 * read again (valgrind reads it again, to the same result) */
	if (!(s->mark[i] & M_LED))
		push(s, (size_t)i);
	s->b[leader].indirect += s->b[i].size + s->b[i].indirect;
	s->b[i].indirect = 0;
	set_state(s, (size_t)i, M_INDIRECT);
}

/*
 * Warm the caches for a later lookup: a scan of a pointer-dense heap is
 * bound by cache misses on bucket[] and blocks[], which this overlaps
 * (speed only).  w[0 .. nw) holds only in-span words here.  Word
 * k + 2 * PF_DIST: its bucket; word k + PF_DIST: its first candidate
 * block (bucket already fetched) and mark.
 */
#define PF_DIST 16
static inline void prefetch_ahead(const struct scanner *s, const uint64_t *w,
				  size_t k, size_t nw)
{
	uint64_t v;

	if (!s->bucket)
		return;
	if (k + 2 * PF_DIST < nw) {
		v = w[k + 2 * PF_DIST];
		if (v - s->lo < s->span)
			__builtin_prefetch(&s->bucket[(v - s->lo) >> s->shift]);
	}
	if (k + PF_DIST < nw) {
		v = w[k + PF_DIST];
		if (v - s->lo < s->span) {
			size_t j = s->bucket[(v - s->lo) >> s->shift];

			__builtin_prefetch(&s->b[j]);
			__builtin_prefetch(&s->mark[j]);
		}
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
	if (leader == (size_t)-1) {
		for (k = 0; k < m; k++) {
			prefetch_ahead(s, w, k, m);
			reach(s, w[k], prior_definite);
		}
	} else {
		for (k = 0; k < m; k++) {
			prefetch_ahead(s, w, k, m);
			gather(s, w[k], leader);
		}
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

/* Build s->bucket: about one bucket per block.  Optional (speed only). */
static void build_buckets(struct scanner *s)
{
	size_t nb = 1, k, j = 0;

	if (s->n > UINT32_MAX || s->n < 64)
		return;
	while (nb < s->n)
		nb <<= 1;
	while (s->shift < 63 && ((s->span - 1) >> s->shift) >= nb)
		s->shift++;
	nb = (size_t)((s->span - 1) >> s->shift) + 1;
	s->bucket = malloc((nb + 1) * sizeof(*s->bucket));
	if (!s->bucket)
		return;
	for (k = 0; k < nb; k++) {
		uint64_t start = s->lo + ((uint64_t)k << s->shift);

		while (j + 1 < s->n && s->b[j + 1].addr <= start)
			j++;
		s->bucket[k] = (uint32_t)j;
	}
	s->bucket[nb] = (uint32_t)(s->n - 1);
}

static void process_stack(struct scanner *s, size_t leader)
{
	while (s->top) {
		size_t i = s->stack[--s->top];
		const struct scan_block *b = &s->b[i];
		int definite;

		s->mark[i] &= (uint8_t)~M_PENDING;
		definite = (s->mark[i] & M_STATE) != M_POSSIBLE;
		if (b->size)
			scan_range(s, b->addr,
				   b->size > UINT64_MAX - b->addr ? UINT64_MAX
				   : b->addr + b->size, definite, leader);
	}
}

static void scanner_free(struct scanner *s)
{
	free(s->mark);
	free(s->stack);
	free(s->buf);
	free(s->bucket);
}

static int cmp_addr(const void *x, const void *y)
{
	const struct scan_block *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

struct addr_idx {
	uint64_t addr;
	uint64_t idx;
};

/*
 * LSD radix sort of (address, index) pairs, 11 bits a pass over the bits
 * the addresses use (47 on x86-64: 5 passes): 10^6 blocks in ~40 ms where
 * qsort of the blocks took ~260 ms.  Then the blocks are permuted in
 * place, cycle by cycle (no second copy of the blocks).
 */
void scan_sort_blocks(struct scan_block *b, size_t n)
{
	enum { BITS = 11, RADIX = 1 << BITS };
	struct addr_idx *a, *t, *swap;
	uint64_t max = 0;
	size_t i, *count;
	unsigned shift;

	if (n < 2)
		return;
	a = malloc(n * sizeof(*a));
	t = malloc(n * sizeof(*t));
	count = malloc(RADIX * sizeof(*count));
	if (!a || !t || !count) {
		free(a);
		free(t);
		free(count);
		qsort(b, n, sizeof(*b), cmp_addr);
		return;
	}
	for (i = 0; i < n; i++) {
		a[i].addr = b[i].addr;
		a[i].idx = i;
		if (b[i].addr > max)
			max = b[i].addr;
	}
	for (shift = 0; shift < 64 && (max >> shift); shift += BITS) {
		size_t sum = 0, k;

		memset(count, 0, RADIX * sizeof(*count));
		for (i = 0; i < n; i++)
			count[(a[i].addr >> shift) & (RADIX - 1)]++;
		for (k = 0; k < RADIX; k++) {
			size_t c = count[k];

			count[k] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			t[count[(a[i].addr >> shift) & (RADIX - 1)]++] = a[i];
		swap = a;
		a = t;
		t = swap;
	}
	free(t);
	free(count);
	/* position i takes block a[i].idx; a[j].idx = j marks j done */
	for (i = 0; i < n; i++) {
		struct scan_block tmp;
		size_t j = i;

		if (a[i].idx == i)
			continue;
		tmp = b[i];
		for (;;) {
			size_t k = a[j].idx;

			a[j].idx = j;
			if (k == i) {
				b[j] = tmp;
				break;
			}
			b[j] = b[k];
			j = k;
		}
	}
	free(a);
}

int scan_classify(struct scan_input *in, struct scan_stats *st)
{
	struct scan_stats dummy;
	struct scanner s;
	const struct scan_block *last;
	uint64_t hi;
	size_t i;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	if (!in->nblocks)
		return 0;

	memset(&s, 0, sizeof(s));
	s.b = in->blocks;
	s.n = in->nblocks;
	s.read = in->read;
	s.skip = in->skip;
	s.glibc = in->glibc_chunks;
	s.ctx = in->ctx;
	s.st = st;
	s.mark = calloc(s.n, 1);
	s.stack = malloc(s.n * sizeof(*s.stack));
	s.buf = malloc(SCAN_CHUNK);
	if (!s.mark || !s.stack || !s.buf) {
		scanner_free(&s);
		return error("out of memory scanning %zu blocks", s.n);
	}

	last = &s.b[s.n - 1];
	s.lo = s.b[0].addr;
	hi = last->addr + (last->size ? last->size : 1);
	if (hi < last->addr)	/* wraps: up to the top of the space */
		hi = UINT64_MAX;
	s.span = hi - s.lo;
	for (i = 0; i < s.n; i++)
		s.b[i].indirect = 0;
	build_buckets(&s);

	/* Phase 1: roots, registers, then everything they reach. */
	for (i = 0; i < in->nroots; i++) {
		s.born_before = in->roots[i].born_before;
		st->unreadable_bytes += scan_range(&s, in->roots[i].start,
						   in->roots[i].end, 1,
						   (size_t)-1);
	}
	s.born_before = 0;
	for (i = 0; i < in->nvalues; i++)
		reach(&s, in->root_values[i], 1);
	process_stack(&s, (size_t)-1);

	/* Phase 2: cliques of the unreached, leaders in address order. */
	for (i = 0; i < s.n; i++) {
		if ((s.mark[i] & M_STATE) != M_UNREACHED)
			continue;
		s.mark[i] |= M_LED;
		push(&s, i);
		process_stack(&s, i);
	}

	for (i = 0; i < s.n; i++) {
		switch (s.mark[i] & M_STATE) {
		case M_UNREACHED:
			s.b[i].cls = SCAN_DEFINITELY_LOST;
			break;
		case M_INDIRECT:
			s.b[i].cls = SCAN_INDIRECTLY_LOST;
			s.b[i].indirect = 0;
			break;
		case M_POSSIBLE:
			s.b[i].cls = SCAN_POSSIBLY_LOST;
			s.b[i].indirect = 0;
			break;
		default:
			s.b[i].cls = SCAN_STILL_REACHABLE;
			s.b[i].indirect = 0;
			break;
		}
	}
	scanner_free(&s);
	return 0;
}
