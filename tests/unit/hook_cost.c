/*
 * hook_cost.c - what a patched call costs, counted by valgrind rather
 * than timed (bench/hook_cost): the blob patched into this process's own
 * allocator (hookstack.h, as the hook tests do), then ROUNDS malloc/free
 * pairs from one call site DEPTH frames deep, each after "the program's
 * work": reads of LINES random cache lines of a 64 MiB array (0: none).
 *
 *   hook_cost MODE DEPTH ROUNDS LINES
 *
 * MODE: patched (the stub and hooks, the thread in the thread table as
 * ptleak enters every thread), main (patched, the thread left out: the
 * main thread's shared stack cache), native (nothing patched).
 * bench/hook_cost counts, with valgrind's lackey, the instructions and
 * stores of each function of the code page (whose address this prints)
 * between two runs of different ROUNDS.  The records are drained every
 * 256 rounds (ptleak's part, counted apart), the stacks interned as
 * ptleak interns them.
 */
#include "hookstack.h"

#define WORK_BYTES	(64u << 20)

static volatile uint64_t *work_mem;
static uint64_t rng = 88172645463325252ull;

/* the program's reads: LINES lines at random */
NOINLINE void work(unsigned lines)
{
	uint64_t s = 0;
	unsigned i;

	for (i = 0; i < lines; i++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		s += work_mem[(rng % (WORK_BYTES / 64)) * 8];
	}
	sink += (int)s;
}

NOINLINE void *deep(int n, size_t size)
{
	void *p = n > 1 ? deep(n - 1, size) : t_malloc(size);

	sink++;
	return p;
}

/* one malloc DEPTH frames down and its free */
NOINLINE void pair(int depth)
{
	t_free(deep(depth, 24));
}

/* ptleak's part: each stack taken is interned (its hash in the stack
 * set), so the hooks send its pcs once */
static int take(void *ctx, const struct ring_rec *rec)
{
	(void)ctx;
	if (rec->type == REC_ALLOC && rec->npcs && rec->nwords > 5)
		intern(rec->w[5]);
	return 0;
}

/* The box around the bodies and the code page, as ptleak sets it
 * (rec_area.c): the program's own calls outside it, if the layout
 * allows. */
static NOINLINE void set_box(void)
{
	uint64_t lo = (uint64_t)(uintptr_t)code, hi = lo + PATCH_CODE_LEN;
	unsigned k;

	for (k = 0; k < NFNS; k++) {
		uint64_t a = (uint64_t)(uintptr_t)fns[k].addr;

		lo = a < lo ? a : lo;
		hi = a + fns[k].size > hi ? a + fns[k].size : hi;
	}
	if ((uint64_t)(uintptr_t)deep - lo < hi - lo)
		fprintf(stderr, "hook_cost: the program's code lies inside the "
			"box: every call checked in full\n");
	conf.near_lo = lo;
	conf.near_hi = hi;
}

int main(int argc, char **argv)
{
	unsigned long rounds, i;
	unsigned lines;
	int depth, patched;

	if (argc != 5) {
		fprintf(stderr, "usage: hook_cost patched|main|native DEPTH ROUNDS LINES\n");
		return 2;
	}
	patched = strcmp(argv[1], "native");
	depth = atoi(argv[2]);
	rounds = strtoul(argv[3], NULL, 10);
	lines = (unsigned)atoi(argv[4]);
	work_mem = mmap(NULL, WORK_BYTES, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (work_mem == MAP_FAILED || depth < 1)
		return 1;
	if (patched && setup(NULL)) {
		fprintf(stderr, "hook_cost: the blob could not be patched in\n");
		return 1;
	}
	if (patched && !strcmp(argv[1], "patched") && !add_thread(0, 0))
		return 1;
	if (patched)
		set_box();
	for (i = 0; i < rounds; i++) {
		work(lines);
		pair(depth);
		if (patched && (i & 255) == 255)
			while (ring_consume(rd, take, NULL, 1000) > 0)
				;
	}
	if (patched) {
		unsigned k;

		fprintf(stderr, "hook_cost: code page at %p, %u bytes\n",
			(void *)code, (unsigned)rec_blob_size);
		for (k = 0; k <= NTHREADS; k++)
			if (scache[k].walks)
				fprintf(stderr, "hook_cost: %lu walks with the stack "
					"cache, %lu of them a way\n",
					(unsigned long)scache[k].walks,
					(unsigned long)scache[k].from_way);
		teardown(NULL);
	}
	return 0;
}
