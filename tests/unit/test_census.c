/*
 * test_census.c - glibc's census (census.h) on a child of the test: this
 * program run again with --child, which builds a heap (blocks kept,
 * freed into tcache, fastbins, bins, an mmapped chunk kept and one
 * unmapped, one made by posix_memalign (its chunk not at the mapping's
 * start), a thread with its own arena), tells the test its live blocks
 * and its threads' thread pointers through fd 3, then waits on fd 0.
 * The census read through process_vm_readv must find exactly those
 * blocks with their malloc_usable_size; a corrupted heap must give an
 * inexact census, not a crash or a hang.
 */
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "analysis/census.h"

#define MAXLIVE 256

struct report {
	uint64_t nlive, nthreads;
	uint64_t tp[2];
	uint64_t addr[MAXLIVE], size[MAXLIVE];
	uint64_t fastbin_head;		/* a chunk's user address in a fastbin */
	uint64_t kept_small;		/* a block kept (its header corruptible) */
	uint64_t tcache_head;		/* a chunk's user address in a tcache */
};

static struct report rep;
static int thread_ready[2];
static const char *kid_mode = "";

/* heap-cycle: the thread's arena fills its first heap (64 MiB, touched
 * only at the chunks' headers) and starts a second, holding many small
 * chunks; that heap's heap_info then says it follows itself. */
static void heap_cycle(void)
{
	uint64_t first = 0, h = 0, *p = NULL;
	int i;

	for (i = 0; i < 2000 && (!first || h == first); i++) {
		p = malloc(120 << 10);
		h = (uintptr_t)p & ~((64ull << 20) - 1);
		if (!first)
			first = h;
	}
	for (i = 0; i < 20000; i++)
		p = malloc(24);
	h = (uintptr_t)p & ~((64ull << 20) - 1);
	if (h == first)
		_exit(4);
	((uint64_t *)(uintptr_t)h)[1] = h;	/* heap_info.prev */
}

static void keep(void *p)
{
	rep.addr[rep.nlive] = (uintptr_t)p;
	rep.size[rep.nlive++] = malloc_usable_size(p);
}

static void *thread_fn(void *arg)
{
	void *t[10], *x[5];
	int i;

	(void)arg;
	for (i = 0; i < 5; i++)
		x[i] = malloc(64);
	keep(x[0]);
	keep(x[2]);
	keep(x[4]);
	free(x[1]);
	free(x[3]);
	for (i = 0; i < 10; i++)
		t[i] = malloc(40);
	keep(malloc(300));
	for (i = 0; i < 10; i++)
		free(t[i]);
	if (!strcmp(kid_mode, "heap-cycle"))
		heap_cycle();
	if (write(thread_ready[1], "r", 1) != 1)
		_exit(3);
	for (;;)
		pause();
	return NULL;
}

/* The child: its heap, told, then it waits for fd 0 to close. */
static int child(const char *mode)
{
	void *t[10], *a, *b, *m2, *r, *al = NULL;
	uint64_t *tcb;
	pthread_t th;
	char c;
	int i;

	for (i = 0; i < 10; i++)
		t[i] = malloc(24);
	keep(malloc(24));		/* between the fastbin chunks and the rest */
	keep(malloc(100));
	keep(malloc(1000));
	keep(calloc(3, 50));
	keep(malloc(5000));
	a = malloc(2000);
	keep(malloc(40));
	b = malloc(3000);
	keep(malloc(40));
	rep.kept_small = rep.addr[rep.nlive - 1];
	free(a);
	free(b);			/* the unsorted bin */
	keep(malloc(1 << 20));		/* mmapped */
	m2 = malloc(1 << 20);
	free(m2);			/* unmapped */
	if (posix_memalign(&al, 64, 200))
		return 2;
	keep(al);
	/* mmapped, its chunk inside the mapping (memalign's lead) */
	if (posix_memalign(&al, 4096, 1 << 20))
		return 2;
	keep(al);
	r = malloc(10);
	keep(realloc(r, 500));
	/* last: a request of 1 KiB or more would consolidate the fastbins */
	for (i = 0; i < 10; i++)
		free(t[i]);		/* 7 in the tcache, 3 in the fastbin */
	rep.fastbin_head = (uintptr_t)t[9];
	rep.tcache_head = (uintptr_t)t[6];
	kid_mode = mode;
	if (pipe(thread_ready) || pthread_create(&th, NULL, thread_fn, NULL) ||
	    read(thread_ready[0], &c, 1) != 1)
		return 2;
	/* pthread_create's DTV for the thread: calloc'd, live */
	tcb = (uint64_t *)th;
	keep((void *)(uintptr_t)(tcb[1] - 16));
	rep.nthreads = 2;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(rep.tp[0]));
	rep.tp[1] = (uint64_t)th;
	if (!strncmp(mode, "scramble:", 9)) {
		/* random words over the main heap's chunks (headers,
		 * links, tcache and fastbin pointers, user data alike) */
		unsigned seed = (unsigned)atoi(mode + 9);
		uint64_t lo = rep.addr[0] - 16, hi = lo + 12288;

		for (i = 0; i < 6; i++) {
			uint64_t at = lo + ((uint64_t)rand_r(&seed) % ((hi - lo) / 8)) * 8;

			/* some a freed chunk's link, or a chunk's size */
			if (i % 2 && rand_r(&seed) % 2)
				at = (uint64_t)(uintptr_t)t[rand_r(&seed) % 10];
			else if (i == 4 && rand_r(&seed) % 3 == 0)
				at = rep.addr[rand_r(&seed) % 8] - 8;
			uint64_t v = (uint64_t)rand_r(&seed) << 33 ^ (uint64_t)rand_r(&seed) << 3;

			if (i % 3 == 0)
				v = (uint64_t)rand_r(&seed) % 4096;	/* small sizes */
			else if (i % 3 == 1)
				v = at + ((uint64_t)rand_r(&seed) % 8192) - 4096;
			*(uint64_t *)(uintptr_t)at = v;
		}
	} else if (!strcmp(mode, "corrupt-size"))
		((uint64_t *)(uintptr_t)rep.kept_small)[-1] = 0x49;
	else if (!strcmp(mode, "fastbin-cycle"))
		/* its fd (safe-linked) points to its own chunk */
		*(uint64_t *)(uintptr_t)rep.fastbin_head =
			(rep.fastbin_head >> 12) ^ (rep.fastbin_head - 16);
	else if (!strcmp(mode, "tcache-cycle"))
		/* its next (safe-linked) is itself: the count (7) says go on */
		*(uint64_t *)(uintptr_t)rep.tcache_head =
			(rep.tcache_head >> 12) ^ rep.tcache_head;
	if (write(3, &rep, sizeof(rep)) != sizeof(rep))
		return 2;
	(void)!read(0, &c, 1);
	return 0;
}

