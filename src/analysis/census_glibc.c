/*
 * census_glibc.c - glibc malloc's live chunks, read from outside (census.h).
 *
 * Layout (glibc 2.27-2.36, 64-bit; malloc/malloc.c, malloc/arena.c):
 * malloc_state { int mutex, flags, have_fastchunks; fastbinsY[10] @0x10;
 * top @0x60; last_remainder; bins[254] @0x70; binmap[4]; next @0x870;
 * next_free; attached_threads @0x880; system_mem @0x888; ... } 0x898
 * bytes.  heap_info { ar_ptr, prev, size, mprotect_size[, pagesize] }:
 * 0x30 bytes since 2.35, 0x20 before; a thread arena's first heap holds
 * the arena right after it.  A chunk: prev_size, size (PREV_INUSE 1,
 * IS_MMAPPED 2, NON_MAIN_ARENA 4), user memory from +16.
 */
#include <elf.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/census.h"
#include "census_priv.h"
#include "arch/arch.h"
#include "base/util.h"

#define AR_MUTEX	0x0
#define AR_FLAGS	0x4
#define AR_FASTBINS	0x10
#define AR_NFASTBINS	10
#define AR_TOP		0x60
#define AR_BINS		0x70
#define AR_NEXT		0x870
#define AR_ATTACHED	0x880
#define AR_SYSTEM_MEM	0x888
#define AR_SIZE		0x898
#define NONCONTIGUOUS	0x2

#define HEAP_MAX	(64ull << 20)
/* heaps of one arena followed at most (each its own 64 MiB: 4 TiB) */
#define HEAP_CHAIN_MAX	65536
#define PAGE		4096ull

/* mp_ (struct malloc_par, 2.35-2.36) */
#define MP_N_MMAPS	0x3c
#define MP_N_MMAPS_MAX	0x40
#define MP_MMAPPED_MEM	0x50
#define MP_SBRK_BASE	0x60
#define MP_TC_BINS	0x68
#define MP_TC_MAX	0x70
#define MP_TC_COUNT	0x78
#define MP_SIZE		0x88

/* libc's writable data read whole: at most this */
#define DATA_MAX	(8u << 20)
/* memalign's aligned chunk is looked for this far into an mmapped one */
#define MEMALIGN_SPAN	(64u << 10)
/* heaps are read this much at a time */
#define WIN		(1u << 20)

#define rd census_rd
#define map_at census_map_at
#define bad census_bad
#define find_chunk census_find_chunk

static int writable(const struct census_map *m)
{
	return m && m->perms[0] == 'r' && m->perms[1] == 'w';
}

/* [A, A + LEN) lies in readable and writable mappings, end to end. */
static int rw_span(const struct census_input *in, uint64_t a, uint64_t len)
{
	uint64_t end = a + len;

	if (end < a)
		return 0;
	while (a < end) {
		const struct census_map *m = map_at(in, a);

		if (!writable(m))
			return 0;
		a = m->end;
	}
	return 1;
}

static int rw_ptr(const struct census_input *in, uint64_t p)
{
	return p && !(p & 7) && writable(map_at(in, p));
}

/* ---- arenas ---- */

/* Arena X of the ring (not main): in a heap whose heap_info names it, right
 * after it; the heap_info's size into *HSZ. */
static int thread_arena(const struct census_input *in, uint64_t x, uint64_t *hsz)
{
	uint64_t h = x & ~(HEAP_MAX - 1), info[4];

	if ((x - h != 0x20 && x - h != 0x30) || rd(in, h, info, sizeof(info)) ||
	    info[0] != x || info[2] > HEAP_MAX || info[2] < x - h + AR_SIZE)
		return 0;
	*hsz = x - h;
	return 1;
}

/* A at libc's DATA (read into BUF, mapped at START) is main_arena: its bins
 * are heads (empty, or linked into writable memory), its top plausible,
 * its ring of arenas closes.  The ring into C. */
