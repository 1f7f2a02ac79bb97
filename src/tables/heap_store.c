/*
 * heap_store.c - the live-block table's storage (heap_store.h).
 *
 * Entries are dense: [0, n) in chunks of HEAP_CHUNK, never moved by a
 * growth (no copy of the whole table, no 2x peak); a removal moves the
 * last entry into the hole.  The index is open addressing with linear
 * probing over the entries' addresses, home slot from the top bits of
 * the hash; deletion shifts back (no tombstones).  Slots carry their
 * distance from home and a tag (heap_store.h), so that a removal and the
 * slot of the entry it moves, and a doubling at 3/4 full (the old slots
 * read in order, the new written nearly in order), read no entry: on a
 * big table each entry read was a cache miss (a removal read the entries
 * of the slots after it, a growth all of them at random places).  A
 * rebuild from the entries is left for a growth of more than 2x (a
 * census's reserve) or an index too big for a tag bit (2^26 slots).  A
 * big index is its own mapping with transparent huge pages asked for:
 * its slots are hit at random.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "heap_store.h"
#include "base/util.h"

#define MIN_CAP_BITS	10	/* 1024 slots */
#define BIG_INDEX	(4ul << 20)
#define MAX_ENTRIES	(UINT32_MAX - 1ul)

static uint32_t *index_alloc(size_t cap)
{
	size_t len = cap * sizeof(uint32_t);
	void *p;

	if (len < BIG_INDEX)
		return xcalloc(cap, sizeof(uint32_t));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		die("out of memory (an index of %zu live blocks)", cap);
	madvise(p, len, MADV_HUGEPAGE);
	return p;
}

static void index_free(uint32_t *slot, size_t cap)
{
	if (cap * sizeof(uint32_t) < BIG_INDEX)
		free(slot);
	else if (slot)
		munmap(slot, cap * sizeof(uint32_t));
}

#define DIST_BITS	6	/* at most; the tag gets the rest */

/* The slot fields for an index of 2^CBITS slots (heap_store.h). */
static void set_layout(struct heap_store *s, unsigned cbits)
{
	s->cbits = cbits;
	s->cap = (size_t)1 << cbits;
	s->mask = s->cap - 1;
	s->grow_at = s->cap / 4 * 3;
	s->ibits = cbits < 32 ? cbits : 32;
	s->dbits = 32 - s->ibits < DIST_BITS ? 32 - s->ibits : DIST_BITS;
	s->tbits = 32 - s->ibits - s->dbits;
	s->imask = (uint32_t)(((uint64_t)1 << s->ibits) - 1);
	s->dmax = (1u << s->dbits) - 1;
}

/* The tag of HASH: the TBITS bits below the home's. */
static inline uint32_t tag_of(const struct heap_store *s, uint64_t hash)
{
	return s->tbits ? (uint32_t)(hash >> (64 - s->cbits - s->tbits)) &
			  ((1u << s->tbits) - 1) : 0;
}

/* A slot's value: entry index + 1, distance from home, tag. */
static inline uint32_t slot_val(const struct heap_store *s, uint32_t idx1,
				size_t dist, uint32_t tag)
{
	uint64_t d = dist < s->dmax ? dist : s->dmax;

	return (uint32_t)(idx1 | d << s->ibits |
			  (uint64_t)tag << (s->ibits + s->dbits));
}

static inline uint32_t slot_dist(const struct heap_store *s, uint32_t v)
{
	return (uint32_t)((uint64_t)v >> s->ibits) & s->dmax;
}

static inline uint32_t slot_tag(const struct heap_store *s, uint32_t v)
{
	return (uint32_t)((uint64_t)v >> (s->ibits + s->dbits));
}

/* The distance of slot I (value V) from its home: stored, or from the
 * entry's address when it is DMAX or more. */
static inline size_t dist_at(const struct heap_store *s, size_t i, uint32_t v)
{
	uint32_t d = slot_dist(s, v);

	if (d < s->dmax)
		return d;
	return (i - hs_home(s, hash64(hs_entry(s, (v & s->imask) - 1)->addr))) &
	       s->mask;
}

size_t hs_find_h(const struct heap_store *s, uint64_t addr, uint64_t h)
{
	size_t i = hs_home(s, h), k;
	uint32_t v, high = ~s->imask, want = slot_val(s, 0, 0, tag_of(s, h));

	for (k = 0; (v = s->slot[i]); k++, i = (i + 1) & s->mask) {
		if ((v & high) == want &&
		    hs_entry(s, (v & s->imask) - 1)->addr == addr)
			break;
		/* the distance field counts with K up to DMAX */
		if (k < s->dmax)
			want += (uint32_t)((uint64_t)1 << s->ibits);
	}
	return i;
}

const struct heap_entry *hs_entry_hint(const struct heap_store *s,
				       uint64_t addr)
{
	uint64_t h = hash64(addr);
	size_t i = hs_home(s, h), k;
	uint32_t v, want = slot_val(s, 0, 0, tag_of(s, h));

	for (k = 0; k < 4 && k < s->dmax && (v = s->slot[i]); k++) {
		if ((v & ~s->imask) == want)
			return hs_entry(s, (v & s->imask) - 1);
		want += (uint32_t)((uint64_t)1 << s->ibits);
		i = (i + 1) & s->mask;
	}
	return NULL;
}

