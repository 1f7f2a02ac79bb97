/*
 * diskcache.h - what ptleak derives from a file, kept on disk across
 * runs: compiled unwind tables (unwtab_cache.c), inflated line tables
 * (dwline.c).
 *
 * Like debuginfod's client cache, in $PTLEAK_CACHE_DIR, else
 * $XDG_CACHE_HOME/ptleak/unwind, else ~/.cache/ptleak/unwind (the name
 * of its first user); PTLEAK_CACHE_DIR set empty: none.  A file is known
 * by its device, inode, size and modification time (a changed file is
 * another file; one rewritten in place within a tick of the file
 * system's clock at the same size is not told apart, as make would not;
 * packages are installed by rename, a new inode); a cache file's name is a hash of those, of ptleak's
 * version, of the kind's magic and format, and its header repeats them.
 * A cache file is used only if its header matches, it is ours (owner,
 * not writable by others, a regular file) and its checksum holds; its
 * user checks the contents as any input.  Written to a temporary name
 * and renamed; at most a number of files of a kind (struct dc_kind), the
 * least recently used removed.  Every disk error is silent: the caller derives the data
 * as if there were no cache.
 */
#ifndef PTLEAK_DISKCACHE_H
#define PTLEAK_DISKCACHE_H

#include <stddef.h>
#include <stdint.h>

/* A kind of cache file: MAGIC (< 32 bytes) and FORMAT in its header,
 * SUFFIX (".xyz") on its name, at most MAX bytes after the header; more
 * than FILES files of the kind: the least recently used go, KEEP left. */
struct dc_kind {
	const char *magic;
	const char *suffix;
	uint32_t format;
	uint64_t max;
	unsigned files, keep;
};

/* A file's identity. */
struct dc_key {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
};

/* The header of a cache file, the data after it. */
struct dc_hdr {
	char magic[32];		/* the kind's, NUL-padded */
	char version[32];	/* PTLEAK_VERSION */
	uint32_t format;	/* the kind's */
	uint32_t pad;
	struct dc_key k;
	uint64_t size;		/* the data's bytes */
	uint64_t sum;		/* dc_sum() of them */
};

/* A cache file mapped: its DATA, SIZE bytes. */
struct dc_map {
	const void *data;
	uint64_t size;
	void *base;
	size_t len;
	int fd;
};

/* PATH's identity: 0, or -1 if it cannot be stat'ed. */
int dc_key_of(const char *path, struct dc_key *k);
int dc_key_same(const struct dc_key *a, const struct dc_key *b);

/* K's cache file of KIND mapped read-only (its pages read at once) into
 * *M: 0, or -1 if there is none or it is not good. */
int dc_map(const struct dc_kind *kind, const struct dc_key *k, struct dc_map *m);

/* Done with M; USED: it served (its time is renewed: least recently
 * used goes first). */
void dc_unmap(struct dc_map *m, int used);

/* SIZE bytes at DATA as K's cache file of KIND. */
void dc_write(const struct dc_kind *kind, const struct dc_key *k,
	      const void *data, size_t size);

/* The checksum kept in a cache file's header (exposed for tests). */
uint64_t dc_sum(const void *p, size_t n);

#endif
