/* roots.c - roots and memory of a traced process for the scan. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memio.h"
#include "roots.h"
#include "util.h"

struct collect {
	struct scan_block *b;
	size_t n;
};

static int add_block(const struct heap_block *hb, void *ctx)
{
	struct collect *c = ctx;

	c->b[c->n].addr = hb->addr;
	c->b[c->n].size = hb->size;
	c->n++;
	return 0;
}

static int cmp_block(const void *x, const void *y)
{
	const struct scan_block *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Some live block starts in [start, end). */
static int holds_block(const struct scan_block *b, size_t n, uint64_t start,
		       uint64_t end)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (b[mid].addr < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && b[lo].addr < end;
}

/* PTLEAK_DEBUG=scan: where the roots point into blocks, on stderr. */
static void debug_roots(pid_t pid, const struct scan_block *b, size_t n,
			const struct scan_range *roots, size_t nroots)
{
	size_t r, i;

	for (r = 0; r < nroots; r++) {
		uint64_t a;

		fprintf(stderr, "ptleak-debug: root %#llx-%#llx\n",
			(unsigned long long)roots[r].start,
			(unsigned long long)roots[r].end);
		for (a = (roots[r].start + 7) & ~7ull; a + 8 <= roots[r].end; a += 8) {
			uint64_t w;

			if (mem_read(pid, a, &w, 8) != 8)
				break;
			for (i = 0; i < n; i++)
				if (w >= b[i].addr && w < b[i].addr + (b[i].size ? b[i].size : 1))
					fprintf(stderr, "ptleak-debug:   [%#llx] -> block %#llx+%llu\n",
						(unsigned long long)a, (unsigned long long)b[i].addr,
						(unsigned long long)(w - b[i].addr));
		}
	}
}

static long read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return (long)mem_read(*(pid_t *)ctx, addr, buf, len);
}

int scan_process(pid_t pid, const struct heap *heap,
		 const struct arch_regs *regs, unsigned nregs, int reg_roots,
		 const uint64_t *dead_sps, size_t ndead, int glibc,
		 struct scan_block **out, size_t *nout, struct scan_stats *st)
{
	const struct heap_stats *hs = heap_stats(heap);
	struct collect c = { xcalloc(hs->in_use_blocks + 1, sizeof(*c.b)), 0 };
	struct scan_range *roots = NULL;
	uint64_t *values = NULL;
	size_t nroots = 0, aroots = 0;
	struct scan_input in;
	char path[64], line[512];
	unsigned i;
	FILE *f;
	int ret;

	heap_foreach(heap, add_block, &c);
	qsort(c.b, c.n, sizeof(*c.b), cmp_block);
	memset(&in, 0, sizeof(in));

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		error("cannot read %s: %s", path, strerror(errno));
		goto fail;
	}
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, from;
		char perms[8] = "", name[256] = "";

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %255[^\n]",
			   &start, &end, perms, name) < 3)
			continue;
		if (perms[0] != 'r' || perms[1] != 'w' || !strcmp(name, "[vvar]") ||
		    !strcmp(name, "[vsyscall]"))
			continue;
		from = start;
		for (i = 0; i < nregs; i++) {
			uint64_t sp = arch_sp(&regs[i]);

			if (sp >= start && sp < end) {
				from = sp - ARCH_STACK_REDZONE;
				if (from < start)
					from = start;
				break;
			}
		}
		/* a thread's stack; else a mapping with blocks in it is heap */
		if (i == nregs && holds_block(c.b, c.n, start, end))
			continue;
		if (i == nregs) {
			size_t k;

			for (k = 0; k < ndead; k++) {
				if (dead_sps[k] >= start && dead_sps[k] < end) {
					from = dead_sps[k] - ARCH_STACK_REDZONE;
					if (from < start)
						from = start;
					break;
				}
			}
		}
		grow_array((void **)&roots, &aroots, nroots + 1, sizeof(*roots));
		roots[nroots].start = from;
		roots[nroots].end = end;
		nroots++;
	}
	fclose(f);

	in.blocks = c.b;
	in.nblocks = c.n;
	in.roots = roots;
	in.nroots = nroots;
	if (reg_roots && nregs) {
		values = xcalloc((size_t)nregs * ARCH_NREG_VALUES, sizeof(*values));
		for (i = 0; i < nregs; i++)
			arch_reg_values(&regs[i], values + (size_t)i * ARCH_NREG_VALUES);
		in.root_values = values;
		in.nvalues = (size_t)nregs * ARCH_NREG_VALUES;
	}
	in.read = read_mem;
	in.glibc_chunks = glibc;
	in.ctx = &pid;
	if (getenv("PTLEAK_DEBUG") && strstr(getenv("PTLEAK_DEBUG"), "scan"))
		debug_roots(pid, c.b, c.n, roots, nroots);
	ret = scan_classify(&in, st);
	free(roots);
	free(values);
	if (ret)
		goto fail_blocks;
	*out = c.b;
	*nout = c.n;
	return 0;
fail:
	free(roots);
fail_blocks:
	free(c.b);
	return -1;
}
