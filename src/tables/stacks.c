/*
 * stacks.c - interned call stacks.
 *
 * The PCs of every distinct stack are appended to one growing arena of
 * uint64_t; stack ID (>= 1) is entry ID - 1 of an array giving its offset,
 * length and hash.  An open-addressing table (linear probing, no deletion)
 * maps the hash of a PC array to its id; equal hashes are confirmed by
 * comparing the PC arrays.
 */
#include <stdlib.h>
#include <string.h>

#include "tables/stacks.h"
#include "base/util.h"

#define STACKS_MIN_SLOTS 1024	/* power of two */

struct stack_ent {
	size_t off;		/* into arena */
	uint32_t n;
	uint32_t hash;		/* low 32 bits of the full hash */
};

struct stacks {
	uint64_t *arena;
	size_t arena_len, arena_alloc;
	struct stack_ent *ents;	/* ents[id - 1] */
	size_t nents, ents_alloc;
	uint32_t *slots;	/* id, 0 = empty */
	size_t nslots;		/* power of two */
	size_t mask;
};

static uint64_t hash_pcs(const uint64_t *pcs, unsigned n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	unsigned i;

	for (i = 0; i < n; i++) {
		h ^= pcs[i];
		h *= 0xff51afd7ed558ccdULL;
		h = (h << 29) | (h >> 35);
	}
	return hash64(h);
}

/* Slot index from the stored 32-bit hash, so growing needs no rehash of
 * the PCs; the high bits of the 64-bit mix are folded in by hash64. */
static inline size_t home_of(const struct stacks *s, uint32_t hash)
{
	return (size_t)hash64(hash) & s->mask;
}

static void slots_init(struct stacks *s, size_t n)
{
	s->slots = xcalloc(n, sizeof(*s->slots));
	s->nslots = n;
	s->mask = n - 1;
}

static void slots_grow(struct stacks *s)
{
	size_t i;

	free(s->slots);
	slots_init(s, s->nslots * 2);
	for (i = 0; i < s->nents; i++) {
		size_t j = home_of(s, s->ents[i].hash);

		while (s->slots[j])
			j = (j + 1) & s->mask;
		s->slots[j] = (uint32_t)(i + 1);
	}
}

struct stacks *stacks_new(void)
{
	struct stacks *s = xcalloc(1, sizeof(*s));

	slots_init(s, STACKS_MIN_SLOTS);
	return s;
}

void stacks_delete(struct stacks *s)
{
	if (!s)
		return;
	free(s->arena);
	free(s->ents);
	free(s->slots);
	free(s);
}

uint32_t stacks_intern(struct stacks *s, const uint64_t *pcs, unsigned n)
{
	uint32_t hash, id;
	size_t j;

	if (n == 0)
		return 0;
	hash = (uint32_t)hash_pcs(pcs, n);
	j = home_of(s, hash);
	while ((id = s->slots[j]) != 0) {
		const struct stack_ent *e = &s->ents[id - 1];

		if (e->hash == hash && e->n == n &&
		    !memcmp(s->arena + e->off, pcs, n * sizeof(*pcs)))
			return id;
		j = (j + 1) & s->mask;
	}

	/* New stack: J is the empty slot where it goes. */
	if (s->nents >= UINT32_MAX - 1)
		die("too many distinct stacks");
	grow_array((void **)&s->arena, &s->arena_alloc, s->arena_len + n,
		   sizeof(*s->arena));
	grow_array((void **)&s->ents, &s->ents_alloc, s->nents + 1,
		   sizeof(*s->ents));
	memcpy(s->arena + s->arena_len, pcs, n * sizeof(*pcs));
	s->ents[s->nents].off = s->arena_len;
	s->ents[s->nents].n = n;
	s->ents[s->nents].hash = hash;
	s->arena_len += n;
	s->nents++;
	id = (uint32_t)s->nents;
	s->slots[j] = id;
	if (s->nents * 4 > s->nslots * 3)
		slots_grow(s);
	return id;
}

unsigned stacks_get(const struct stacks *s, uint32_t id, const uint64_t **pcs)
{
	const struct stack_ent *e;

	if (id == 0 || id > s->nents) {
		if (pcs)
			*pcs = NULL;
		return 0;
	}
	e = &s->ents[id - 1];
	if (pcs)
		*pcs = s->arena + e->off;
	return e->n;
}

unsigned stacks_count(const struct stacks *s)
{
	return (unsigned)s->nents;
}