/* Put entry index + 1 IDX1 with hash H into the index (not there). */
static inline void index_put(struct heap_store *s, uint32_t idx1, uint64_t h)
{
	size_t home = hs_home(s, h), j = home;

	while (s->slot[j])
		j = (j + 1) & s->mask;
	s->slot[j] = slot_val(s, idx1, (j - home) & s->mask, tag_of(s, h));
}

/* A new index of 2^CBITS slots built from the entries. */
static void index_build(struct heap_store *s, unsigned cbits)
{
	size_t i;

	index_free(s->slot, s->cap);
	set_layout(s, cbits);
	s->slot = index_alloc(s->cap);
	for (i = 0; i < s->n; i++)
		index_put(s, (uint32_t)(i + 1), hash64(hs_entry(s, i)->addr));
}

/*
 * The index doubled from the old one's slots, read in order: a slot's
 * home is its place less its distance, the new home that twice plus the
 * tag's top bit (the hash's next bit), so the new slots are written
 * nearly in order and no entry is read, but for a distance of DMAX.
 * Needs a tag bit (TBITS >= 1).
 */
static void index_double(struct heap_store *s)
{
	uint32_t *old = s->slot;
	struct heap_store o = *s;
	size_t i;

	set_layout(s, o.cbits + 1);
	s->slot = index_alloc(s->cap);
	for (i = 0; i < o.cap; i++) {
		uint32_t v = old[i], d, t, idx1;
		size_t home, j;

		if (!v)
			continue;
		idx1 = v & o.imask;
		d = slot_dist(&o, v);
		if (d == o.dmax) {
			index_put(s, idx1, hash64(hs_entry(s, idx1 - 1)->addr));
			continue;
		}
		t = slot_tag(&o, v);
		home = ((i - d) & o.mask) << 1 | t >> (o.tbits - 1);
		for (j = home; s->slot[j]; j = (j + 1) & s->mask)
			;
		s->slot[j] = slot_val(s, idx1, (j - home) & s->mask,
				      t & ((1u << (o.tbits - 1)) - 1));
	}
	index_free(old, o.cap);
}

void hs_init(struct heap_store *s)
{
	memset(s, 0, sizeof(*s));
	index_build(s, MIN_CAP_BITS);
}

void hs_free(struct heap_store *s)
{
	size_t i;

	for (i = 0; i < s->nchunks; i++)
		free(s->chunk[i]);
	free(s->chunk);
	index_free(s->slot, s->cap);
	free(s->big);
	memset(s, 0, sizeof(*s));
}

void hs_reserve(struct heap_store *s, size_t n)
{
	unsigned cbits = s->cbits;

	if (n > MAX_ENTRIES - s->n)
		die("out of memory (more than %lu live blocks)", MAX_ENTRIES);
	while (s->n + n > ((size_t)1 << cbits) / 4 * 3)
		cbits++;
	if (cbits == s->cbits + 1 && s->tbits)
		index_double(s);
	else if (cbits != s->cbits)
		index_build(s, cbits);
}

struct heap_entry *hs_add_h(struct heap_store *s, size_t slot, uint64_t addr,
			    uint64_t h)
{
	struct heap_entry *e;
	size_t c = s->n >> HEAP_CHUNK_BITS;

	if (c == s->nchunks) {
		grow_array((void **)&s->chunk, &s->achunks, c + 1,
			   sizeof(*s->chunk));
		s->chunk[c] = xmalloc(HEAP_CHUNK * sizeof(struct heap_entry));
		s->nchunks++;
	}
	e = hs_entry(s, s->n);
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	s->slot[slot] = slot_val(s, (uint32_t)++s->n,
				 (slot - hs_home(s, h)) & s->mask, tag_of(s, h));
	return e;
}

/* ---- sizes of 4 GiB and more, aside ---- */

static size_t big_find(const struct heap_store *s, uint64_t addr)
{
	size_t m = s->abig - 1, i = (size_t)hash64(addr) & m;

	while (s->big[i].addr && s->big[i].addr != addr)
		i = (i + 1) & m;
	return i;
}

static void big_put(struct heap_store *s, uint64_t addr, uint64_t size)
{
	size_t i;

	if ((s->nbig + 1) * 2 > s->abig) {
		struct heap_big *old = s->big;
		size_t n = s->abig, k;

		s->abig = n ? n * 2 : 16;
		s->big = xcalloc(s->abig, sizeof(*s->big));
		for (k = 0; k < n; k++)
			if (old[k].addr)
				s->big[big_find(s, old[k].addr)] = old[k];
		free(old);
	}
	i = big_find(s, addr);
	if (!s->big[i].addr)
		s->nbig++;
	s->big[i].addr = addr;
	s->big[i].size = size;
}

