/*
 * fuzz_census - glibc's census (census_glibc.c, census_tcache.c,
 * census.c: census_glibc, census_glibc_locked, census_types) on a fake
 * process: its maps, threads and memory are the input, read through the
 * census's callback (census.h: census_read_fn) as process_vm_readv reads
 * a real one.
 *
 * Input (little-endian): u8 nmaps (at most 32), u8 nthreads (at most 4);
 * per map 17 bytes: u64 start, u32 length, u32 stored, u8 kind; per
 * thread a u64 thread pointer; then each map's first STORED bytes, in
 * order (what the input lacks, and the rest of the map, reads as zeros).
 * Starts and lengths are rounded to pages; maps that overlap the one
 * before are dropped, and at most 8 MiB are mapped in all (the census's
 * work is in proportion to the memory it is given).  Kinds (& 7): 0
 * anonymous rw-p, 1 libc's data rw-p, 2 [heap], 3 [stack], 4 an
 * object's read-only data r--p, 5 libc's first map r--p (its file does
 * not exist: the TLS offset of the tcache is looked for near the thread
 * pointer), 6 ---p, 7 an object's rw-p data.
 *
 * Returns -1 if no census could be taken (no main_arena), -2 if the
 * census is not exact, else the blocks found (their C++ types counted,
 * times 1,000,000, added).  tests/fuzz/census_seed.py makes the seeds
 * from a real glibc heap.
 */
#include "fuzz.h"
#include "analysis/census.h"

#define MAX_MAPS 32
#define MAX_THREADS 4
#define MAX_TOTAL (8u << 20)
#define PAGE 4096ull

struct fake {
	struct census_map maps[MAX_MAPS];
	const uint8_t *data[MAX_MAPS];	/* its stored bytes */
	uint64_t stored[MAX_MAPS];
	size_t n;
};

static const struct {
	const char *perms, *path;
	uint64_t inode;
} kinds[8] = {
	{ "rw-p", "", 0 },
	{ "rw-p", "/nonexistent/libc.so.6", 7 },
	{ "rw-p", "[heap]", 0 },
	{ "rw-p", "[stack]", 0 },
	{ "r--p", "/nonexistent/obj", 8 },
	{ "r--p", "/nonexistent/libc.so.6", 7 },
	{ "---p", "", 0 },
	{ "rw-p", "/nonexistent/obj", 8 },
};

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static long fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fake *f = ctx;
	size_t done = 0, i = 0;

	/* the map holding ADDR, then the ones that follow without a gap */
	while (i < f->n && f->maps[i].end <= addr)
		i++;
	while (done < len && i < f->n) {
		const struct census_map *m = &f->maps[i];
		uint64_t a = addr + done, off, n;

		if (a < m->start || m->perms[0] != 'r')
			break;
		off = a - m->start;
		n = m->end - a < len - done ? m->end - a : len - done;
		if (off < f->stored[i]) {
			uint64_t k = f->stored[i] - off < n ? f->stored[i] - off : n;

			memcpy((uint8_t *)buf + done, f->data[i] + off, k);
			memset((uint8_t *)buf + done + k, 0, n - k);
		} else {
			memset((uint8_t *)buf + done, 0, n);
		}
		done += n;
		i++;
	}
	return done ? (long)done : -1;
}

FUZZ(census)
{
	static struct fake f;
	struct census_thread th[MAX_THREADS];
	struct census_input in;
	struct census c;
	size_t nmaps, nthreads, i, at, total = 0;
	long r;

	if (size < 2)
		return -1;
	nmaps = data[0] % (MAX_MAPS + 1);
	nthreads = data[1] % (MAX_THREADS + 1);
	at = 2;
	if (size < at + nmaps * 17 + nthreads * 8)
		return -1;
	f.n = 0;
	for (i = 0; i < nmaps; i++, at += 17) {
		const uint8_t *p = data + at;
		uint64_t start = le(p, 8) & ~(PAGE - 1);
		uint64_t len = (le(p + 8, 4) + PAGE - 1) & ~(PAGE - 1);
		unsigned kind = p[16] & 7;
		struct census_map *m = &f.maps[f.n];

		if (!len || start + len < start || total + len > MAX_TOTAL ||
		    (f.n && start < f.maps[f.n - 1].end))
			continue;
		total += len;
		memset(m, 0, sizeof(*m));
		m->start = start;
		m->end = start + len;
		m->inode = kinds[kind].inode;
		m->offset = kind == 5 ? 0 : 0x1000 * (kind == 1 || kind == 7);
		memcpy(m->perms, kinds[kind].perms, 5);
		m->path = (char *)kinds[kind].path;
		f.stored[f.n] = le(p + 12, 4);
		f.n++;
	}
	for (i = 0; i < nthreads; i++, at += 8) {
		th[i].tid = 100 + (int32_t)i;
		th[i].tp = le(data + at, 8);
	}
	for (i = 0; i < f.n; i++) {
		uint64_t room = size - at;

		if (f.stored[i] > f.maps[i].end - f.maps[i].start)
			f.stored[i] = f.maps[i].end - f.maps[i].start;
		if (f.stored[i] > room)
			f.stored[i] = room;
		f.data[i] = data + at;
		at += f.stored[i];
	}
	memset(&in, 0, sizeof(in));
	in.read = fake_read;
	in.ctx = &f;
	in.maps = f.maps;
	in.nmaps = f.n;
	in.threads = th;
	in.nthreads = nthreads;
	memset(&c, 0, sizeof(c));
	if (census_glibc_arenas(&in, &c)) {
		census_release(&c);
		return -1;
	}
	(void)census_glibc_locked(&in, &c);
	if (census_glibc(&in, &c)) {
		census_release(&c);
		return -1;
	}
	r = c.exact ? (long)c.nblocks : -2;
	if (getenv("FUZZ_CENSUS_WHY"))
		fprintf(stderr, "census: %s\n", c.exact ? "exact" : c.why);
	for (i = 1; i < c.nblocks; i++)
		if (c.blocks[i - 1].addr >= c.blocks[i].addr)
			abort();	/* sorted, one block per address */
	if (c.exact) {
		census_types(&in, &c);
		r += 1000000L * c.ntypes;
	}
	census_release(&c);
	return r;
}