struct kid {
	pid_t pid;
	int to;			/* its fd 0: closed to end it */
	struct report rep;
};

static long rd_kid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return (long)process_vm_readv(pid, &l, 1, &r, 1, 0);
}

static void kid_start(struct kid *k, const char *mode)
{
	int in[2], out[2];
	size_t got = 0;

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	k->pid = fork();
	assert_true(k->pid >= 0);
	if (!k->pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], 0);
		dup2(out[1], 3);
		execl("/proc/self/exe", "test_census", "--child", mode, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	k->to = in[1];
	while (got < sizeof(k->rep)) {
		ssize_t n = read(out[0], (char *)&k->rep + got, sizeof(k->rep) - got);

		assert_true(n > 0);
		got += (size_t)n;
	}
	close(out[0]);
}

static void kid_end(struct kid *k)
{
	int st;

	close(k->to);
	kill(k->pid, SIGKILL);
	waitpid(k->pid, &st, 0);
}

/* The census of K into C; LIBC, if not NULL, named in place of libc's
 * path in its maps. */
static int census_of_as(struct kid *k, struct census *c, const char *libc)
{
	struct census_thread th[2];
	struct census_input in;
	struct census_map *maps;
	size_t nmaps, i;
	int r;

	assert_int_equal(census_maps_read(k->pid, &maps, &nmaps), 0);
	for (i = 0; libc && i < nmaps; i++)
		if (strstr(maps[i].path, "/libc.so")) {
			free(maps[i].path);
			maps[i].path = strdup(libc);
		}
	th[0].tid = k->pid;
	th[0].tp = k->rep.tp[0];
	th[1].tid = 0;
	th[1].tp = k->rep.tp[1];
	memset(&in, 0, sizeof(in));
	in.read = rd_kid;
	in.ctx = &k->pid;
	in.maps = maps;
	in.nmaps = nmaps;
	in.threads = th;
	in.nthreads = 2;
	memset(c, 0, sizeof(*c));
	r = census_glibc(&in, c);
	if (getenv("CENSUS_DEBUG"))
		fprintf(stderr, "census: exact %d, %zu blocks: %s\n", c->exact,
			c->nblocks, c->why);
	census_maps_free(maps, nmaps);
	return r;
}

