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
 * Work goes in batches (scan_priv.h): the main thread pops ranges (root
 * ranges first, then blocks off the work stack) and cuts them into
 * units of at most UNIT_MAX bytes; the lanes (scan_lane.c: this thread
 * and, with scan_input.threads 2, a worker) read them and look their
 * words up; then this thread applies the hits unit by unit, as the rules
 * above say.  A block popped is not pending any more, so a block a batch
 * upgrades is pushed again and read again: the fixpoint is the same
 * whatever the batches.  A short read or -1 makes the rest of that range
 * unreadable (counted in unreadable_bytes for roots; a block's unread
 * bytes just hold no pointers): the range's later units are dropped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"
#include "base/util.h"

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

/* The range being cut into units: [a, e) left of it (aligned); CHK: where
 * the next question to scan_input.skip is due. */
struct cursor {
	uint64_t a, e, chk, born_before;
	uint32_t rid, blk;
	uint8_t definite, root, active;
};

static inline void push_id(struct scanner *s, size_t i, uint8_t *m)
{
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

static inline void push(struct scanner *s, size_t i)
{
	push_id(s, i, mark_of(s, i));
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

/* Phase 1 (lc_push_without_clique_if_a_chunk_ptr) for a word pointing
 * at (START) or into block I. */
static inline void reach_at(struct scanner *s, size_t i, int start,
			    int prior_definite)
{
	uint8_t *m = mark_of(s, i);
	int state = *m & M_STATE;

	if (state == M_REACHABLE)
		return;
	if (start && prior_definite) {
		*m = (uint8_t)((*m & ~M_STATE) | M_REACHABLE);
		push_id(s, i, m);
	} else if (state == M_UNREACHED) {
		*m = (uint8_t)((*m & ~M_STATE) | M_POSSIBLE);
		push_id(s, i, m);
	}
}

/* Phase 2 (lc_push_with_clique_if_a_chunk_ptr) for a word pointing at
 * or into block I. */
static inline void gather_at(struct scanner *s, size_t i, size_t leader)
{
	uint8_t *m;

	if (i == leader)
		return;
	m = mark_of(s, i);
	if ((*m & M_STATE) != M_UNREACHED)
		return;
	/* a former leader's clique is whole: what it points to is already
	 * INDIRECT (taken with it, below) or never takeable, so it is not
	 * read again (valgrind reads it again, to the same result) */
	s->acc += size_of(s, i);
	if (!(*m & M_LED))
		push_id(s, i, m);
	else
		s->acc += ind_take(s, i);
	*m = (uint8_t)((*m & ~M_STATE) | M_INDIRECT);
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

/* The next range to read into C: a root range, else a block popped off
 * the work stack (the blocks POP_DIST and 2 * POP_DIST below the top
 * warmed in the caches).  0: none left. */
#define POP_DIST	24

static int next_range(struct scanner *s, struct cursor *c,
		      const struct scan_range *roots, size_t nroots, size_t *r)
{
	for (;;) {
		uint64_t start, end;

		if (*r < nroots) {
			start = roots[*r].start;
			end = roots[*r].end;
			c->born_before = roots[*r].born_before;
			c->root = 1;
			c->definite = 1;
			c->blk = PRE_NONE;
			(*r)++;
		} else {
			const struct scan_blocks *b = s->b;
			uint8_t *m;
			size_t i;

			if (!s->top && s->spilled)
				refill(s);
			if (!s->top)
				return 0;
			if (b->order && s->top > 2 * POP_DIST)
				__builtin_prefetch(&b->order[s->stack[s->top - 2 * POP_DIST]]);
			if (b->order && s->top > POP_DIST) {
				uint32_t id = b->order[s->stack[s->top - POP_DIST]];

				__builtin_prefetch(heap_entry(&b->e, id));
				__builtin_prefetch(&s->mark[id]);
			}
			i = s->stack[--s->top];
			m = mark_of(s, i);
			*m &= (uint8_t)~(M_PENDING | M_STACKED);
			c->definite = (*m & M_STATE) != M_POSSIBLE;
			c->born_before = 0;
			c->root = 0;
			c->blk = (uint32_t)i;
			start = addr_of(s, i);
			if (!size_of(s, i))
				continue;
			end = block_end(s, i);
		}
		if (!range_words(start, end, &c->a, &c->e))
			continue;
		c->chk = c->a;
		c->rid++;
		c->active = 1;
		return 1;
	}
}

/* A unit cut from C's range (none where scan_input.skip says the memory
 * is untouched: skipped).  Its bytes. */
static uint64_t cut_unit(struct scanner *s, struct cursor *c)
{
	uint64_t len = c->e - c->a, z;
	struct scan_unit *u;

	if (c->a == c->chk) {
		z = s->skip && len >= SCAN_CHUNK ? s->skip(s->ctx, c->a, len) & ~7ull : 0;
		if (z) {
			c->a += z > len ? len : z;
			c->chk = c->a;
			c->active = c->a < c->e;
			return 0;
		}
		c->chk = c->a > UINT64_MAX - SCAN_CHUNK ? UINT64_MAX : c->a + SCAN_CHUNK;
	}
	if (len > UNIT_MAX)
		len = UNIT_MAX;
	if (len > c->chk - c->a)
		len = c->chk - c->a;
	u = &s->unit[s->nunit++];
	u->start = c->a;
	u->end = c->a + len;
	u->rend = c->e;
	u->born_before = c->born_before;
	u->rid = c->rid;
	u->definite = c->definite;
	u->root = c->root;
	u->blk = c->blk;
	u->pre = 0;
	c->a += len;
	c->active = c->a < c->e;
	return len;
}

/* The batch's hits applied, unit by unit (LEADER (size_t)-1: phase 1). */
static void apply(struct scanner *s, struct cursor *c, size_t leader)
{
	const uint32_t *order = s->b->order;
	uint32_t dead = 0;
	int have_dead = 0;
	size_t u, h;

	for (u = 0; u < s->nunit; u++) {
		const struct scan_unit *x = &s->unit[u];
		const struct scan_lane *l = &s->lane[x->lane];

		if (have_dead && x->rid == dead)
			continue;
		s->st->bytes_scanned += x->got;
		if (x->lane)
			s->st->worker_bytes += x->got;
		if (x->pre) {
			/* a block read ahead: its hits kept (scan_pre.c) */
			const uint32_t *ph = s->pre.hits;

			for (h = x->h0; h < x->h1; h++) {
				uint32_t hit = ph[h];

				if (order && h + 2 * 8 < x->h1)
					__builtin_prefetch(&order[ph[h + 2 * 8] & ~PRE_START]);
				if (order && h + 8 < x->h1)
					__builtin_prefetch(&s->mark[order[ph[h + 8] & ~PRE_START]]);
				if (leader == (size_t)-1)
					reach_at(s, hit & ~PRE_START, !!(hit & PRE_START),
						 x->definite);
				else
					gather_at(s, hit & ~PRE_START, leader);
			}
		} else {
			for (h = x->h0; h < x->h1; h++) {
				uint64_t hit = l->hits[h];

				if (order && h + 2 * 8 < l->nhits)
					__builtin_prefetch(&order[(uint32_t)l->hits[h + 2 * 8]]);
				if (order && h + 8 < l->nhits)
					__builtin_prefetch(&s->mark[order[(uint32_t)l->hits[h + 8]]]);
				if (leader == (size_t)-1)
					reach_at(s, (uint32_t)hit, !!(hit & HIT_START),
						 x->definite);
				else
					gather_at(s, (uint32_t)hit, leader);
			}
		}
		if (x->got < x->end - x->start) {
			if (x->root)
				s->st->unreadable_bytes += x->rend - x->start - x->got;
			dead = x->rid;
			have_dead = 1;
			if (c->active && c->rid == x->rid)
				c->active = 0;
		}
	}
}

/*
 * Read what is to be read, in batches, until no range is left: phase 1
 * (LEADER (size_t)-1: the root ranges ROOTS first, then the stack) or
 * phase 2 for that clique leader (the stack).
 */
static void process(struct scanner *s, size_t leader,
		    const struct scan_range *roots, size_t nroots)
{
	struct cursor c;
	size_t r = 0;

	memset(&c, 0, sizeof(c));
	for (;;) {
		uint64_t bytes = 0;

		s->nunit = 0;
		while (s->nunit < BATCH_UNITS && bytes < BATCH_BYTES) {
			if (!c.active && !next_range(s, &c, roots, nroots, &r))
				break;
			bytes += cut_unit(s, &c);
		}
		if (!s->nunit) {
			if (c.active)
				continue;
			break;
		}
		scan_jobs(s);
		scan_lanes_run(s);
		apply(s, &c, leader);
	}
}

static void scanner_free(struct scanner *s)
{
	scan_pre_free(s);
	scan_lanes_free(s);
	scan_index_free(s);
	free(s->stack);
	free(s->ind);
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
		    struct scan_result *out)
{
	size_t i;

	s->mark = calloc(s->n, 1);
	s->cap = s->n / 16 + STACK_MIN;
	if (s->cap > s->n)
		s->cap = s->n;
	s->stack = malloc(s->cap * sizeof(*s->stack));
	if (!s->mark || !s->stack || s->n > UINT32_MAX ||
	    scan_lanes_init(s, in))
		goto oom;

	scan_index_build(s);
	scan_pre_read(s, in->preread, in->preread_min);

	/* Phase 1: registers, roots, then everything they reach. */
	for (i = 0; i < in->nvalues; i++) {
		long k = find_block(s, in->root_values[i]);

		if (k >= 0)
			reach_at(s, (size_t)k, in->root_values[i] ==
				 addr_of(s, (size_t)k), 1);
	}
	process(s, (size_t)-1, in->roots, in->nroots);

	/* Phase 2: cliques of the unreached, leaders in address order. */
	for (i = 0; i < s->n; i++) {
		uint8_t *m = mark_of(s, i);

		if ((*m & M_STATE) != M_UNREACHED)
			continue;
		*m |= M_LED;
		s->acc = 0;
		push(s, i);
		process(s, i, NULL, 0);
		if (s->acc && ind_put(s, i, s->acc))
			goto oom;
	}
	verdicts(s, out);
	scanner_free(s);
	return 0;
oom:
	free(s->mark);
	scanner_free(s);
	return error("out of memory scanning %zu blocks", s->n);
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
	if (s.n && classify(&s, in, &res))
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
