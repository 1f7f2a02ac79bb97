/*
 * unwtab_cache.c - compiled unwind tables kept by file: in memory for the
 * session, and on disk across sessions (unwtab.h).
 *
 * In memory: with -f every process loads the same objects (libc's table
 * took most of the 38 ms a forked child cost the recorder).  On disk:
 * every launch compiles libc again, 5-8 ms of a start-up of about 20
 * (page faults mostly: a fresh process touches 1.6 MB to compile it); a
 * table read back costs ~0.2 ms.  The disk's side is diskcache.h's
 * (files *.uwt); a table read back is used only if it also passes
 * unwtab_check.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diskcache.h"
#include "recorder/unwtab.h"
#include "base/util.h"

#ifndef PTLEAK_VERSION
#define PTLEAK_VERSION "0.1"
#endif

#define CACHE_N 16
#define CACHE_MAX (16u << 20)

/* A file's identity. */
#define key dc_key

static struct cached {
	struct key k;
	struct unwtab_hdr *tab;	/* NULL: a free slot */
	uint64_t used;
} cache[CACHE_N];
static uint64_t cache_clock;

static struct cached *cache_find(const struct key *k)
{
	unsigned i;

	for (i = 0; i < CACHE_N; i++)
		if (cache[i].tab && dc_key_same(&cache[i].k, k))
			return &cache[i];
	return NULL;
}

/* Keep TAB (ours now) as K's table. */
static struct cached *cache_keep(const struct key *k, struct unwtab_hdr *tab)
{
	struct cached *e = &cache[0];
	unsigned i;

	if (tab->size > CACHE_MAX)
		return NULL;
	for (i = 1; i < CACHE_N && e->tab; i++)
		if (!cache[i].tab || cache[i].used < e->used)
			e = &cache[i];
	free(e->tab);
	e->k = *k;
	e->tab = tab;
	e->used = ++cache_clock;
	return e;
}

/* ---- on disk (diskcache.h) ---- */

static const struct dc_kind disk_kind = {
	.magic = "ptleak unwind table cache 2\n",
	.suffix = ".uwt",
	.format = UNWTAB_VERSION,
	.max = CACHE_MAX,
	.files = 256,
	.keep = 192,
};

/* K's table from the disk cache given to USE (mapped read-only, the page
 * cache's pages: no copy); 1 and USE's result in *RC, or 0 if it is not
 * there or not good. */
static int disk_use(const struct key *k,
		    int (*use)(void *ctx, const struct unwtab_hdr *tab),
		    void *ctx, int *rc)
{
	struct dc_map m;
	int ok;

	if (dc_map(&disk_kind, k, &m))
		return 0;
	util_silent++;
	ok = !unwtab_check(m.data, m.size) &&
	     ((const struct unwtab_hdr *)m.data)->size == m.size;
	util_silent--;
	if (ok)
		*rc = use(ctx, m.data);
	dc_unmap(&m, ok);
	return ok;
}

static void disk_write(const struct key *k, const struct unwtab_hdr *tab)
{
	dc_write(&disk_kind, k, tab, tab->size);
}

/* ---- the API ---- */

int unwtab_compile_use(const char *path,
		       int (*use)(void *ctx, const struct unwtab_hdr *tab),
		       void *ctx)
{
	struct unwtab_hdr *tab;
	struct cached *e;
	struct key k;
	const char *dbg = getenv("PTLEAK_DEBUG");
	int rc, debug = dbg && strstr(dbg, "stats");

	if (dc_key_of(path, &k)) {
		/* not there: compile_file says so */
		if (unwtab_compile_file(path, &tab, NULL))
			return -1;
		rc = use(ctx, tab);
		free(tab);
		return rc;
	}
	e = cache_find(&k);
	if (e) {
		e->used = ++cache_clock;
		return use(ctx, e->tab);
	}
	if (disk_use(&k, use, ctx, &rc)) {
		if (debug)
			fprintf(stderr, "ptleak-debug: unwind table of %s: from "
				"the cache\n", path);
		return rc;
	}
	if (unwtab_compile_file(path, &tab, NULL))
		return -1;
	disk_write(&k, tab);
	if (debug)
		fprintf(stderr, "ptleak-debug: unwind table of %s: compiled\n",
			path);
	rc = use(ctx, tab);
	if (!cache_keep(&k, tab))
		free(tab);
	return rc;
}

static int copy_out(void *ctx, const struct unwtab_hdr *tab)
{
	struct unwtab_hdr **out = ctx;

	*out = xmalloc(tab->size);
	memcpy(*out, tab, tab->size);
	return 0;
}

int unwtab_compile(const char *path, struct unwtab_hdr **tab,
		   struct unwtab_stats *stats)
{
	if (stats)
		return unwtab_compile_file(path, tab, stats);
	return unwtab_compile_use(path, copy_out, tab);
}