static int main_arena_at(const struct census_input *in, const uint64_t *w,
			 uint64_t a, struct census *c)
{
	uint64_t top = w[AR_TOP / 8], x;
	unsigned i, n = 0;

	if (w[AR_ATTACHED / 8] > (1u << 20))
		return 0;
	if (top != a + AR_TOP && (!rw_ptr(in, top) || (top & 15)))
		return 0;
	for (i = 0; i < 254; i++) {
		uint64_t v = w[AR_BINS / 8 + i];
		/* bin_at(i/2 + 1): the head's fd/bk at &bins[i & ~1] */
		uint64_t self = a + AR_BINS + (i & ~1u) * 8 - 16;

		if (v != self && !rw_ptr(in, v))
			return 0;
	}
	c->arenas[n++] = a;
	for (x = w[AR_NEXT / 8]; x != a; ) {
		uint64_t hsz, next;
		unsigned k;

		if (n >= CENSUS_MAX_ARENAS || !thread_arena(in, x, &hsz) ||
		    rd(in, x + AR_NEXT, &next, 8))
			return 0;
		for (k = 1; k < n; k++)
			if (c->arenas[k] == x)
				return 0;	/* a cycle that misses main_arena */
		c->arenas[n++] = x;
		x = next;
	}
	c->narenas = n;
	return 1;
}

/* Is MAP one of libc's (or, with no libc, any object's) writable file
 * data?  LIBC: look for libc's only. */
static int data_map(const struct census_map *m, int libc)
{
	if (!writable(m) || !m->inode || !m->path[0] || m->path[0] == '[')
		return 0;
	return !libc || census_libc_path(m->path);
}

/* mp_ at W (address A): the tcache defaults (64 bins, 1,032 bytes, 7 a
 * bin) after a plausible mmap count and brk base. */
static int mp_at(const struct census_input *in, const uint8_t *w, uint64_t a)
{
	uint64_t q[MP_SIZE / 8];
	int32_t nm, nmax;

	(void)a;
	memcpy(q, w, sizeof(q));
	memcpy(&nm, w + MP_N_MMAPS, 4);
	memcpy(&nmax, w + MP_N_MMAPS_MAX, 4);
	return q[MP_TC_BINS / 8] == 64 && q[MP_TC_MAX / 8] == 1032 &&
	       q[MP_TC_COUNT / 8] == 7 && nm >= 0 && nmax >= 0 &&
	       q[MP_MMAPPED_MEM / 8] % PAGE == 0 &&
	       q[MP_MMAPPED_MEM / 8] >= (uint64_t)nm * PAGE &&
	       (!q[MP_SBRK_BASE / 8] || writable(map_at(in, q[MP_SBRK_BASE / 8])));
}

/* Look for main_arena (and mp_) in writable object data. */
static int find_main(const struct census_input *in, struct census *c, int libc)
{
	size_t i;

	for (i = 0; i < in->nmaps && !c->main_arena; i++) {
		const struct census_map *m = &in->maps[i];
		uint64_t len = m->end - m->start, o;
		uint8_t *buf;

		/* with its bss: the arena may run on into it */
		if (i + 1 < in->nmaps && in->maps[i + 1].start == m->end &&
		    writable(&in->maps[i + 1]) && !in->maps[i + 1].inode)
			len = in->maps[i + 1].end - m->start;
		if (!data_map(m, libc) || len > DATA_MAX || len < AR_SIZE)
			continue;
		buf = xmalloc(len);
		if (rd(in, m->start, buf, len)) {
			free(buf);
			continue;
		}
		for (o = 0; o + AR_SIZE <= len && !c->main_arena; o += 8) {
			uint64_t w[AR_SIZE / 8];

			memcpy(w, buf + o, sizeof(w));
			uint64_t next = w[AR_NEXT / 8];
			uint64_t in_heap = next & (HEAP_MAX - 1);

			/* its next: itself, or a thread arena (after its
			 * heap_info) */
			if ((next == m->start + o || in_heap == 0x20 || in_heap == 0x30) &&
			    main_arena_at(in, w, m->start + o, c))
				c->main_arena = m->start + o;
		}
		for (o = 0; o + MP_SIZE <= len && c->main_arena && !c->mp; o += 8)
			if (mp_at(in, buf + o, m->start + o))
				c->mp = m->start + o;
		free(buf);
	}
	return c->main_arena ? 0 : -1;
}

