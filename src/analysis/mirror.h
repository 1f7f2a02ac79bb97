/*
 * mirror.h - the live blocks' memory read once, in address order, before
 * a scan (roots.c): the scan then reads blocks in the order pointers lead
 * to them from this copy, not from the target (perl's 48 MB of 4 KiB
 * arenas, read at random through windows: ~15,000 reads of 8-64 KiB and
 * their pagemap reads, ~90 ms of CPU; in address order, on two threads,
 * ~20 ms).
 */
#ifndef PTLEAK_MIRROR_H
#define PTLEAK_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/scan.h"

/* [lo, hi) read at data (lo 8-byte aligned, data 64; hi: as far as the
 * read came) */
struct mirror_span {
	uint64_t lo, hi;
	uint8_t *data;
};

struct mirror {
	struct mirror_span *span;	/* by address */
	size_t n;
	uint8_t *mem;
	size_t bytes;			/* mem's */
};

/* Reads LEN bytes at ADDR (short at what cannot be read, -1 for
 * nothing; called from THREADS threads at once, 1 or 2); the end of the
 * mapping holding ADDR (0: none). */
struct mirror_io {
	long (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	uint64_t (*map_end)(void *ctx, uint64_t addr);
	void *ctx;
	int threads;
};

/*
 * MI: the blocks of B of MIRROR_MIN to MIRROR_MAX bytes in spans (blocks
 * less than MIRROR_GAP apart in one mapping share one), up to CAP bytes
 * of them, read through IO in pieces of 1 MiB by IO's threads.  Without
 * memory (or CAP 0): none, MI empty.  Other blocks are read as before:
 * smaller ones through the scan's windows (packed, they come in address
 * order, a window's bytes used, and a mirror of them would cost ptleak
 * more memory a block than its tables: 48 bytes at most, test
 * memory_per_block_*), bigger ones directly, 128 KiB a read.
 */
#define MIRROR_GAP	4096
#define MIRROR_MIN	1024
#define MIRROR_MAX	(32u << 10)
void mirror_build(struct mirror *mi, const struct scan_blocks *b,
		  const struct mirror_io *io, uint64_t cap);
/* The copy of [ADDR, ADDR + LEN) if the mirror holds all of it, else NULL. */
const uint8_t *mirror_at(const struct mirror *mi, uint64_t addr, size_t len);
void mirror_free(struct mirror *mi);

#endif
