/*
 * scan_pre.c - the blocks read ahead (scan_priv.h, struct scan_pre):
 * read in address order before phase 1 through the lanes, as any batch,
 * their hits kept; a unit of one of them later takes its hits from here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "scan_priv.h"
#include "base/debug.h"
#include "base/util.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The pages for MORE hits after those kept populated, a MiB ahead (a
 * page fault costs up to ~12 us on these VMs, populating ~2.5). */
#define PRE_AHEAD	(1u << 20)

static void room(struct scan_pre *p, size_t more)
{
	size_t need = (p->nhits + more) * sizeof(*p->hits), to;

	if (need > p->ready) {
		to = (need + PRE_AHEAD + 4095) & ~(size_t)4095;
		if (to > p->cap)
			to = p->cap;
		madvise((char *)p->hits + p->ready, to - p->ready,
			MADV_POPULATE_WRITE);
		p->ready = to;
	}
}

void scan_pre_free(struct scanner *s)
{
	struct scan_pre *p = &s->pre;

	if (p->hits)
		munmap(p->hits, p->cap);
	free(p->pos);
	free(p->at);
	free(p->cnt);
	free(p->got);
	memset(p, 0, sizeof(*p));
}

/* The blocks to read ahead (P->pos) and the reserve for their hits, as
 * many blocks in address order as CAP holds at worst (every word a hit:
 * the reserve never runs out); their number, 0 if none or no memory.
 * What is kept a block besides: its position, hits' offset and count,
 * bytes read. */
#define PRE_ENTRY	16

static size_t plan(struct scanner *s, uint64_t cap, uint64_t min)
{
	struct scan_pre *p = &s->pre;
	uint64_t a, b, total = 0, words = 0, need;
	size_t k, e, ne = 0;
	void *m;

	/* offsets of 4-byte hits in 32 bits */
	if (cap > (uint64_t)UINT32_MAX)
		cap = UINT32_MAX;
	for (k = 0; k < s->n; k++) {
		if (!pre_eligible(s, k, min, &a, &b))
			continue;
		need = PRE_ENTRY + (b - a) / 8 * sizeof(*p->hits);
		if (total + need > cap)
			break;
		total += need;
		words += (b - a) / 8;
		ne++;
	}
	if (!ne)
		return 0;
	p->cap = (size_t)((words * sizeof(*p->hits) + 4095) & ~4095ull);
	p->pos = malloc(ne * sizeof(*p->pos));
	p->at = malloc(ne * sizeof(*p->at));
	p->cnt = malloc(ne * sizeof(*p->cnt));
	p->got = malloc(ne * sizeof(*p->got));
	m = p->cap ? mmap(NULL, p->cap, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) :
		     MAP_FAILED;
	if (m == MAP_FAILED || !p->pos || !p->at || !p->cnt || !p->got) {
		if (m != MAP_FAILED)
			munmap(m, p->cap);
		p->cap = 0;
		scan_pre_free(s);
		return 0;
	}
	p->hits = m;
	for (k = 0, e = 0; e < ne; k++)
		if (pre_eligible(s, k, min, &a, &b))
			p->pos[e++] = (uint32_t)k;
	return ne;
}


void scan_pre_read(struct scanner *s, uint64_t cap, uint32_t min)
{
	struct scan_pre *p = &s->pre;
	size_t ne, e = 0;
	uint64_t t0 = now_ns();

	if (!cap || s->n >= PRE_START)
		return;
	if (!min)
		min = PRE_MIN;
	ne = plan(s, cap, min);
	p->pass = 1;
	while (e < ne) {
		uint64_t bytes = 0;

		/* PRE_BATCH bytes: the lanes meet at its end 8 times less
		 * often than in a scan's batches */
		s->nunit = 0;
		for (; e < ne && s->nunit < BATCH_UNITS && bytes < PRE_BATCH; e++) {
			struct scan_unit *x = &s->unit[s->nunit++];
			uint64_t a = 0, end = 0;

			pre_eligible(s, p->pos[e], min, &a, &end);
			memset(x, 0, sizeof(*x));
			x->start = a;
			x->end = x->rend = end;
			x->rid = (uint32_t)e;
			x->blk = PRE_NONE;	/* read, not taken from here */
			bytes += end - a;
		}
		room(p, (size_t)(bytes / 8));
		/* counted before: a batch of WORKER_AFTER bytes has both
		 * lanes (scan_lanes_run) */
		s->pre_bytes += bytes;
		scan_jobs(s);
		scan_lanes_run(s);
		p->n = e;
	}
	p->pass = 0;
	s->nunit = 0;
	s->st->preread_blocks = p->n;
	if (debug_stats && ne)
		fprintf(stderr, "ptleak-debug: scan: %zu blocks read ahead "
			"(%llu bytes), %zu hits kept, in %.1f ms\n", p->n,
			(unsigned long long)s->pre_bytes, p->nhits,
			(double)(now_ns() - t0) / 1e6);
}