int census_glibc_arenas(const struct census_input *in, struct census *c)
{
	memset(c, 0, sizeof(*c));
	c->allocator = CENSUS_GLIBC;
	if (!find_main(in, c, 1) || !find_main(in, c, 0))
		return 0;
	c->exact = 0;
	snprintf(c->why, sizeof(c->why), "glibc's main_arena was not found "
		 "in the process's data");
	return -1;
}

uint64_t census_glibc_locked(const struct census_input *in,
			     const struct census *c)
{
	unsigned i;

	for (i = 0; i < c->narenas; i++) {
		int32_t mutex;

		if (rd(in, c->arenas[i] + AR_MUTEX, &mutex, 4) || mutex)
			return c->arenas[i];
	}
	return 0;
}

/* ---- the chunk walk ---- */

/* The word at A (below LIM, the end of what may be read), through the
 * window. */
static int word_at(struct walk *w, uint64_t a, uint64_t lim, uint64_t *v)
{
	if (a < w->base || a + 8 > w->base + w->len) {
		uint64_t n = lim > a ? lim - a : 0;
		long got;

		if (n > WIN)
			n = WIN;
		if (n < 8)
			return -1;
		got = w->in->read(w->in->ctx, a, w->buf, n);
		w->base = a;
		w->len = got > 0 ? (uint64_t)got : 0;
		if (w->len < 8)
			return -1;
	}
	memcpy(v, w->buf + (a - w->base), 8);
	return 0;
}

static void add_chunk(struct walk *w, uint64_t addr, uint64_t size,
		      uint64_t word0, unsigned st)
{
	/* doubled without zeroing (grow_array's memset would make the
	 * capacity resident: 268 MB for 5*10^6 chunks) */
	if (w->n == w->alloc) {
		w->alloc = w->alloc ? w->alloc * 2 : 1024;
		w->ch = xrealloc(w->ch, w->alloc * sizeof(*w->ch));
	}
	memset(&w->ch[w->n], 0, sizeof(*w->ch));
	w->ch[w->n].addr = addr;
	w->ch[w->n].size = size;
	w->ch[w->n].word0 = word0;
	w->ch[w->n].state = (uint8_t)st;
	w->n++;
}

/*
 * The chunks of one heap, [START, END): up to STOP (top) if not 0, else up
 * to the fencepost at its end.  MAIN: the main arena's (in-use chunks say
 * NON_MAIN_ARENA exactly when not).  A chunk is in use when the next one
 * has PREV_INUSE.
 */
static int walk_heap(struct walk *w, uint64_t start, uint64_t end,
		     uint64_t stop, int main)
{
	uint64_t p = start, hdr, want = main ? 0 : NON_MAIN;
	size_t prev = SIZE_MAX;
	uint64_t prev_hdr = 0, w0;

	for (;;) {
		uint64_t sz;
		int last = stop && p == stop;

		if (p + 16 > end || p + 16 < p || word_at(w, p + 8, end, &hdr))
			return bad(w, "glibc's heap at %#llx: a chunk at %#llx "
				   "runs past it", (unsigned long long)start,
				   (unsigned long long)p);
		sz = hdr & ~FLAGS;
		if (prev != SIZE_MAX) {
			if (!(hdr & PREV_INUSE))
				w->ch[prev].state = FREE;
			else if ((prev_hdr & NON_MAIN) != want)
				return bad(w, "glibc's chunk at %#llx says the "
					   "wrong arena", (unsigned long long)
					   w->ch[prev].addr);
		}
		if (last)
			return 0;
		if (sz < MINSIZE) {
			if (!stop)
				return 0;	/* the fencepost */
			return bad(w, "glibc's heap at %#llx ends before its top "
				   "chunk", (unsigned long long)start);
		}
		if ((sz & 15) || (hdr & IS_MMAPPED) || sz > end - p)
			return bad(w, "glibc's chunk at %#llx has a bad size "
				   "(%#llx)", (unsigned long long)p,
				   (unsigned long long)hdr);
		if (word_at(w, p + 16, end, &w0))
			w0 = 0;
		add_chunk(w, p, sz, w0, USED);
		prev = w->n - 1;
		prev_hdr = hdr;
		p += sz;
	}
}

