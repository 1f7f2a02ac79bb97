/*
 * roots.c - roots and memory of a traced process for the scan.
 *
 * Roots are decided per address range, not per mapping: the kernel merges
 * adjacent anonymous mappings, so one line of /proc/PID/maps may hold a
 * glibc mmapped chunk and the program's own memory side by side (CPython's
 * arenas).  With glibc's malloc, what glibc owns (the brk heap, thread
 * arenas' heaps, mmapped chunks: glibc_heap.h) is heap, scanned only
 * inside reachable blocks; the rest of every writable mapping is a root.
 * With another allocator, a mapping holding a live block is heap whole,
 * unless it is an object's data or bss (an allocator serving a static
 * array): then only its live blocks are heap.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/glibc_heap.h"
#include "base/debug.h"
#include "target/maps.h"
#include "target/memio.h"
#include "recorder/rechook.h"
#include "analysis/roots.h"
#include "base/debug.h"
#include "base/util.h"

/* Ranges this long or longer skip untouched anonymous pages (pagemap). */
#define RESIDENT_MIN (8u << 10)
/*
 * The read-ahead cache, at most 4 MiB a thread of the scan: windows of 64
 * KiB next to the last window read (blocks read in address order, up or
 * down, however sparse: a list, big_heap's lost blocks in phase 2) or
 * while those replaced had a quarter or more of them used, of 8 KiB else
 * (blocks far apart: a hash table's nodes, reached in batches; gawk read
 * 450-640 MB of windows for 115 MB of blocks with 64 KiB ones only), back
 * to 64 KiB once 8 KiB ones come half used (two lists of 1 KiB blocks
 * interleaved: every other block read, 4.5 times the reads with 8 KiB).
 */
#define WIN_SIZE (64u << 10)
#define WIN_SLOTS 32
#define SWIN_SIZE (8u << 10)
#define SWIN_SLOTS 256
_Static_assert(WIN_SIZE / 4096 + 1 <= 32, "a window's pages in its mapped bits");

struct window {
	uint64_t base;		/* its size aligned */
	uint64_t lo, hi;	/* [lo, hi) valid in data */
	uint64_t used;		/* bytes read out of it */
	uint8_t *data;		/* its size: data[a - base] */
	uint32_t mapped;	/* data's pages populated, a bit each */
};

struct mapping {
	uint64_t start, end;
	int anon;		/* no file behind it: untouched pages are zeros */
	int heap;		/* [heap]: the brk heap (glibc's main arena) */
	int relro;		/* read-only, of a file: roots only where written */
	int object;		/* a file's data, or the bss right after it */
};

struct proc_mem;

/* A thread's reads: its read-ahead cache (scan_input.ctx, ctx_worker). */
struct reader {
	struct proc_mem *m;
	struct window win[WIN_SLOTS];
	struct window swin[SWIN_SLOTS];
	int dense;		/* -4..4: >= 0, the windows replaced were used */
	uint64_t last_lo, last_hi;	/* the last window read */
};

struct proc_mem {
	pid_t pid;
	int pagemap;		/* /proc/PID/pagemap, or -1 */
	struct mapping *maps;	/* the readable and writable ones, sorted */
	size_t nmaps, amaps;
	struct scan_range *roots;
	size_t nroots, aroots;
	struct scan_range *owned;	/* glibc's memory, sorted */
	size_t nowned, aowned;
	struct reader rd[2];	/* the scan's two threads' */
	/* mappings left out (scan_process's SKIP) */
	const struct scan_range *skip;
	size_t nskip;
};

