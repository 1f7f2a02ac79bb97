/*
 * census_priv.h - what the census's files share (census.c, census_glibc.c);
 * the module's API is include/analysis/census.h.
 */
#ifndef PTLEAK_CENSUS_PRIV_H
#define PTLEAK_CENSUS_PRIV_H

#include "analysis/census.h"

/* Read exactly LEN bytes at ADDR through IN: 0, or -1. */
int census_rd(const struct census_input *in, uint64_t addr, void *buf, size_t len);

/* The mapping of IN holding A, or NULL. */
const struct census_map *census_map_at(const struct census_input *in, uint64_t a);

#endif
