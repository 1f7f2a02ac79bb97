/*
 * heap_store.h - where the live-block table keeps its blocks (heap.c's
 * storage, private to tables/): 24 bytes a block in a dense array of
 * fixed chunks (struct heap_entry, heap.h) and an index of 4 bytes a slot
 * (open addressing by address, entry index + 1, 3/4 full at most), so
 * 30-35 bytes a live block with no per-block allocation.  See heap.h for
 * the packing.
 */
#ifndef PTLEAK_HEAP_STORE_H
#define PTLEAK_HEAP_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "tables/heap.h"

struct heap_big {
	uint64_t addr, size;
};

struct heap_store {
	struct heap_entry **chunk;	/* HEAP_CHUNK entries each */
	size_t nchunks, achunks;
	size_t n;			/* entries [0, n) are the live blocks */
	/* entry index + 1 in the low CBITS bits (cap = 2^CBITS), above them
	 * as many bits of the address's hash (a probe reads an entry only
	 * when they match); 0: empty */
	uint32_t *slot;
	size_t cap, mask, grow_at;
	unsigned cbits;
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

/* The index slot of ADDR, or the empty one where it would go. */
size_t hs_find(const struct heap_store *s, uint64_t addr);
/* Entry index + 1 held by SLOT, 0: empty. */
static inline uint32_t hs_at(const struct heap_store *s, size_t slot)
{
	return s->cbits >= 32 ? s->slot[slot] :
	       s->slot[slot] & ((1u << s->cbits) - 1);
}
/* Room for N more entries (the index rehashed if needed: slots found
 * before are stale). */
void hs_reserve(struct heap_store *s, size_t n);
/* A new entry at ADDR in the empty SLOT (hs_find after hs_reserve(1)):
 * returned with its address set, the rest zero. */
struct heap_entry *hs_add(struct heap_store *s, size_t slot, uint64_t addr);
/* Remove the entry held by SLOT (the last entry moves into its place). */
void hs_remove(struct heap_store *s, size_t slot);

/* Entry fields from and to a block (heap.h's packing). */
void hs_encode(struct heap_store *s, struct heap_entry *e,
	       const struct heap_block *b, uint32_t thread);
uint64_t hs_size(const struct heap_store *s, const struct heap_entry *e);
uint64_t hs_time(const struct heap_store *s, const struct heap_entry *e);

#endif
