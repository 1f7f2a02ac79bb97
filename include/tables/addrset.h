/*
 * addrset.h - a set of addresses (non-zero 64-bit keys): open addressing,
 * linear probing, deletion by backward shift; 8 bytes per entry at a load
 * of at most 1/2.  The heap table's frees of unknown addresses while a
 * census is being taken (heap.h, heap_census_pending).
 */
#ifndef PTLEAK_ADDRSET_H
#define PTLEAK_ADDRSET_H

#include <stddef.h>
#include <stdint.h>

struct addrset;

struct addrset *addrset_new(void);
void addrset_free(struct addrset *s);
/* ADDR (not 0) in S; 1 if it was not there. */
int addrset_add(struct addrset *s, uint64_t addr);
/* ADDR out of S; 1 if it was there. */
int addrset_remove(struct addrset *s, uint64_t addr);
size_t addrset_count(const struct addrset *s);

#endif
