/* mirror.c - the live blocks' memory read before a scan (mirror.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mirror.h"
#include "base/util.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Each span's copy starts at a multiple of 64 bytes of mem. */
static uint64_t span_room(uint64_t len)
{
	return (len + 63) & ~63ull;
}

/* The spans (lo, hi: the blocks' extent), and their total room: 0, or
 * -1 (no memory). */
static int plan(struct mirror *mi, const struct scan_blocks *b,
		const struct mirror_io *io, uint64_t cap)
{
	size_t k, a = 0;
	uint64_t room = 0, end = 0;

	for (k = 0; k < b->n; k++) {
		uint64_t lo = scan_blocks_addr(b, k), size = scan_blocks_size(b, k), hi;
		struct mirror_span *s = mi->n ? &mi->span[mi->n - 1] : NULL;

		if (size < MIRROR_MIN || size > MIRROR_MAX)
			continue;
		hi = size > UINT64_MAX - lo ? UINT64_MAX : lo + size;
		if (s && lo < end && (lo <= s->hi || lo - s->hi <= MIRROR_GAP)) {
			/* the same mapping, near or overlapping: the span grows */
			if (hi > end)
				hi = end;
			if (hi > s->hi) {
				uint64_t more = span_room(hi - s->lo) - span_room(s->hi - s->lo);

				if (room + more > cap)
					break;
				room += more;
				s->hi = hi;
			}
			continue;
		}
		end = io->map_end(io->ctx, lo);
		if (!end)
			continue;
		lo &= ~7ull;	/* its words' copies 8-byte aligned */
		if (hi > end)
			hi = end;
		if (room + span_room(hi - lo) > cap)
			break;
		if (mi->n == a) {
			struct mirror_span *p;

			a = a ? a * 2 : 64;
			p = realloc(mi->span, a * sizeof(*p));
			if (!p)
				return -1;
			mi->span = p;
		}
		mi->span[mi->n].lo = lo;
		mi->span[mi->n].hi = hi;
		mi->span[mi->n].data = NULL;
		mi->n++;
		room += span_room(hi - lo);
	}
	mi->bytes = room;
	return 0;
}

/* The fill: pieces of PIECE bytes of mem taken in turn by one or two
 * threads, each mapping its pages and reading the spans' parts in it;
 * bad[i]: where a read of span i came short (UINT64_MAX: none). */
#define PIECE	(1u << 20)

struct filler {
	struct mirror *mi;
	const struct mirror_io *io;
	uint64_t *bad;
	size_t npiece;
	size_t next;		/* atomic */
};

static void fill_piece(struct filler *f, size_t p)
{
	struct mirror *mi = f->mi;
	uint64_t from = (uint64_t)p * PIECE, to = from + PIECE;
	size_t lo = 0, hi = mi->n, i;

	if (to > mi->bytes)
		to = mi->bytes;
	/* every page mapped before the reads fill them (a page fault costs
	 * ~12 us on these VMs) */
	madvise(mi->mem + from, (size_t)(to - from), MADV_POPULATE_WRITE);
	/* the first span ending after FROM */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mirror_span *s = &mi->span[mid];

		if ((uint64_t)(s->data - mi->mem) + (s->hi - s->lo) <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < mi->n; i++) {
		struct mirror_span *s = &mi->span[i];
		uint64_t at = (uint64_t)(s->data - mi->mem), a, e, bad;
		long got;

		if (at >= to)
			break;
		a = at > from ? at : from;
		e = at + (s->hi - s->lo) < to ? at + (s->hi - s->lo) : to;
		if (a >= e)
			continue;
		got = f->io->read(f->io->ctx, s->lo + (a - at), mi->mem + a, (size_t)(e - a));
		if (got >= (long)(e - a))
			continue;
		bad = s->lo + (a - at) + (uint64_t)(got > 0 ? got : 0);
		{
			uint64_t was = __atomic_load_n(&f->bad[i], __ATOMIC_RELAXED);

			while (bad < was && !__atomic_compare_exchange_n(&f->bad[i], &was, bad, 0,
								 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				;
		}
	}
}

static void *fill(void *arg)
{
	struct filler *f = arg;
	size_t p;

	while ((p = __atomic_fetch_add(&f->next, 1, __ATOMIC_RELAXED)) < f->npiece)
		fill_piece(f, p);
	return NULL;
}

/* The pieces read by this thread and, with THREADS 2, a second one
 * (every signal blocked in it). */
static void fill_all(struct filler *f, int threads)
{
	pthread_t th;
	int two = 0;

	if (threads >= 2 && f->npiece > 1)
		two = !util_thread_start(&th, fill, f);
	fill(f);
	if (two)
		pthread_join(th, NULL);
}

void mirror_build(struct mirror *mi, const struct scan_blocks *b,
		  const struct mirror_io *io, uint64_t cap)
{
	struct filler f;
	uint64_t off = 0;
	size_t i;
	void *p;

	memset(mi, 0, sizeof(*mi));
	if (!cap || plan(mi, b, io, cap) || !mi->bytes) {
		mirror_free(mi);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.bad = malloc(mi->n * sizeof(*f.bad));
	p = mmap(NULL, mi->bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || !f.bad) {
		if (p != MAP_FAILED)
			munmap(p, mi->bytes);
		free(f.bad);
		mi->bytes = 0;
		mirror_free(mi);
		return;
	}
	mi->mem = p;
	/* huge pages where the system gives them */
	madvise(p, mi->bytes, MADV_HUGEPAGE);
	for (i = 0; i < mi->n; i++) {
		mi->span[i].data = mi->mem + off;
		off += span_room(mi->span[i].hi - mi->span[i].lo);
		f.bad[i] = UINT64_MAX;
	}
	f.mi = mi;
	f.io = io;
	f.npiece = (size_t)((mi->bytes + PIECE - 1) / PIECE);
	fill_all(&f, io->threads);
	for (i = 0; i < mi->n; i++)
		if (f.bad[i] < mi->span[i].hi)
			mi->span[i].hi = f.bad[i];
	free(f.bad);
}

const uint8_t *mirror_at(const struct mirror *mi, uint64_t addr, size_t len)
{
	size_t lo = 0, hi = mi->n;
	const struct mirror_span *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mi->span[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &mi->span[lo - 1];
	if (addr >= s->hi || len > s->hi - addr)
		return NULL;
	return s->data + (addr - s->lo);
}

void mirror_free(struct mirror *mi)
{
	if (mi->mem)
		munmap(mi->mem, mi->bytes);
	free(mi->span);
	memset(mi, 0, sizeof(*mi));
}
