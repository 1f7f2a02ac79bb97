/*
 * heap_store.c - the live-block table's storage (heap_store.h).
 *
 * Entries are dense: [0, n) in chunks of HEAP_CHUNK, never moved by a
 * growth (no copy of the whole table, no 2x peak); a removal moves the
 * last entry into the hole.  The index is open addressing with linear
 * probing over the entries' addresses; deletion shifts back (no
 * tombstones).  It doubles at 3/4 full and is rebuilt from the entries
 * (read in order).  A big index is its own mapping with transparent huge
 * pages asked for: its slots are hit at random.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "heap_store.h"
#include "base/util.h"

#define MIN_CAP		1024	/* power of two */
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

static inline size_t home(const struct heap_store *s, uint64_t addr)
{
	return (size_t)hash64(addr) & s->mask;
}

/* The slot's bits above the entry index for ADDR (its hash's top bits). */
static inline uint32_t tag_of(const struct heap_store *s, uint64_t addr)
{
	return s->cbits >= 32 ? 0 :
	       (uint32_t)(hash64(addr) >> (32 + s->cbits)) << s->cbits;
}

size_t hs_find(const struct heap_store *s, uint64_t addr)
{
	uint64_t h = hash64(addr);
	size_t i = (size_t)h & s->mask;
	uint32_t v, tag = tag_of(s, addr), low;

	low = s->cbits >= 32 ? UINT32_MAX : (1u << s->cbits) - 1;
	while ((v = s->slot[i]) &&
	       ((v & ~low) != tag || hs_entry(s, (v & low) - 1)->addr != addr))
		i = (i + 1) & s->mask;
	return i;
}

static void index_build(struct heap_store *s, size_t cap)
{
	size_t i;

	index_free(s->slot, s->cap);
	s->slot = index_alloc(cap);
	s->cap = cap;
	s->mask = cap - 1;
	s->grow_at = cap / 4 * 3;
	for (s->cbits = 0; ((size_t)1 << s->cbits) < cap; s->cbits++)
		;
	for (i = 0; i < s->n; i++) {
		uint64_t a = hs_entry(s, i)->addr;
		size_t j = home(s, a);

		while (s->slot[j])
			j = (j + 1) & s->mask;
		s->slot[j] = (uint32_t)(i + 1) | tag_of(s, a);
	}
}

void hs_init(struct heap_store *s)
{
	memset(s, 0, sizeof(*s));
	index_build(s, MIN_CAP);
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
	size_t cap = s->cap;

	if (n > MAX_ENTRIES - s->n)
		die("out of memory (more than %lu live blocks)", MAX_ENTRIES);
	while (s->n + n > cap / 4 * 3)
		cap *= 2;
	if (cap != s->cap)
		index_build(s, cap);
}

struct heap_entry *hs_add(struct heap_store *s, size_t slot, uint64_t addr)
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
	s->slot[slot] = (uint32_t)++s->n | tag_of(s, addr);
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

/* Empty index slot I and shift the following cluster back over it. */
static void index_remove_at(struct heap_store *s, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t h;

		j = (j + 1) & s->mask;
		if (!s->slot[j])
			break;
		h = home(s, hs_entry(s, hs_at(s, j) - 1)->addr);
		/* slot J may move to I unless its home lies cyclically in
		 * (I, J] */
		if (((j - h) & s->mask) >= ((j - i) & s->mask)) {
			s->slot[i] = s->slot[j];
			i = j;
		}
	}
	s->slot[i] = 0;
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

		s->slot[hs_find(s, l->addr)] = (k + 1) | tag_of(s, l->addr);
		*e = *l;
	}
	s->n--;
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
