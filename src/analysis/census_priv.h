/*
 * census_priv.h - what the census's files share (census.c, census_glibc.c,
 * census_tcache.c, census_walk.c);
 * the module's API is include/analysis/census.h.
 */
#ifndef PTLEAK_CENSUS_PRIV_H
#define PTLEAK_CENSUS_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/census.h"

/* glibc's chunk flags and sizes (64-bit) */
#define MINSIZE		32ull
#define PREV_INUSE	0x1ull
#define IS_MMAPPED	0x2ull
#define NON_MAIN	0x4ull
#define FLAGS		0x7ull

/* ---- census_glibc.c: the walk, shared with census_tcache.c ---- */

struct chunk {
	uint64_t addr;		/* chunk address */
	uint64_t size;		/* chunk size, flags off */
	uint64_t word0;		/* its first user word */
	uint8_t state;		/* USED, FREE (bins, top), CACHED, META */
};

enum { USED, FREE, CACHED, META };

struct walk {
	const struct census_input *in;
	struct census *c;
	struct chunk *ch;
	size_t n, alloc;
	uint8_t *buf;			/* the window */
	uint64_t base, len;		/* [base, base + len) in buf */
	int failed;			/* why[] set */
};

/* ---- census_walk.c ---- */

/* The walk's census inexact: why (the first reason given), -1. */
int census_bad(struct walk *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- census_walk.c ---- */

/* W's chunks sorted by address (before census_find_chunk). */
void census_sort_chunks(struct walk *w);

/* The chunk walked at ADDR (W's chunks sorted), or NULL. */
struct chunk *census_find_chunk(struct walk *w, uint64_t addr);

/* ---- census.c ---- */

/* PATH is glibc's libc. */
int census_libc_path(const char *path);

/* census_tcache.c: every thread's tcache found, its chunks CACHED, its
 * struct META; 0, or -1 (census_bad said why). */
int census_tcaches(struct walk *w);

/* Read exactly LEN bytes at ADDR through IN: 0, or -1. */
int census_rd(const struct census_input *in, uint64_t addr, void *buf, size_t len);

/* The mapping of IN holding A, or NULL. */
const struct census_map *census_map_at(const struct census_input *in, uint64_t a);

#endif