static int census_of(struct kid *k, struct census *c)
{
	return census_of_as(k, c, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Exactly the child's live blocks, in usable size; arenas, tcaches, the
 * mmapped chunk found. */
static void test_exact(void **state)
{
	struct kid k;
	struct census c;
	uint64_t want[MAXLIVE][2];
	size_t i;

	(void)state;
	kid_start(&k, "plain");
	assert_int_equal(census_of(&k, &c), 0);
	if (!c.exact)
		fail_msg("census not exact: %s", c.why);
	for (i = 0; i < k.rep.nlive; i++) {
		want[i][0] = k.rep.addr[i];
		want[i][1] = k.rep.size[i];
	}
	qsort(want, k.rep.nlive, sizeof(want[0]), cmp_u64);
	assert_int_equal(c.nblocks, k.rep.nlive);
	for (i = 0; i < c.nblocks; i++) {
		assert_int_equal(c.blocks[i].addr, want[i][0]);
		assert_int_equal(c.blocks[i].size, want[i][1]);
	}
	assert_int_equal(c.narenas, 2);
	assert_int_equal(c.ntcaches, 2);
	assert_int_equal(c.nmmapped, 2);
	assert_true(c.mp != 0);
	assert_true(c.tcache_tpoff < 0);
	census_free(&c);
	kid_end(&k);
}

/* The child in MODE (a heap it corrupted): a census that ends, not
 * exact, its why saying WHY. */
static void inexact(const char *mode, const char *why)
{
	struct kid k;
	struct census c;

	kid_start(&k, mode);
	assert_int_equal(census_of(&k, &c), 0);
	assert_int_equal(c.exact, 0);
	if (!strstr(c.why, why))
		fail_msg("%s: \"%s\", not \"%s\"", mode, c.why, why);
	census_free(&c);
	kid_end(&k);
}

/* A chunk's size overwritten: not exact, says where. */
static void test_corrupt_size(void **state)
{
	(void)state;
	inexact("corrupt-size", "bad size");
}

/* A fastbin chunk linked to itself: not exact, no hang. */
static void test_fastbin_cycle(void **state)
{
	(void)state;
	inexact("fastbin-cycle", "fastbin");
}

/* libc's file replaced by a FIFO after it was mapped (its relocations
 * are read for the tcache's TLS offset): no wait for a writer. */
static void test_libc_fifo(void **state)
{
	char dir[] = "/tmp/ptleak-census.XXXXXX", path[64];
	struct kid k;
	struct census c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libc.so.6", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	kid_start(&k, "plain");
	assert_int_equal(census_of_as(&k, &c, path), 0);
	assert_true(c.nblocks > 0);
	census_free(&c);
	kid_end(&k);
	unlink(path);
	rmdir(dir);
}

/* A tcache entry linked to itself: not exact, no hang. */
static void test_tcache_cycle(void **state)
{
	(void)state;
	inexact("tcache-cycle", "tcache");
}

/* A thread arena's heap whose prev is itself: not exact at once (it was
 * walked 65,536 times, 20,000 chunks a time: 42 GB of chunk slots). */
static void test_heap_cycle(void **state)
{
	(void)state;
	inexact("heap-cycle", "do not lead to it");
}

/* Random words written over the heap, 40 times: the census ends, exact
 * or not, never a crash or a hang, its blocks within what it read. */
static void test_scrambled(void **state)
{
	unsigned seed;

	(void)state;
	for (seed = 1; seed <= 40; seed++) {
		char mode[32];
		struct kid k;
		struct census c;
		size_t i;

		snprintf(mode, sizeof(mode), "scramble:%u", seed);
		kid_start(&k, mode);
		census_of(&k, &c);
		if (c.exact)	/* the words hit user data only */
			assert_true(c.nblocks > 0);
		else
			assert_true(c.why[0] != '\0');
		for (i = 1; i < c.nblocks; i++)
			assert_true(c.blocks[i - 1].addr < c.blocks[i].addr);
		census_free(&c);
		kid_end(&k);
	}
}

static long rd_none(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx, (void)addr, (void)buf, (void)len;
	return -1;
}

/* Nothing readable: no main_arena, -1 with a reason. */
static void test_unreadable(void **state)
{
	struct census_map m = { 0x1000, 0x9000, 0, 7, "rw-p", (char *)"/lib/libc.so.6" };
	struct census_input in = { rd_none, NULL, &m, 1, NULL, 0 };
	struct census c;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(census_glibc(&in, &c), -1);
	assert_int_equal(c.exact, 0);
	assert_non_null(strstr(c.why, "main_arena"));
	census_free(&c);
}

static void test_allocator_of(void **state)
{
	(void)state;
	assert_int_equal(census_allocator_of("/lib/x86_64-linux-gnu/libc.so.6"), CENSUS_GLIBC);
	assert_int_equal(census_allocator_of(NULL), CENSUS_GLIBC);
	assert_int_equal(census_allocator_of("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"),
			 CENSUS_JEMALLOC);
	assert_int_equal(census_allocator_of("/usr/lib/libtcmalloc_minimal.so.4"), CENSUS_TCMALLOC);
	assert_int_equal(census_allocator_of("/usr/lib/libmimalloc.so.2.0"), CENSUS_MIMALLOC);
	assert_int_equal(census_allocator_of("/usr/bin/myserver"), CENSUS_OTHER);
	assert_string_equal(census_allocator_name(CENSUS_TCMALLOC), "tcmalloc");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_corrupt_size),
		cmocka_unit_test(test_fastbin_cycle),
		cmocka_unit_test(test_tcache_cycle),
		cmocka_unit_test(test_libc_fifo),
		cmocka_unit_test(test_heap_cycle),
		cmocka_unit_test(test_scrambled),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_allocator_of),
	};

	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
