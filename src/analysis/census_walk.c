/*
 * census_walk.c - what the glibc census's walk and its tcache half share
 * (census_priv.h): the walk's chunks sorted and found, a heap that does
 * not make sense said once.  Below census_glibc.c and census_tcache.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "census_priv.h"

int census_bad(struct walk *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->failed) {
		va_start(ap, fmt);
		vsnprintf(w->c->why, sizeof(w->c->why), fmt, ap);
		va_end(ap);
	}
	w->failed = 1;
	w->c->exact = 0;
	return -1;
}

static int cmp_chunk(const void *pa, const void *pb)
{
	const struct chunk *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

void census_sort_chunks(struct walk *w)
{
	qsort(w->ch, w->n, sizeof(*w->ch), cmp_chunk);
}

struct chunk *census_find_chunk(struct walk *w, uint64_t addr)
{
	struct chunk key = { .addr = addr };

	return bsearch(&key, w->ch, w->n, sizeof(*w->ch), cmp_chunk);
}
