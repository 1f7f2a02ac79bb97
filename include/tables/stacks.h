/*
 * stacks.h - interned call stacks.
 *
 * A stack is an array of program counters (innermost first).  Interning
 * makes equal stacks share one id, so a live block costs a 32-bit id and
 * records are grouped by comparing ids.  Names are looked up only for ids
 * that end up in a report (symbols.h).
 */
#ifndef PTLEAK_STACKS_H
#define PTLEAK_STACKS_H

#include <stdint.h>

struct stacks;

struct stacks *stacks_new(void);
void stacks_delete(struct stacks *s);

/* Id (>= 1) of the stack PCS[0..N-1]; the same id for the same PCs.
 * N == 0 gives id 0. */
uint32_t stacks_intern(struct stacks *s, const uint64_t *pcs, unsigned n);

/* The PCs of ID into *PCS (valid until the next intern); returns N.
 * Unknown id or 0: returns 0. */
unsigned stacks_get(const struct stacks *s, uint32_t id, const uint64_t **pcs);

/* Number of distinct stacks interned. */
unsigned stacks_count(const struct stacks *s);

#endif
