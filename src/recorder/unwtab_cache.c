/*
 * unwtab_cache.c - compiled unwind tables kept by file: in memory for the
 * session, and on disk across sessions (unwtab.h).
 *
 * In memory: with -f every process loads the same objects (libc's table
 * took most of the 38 ms a forked child cost the recorder).  On disk:
 * every launch compiles libc again, 5-8 ms of a start-up of about 20
 * (page faults mostly: a fresh process touches 1.6 MB to compile it); a
 * table read back costs ~0.2 ms.  Like debuginfod's client cache, in
 * $PTLEAK_CACHE_DIR, else $XDG_CACHE_HOME/ptleak/unwind, else
 * ~/.cache/ptleak/unwind; PTLEAK_CACHE_DIR set empty: none.
 *
 * A file is known by its device, inode, size and modification time (a
 * changed file is another file); the cache file's name is a hash of
 * those, of ptleak's version and of the table format, and its header
 * repeats them: a file is used only if its header matches, it is ours
 * (owner, not writable by others) and the table passes unwtab_check.
 * Written to a temporary name and renamed; at most DISK_MAX files, the
 * least recently used removed.  Every disk error is silent: the table
 * is compiled as if there were no cache.
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

#include "recorder/unwtab.h"
#include "base/util.h"

#ifndef PTLEAK_VERSION
#define PTLEAK_VERSION "0.1"
#endif

#define CACHE_N 16
#define CACHE_MAX (16u << 20)
#define DISK_MAX 256
#define DISK_KEEP 192
#define DISK_MAGIC "ptleak unwind table cache 2\n"

/* A file's identity. */
struct key {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
};

static struct cached {
	struct key k;
	struct unwtab_hdr *tab;	/* NULL: a free slot */
	uint64_t used;
} cache[CACHE_N];
static uint64_t cache_clock;

/* The header of a cache file, the table after it. */
struct disk_hdr {
	char magic[32];		/* DISK_MAGIC, NUL-padded */
	char version[32];	/* PTLEAK_VERSION */
	uint32_t format;	/* UNWTAB_VERSION */
	uint32_t pad;
	struct key k;
	uint64_t size;		/* the table's bytes */
	uint64_t sum;		/* table_sum() of them */
};

static int key_of(const char *path, struct key *k)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	memset(k, 0, sizeof(*k));
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	k->size = (uint64_t)st.st_size;
	k->mtime_sec = st.st_mtim.tv_sec;
	k->mtime_nsec = st.st_mtim.tv_nsec;
	return 0;
}

