/*
 * heap_store.h - where the live-block table keeps its blocks (heap.c's
 * storage, private to tables/): 24 bytes a block in a dense array of
 * fixed chunks (struct heap_entry, heap.h) and an index of 4 bytes a slot
 * (open addressing by address, 3/4 full at most), so 30-35 bytes a live
 * block with no per-block allocation.  See heap.h for the packing.
 *
 * An index slot: the entry index + 1 in its low IBITS bits (0: empty),
 * above them the slot's distance from its home slot (DBITS bits, DMAX:
 * that far or farther, then the entry's address says), above that TBITS
 * bits of the address's hash (the tag: the bits just below those that
 * chose the home).  A probe reads an entry only when distance and tag
 * match; a removal shifts slots back and the index doubles without
 * reading entries (the distance gives the home, the tag's top bit the
 * new home's last bit).
 */
#ifndef PTLEAK_HEAP_STORE_H
#define PTLEAK_HEAP_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "tables/heap.h"
#include "base/util.h"

struct heap_big {
	uint64_t addr, size;
};

struct heap_store {
	struct heap_entry **chunk;	/* HEAP_CHUNK entries each */
	size_t nchunks, achunks;
	size_t n;			/* entries [0, n) are the live blocks */
	uint32_t *slot;		/* cap = 2^cbits slots, as above */
	size_t cap, mask, grow_at;
	unsigned cbits;
	unsigned ibits, dbits, tbits;	/* fields of a slot (above) */
	uint32_t imask, dmax;	/* 2^ibits - 1 (all ones at 32), 2^dbits - 1 */
	/* sizes of HEAP_SIZE_BIG or more (open addressing, addr 0 empty) */
	struct heap_big *big;
	size_t nbig, abig;
	/* times are kept in microseconds from this one (heap.h) */
	uint64_t epoch_us;
	int epoch_set;
};

void hs_init(struct heap_store *s);
void hs_free(struct heap_store *s);

static inline struct heap_entry *hs_entry(const struct heap_store *s, size_t i)
{
	return &s->chunk[i >> HEAP_CHUNK_BITS][i & (HEAP_CHUNK - 1)];
}

/* The home slot of a hash (its top bits). */
static inline size_t hs_home(const struct heap_store *s, uint64_t hash)
{
	return (size_t)(hash >> (64 - s->cbits));
}

/* The index slot of ADDR, or the empty one where it would go; H is
 * hash64(ADDR). */
size_t hs_find_h(const struct heap_store *s, uint64_t addr, uint64_t h);
static inline size_t hs_find(const struct heap_store *s, uint64_t addr)
{
	return hs_find_h(s, addr, hash64(addr));
}
/* Entry index + 1 held by SLOT, 0: empty. */
static inline uint32_t hs_at(const struct heap_store *s, size_t slot)
{
	return s->slot[slot] & s->imask;
}
/* ADDR's home slot, to prefetch (a function whose only effect is
 * __builtin_prefetch is taken for pure by GCC and its calls dropped:
 * callers prefetch themselves). */
static inline const uint32_t *hs_home_slot(const struct heap_store *s,
					   uint64_t addr)
{
	return &s->slot[hs_home(s, hash64(addr))];
}
/* The home slot of the entry K from the end ([n - 1 - K]), which a
 * removal will move, NULL if none. */
static inline const uint32_t *hs_moved_slot(const struct heap_store *s,
					    size_t k)
{
	return k < s->n ? hs_home_slot(s, hs_entry(s, s->n - 1 - k)->addr) :
	       NULL;
}
/* ADDR's entry, to prefetch, if its slot (prefetched before) is one of
 * the first few probed; else NULL.  Reads the index only. */
const struct heap_entry *hs_entry_hint(const struct heap_store *s,
				       uint64_t addr);

/* Room for N more entries (the index rehashed if needed: slots found
 * before are stale). */
void hs_reserve(struct heap_store *s, size_t n);
/* A new entry at ADDR in the empty SLOT (hs_find after hs_reserve(1)):
 * returned with its address set, the rest zero.  H is hash64(ADDR). */
struct heap_entry *hs_add_h(struct heap_store *s, size_t slot, uint64_t addr,
			    uint64_t h);
static inline struct heap_entry *hs_add(struct heap_store *s, size_t slot,
					uint64_t addr)
{
	return hs_add_h(s, slot, addr, hash64(addr));
}
/* Remove the entry held by SLOT (the last entry moves into its place). */
void hs_remove(struct heap_store *s, size_t slot);
/* The index's invariants hold (every entry found at its slot, every
 * slot's distance and tag right, clusters unbroken): 0, else -1 with a
 * message (tests). */
int hs_check(const struct heap_store *s);

/* Entry fields from and to a block (heap.h's packing). */
void hs_encode(struct heap_store *s, struct heap_entry *e,
	       const struct heap_block *b, uint32_t thread);
uint64_t hs_size(const struct heap_store *s, const struct heap_entry *e);
uint64_t hs_time(const struct heap_store *s, const struct heap_entry *e);

#endif