static void big_del(struct heap_store *s, uint64_t addr)
{
	size_t m, i, j;

	if (!s->nbig)
		return;
	m = s->abig - 1;
	i = big_find(s, addr);
	if (!s->big[i].addr)
		return;
	for (j = i;;) {
		size_t h;

		j = (j + 1) & m;
		if (!s->big[j].addr)
			break;
		h = (size_t)hash64(s->big[j].addr) & m;
		if (((j - h) & m) >= ((j - i) & m)) {
			s->big[i] = s->big[j];
			i = j;
		}
	}
	s->big[i].addr = 0;
	s->nbig--;
}

uint64_t hs_size(const struct heap_store *s, const struct heap_entry *e)
{
	size_t i;

	if (e->size != HEAP_SIZE_BIG)
		return e->size;
	i = big_find(s, e->addr);
	return s->big[i].size;
}

/* Empty index slot I and shift the following cluster back over it: a
 * slot moves back if its distance reaches over the hole. */
static void index_remove_at(struct heap_store *s, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t d, gap;
		uint32_t v;

		j = (j + 1) & s->mask;
		if (!(v = s->slot[j]))
			break;
		d = dist_at(s, j, v);
		gap = (j - i) & s->mask;
		if (d >= gap) {
			s->slot[i] = slot_val(s, v & s->imask, d - gap,
					      slot_tag(s, v));
			i = j;
		}
	}
	s->slot[i] = 0;
}

/* The slot that holds entry index + 1 IDX1, whose address is ADDR. */
static size_t slot_of(const struct heap_store *s, uint64_t addr, uint32_t idx1)
{
	size_t i = hs_home(s, hash64(addr));

	while ((s->slot[i] & s->imask) != idx1)
		i = (i + 1) & s->mask;
	return i;
}

void hs_remove(struct heap_store *s, size_t slot)
{
	uint32_t k = hs_at(s, slot) - 1, last = (uint32_t)(s->n - 1);
	struct heap_entry *e = hs_entry(s, k);

	if (e->size == HEAP_SIZE_BIG)
		big_del(s, e->addr);
	index_remove_at(s, slot);
	if (k != last) {
		struct heap_entry *l = hs_entry(s, last);
		size_t j = slot_of(s, l->addr, last + 1);

		s->slot[j] = (s->slot[j] & ~s->imask) | (k + 1);
		*e = *l;
	}
	s->n--;
}

int hs_check(const struct heap_store *s)
{
	size_t i, used = 0;

	for (i = 0; i < s->n; i++) {
		uint64_t a = hs_entry(s, i)->addr, h = hash64(a);
		size_t j = hs_find(s, a), home = hs_home(s, h), k;
		uint32_t v = s->slot[j];

		if ((v & s->imask) != i + 1)
			return error("heap index: entry %zu (%#llx) not found",
				     i, (unsigned long long)a);
		if (v != slot_val(s, (uint32_t)(i + 1), (j - home) & s->mask,
				  tag_of(s, h)))
			return error("heap index: entry %zu's slot %zu holds %#x",
				     i, j, v);
		for (k = home; k != j; k = (k + 1) & s->mask)
			if (!s->slot[k])
				return error("heap index: entry %zu's cluster "
					     "broken at %zu", i, k);
	}
	for (i = 0; i < s->cap; i++)
		used += s->slot[i] != 0;
	if (used != s->n)
		return error("heap index: %zu slots used for %zu entries",
			     used, s->n);
	return 0;
}

/* ---- packing ---- */

#define TIME_MAX	((1ull << HEAP_TIME_BITS) - 1)
#define EPOCH_BACK	(1ull << 43)	/* us representable before the first */

void hs_encode(struct heap_store *s, struct heap_entry *e,
	       const struct heap_block *b, uint32_t thread)
{
	uint64_t t = 0;

	if (b->size >= HEAP_SIZE_BIG) {
		e->size = HEAP_SIZE_BIG;
		big_put(s, e->addr, b->size);
	} else {
		e->size = (uint32_t)b->size;
	}
	e->stack = b->before ? b->type : b->stack;
	if (b->time_ns) {
		uint64_t us = b->time_ns / 1000;

		if (!s->epoch_set) {
			s->epoch_us = us > EPOCH_BACK ? us - EPOCH_BACK : 0;
			s->epoch_set = 1;
		}
		/* 1 + us from the epoch; 0 is time 0 */
		t = us < s->epoch_us ? 1 : us - s->epoch_us + 1;
		if (t > TIME_MAX)
			t = TIME_MAX;
	}
	e->meta = t | (uint64_t)(thread & 0x1fff) << 45 |
		  (uint64_t)(b->fn & 0xf) << 58 |
		  (b->flags & HB_REPLACEMENT ? HEAP_META_REPL : 0) |
		  (b->before ? HEAP_META_BEFORE : 0);
}

uint64_t hs_time(const struct heap_store *s, const struct heap_entry *e)
{
	uint64_t t = e->meta & TIME_MAX;

	return t ? (t - 1 + s->epoch_us) * 1000 : 0;
}