/* The main arena's heap: contiguous, ending at top. */
static int walk_main(struct walk *w, const uint64_t *ar)
{
	uint64_t a = w->c->main_arena, top = ar[AR_TOP / 8], tsz, start, end;
	uint32_t flags;

	memcpy(&flags, (const uint8_t *)ar + AR_FLAGS, 4);
	if (top == a + AR_TOP)
		return 0;	/* nothing was ever allocated */
	if (flags & NONCONTIGUOUS)
		return bad(w, "glibc's main arena is not contiguous");
	if (word_at(w, top + 8, top + 16, &tsz))
		return bad(w, "glibc's top chunk at %#llx cannot be read",
			   (unsigned long long)top);
	end = top + (tsz & ~FLAGS);
	start = end - ar[AR_SYSTEM_MEM / 8];
	if (start > top || (start & 15) || !rw_span(w->in, start, end - start))
		return bad(w, "glibc's main arena heap does not add up (top "
			   "%#llx, %llu bytes from the system)",
			   (unsigned long long)top,
			   (unsigned long long)ar[AR_SYSTEM_MEM / 8]);
	return walk_heap(w, start, end, top, 1);
}

/* Heap H of arena X: its heap_info (ar_ptr, prev, size) into INFO, which
 * must name X and a size it can hold.  0, or -1. */
static int heap_info_of(struct walk *w, uint64_t h, uint64_t x, uint64_t hsz,
			uint64_t *info)
{
	return rd(w->in, h, info, 3 * 8) || info[0] != x || info[2] > HEAP_MAX ||
	       info[2] < hsz + 16 ? -1 : 0;
}

/* A thread arena's heaps, from the one holding top down the prev chain.
 * The chain is followed to the arena's first heap before any heap is
 * walked: a cycle in it (the target's words) would walk the same heaps
 * 65,536 times, each chunk a slot. */
static int walk_thread(struct walk *w, uint64_t x, const uint64_t *ar,
		       uint64_t **heaps, size_t *nheaps, size_t *aheaps)
{
	uint64_t top = ar[AR_TOP / 8], hsz = 0, first, h, info[3];
	unsigned k;

	if (!thread_arena(w->in, x, &hsz))
		return bad(w, "glibc's arena at %#llx lost its heap",
			   (unsigned long long)x);
	first = x - hsz;
	for (k = 0, h = top & ~(HEAP_MAX - 1); k < HEAP_CHAIN_MAX && h != first;
	     k++, h = info[1])
		if (heap_info_of(w, h, x, hsz, info))
			return bad(w, "glibc's heap at %#llx of arena %#llx "
				   "is not one", (unsigned long long)h,
				   (unsigned long long)x);
	if (h != first)
		return bad(w, "glibc's heaps of arena %#llx do not lead to it",
			   (unsigned long long)x);
	/* (bounded again: memory that changed under the census) */
	for (k = 0, h = top & ~(HEAP_MAX - 1); k <= HEAP_CHAIN_MAX; k++, h = info[1]) {
		uint64_t start, stop;

		if (heap_info_of(w, h, x, hsz, info))
			return bad(w, "glibc's heap at %#llx of arena %#llx "
				   "is not one", (unsigned long long)h,
				   (unsigned long long)x);
		grow_array((void **)heaps, aheaps, *nheaps + 1, sizeof(**heaps));
		(*heaps)[(*nheaps)++] = h;
		start = h == first ? (x + AR_SIZE + 15) & ~15ull : h + hsz;
		stop = (top & ~(HEAP_MAX - 1)) == h ? top : 0;
		if (walk_heap(w, start, h + info[2], stop, 0))
			return -1;
		if (h == first)
			return 0;
	}
	return bad(w, "glibc's heaps of arena %#llx do not lead to it",
		   (unsigned long long)x);
}

