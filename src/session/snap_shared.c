/*
 * snap_shared.c - shared writable mappings and snapshots (session.h,
 * docs/design.md "Live reports from a snapshot").
 *
 * A clone does not copy a shared mapping: the report would read it as it
 * is later, not as it was.  What a scan takes from such a mapping is its
 * words that point at or into live blocks (a root), or its blocks (heap).
 * So while every thread is held the mappings are read, SNAP_CHUNK bytes
 * at a time: a live block in one, or a word pointing into one, refuses
 * the snapshot (the report is made held, the mapping read as a root).
 * Else at that instant they hold nothing the scan would use, and the
 * snapshot's scan leaves them out (P->snap_shared): the same verdicts as
 * a scan of them frozen.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scan.h"
#include "target/memio.h"
#include "session.h"
#include "base/util.h"

#define SNAP_CHUNK (64u << 10)

/* Does [START, END) of process PID hold a word in a block of B?  1 with
 * its address in *AT; 0 none; -1 unreadable (errno). */
static int points_in(pid_t pid, const struct scan_blocks *b, int glibc,
		     uint64_t start, uint64_t end, uint64_t *buf, uint64_t *at)
{
	uint64_t lo = scan_blocks_addr(b, 0);
	uint64_t hi = scan_blocks_addr(b, b->n - 1) +
		      scan_blocks_size(b, b->n - 1);
	uint64_t a;

	for (a = start; a < end; a += SNAP_CHUNK) {
		size_t len = end - a < SNAP_CHUNK ? (size_t)(end - a) : SNAP_CHUNK;
		ssize_t got = mem_read(pid, a, buf, len);
		size_t i;

		if (got != (ssize_t)len) {
			if (got >= 0)
				errno = EFAULT;
			return -1;
		}
		for (i = 0; i < len / 8; i++) {
			uint64_t w = buf[i];

			if (w < lo || w > hi)
				continue;
			if (scan_blocks_find(b, w, glibc) >= 0) {
				*at = a + i * 8;
				return 1;
			}
		}
	}
	return 0;
}

/* Has B a block in [START, END), or one from below reaching into it? */
static int holds_block(const struct scan_blocks *b, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = b->n;

	if (scan_blocks_find(b, start, 0) >= 0)
		return 1;
	while (lo < hi) {	/* the first block at or above START */
		size_t mid = lo + (hi - lo) / 2;

		if (scan_blocks_addr(b, mid) < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->n && scan_blocks_addr(b, lo) < end;
}

int snap_shared_check(struct session *S, struct proc *P,
		      const struct shared_map *shared, size_t n,
		      char *why, size_t len)
{
	struct scan_blocks b;
	uint64_t *buf = NULL, at = 0;
	size_t i;
	int ret = 0;

	(void)S;
	free(P->snap_shared);
	P->snap_shared = NULL;
	P->snap_nshared = 0;
	if (!n)
		return 0;
	memset(&b, 0, sizeof(b));
	if (!P->no_heap && P->heap) {
		if (scan_blocks_of(&b, P->heap))
			return snprintf(why, len, "no memory to look into its "
					"shared mapping %s", shared[0].name), -1;
		buf = xmalloc(SNAP_CHUNK);
	}
	/* no live block: nothing to point at */
	for (i = 0; i < n && !ret && b.n; i++) {
		const struct shared_map *m = &shared[i];
		int r;

		if (holds_block(&b, m->start, m->end)) {
			snprintf(why, len, "a shared writable mapping, %s, holds "
				 "live blocks: a snapshot does not copy it", m->name);
			ret = -1;
			break;
		}
		r = points_in(P->mem_pid, &b, P->glibc, m->start, m->end, buf, &at);
		if (r < 0)
			snprintf(why, len, "its shared writable mapping %s cannot "
				 "be read: %s", m->name, strerror(errno));
		else if (r)
			snprintf(why, len, "a shared writable mapping, %s, holds "
				 "a pointer to a live block: a snapshot does not "
				 "copy it", m->name);
		if (r > 0 && debug_stats)
			fprintf(stderr, "ptleak-debug: snapshot: the word at %#llx "
				"of %s points into a live block\n",
				(unsigned long long)at, m->name);
		ret = r ? -1 : 0;
	}
	free(buf);
	scan_blocks_free(&b);
	if (ret)
		return ret;
	P->snap_shared = xcalloc(n, sizeof(*P->snap_shared));
	for (i = 0; i < n; i++)
		P->snap_shared[i] = (struct scan_range){ shared[i].start,
							 shared[i].end, 0 };
	P->snap_nshared = n;
	return 0;
}
