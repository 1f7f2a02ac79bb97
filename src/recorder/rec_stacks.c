/*
 * rec_stacks.c - the stacks of the recorder's records: a record carries a
 * hash of its walked return addresses and, the first times, the
 * addresses themselves; ptleak interns them (hash -> walked stack) and
 * then puts the hash into the stack set, so that the hooks send only the
 * hash from then on.  The stack of a block is the function's entry
 * followed by the walked addresses, cut after a return address into
 * main, as the breakpoint engine's unwinder makes it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "rec_priv.h"
#include "tables/stacks.h"
#include "base/util.h"

#define MAX_PCS 512

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* The id of KEY (non-zero) in map M, 0 if none. */
static uint32_t idmap_get(const struct idmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return 0;
	for (i = mix(key) & (m->cap - 1); m->e[i].key; i = (i + 1) & (m->cap - 1))
		if (m->e[i].key == key)
			return m->e[i].id;
	return 0;
}

/* KEY (non-zero) -> ID in map M, unless KEY is there already. */
static void idmap_put(struct idmap *m, uint64_t key, uint32_t id)
{
	size_t i;

	if ((m->count + 1) * 2 > m->cap) {
		struct idmap old = *m;
		size_t k;

		m->cap = m->cap ? 2 * m->cap : 1024;
		m->e = xcalloc(m->cap, sizeof(*m->e));
		m->count = 0;
		for (k = 0; k < old.cap; k++)
			if (old.e[k].key)
				idmap_put(m, old.e[k].key, old.e[k].id);
		free(old.e);
	}
	for (i = mix(key) & (m->cap - 1); m->e[i].key; i = (i + 1) & (m->cap - 1))
		if (m->e[i].key == key)
			return;
	m->e[i].key = key;
	m->e[i].id = id;
	m->count++;
}

/* HASH put in the table SET of MASK + 1 entries: 1, or 0 if it was
 * there, -1 if its chain is full (that stack keeps coming whole). */
static int set_put(uint64_t *set, uint64_t mask, uint64_t hash)
{
	uint64_t i, n, v;

	for (i = hash & mask, n = 0; n < REC_STACKSET_PROBES;
	     i = (i + 1) & mask, n++) {
		v = __atomic_load_n(&set[i], __ATOMIC_RELAXED);
		if (v == hash)
			return 0;
		if (!v) {
			__atomic_store_n(&set[i], hash, __ATOMIC_RELEASE);
			return 1;
		}
	}
	return -1;
}

/* The stack set's table of 2^LOG2 hashes, in ptleak's mapping. */
static uint64_t *stackset_at(struct recorder *R, unsigned log2)
{
	return (uint64_t *)(R->area + AREA_STACKSET + STACKSET_OFF(log2));
}

void rec_stackset_publish(struct recorder *R)
{
	__atomic_store_n(&R->conf->stackset,
			 rec_stackset_word(R->area_t + AREA_STACKSET +
					   STACKSET_OFF(R->ss_log2), R->ss_log2),
			 __ATOMIC_RELEASE);
}

/* The stack set twice as big: the next table filled from ptleak's copy
 * of its hashes, then published (the hooks load the word with its
 * size; those on the old table meanwhile find what it had). */
static void stackset_grow(struct recorder *R)
{
	unsigned log2 = R->ss_log2 + 1;
	uint64_t *set = stackset_at(R, log2);
	size_t i;

	R->ss_count = 0;
	for (i = 0; i < R->ss_n; i++)
		if (set_put(set, (1ull << log2) - 1, R->ss_hashes[i]) > 0)
			R->ss_count++;
	R->ss_log2 = log2;
	rec_stackset_publish(R);
}

/* The hooks may send only the hash of this stack from now on. */
static void stackset_add(struct recorder *R, uint64_t hash)
{
	int r = set_put(stackset_at(R, R->ss_log2), (1ull << R->ss_log2) - 1,
			hash);

	if (!r)
		return;
	/* kept even when its chain is full: a bigger table may take it */
	grow_array((void **)&R->ss_hashes, &R->ss_cap, R->ss_n + 1,
		   sizeof(*R->ss_hashes));
	R->ss_hashes[R->ss_n++] = hash;
	if (r > 0 && ++R->ss_count * 2 > 1ull << R->ss_log2 &&
	    R->ss_log2 < STACKSET_LOG_MAX)
		stackset_grow(R);
}

/*
 * The stack of a record: HASH, and the NPCS pcs at PCS when it came
 * whole; F the function called.  0 when the hash is unknown (its whole
 * record was lost).
 */
static uint32_t stack_lookup(struct recorder *R, struct stacks *st,
			     const struct rec_fn *f, uint64_t hash,
			     const uint64_t *pcs, unsigned npcs)
{
	uint64_t all[MAX_PCS + 1], key;
	const uint64_t *w;
	uint32_t wid, id;
	unsigned n, i;

	wid = idmap_get(&R->walked_of, hash);
	if (!wid) {
		if (!npcs && !hash)
			return 0;
		/* cut after a return address into main */
		for (n = 0; n < npcs && n < MAX_PCS; n++)
			if (R->main_hi && pcs[n] - 1 >= R->main_lo &&
			    pcs[n] - 1 < R->main_hi) {
				n++;
				break;
			}
		/* npcs 0 with an unknown hash: lost, counted once below */
		wid = stacks_intern(R->walked, pcs, n);
		if (!wid && npcs)
			return 0;
		if (!wid) {
			/* an empty walk: its own id */
			wid = stacks_intern(R->walked, (const uint64_t[]){ 0 }, 1);
		}
		idmap_put(&R->walked_of, hash, wid);
		if (npcs)
			stackset_add(R, hash);
	}
	key = (uint64_t)wid << 32 | (uint64_t)(f - R->fns) | 1ull << 31;
	id = idmap_get(&R->stack_of, key);
	if (id)
		return id;
	n = stacks_get(R->walked, wid, &w);
	all[0] = f->addr;
	for (i = 0; i < n && i + 1 < R->depth && i < MAX_PCS; i++) {
		if (!w[i])
			break;
		all[i + 1] = w[i];
	}
	id = stacks_intern(st, all, i + 1);
	idmap_put(&R->stack_of, key, id);
	return id;
}

uint32_t rec_stack_of(struct recorder *R, struct stacks *st,
		      const struct rec_fn *f, uint64_t hash, const uint64_t *pcs,
		      unsigned npcs)
{
	uint32_t fi = (uint32_t)(f - R->fns);
	size_t m = (hash ^ (hash >> 29) ^ fi * 0x9e3779b9u) & (REC_STACK_MEMO - 1);
	uint32_t id;

	if (R->stack_memo[m].id && R->stack_memo[m].hash == hash &&
	    R->stack_memo[m].fn == fi)
		return R->stack_memo[m].id;
	id = stack_lookup(R, st, f, hash, pcs, npcs);
	if (id) {
		R->stack_memo[m].hash = hash;
		R->stack_memo[m].fn = fi;
		R->stack_memo[m].id = id;
	}
	return id;
}