/* Arena AR's fastbins: their chunks are free though they look in use. */
static int fastbins(struct walk *w, uint64_t x, const uint64_t *ar)
{
	size_t steps = 0;
	unsigned i;

	for (i = 0; i < AR_NFASTBINS; i++) {
		uint64_t p = ar[AR_FASTBINS / 8 + i];

		while (p) {
			struct chunk *ch = find_chunk(w, p);
			uint64_t fd;

			if (!ch || ch->state != USED || ch->size != (i + 2) * 16 ||
			    ++steps > w->n || rd(w->in, p + 16, &fd, 8))
				return bad(w, "glibc's fastbin %u of arena %#llx "
					   "is corrupt at %#llx", i,
					   (unsigned long long)x,
					   (unsigned long long)p);
			ch->state = CACHED;
			p = ((p + 16) >> 12) ^ fd;
		}
	}
	return 0;
}

/* ---- mmapped chunks ---- */

static int in_heaps(uint64_t p, const uint64_t *heaps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p >= heaps[i] && p - heaps[i] < HEAP_MAX)
			return 1;
	return 0;
}

/*
 * The chunk memalign made inside the mmapped chunk at P (SZ bytes), or P:
 * _int_memalign leaves P's header and puts the aligned chunk Q further on,
 * prev_size the lead (Q - P), IS_MMAPPED, ending where P's chunk ends.
 * Looked for in the first 64 KiB (the alignments asked of big blocks).
 */
static uint64_t memaligned(struct walk *w, uint64_t p, uint64_t sz)
{
	uint64_t q, lim = sz < MEMALIGN_SPAN ? sz : MEMALIGN_SPAN;

	for (q = p + 16; q + 32 <= p + lim; q += 16) {
		uint64_t hdr[2];

		if (word_at(w, q, p + sz, &hdr[0]) || hdr[0] != q - p ||
		    word_at(w, q + 8, p + sz, &hdr[1]))
			continue;
		if ((hdr[1] & FLAGS) == IS_MMAPPED &&
		    q + (hdr[1] & ~FLAGS) == p + sz)
			return q;
	}
	return p;
}

/* Every page of writable anonymous memory outside the arenas' heaps that
 * starts an mmapped chunk (prev_size 0, IS_MMAPPED alone, a whole number
 * of pages, all mapped): a block. */
static void mmapped(struct walk *w, const uint64_t *heaps, size_t nheaps,
		    struct census_block **mm, size_t *nmm, size_t *amm,
		    uint64_t *total)
{
	uint64_t skip_to = 0;
	size_t i;

	for (i = 0; i < w->in->nmaps; i++) {
		const struct census_map *m = &w->in->maps[i];
		uint64_t p;

		if (!writable(m) || m->inode || !strcmp(m->path, "[heap]") ||
		    !strcmp(m->path, "[stack]"))
			continue;
		for (p = m->start > skip_to ? m->start : skip_to; p < m->end; p += PAGE) {
			uint64_t prev, hdr, sz, q;

			if (in_heaps(p, heaps, nheaps) || word_at(w, p, m->end, &prev) ||
			    word_at(w, p + 8, m->end, &hdr))
				continue;
			sz = hdr & ~FLAGS;
			if (prev || (hdr & FLAGS) != IS_MMAPPED || sz < PAGE ||
			    sz % PAGE || !rw_span(w->in, p, sz))
				continue;
			grow_array((void **)mm, amm, *nmm + 1, sizeof(**mm));
			memset(&(*mm)[*nmm], 0, sizeof(**mm));
			q = memaligned(w, p, sz);
			if (word_at(w, q + 16, m->end, &(*mm)[*nmm].word0))
				(*mm)[*nmm].word0 = 0;
			(*mm)[*nmm].addr = q + 16;
			(*mm)[(*nmm)++].size = p + sz - q - 16;
			*total += sz;
			skip_to = p + sz;
			if (skip_to >= m->end)
				break;
			p = skip_to - PAGE;
		}
	}
}

