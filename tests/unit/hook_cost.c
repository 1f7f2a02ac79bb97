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
 * ptleak enters every thread), lane (patched, the thread in a lane of its
 * own as ptleak gives each thread one, and each free of the block
 * allocated LAG pairs before, not the last: perl's calls, its frees
 * rarely their thread's next call after the malloc), main (patched, the
 * thread left out: the main thread's shared stack cache), native
 * (nothing patched), native_lag (nothing patched, frees as in lane).
 * bench/hook_cost counts, with valgrind's lackey, the instructions and
 * stores of each function of the code page (whose address this prints)
 * between two runs of different ROUNDS.  The records are drained every
 * 256 rounds (ptleak's part, counted apart), the stacks interned as
 * ptleak interns them.
 */
#include "hookstack.h"

#define WORK_BYTES	(64u << 20)

/* lane mode: a free LAG allocations behind */
#define LAG	8

static volatile uint64_t *work_mem;
static struct ring *lane_ring;
static struct ring_reader *lane_rd;
static void *held[LAG];
static unsigned long held_next;
/* lane mode's frees (set once): in a global, not an argument, so that
 * no word of the walked frames changes from one pair to the next */
static int lag;
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

/* one malloc DEPTH frames down and its free (lane mode: the free of the
 * block allocated LAG pairs before) */
NOINLINE void pair(int depth)
{
	void *p = deep(depth, 24);

	if (lag) {
		void *old = held[held_next % LAG];

		held[held_next++ % LAG] = p;
		p = old;
	}
	t_free(p);
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
	int depth, patched, lane;
	struct rec_thread *e = NULL;

	if (argc != 5) {
		fprintf(stderr, "usage: hook_cost patched|lane|main|native|native_lag "
			"DEPTH ROUNDS LINES\n");
		return 2;
	}
	patched = strncmp(argv[1], "native", 6);
	lane = !strcmp(argv[1], "lane");
	lag = lane || !strcmp(argv[1], "native_lag");
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
	if (patched && strcmp(argv[1], "main") && !(e = add_thread(0, 0)))
		return 1;
	if (lane && e) {
		/* lane 1, as rec_objs.c's lane_pick gives a thread its ring */
		if (ring_map(RING_LOG2, &lane_ring, &lane_rd))
			return 1;
		conf.lanes = (uint64_t)(uintptr_t)lane_ring;
		conf.lane_stride = ring_mem_size(RING_LOG2);
		conf.nlanes = 2;
		__atomic_store_n(&e->lane, 1, __ATOMIC_RELEASE);
	}
	if (patched)
		set_box();
	for (i = 0; i < rounds; i++) {
		work(lines);
		pair(depth);
		if (patched && (i & 255) == 255) {
			while (ring_consume(rd, take, NULL, 1000) > 0)
				;
			while (lane && ring_consume(lane_rd, take, NULL, 1000) > 0)
				;
		}
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
		if (lane) {
			ring_reader_delete(lane_rd);
			munmap(lane_ring, ring_mem_size(RING_LOG2));
		}
		teardown(NULL);
	}
	return 0;
}