/* Position of the first block at or above START. */
static size_t first_block(const struct scan_blocks *b, uint64_t start)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (scan_blocks_addr(b, mid) < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct mapping *mapping_at(const struct proc_mem *m, uint64_t a)
{
	size_t lo = 0, hi = m->nmaps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->maps[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nmaps && m->maps[lo].start <= a ? &m->maps[lo] : NULL;
}

/* Up to LEN bytes at ADDR, untouched anonymous pages not faulted in. */
static long read_direct(const struct proc_mem *m, uint64_t addr, void *buf,
			size_t len)
{
	const struct mapping *map = mapping_at(m, addr);

	if (len >= RESIDENT_MIN && map && map->anon)
		return (long)mem_read_resident(m->pid, m->pagemap, addr, buf, len);
	return (long)mem_read(m->pid, addr, buf, len);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The pages of LEN bytes at P mapped before a read fills them: a page
 * fault costs ~12 us on these VMs, populating ~0.6 us a page (a kernel
 * before 5.14 says EINVAL: the read faults them in as before). */
static void populate(void *p, size_t len)
{
	uintptr_t from = (uintptr_t)p & ~(uintptr_t)4095;
	uintptr_t to = ((uintptr_t)p + len + 4095) & ~(uintptr_t)4095;

	madvise((void *)from, to - from, MADV_POPULATE_WRITE);
}

/*
 * The pages of W's data at offsets [FROM, TO) mapped before a read fills
 * them, those not mapped yet: a page fault costs 0.1-15 us (a VM's are
 * dear), populating ~2.5; each page once (a system call at every fill
 * was 15,000 for perl's 48 MB), and only those read (a small root in a
 * window of its own populated all 64 KiB: sqlite3's 267 KB of roots
 * and blocks cost 12 windows, 204 pages).
 */
static void window_populate(struct window *w, size_t from, size_t to)
{
	uintptr_t first = (uintptr_t)w->data >> 12, p, q;

	if (from >= to)
		return;
	p = (((uintptr_t)w->data + from) >> 12) - first;
	q = (((uintptr_t)w->data + to - 1) >> 12) - first + 1;
	while (p < q) {
		uintptr_t e;

		if (w->mapped & 1u << p) {
			p++;
			continue;
		}
		for (e = p; e < q && !(w->mapped & 1u << e); e++)
			w->mapped |= 1u << e;
		populate((void *)((first + p) << 12), (e - p) << 12);
		p = e;
	}
}

/* Window W (of SIZE bytes) made the one holding A, read in within A's
 * mapping; NULL if A cannot be read. */
static struct window *window_fill(struct reader *rd, struct window *w,
				  uint64_t size, uint64_t a)
{
	uint64_t base = a & ~(size - 1);
	const struct mapping *map;
	long got;

	/* how much of the window replaced was used */
	if (w->hi > w->lo) {
		int dense = w->used * (size == WIN_SIZE ? 4 : 2) >= size;

		rd->dense += dense ? 1 : -1;
		rd->dense = rd->dense > 4 ? 4 : rd->dense < -4 ? -4 : rd->dense;
	}
	w->base = base;
	w->lo = w->hi = w->used = 0;
	map = mapping_at(rd->m, a);
	if (!map)
		return NULL;
	w->lo = base < map->start ? map->start : base;
	w->hi = base + size > map->end ? map->end : base + size;
	if (!w->data)
		w->data = xmalloc(size);
	window_populate(w, w->lo - base, w->hi - base);
	got = read_direct(rd->m, w->lo, w->data + (w->lo - base), w->hi - w->lo);
	w->hi = got > 0 ? w->lo + (uint64_t)got : w->lo;
	rd->last_lo = w->lo;
	rd->last_hi = w->hi;
	return a >= w->lo && a < w->hi ? w : NULL;
}

static inline int holds(const struct window *w, uint64_t base, uint64_t a)
{
	return w->base == base && w->lo < w->hi && a >= w->lo && a < w->hi;
}

/* The window holding A, read in (within A's mapping) if not cached. */
static struct window *window_at(struct reader *rd, uint64_t a)
{
	uint64_t base = a & ~(uint64_t)(WIN_SIZE - 1);
	uint64_t sbase = a & ~(uint64_t)(SWIN_SIZE - 1);
	struct window *w = &rd->win[(base / WIN_SIZE) % WIN_SLOTS];
	struct window *sw = &rd->swin[(sbase / SWIN_SIZE) % SWIN_SLOTS];

	if (holds(w, base, a))
		return w;
	if (holds(sw, sbase, a))
		return sw;
	/* next to the last window read (blocks in address order, however
	 * sparse), or windows used: 64 KiB */
	if (rd->dense >= 0 || (a >= rd->last_hi && a - rd->last_hi < WIN_SIZE) ||
	    (a < rd->last_lo && rd->last_lo - a <= WIN_SIZE))
		return window_fill(rd, w, WIN_SIZE, a);
	return window_fill(rd, sw, SWIN_SIZE, a);
}

/*
 * The scan's reads.  Blocks are read one by one, in the order pointers
 * lead to them: through a cache of WIN_SLOTS windows of WIN_SIZE bytes, so
 * that neighbouring blocks cost one system call, not one each.
 */
static long read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct reader *rd = ctx;
	size_t done = 0;

	if (len > WIN_SIZE / 2)
		return read_direct(rd->m, addr, buf, len);
	while (done < len) {
		struct window *w = window_at(rd, addr + done);
		size_t n;

		if (!w)
			break;
		n = (size_t)(w->hi - (addr + done));
		if (n > len - done)
			n = len - done;
		memcpy((char *)buf + done, w->data + (addr + done - w->base), n);
		w->used += n;
		done += n;
	}
	return done ? (long)done : -1;
}

static uint64_t skip_mem(void *ctx, uint64_t addr, uint64_t len)
{
	const struct proc_mem *m = ((const struct reader *)ctx)->m;
	const struct mapping *map = mapping_at(m, addr);

	if (!map || !map->anon)
		return 0;
	if (len > map->end - addr)
		len = map->end - addr;
	return mem_untouched(m->pagemap, addr, len);
}

static int read_words(void *ctx, uint64_t addr, uint64_t *w, unsigned n)
{
	const struct proc_mem *m = ctx;

	return mem_read_all(m->pid, addr, w, n * sizeof(*w));
}

static void add_range(struct scan_range **r, size_t *n, size_t *a,
		      uint64_t start, uint64_t end, uint64_t born_before)
{
	if (start >= end)
		return;
	grow_array((void **)r, a, *n + 1, sizeof(**r));
	(*r)[*n].start = start;
	(*r)[*n].end = end;
	(*r)[*n].born_before = born_before;
	(*n)++;
}

/* Is [START, END) inside a range M leaves out? */
static int left_out(const struct proc_mem *m, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < m->nskip; i++)
		if (start >= m->skip[i].start && end <= m->skip[i].end)
			return 1;
	return 0;
}

/* The readable and writable mappings worth scanning, and the read-only
 * private ones of files (RELRO data lives there), sorted. */
static int read_maps(struct proc_mem *m)
{
	struct maps_file *f = maps_open(m->pid);
	struct maps_entry e;

	if (!f)
		return error("cannot read /proc/%d/maps: %s", (int)m->pid, strerror(errno));
	uint64_t prev_end = 0;
	int prev_file = 0, inode_prev;

	while (maps_next(f, &e)) {
		uint64_t start = e.start, end = e.end, inode = e.inode;
		const char *perms = e.perms, *name = e.name;
		struct mapping *map;

		/* an anonymous mapping right after a file's data is its bss */
		inode_prev = prev_file && start == prev_end && !inode && !name[0];
		prev_file = inode != 0 && perms[1] == 'w';
		prev_end = end;
		/* the recorder's ring and tables (recorder.h): ptleak's */
		if (!strncmp(name, REC_AREA_NAME_MAPS, strlen(REC_AREA_NAME_MAPS)))
			continue;
		if (left_out(m, start, end))
			continue;
		if (perms[0] != 'r' || !strcmp(name, "[vvar]") ||
		    !strcmp(name, "[vsyscall]") || (perms[1] != 'w' &&
		    (perms[2] != '-' || perms[3] != 'p' || !inode)))
			continue;
		grow_array((void **)&m->maps, &m->amaps, m->nmaps + 1,
			   sizeof(*m->maps));
		map = &m->maps[m->nmaps++];
		map->start = start;
		map->end = end;
		map->anon = inode == 0;
		map->heap = !strcmp(name, "[heap]");
		map->relro = perms[1] != 'w';
		map->object = inode != 0 || inode_prev;
	}
	maps_close(f);
	return 0;
}

/*
 * glibc's memory in MAP: the brk heap (but a static executable's TLS at
 * its start: REGS' thread pointers), else the mmapped chunks and
 * arena heaps of its blocks B[FIRST..LAST).  -1: some block is not
 * glibc's (the mapping is then heap whole, the old rule).
 */
static int find_owned(struct proc_mem *m, const struct mapping *map,
		      const struct scan_blocks *b, size_t first, size_t last,
		      const struct arch_regs *regs, unsigned nregs)
{
	uint64_t end = 0;
	size_t i;

	if (map->heap) {
		/* less a static executable's main thread TLS and TCB */
		for (i = 0; i < nregs; i++) {
			uint64_t tp = arch_tp(&regs[i]);

			if (tp >= map->start && tp < map->end &&
			    tp + GLIBC_TCB_SIZE > end)
				end = tp + GLIBC_TCB_SIZE;
		}
		add_range(&m->owned, &m->nowned, &m->aowned,
			  end > map->start ? end : map->start, map->end, 0);
		return 0;
	}
	for (i = first; i < last; i++) {
		uint64_t s, e, a = scan_blocks_addr(b, i);

		if (a < end)
			continue;	/* in the last chunk or heap found */
		if (glibc_owner(read_words, m, a, map->start, map->end,
				&s, &e))
			return -1;
		add_range(&m->owned, &m->nowned, &m->aowned, s, e, 0);
		end = e;
	}
	return 0;
}

static void add_root(void *ctx, uint64_t start, uint64_t end)
{
	struct proc_mem *m = ctx;

	add_range(&m->roots, &m->nroots, &m->aroots, start, end, 0);
}

/* [from, map end) less what glibc owns there: roots. */
static void add_roots(struct proc_mem *m, size_t owned0, uint64_t from,
		      uint64_t end, uint64_t born_before)
{
	size_t k;

	for (k = owned0; k < m->nowned && from < end; k++) {
		const struct scan_range *o = &m->owned[k];

		if (o->end <= from)
			continue;
		add_range(&m->roots, &m->nroots, &m->aroots, from,
			  o->start < end ? o->start : end, born_before);
		if (o->end > from)
			from = o->end;
	}
	add_range(&m->roots, &m->nroots, &m->aroots, from, end, born_before);
}

/* Where the scan of a stack mapping starts: below its thread's sp. */
static uint64_t stack_from(const struct mapping *map, uint64_t sp)
{
	uint64_t from = sp - ARCH_STACK_REDZONE;

	return sp < ARCH_STACK_REDZONE || from < map->start ? map->start : from;
}

static int find_roots(struct proc_mem *m, const struct scan_blocks *b,
		      const struct arch_regs *regs, unsigned nregs,
		      const struct scan_dead *dead, size_t ndead, int alloc)
{
	int glibc = (alloc & ROOTS_GLIBC) && !(alloc & ROOTS_OLDER_UNKNOWN);

	size_t i, k;

	for (i = 0; i < m->nmaps; i++) {
		const struct mapping *map = &m->maps[i];
		size_t first = first_block(b, map->start), last = first;
		size_t owned0 = m->nowned;
		uint64_t from = map->start, born_before = 0;

		if (map->relro) {
			mem_private_runs(m->pagemap, map->start, map->end,
					 add_root, m);
			continue;
		}
		while (last < b->n && scan_blocks_addr(b, last) < map->end)
			last++;
		for (k = 0; k < nregs; k++)
			if (arch_sp(&regs[k]) >= map->start &&
			    arch_sp(&regs[k]) < map->end)
				break;
		if (k < nregs) {
			from = stack_from(map, arch_sp(&regs[k]));
		} else if (last > first &&
			   (!glibc || find_owned(m, map, b, first, last,
						regs, nregs))) {
			if (!map->object && !(alloc & ROOTS_OLDER_UNKNOWN))
				continue;	/* heap: from reachable blocks */
			/* an allocator in an object's data or bss (a static
			 * array), or one holding blocks older than the
			 * tracing: all but the known blocks are roots */
			m->nowned = owned0;
			for (k = first; k < last; k++)
				add_range(&m->owned, &m->nowned, &m->aowned,
					  scan_blocks_addr(b, k), scan_blocks_addr(b, k) +
					  scan_blocks_size(b, k), 0);
		} else {
			for (k = 0; k < ndead; k++)
				if (dead[k].sp >= map->start && dead[k].sp < map->end)
					break;
			if (k < ndead) {
				from = stack_from(map, dead[k].sp);
				born_before = dead[k].died_ns ? dead[k].died_ns : 1;
			}
		}
		add_roots(m, owned0, from, map->end, born_before);
	}
	return 0;
}

/* PTLEAK_DEBUG=scan: the roots and where they point into blocks. */
static void debug_roots(const struct proc_mem *m, const struct scan_blocks *b)
{
	size_t r;

	for (r = 0; r < m->nowned; r++)
		fprintf(stderr, "ptleak-debug: glibc's %#llx-%#llx\n",
			(unsigned long long)m->owned[r].start,
			(unsigned long long)m->owned[r].end);
	for (r = 0; r < m->nroots; r++) {
		uint64_t a;

		fprintf(stderr, "ptleak-debug: root %#llx-%#llx\n",
			(unsigned long long)m->roots[r].start,
			(unsigned long long)m->roots[r].end);
		for (a = (m->roots[r].start + 7) & ~7ull; a + 8 <= m->roots[r].end; a += 8) {
			uint64_t w, ba, bs;
			size_t i;

			if (mem_read(m->pid, a, &w, 8) != 8)
				break;
			i = first_block(b, w + 1);
			if (i-- == 0)
				continue;
			ba = scan_blocks_addr(b, i);
			bs = scan_blocks_size(b, i);
			if (w < ba + (bs ? bs : 1))
				fprintf(stderr, "ptleak-debug:   [%#llx] -> block %#llx+%llu "
					"(%llu bytes)\n",
					(unsigned long long)a, (unsigned long long)ba,
					(unsigned long long)(w - ba),
					(unsigned long long)bs);
		}
	}
}

/* 2 (a second thread for the scan) with two CPUs or more to run on; 1
 * else, or with PTLEAK_SCAN_THREADS=1 (the other figure of a bench). */
static int scan_threads(void)
{
	const char *env = getenv("PTLEAK_SCAN_THREADS");
	cpu_set_t cpus;

	if (env && *env)
		return atoi(env) >= 2 ? 2 : 1;
	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		return 1;
	return CPU_COUNT(&cpus) >= 2 ? 2 : 1;
}

/*
 * The most the blocks read ahead keep (scan_input.preread):
 * PTLEAK_SCAN_PREREAD MiB (0: none, a bench's other figure), else a
 * sixteenth of the memory, 64 MiB at most (what it holds at worst, 16
 * bytes a block and 4 a word: perl's 40 MB of arenas 20 MB, of which
 * 3.5 MB are kept).
 */
static uint64_t preread_cap(void)
{
	const char *env = getenv("PTLEAK_SCAN_PREREAD");
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t cap = 64ull << 20;

	if (env && *env)
		return strtoull(env, NULL, 10) << 20;
	if (pages > 0 && psize > 0 && (uint64_t)pages * (uint64_t)psize / 16 < cap)
		cap = (uint64_t)pages * (uint64_t)psize / 16;
	return cap;
}

int scan_process(pid_t pid, const struct heap *heap,
		 const struct arch_regs *regs, unsigned nregs, int reg_roots,
		 const struct scan_dead *dead, size_t ndead, int alloc,
		 const struct scan_range *skip, size_t nskip,
		 struct scan_result *out, struct scan_stats *st)
{
	struct scan_blocks b;
	struct proc_mem m;
	uint64_t *values = NULL;
	struct scan_input in;
	char path[64];
	unsigned i;
	int ret = -1;

	memset(&in, 0, sizeof(in));
	memset(&m, 0, sizeof(m));
	memset(out, 0, sizeof(*out));
	m.pagemap = -1;
	if (scan_blocks_of(&b, heap))
		return -1;
	m.pid = pid;
	m.skip = skip;
	m.nskip = nskip;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	m.pagemap = open(path, O_RDONLY | O_CLOEXEC);
	if (read_maps(&m) ||
	    find_roots(&m, &b, regs, nregs, dead, ndead, alloc))
		goto out;

	in.set = &b;
	in.result = out;
	in.roots = m.roots;
	in.nroots = m.nroots;
	if (reg_roots && nregs) {
		values = xcalloc((size_t)nregs * ARCH_NREG_VALUES, sizeof(*values));
		for (i = 0; i < nregs; i++)
			arch_reg_values(&regs[i], values + (size_t)i * ARCH_NREG_VALUES);
		in.root_values = values;
		in.nvalues = (size_t)nregs * ARCH_NREG_VALUES;
	}
	in.read = read_mem;
	in.skip = skip_mem;
	in.preread = preread_cap();
	in.glibc_chunks = alloc & ROOTS_GLIBC;
	m.rd[0].m = m.rd[1].m = &m;
	in.ctx = &m.rd[0];
	in.ctx_worker = &m.rd[1];
	in.threads = scan_threads();
	if (getenv("PTLEAK_DEBUG") && strstr(getenv("PTLEAK_DEBUG"), "scan"))
		debug_roots(&m, &b);
	debug_time("scan: roots found");
	ret = scan_classify(&in, st);
out:
	if (m.pagemap >= 0)
		close(m.pagemap);
	free(m.maps);
	free(m.roots);
	free(m.owned);
	for (i = 0; i < WIN_SLOTS; i++) {
		free(m.rd[0].win[i].data);
		free(m.rd[1].win[i].data);
	}
	for (i = 0; i < SWIN_SLOTS; i++) {
		free(m.rd[0].swin[i].data);
		free(m.rd[1].swin[i].data);
	}
	free(values);
	scan_blocks_free(&b);
	return ret ? -1 : 0;
}
