/* diskcache.c - derived data kept on disk across runs (diskcache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diskcache.h"
#include "base/util.h"

#ifndef PTLEAK_VERSION
#define PTLEAK_VERSION "0.1"
#endif

int dc_key_of(const char *path, struct dc_key *k)
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

int dc_key_same(const struct dc_key *a, const struct dc_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

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

/* A damaged file is derived again, never used.  Four sums of every
 * fourth word, independent, in registers (one chain, a multiply's
 * latency a word, took 40 us of libc's unwind table at every launch;
 * ~10 us so). */
uint64_t dc_sum(const void *p, size_t n)
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

static void hdr_of(const struct dc_kind *kind, const struct dc_key *k,
		   struct dc_hdr *h)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->magic, sizeof(h->magic), "%s", kind->magic);
	snprintf(h->version, sizeof(h->version), "%s", PTLEAK_VERSION);
	h->format = kind->format;
	h->k = *k;
}

/* K's cache file name into BUF (the directory first); 0, or -1. */
static int disk_name(const struct dc_kind *kind, const struct dc_key *k,
		     char *buf, size_t len, int create)
{
	struct dc_hdr h;
	uint64_t x;
	size_t n;

	if (disk_dir(buf, len, create))
		return -1;
	hdr_of(kind, k, &h);
	x = fnv(0xcbf29ce484222325ull, &h, offsetof(struct dc_hdr, size));
	n = strlen(buf);
	snprintf(buf + n, len - n, "/%016llx%s", (unsigned long long)x,
		 kind->suffix);
	return 0;
}

int dc_map(const struct dc_kind *kind, const struct dc_key *k, struct dc_map *m)
{
	struct dc_hdr want;
	const struct dc_hdr *got;
	char path[4096];
	struct stat st;
	void *map;
	int fd;

	memset(m, 0, sizeof(*m));
	m->fd = -1;
	if (disk_name(kind, k, path, sizeof(path), 0))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < (off_t)sizeof(want) ||
	    (uint64_t)st.st_size > sizeof(want) + kind->max) {
		close(fd);
		return -1;
	}
	/* populated: read whole (checksum, check), a fault a page is dear */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
		   fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		return -1;
	}
	got = map;
	hdr_of(kind, k, &want);
	if (memcmp(got, &want, offsetof(struct dc_hdr, size)) ||
	    got->size != (uint64_t)st.st_size - sizeof(want) ||
	    got->sum != dc_sum(got + 1, got->size)) {
		munmap(map, (size_t)st.st_size);
		close(fd);
		return -1;
	}
	m->data = got + 1;
	m->size = got->size;
	m->base = map;
	m->len = (size_t)st.st_size;
	m->fd = fd;
	return 0;
}

void dc_unmap(struct dc_map *m, int used)
{
	if (m->base) {
		if (used)
			futimens(m->fd, NULL);	/* recently used */
		munmap(m->base, m->len);
	}
	if (m->fd >= 0)
		close(m->fd);
	memset(m, 0, sizeof(*m));
	m->fd = -1;
}

static int by_mtime(const void *a, const void *b)
{
	const struct timespec *x = a, *y = b;

	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* More than KIND's files in DIR: the least recently used go. */
static void disk_trim(const struct dc_kind *kind, const char *dir)
{
	struct ent {
		struct timespec t;	/* first: by_mtime */
		char name[32];
	} *v = NULL;
	size_t n = 0, a = 0, i, sl = strlen(kind->suffix);
	struct dirent *d;
	struct stat st;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	while ((d = readdir(dp))) {
		size_t l = strlen(d->d_name);

		if (l != 16 + sl || l >= sizeof(v->name) ||
		    strcmp(d->d_name + 16, kind->suffix))
			continue;
		if (fstatat(dirfd(dp), d->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		grow_array((void **)&v, &a, n + 1, sizeof(*v));
		v[n].t = st.st_mtim;
		memcpy(v[n].name, d->d_name, l + 1);
		n++;
	}
	if (n > kind->files && kind->keep < n) {
		qsort(v, n, sizeof(*v), by_mtime);
		for (i = 0; i < n - kind->keep; i++)
			unlinkat(dirfd(dp), v[i].name, 0);
	}
	closedir(dp);
	free(v);
}

void dc_write(const struct dc_kind *kind, const struct dc_key *k,
	      const void *data, size_t size)
{
	char path[4096], tmp[4160], *slash;
	struct dc_hdr h;
	int fd, ok;

	if (size > kind->max || disk_name(kind, k, path, sizeof(path), 1))
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	hdr_of(kind, k, &h);
	h.size = size;
	h.sum = dc_sum(data, size);
	ok = write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) &&
	     write(fd, data, size) == (ssize_t)size;
	ok = !close(fd) && ok;
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return;
	}
	slash = strrchr(path, '/');
	*slash = '\0';
	disk_trim(kind, path);
}