static int same(const struct key *a, const struct key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static struct cached *cache_find(const struct key *k)
{
	unsigned i;

	for (i = 0; i < CACHE_N; i++)
		if (cache[i].tab && same(&cache[i].k, k))
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

/* ---- on disk ---- */

/* The cache directory into BUF, created (0700) if CREATE; 0, or -1 if
 * there is none. */
static int disk_dir(char *buf, size_t len, int create)
{
	const char *env = getenv("PTLEAK_CACHE_DIR"), *base;
	char *p;

	if (env) {
		if (!*env)
			return -1;
		snprintf(buf, len, "%s", env);
	} else if ((base = getenv("XDG_CACHE_HOME")) && *base == '/') {
		snprintf(buf, len, "%s/ptleak/unwind", base);
	} else if ((base = getenv("HOME")) && *base == '/') {
		snprintf(buf, len, "%s/.cache/ptleak/unwind", base);
	} else {
		return -1;
	}
	if (strlen(buf) + 40 >= len)
		return -1;
	if (!create)
		return 0;
	/* mkdir -p, each level 0700 */
	for (p = buf + 1; ; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -1;
		*p = c;
		if (!c)
			break;
	}
	return 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

static inline uint64_t sum_step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* A checksum of the table: a damaged file is compiled again, never used.
 * Four sums of every fourth word, independent, in registers (one chain,
 * a multiply's latency a word, took 40 us of libc's table at every
 * launch; ~10 us so). */
static uint64_t table_sum(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h0 = 0x9e3779b97f4a7c15ull, h1 = 0xc2b2ae3d27d4eb4full;
	uint64_t h2 = 0x165667b19e3779f9ull, h3 = 0x27d4eb2f165667c5ull;
	uint64_t w0, w1, w2, w3;
	size_t i;

	for (i = 0; i + 32 <= n; i += 32) {
		memcpy(&w0, b + i, 8);
		memcpy(&w1, b + i + 8, 8);
		memcpy(&w2, b + i + 16, 8);
		memcpy(&w3, b + i + 24, 8);
		h0 = sum_step(h0, w0);
		h1 = sum_step(h1, w1);
		h2 = sum_step(h2, w2);
		h3 = sum_step(h3, w3);
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(&w0, b + i, 8);
		h0 = sum_step(h0, w0);
	}
	for (; i < n; i++)
		h1 = (h1 ^ b[i]) * 0x100000001b3ull;
	return sum_step(sum_step(sum_step(h0, h1), h2), h3) ^ n;
}

static void disk_hdr_of(const struct key *k, struct disk_hdr *h)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->magic, sizeof(h->magic), "%s", DISK_MAGIC);
	snprintf(h->version, sizeof(h->version), "%s", PTLEAK_VERSION);
	h->format = UNWTAB_VERSION;
	h->k = *k;
}

/* K's cache file name into BUF (the directory first); 0, or -1. */
static int disk_name(const struct key *k, char *buf, size_t len, int create)
{
	struct disk_hdr h;
	uint64_t x;
	size_t n;

	if (disk_dir(buf, len, create))
		return -1;
	disk_hdr_of(k, &h);
	x = fnv(0xcbf29ce484222325ull, &h, offsetof(struct disk_hdr, size));
	n = strlen(buf);
	snprintf(buf + n, len - n, "/%016llx.uwt", (unsigned long long)x);
	return 0;
}

/* K's table from the disk cache given to USE (mapped read-only, the page
 * cache's pages: no copy); 1 and USE's result in *RC, or 0 if it is not
 * there or not good. */
static int disk_use(const struct key *k,
		    int (*use)(void *ctx, const struct unwtab_hdr *tab),
		    void *ctx, int *rc)
{
	struct disk_hdr want;
	const struct disk_hdr *got;
	char path[4096];
	struct stat st;
	void *map;
	int fd, ok;

	if (disk_name(k, path, sizeof(path), 0))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < (off_t)sizeof(want) ||
	    st.st_size > (off_t)(sizeof(want) + CACHE_MAX)) {
		close(fd);
		return 0;
	}
	/* populated: read whole (checksum, check), a fault a page is dear */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
		   fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		return 0;
	}
	got = map;
	disk_hdr_of(k, &want);
	util_silent++;
	ok = !memcmp(got, &want, offsetof(struct disk_hdr, size)) &&
	     got->size == (uint64_t)st.st_size - sizeof(want) &&
	     got->sum == table_sum(got + 1, got->size) &&
	     !unwtab_check(got + 1, got->size) &&
	     ((const struct unwtab_hdr *)(got + 1))->size == got->size;
	util_silent--;
	if (ok) {
		*rc = use(ctx, (const struct unwtab_hdr *)(got + 1));
		futimens(fd, NULL);	/* recently used */
	}
	munmap(map, (size_t)st.st_size);
	close(fd);
	return ok;
}

static int by_mtime(const void *a, const void *b)
{
	const struct timespec *x = a, *y = b;

	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* More than DISK_MAX tables in DIR: the least recently used go. */
static void disk_trim(const char *dir)
{
	struct ent {
		struct timespec t;	/* first: by_mtime */
		char name[32];
	} *v = NULL;
	size_t n = 0, a = 0, i;
	struct dirent *d;
	struct stat st;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	while ((d = readdir(dp))) {
		size_t l = strlen(d->d_name);

		if (l != 20 || strcmp(d->d_name + 16, ".uwt"))
			continue;
		if (fstatat(dirfd(dp), d->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		grow_array((void **)&v, &a, n + 1, sizeof(*v));
		v[n].t = st.st_mtim;
		memcpy(v[n].name, d->d_name, l + 1);	/* 20 bytes and a NUL */
		n++;
	}
	if (n > DISK_MAX) {
		qsort(v, n, sizeof(*v), by_mtime);
		for (i = 0; i < n - DISK_KEEP; i++)
			unlinkat(dirfd(dp), v[i].name, 0);
	}
	closedir(dp);
	free(v);
}

static void disk_write(const struct key *k, const struct unwtab_hdr *tab)
{
	char path[4096], tmp[4160], *slash;
	struct disk_hdr h;
	int fd, ok;

	if (disk_name(k, path, sizeof(path), 1))
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	disk_hdr_of(k, &h);
	h.size = tab->size;
	h.sum = table_sum(tab, tab->size);
	ok = write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) &&
	     write(fd, tab, tab->size) == (ssize_t)tab->size;
	ok = !close(fd) && ok;
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return;
	}
	slash = strrchr(path, '/');
	*slash = '\0';
	disk_trim(path);
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

	if (key_of(path, &k)) {
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