/* ---- the census ---- */

static int cmp_block(const void *pa, const void *pb)
{
	const struct census_block *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int census_glibc(const struct census_input *in, struct census *c)
{
	struct walk w;
	uint64_t *heaps = NULL, mm_total = 0;
	struct census_block *mm = NULL;
	size_t nheaps = 0, aheaps = 0, nmm = 0, amm = 0, i, k;
	unsigned a;

	if (!c->main_arena && census_glibc_arenas(in, c))
		return -1;
	memset(&w, 0, sizeof(w));
	w.in = in;
	w.c = c;
	w.buf = xmalloc(WIN);
	c->exact = 1;
	c->why[0] = '\0';
	for (a = 0; a < c->narenas && !w.failed; a++) {
		uint64_t ar[AR_SIZE / 8];

		if (rd(in, c->arenas[a], ar, sizeof(ar)))
			bad(&w, "glibc's arena at %#llx cannot be read",
			    (unsigned long long)c->arenas[a]);
		else if (a == 0)
			walk_main(&w, ar);
		else
			walk_thread(&w, c->arenas[a], ar, &heaps, &nheaps, &aheaps);
	}
	/* one arena's walk is in address order already: sort the rest */
	for (i = 1; i < w.n && w.ch[i - 1].addr < w.ch[i].addr; i++)
		;
	if (i < w.n)
		census_sort_chunks(&w);
	for (a = 0; a < c->narenas && !w.failed; a++) {
		uint64_t ar[AR_SIZE / 8];

		if (!rd(in, c->arenas[a], ar, sizeof(ar)))
			fastbins(&w, c->arenas[a], ar);
	}
	if (!w.failed)
		census_tcaches(&w);
	w.base = w.len = 0;
	mmapped(&w, heaps, nheaps, &mm, &nmm, &amm, &mm_total);
	if (c->mp && !w.failed) {
		int32_t n_mmaps;
		uint64_t mem;

		if (!rd(in, c->mp + MP_N_MMAPS, &n_mmaps, 4) &&
		    !rd(in, c->mp + MP_MMAPPED_MEM, &mem, 8) &&
		    ((uint64_t)n_mmaps != nmm || mem != mm_total))
			bad(&w, "%zu mmapped chunks of %llu bytes found, glibc "
			    "counts %d of %llu", nmm, (unsigned long long)mm_total,
			    (int)n_mmaps, (unsigned long long)mem);
	}
	c->nmmapped = nmm;
	/* the blocks written over the chunks they come from (a block is no
	 * bigger than a chunk, and block k comes from chunk i >= k): the
	 * two arrays are never held whole at once (10^7 blocks: 320 MB) */
	_Static_assert(sizeof(struct census_block) <= sizeof(struct chunk),
		       "a census block fits in a chunk's place");
	for (i = k = 0; i < w.n; i++)
		if (w.ch[i].state == USED) {
			struct census_block cb;

			memset(&cb, 0, sizeof(cb));
			cb.addr = w.ch[i].addr + 16;
			cb.word0 = w.ch[i].word0;
			cb.size = w.ch[i].size - 8;
			memcpy((char *)w.ch + k++ * sizeof(cb), &cb, sizeof(cb));
		}
	c->blocks = xrealloc(w.ch, (k + nmm + 1) * sizeof(*c->blocks));
	w.ch = NULL;
	for (i = 0; i < nmm; i++)
		c->blocks[k++] = mm[i];
	c->nblocks = k;
	for (i = 1; i < k && c->blocks[i - 1].addr < c->blocks[i].addr; i++)
		;
	if (i < k)
		qsort(c->blocks, k, sizeof(*c->blocks), cmp_block);
	for (i = 0; i < k; i++)
		c->bytes += c->blocks[i].size;
	free(w.buf);
	free(w.ch);
	free(heaps);
	free(mm);
	return 0;
}
