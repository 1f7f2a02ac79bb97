/*
 * test_scan.c - valgrind memcheck's leak classes over a fake address
 * space: one array standing for [base, base + size), with an optional
 * unreadable hole, in which the tests place blocks, root ranges and
 * pointer words.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/scan.h"
#include "scan_fake.h"

#define BASE	0x10000ULL
#define ROOT	0x10000ULL	/* a 4 KiB root range */
#define HEAP	0x20000ULL	/* blocks from here */
#define MEMSZ	0x40000

struct run {
	struct fake *f;
	struct scan_block *b;
	size_t nb;
	struct scan_range roots[4];
	size_t nroots;
	uint64_t values[4];
	size_t nvalues;
	struct scan_stats st;
};

static void run_init(struct run *r, size_t nb, uint64_t base, size_t memsz)
{
	memset(r, 0, sizeof(*r));
	r->f = fake_new(base, memsz);
	r->b = calloc(nb ? nb : 1, sizeof(*r->b));
	assert_non_null(r->b);
	r->nb = nb;
}

static void std_init(struct run *r, size_t nb)
{
	run_init(r, nb, BASE, MEMSZ);
}

static void add_root(struct run *r, uint64_t start, uint64_t end)
{
	r->roots[r->nroots].start = start;
	r->roots[r->nroots].end = end;
	r->nroots++;
}

/* Block I at HEAP + I * 0x100 of SIZE bytes (blocks[] stays sorted). */
static uint64_t blk(struct run *r, size_t i, uint64_t size)
{
	r->b[i].addr = HEAP + i * 0x100;
	r->b[i].size = size;
	r->b[i].cls = (enum scan_class)-1;
	r->b[i].indirect = 12345;	/* must be overwritten */
	return r->b[i].addr;
}

static int glibc_chunks;	/* scan_input.glibc_chunks for classify() */
static scan_skip_fn skip_fn;	/* scan_input.skip for classify() */
static int threads;		/* scan_input.threads for classify() */

static void classify(struct run *r)
{
	struct scan_input in;
	struct fake worker;

	memset(&in, 0, sizeof(in));
	/* the second thread reads the same memory, its own counters */
	worker = *r->f;
	worker.nreads = 0;
	worker.max_read = 0;
	in.threads = threads;
	in.ctx_worker = &worker;
	in.glibc_chunks = glibc_chunks;
	in.blocks = r->b;
	in.nblocks = r->nb;
	in.roots = r->roots;
	in.nroots = r->nroots;
	in.root_values = r->values;
	in.nvalues = r->nvalues;
	in.read = fake_read;
	in.skip = skip_fn;
	in.ctx = r->f;
	assert_int_equal(scan_classify(&in, &r->st), 0);
	r->f->nreads += worker.nreads;
	if (worker.max_read > r->f->max_read)
		r->f->max_read = worker.max_read;
	/* whole ranges, never word by word */
	assert_true(r->f->max_read <= (1u << 20));
}

static void expect(struct run *r, size_t i, enum scan_class c, uint64_t ind)
{
	assert_string_equal(scan_class_key(r->b[i].cls), scan_class_key(c));
	assert_int_equal(r->b[i].indirect, ind);
}

static void run_free(struct run *r)
{
	fake_free(r->f);
	free(r->b);
}

static void test_class_keys(void **state)
{
	assert_string_equal(scan_class_key(SCAN_DEFINITELY_LOST),
			    "definitely_lost");
	assert_string_equal(scan_class_key(SCAN_INDIRECTLY_LOST),
			    "indirectly_lost");
	assert_string_equal(scan_class_key(SCAN_POSSIBLY_LOST),
			    "possibly_lost");
	assert_string_equal(scan_class_key(SCAN_STILL_REACHABLE),
			    "still_reachable");
}

/*
 * A dead thread's range (born_before) points only to blocks born before
 * the thread died: a pointer there to a later block is a stale pointer to
 * an earlier block at the same address (issue B: a thread's argument).
 */
static void test_born_before(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t old = blk(&r, 0, 32), young = blk(&r, 1, 32);
	uint64_t other = blk(&r, 2, 32);
	r.b[0].born = 100;
	r.b[1].born = 300;
	r.b[2].born = 300;
	put(r.f, ROOT + 0x40, old);
	put(r.f, ROOT + 0x48, young);
	put(r.f, ROOT + 0x800, other);
	add_root(&r, ROOT, ROOT + 0x400);
	r.roots[0].born_before = 200;
	add_root(&r, ROOT + 0x800, ROOT + 0x808);	/* no limit */
	classify(&r);
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	expect(&r, 1, SCAN_DEFINITELY_LOST, 0);
	expect(&r, 2, SCAN_STILL_REACHABLE, 0);
	run_free(&r);
}

/* Test skip callback: [0x100000, 0x300000) is known untouched (zeros). */
static uint64_t fake_skip(void *ctx, uint64_t addr, uint64_t len)
{
	return addr < 0x300000 ? 0x300000 - addr : 0;
}

/* Ranges the skip callback says are untouched are not read at all. */
static void test_skip_untouched(void **state)
{
	struct run r;

	run_init(&r, 2, BASE, 4 << 20);
	uint64_t seen = blk(&r, 0, 32), unread = blk(&r, 1, 32);
	put(r.f, 0x100040, unread);	/* "untouched": never read */
	put(r.f, 0x300040, seen);
	add_root(&r, 0x100000, 0x400000);
	skip_fn = fake_skip;
	classify(&r);
	skip_fn = NULL;
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	expect(&r, 1, SCAN_DEFINITELY_LOST, 0);
	/* the last 1 MiB chunk and the reachable block, then the lost one */
	assert_int_equal(r.st.bytes_scanned, (1u << 20) + 32 + 32);
	run_free(&r);
}

static void test_root_range_reachable(void **state)
{
	struct run r;

	std_init(&r, 2);
	uint64_t a = blk(&r, 0, 32);
	blk(&r, 1, 32);
	put(r.f, ROOT + 0x40, a);
	add_root(&r, ROOT, ROOT + 0x1000);
	classify(&r);
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	expect(&r, 1, SCAN_DEFINITELY_LOST, 0);
	assert_int_equal(r.st.unreadable_bytes, 0);
	/* root range + one read of the reachable block + phase 2 lost one */
	assert_int_equal(r.st.bytes_scanned, 0x1000 + 32 + 32);
	run_free(&r);
}

static void test_root_value_reachable(void **state)
{
	struct run r;

	std_init(&r, 2);
	blk(&r, 0, 32);
	uint64_t b = blk(&r, 1, 32);
	r.values[r.nvalues++] = 0xdeadbeef;
	r.values[r.nvalues++] = b;
	classify(&r);
	expect(&r, 0, SCAN_DEFINITELY_LOST, 0);
	expect(&r, 1, SCAN_STILL_REACHABLE, 0);
	run_free(&r);
}

static void test_interior_only_possibly_lost(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t a = blk(&r, 0, 64);
	uint64_t b = blk(&r, 1, 64);
	blk(&r, 2, 64);
	put(r.f, ROOT, a + 8);
	r.values[r.nvalues++] = b + 63;		/* last byte: interior */
	r.values[r.nvalues++] = b + 64 + 0x40;	/* past the end: nothing */
	add_root(&r, ROOT, ROOT + 0x100);
	classify(&r);
	expect(&r, 0, SCAN_POSSIBLY_LOST, 0);
	expect(&r, 1, SCAN_POSSIBLY_LOST, 0);
	expect(&r, 2, SCAN_DEFINITELY_LOST, 0);
	run_free(&r);
}

/*
 * glibc: malloc(24) gets a 32-byte chunk at addr - 16, so the next chunk's
 * header is at addr + 16, inside the block's 24 bytes; glibc's arena
 * points there (top, bins).  With glibc_chunks that word is not a pointer
 * into the block; any other interior word still is, and without the flag
 * it is one too.
 */
static void test_glibc_next_chunk_header(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t a = blk(&r, 0, 24);	/* chunk 32: header of next at +16 */
	uint64_t b = blk(&r, 1, 40);	/* chunk 48: next at +32 */
	uint64_t c = blk(&r, 2, 24);
	put(r.f, ROOT, a + 16);
	put(r.f, ROOT + 8, b + 32);
	put(r.f, ROOT + 16, c + 8);
	add_root(&r, ROOT, ROOT + 0x100);
	glibc_chunks = 1;
	classify(&r);
	glibc_chunks = 0;
	expect(&r, 0, SCAN_DEFINITELY_LOST, 0);
	expect(&r, 1, SCAN_DEFINITELY_LOST, 0);
	expect(&r, 2, SCAN_POSSIBLY_LOST, 0);
	run_free(&r);

	std_init(&r, 1);
	a = blk(&r, 0, 24);
	put(r.f, ROOT, a + 16);
	add_root(&r, ROOT, ROOT + 0x100);
	classify(&r);
	expect(&r, 0, SCAN_POSSIBLY_LOST, 0);
	run_free(&r);
}

static void test_lost_list_of_three(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t a = blk(&r, 0, 16);
	uint64_t b = blk(&r, 1, 24);
	uint64_t c = blk(&r, 2, 40);
	put(r.f, a, b);
	put(r.f, b, c);
	put(r.f, c, 0);
	add_root(&r, ROOT, ROOT + 0x1000);
	classify(&r);
	expect(&r, 0, SCAN_DEFINITELY_LOST, 24 + 40);
	expect(&r, 1, SCAN_INDIRECTLY_LOST, 0);
	expect(&r, 2, SCAN_INDIRECTLY_LOST, 0);
	run_free(&r);
}

static void test_reachable_list(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t a = blk(&r, 0, 16);
	uint64_t b = blk(&r, 1, 24);
	uint64_t c = blk(&r, 2, 40);
	put(r.f, ROOT + 0x800, a);
	put(r.f, a, b);
	put(r.f, b + 8, c);
	add_root(&r, ROOT, ROOT + 0x1000);
	classify(&r);
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	expect(&r, 1, SCAN_STILL_REACHABLE, 0);
	expect(&r, 2, SCAN_STILL_REACHABLE, 0);
	run_free(&r);
}

static void test_reachable_from_reachable(void **state)
{
	struct run r;

	std_init(&r, 3);
	blk(&r, 0, 16);
	uint64_t b = blk(&r, 1, 64);
	uint64_t c = blk(&r, 2, 16);
	r.values[r.nvalues++] = c;
	put(r.f, c + 8, b);	/* reachable C -> start of B */
	classify(&r);
	expect(&r, 0, SCAN_DEFINITELY_LOST, 0);
	expect(&r, 1, SCAN_STILL_REACHABLE, 0);
	expect(&r, 2, SCAN_STILL_REACHABLE, 0);
	run_free(&r);
}

static void test_interior_from_reachable(void **state)
{
	struct run r;

	std_init(&r, 2);
	uint64_t a = blk(&r, 0, 16);
	uint64_t b = blk(&r, 1, 64);
	r.values[r.nvalues++] = a;
	put(r.f, a, b + 16);	/* reachable A -> interior of B */
	classify(&r);
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	expect(&r, 1, SCAN_POSSIBLY_LOST, 0);
	run_free(&r);
}

static void test_cycle_of_two_lost(void **state)
{
	struct run r;

	std_init(&r, 2);
	uint64_t a = blk(&r, 0, 16);
	uint64_t b = blk(&r, 1, 48);
	put(r.f, a, b);
	put(r.f, b + 8, a);
	classify(&r);
	expect(&r, 0, SCAN_DEFINITELY_LOST, 48);
	expect(&r, 1, SCAN_INDIRECTLY_LOST, 0);
	run_free(&r);
}

static void test_self_pointer_lost(void **state)
{
	struct run r;

	std_init(&r, 1);
	uint64_t a = blk(&r, 0, 32);
	put(r.f, a, a);
	put(r.f, a + 8, a + 16);
	classify(&r);
	expect(&r, 0, SCAN_DEFINITELY_LOST, 0);
	run_free(&r);
}

/*
 * valgrind's lc_push_without_clique_if_a_chunk_ptr: a start pointer makes
 * a block Reachable only when "is_prior_definite", i.e. when the pointer
 * is in a root or in a Reachable block.  From a Possible block it only
 * makes the target Possible.  So B, pointed to at its start from the
 * possibly lost A only, is possibly lost (not still reachable), and C
 * behind B as well.
 */
static void test_start_ptr_from_possibly_lost(void **state)
{
	struct run r;

	std_init(&r, 4);
	uint64_t a = blk(&r, 0, 32);
	uint64_t b = blk(&r, 1, 32);
	uint64_t c = blk(&r, 2, 32);
	blk(&r, 3, 32);
	r.values[r.nvalues++] = a + 8;
	put(r.f, a + 16, b);
	put(r.f, b, c + 8);
	classify(&r);
	expect(&r, 0, SCAN_POSSIBLY_LOST, 0);
	expect(&r, 1, SCAN_POSSIBLY_LOST, 0);
	expect(&r, 2, SCAN_POSSIBLY_LOST, 0);
	expect(&r, 3, SCAN_DEFINITELY_LOST, 0);
	run_free(&r);
}

/*
 * A block first found Possible and later Reachable is rescanned
 * (valgrind pushes it again on the upgrade): what it points to at the
 * start becomes Reachable too.  The interior pointer to A is in the root
 * range, scanned before the register holding C, and C -> A comes later.
 */
static void test_possible_upgraded_rescans(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t a = blk(&r, 0, 32);
	uint64_t b = blk(&r, 1, 32);
	uint64_t c = blk(&r, 2, 32);
	put(r.f, ROOT, a + 8);
	add_root(&r, ROOT, ROOT + 8);
	r.values[r.nvalues++] = c;
	put(r.f, a, b);
	put(r.f, c, a);
	classify(&r);
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	expect(&r, 1, SCAN_STILL_REACHABLE, 0);
	expect(&r, 2, SCAN_STILL_REACHABLE, 0);
	run_free(&r);
}

/* Lost blocks point only to unreached blocks: reachable/possible ones
 * are not pulled into a clique. */
static void test_lost_points_to_reachable(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t a = blk(&r, 0, 16);
	uint64_t b = blk(&r, 1, 32);
	uint64_t c = blk(&r, 2, 64);
	r.values[r.nvalues++] = a;
	r.values[r.nvalues++] = b + 4;
	put(r.f, c, a);
	put(r.f, c + 8, b);
	classify(&r);
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	expect(&r, 1, SCAN_POSSIBLY_LOST, 0);
	expect(&r, 2, SCAN_DEFINITELY_LOST, 0);
	run_free(&r);
}

/* Leader A (lower address) reaches the later B and C: B never leads. */
static void test_clique_earlier_leader_takes_later(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t a = blk(&r, 0, 16);
	uint64_t b = blk(&r, 1, 32);
	uint64_t c = blk(&r, 2, 64);
	put(r.f, a, b + 8);	/* interior pointers count in cliques */
	put(r.f, b, c);
	classify(&r);
	expect(&r, 0, SCAN_DEFINITELY_LOST, 32 + 64);
	expect(&r, 1, SCAN_INDIRECTLY_LOST, 0);
	expect(&r, 2, SCAN_INDIRECTLY_LOST, 0);
	run_free(&r);
}

/*
 * A (lowest) is processed first and leads {A, C}; then B, which points to
 * A, is processed: A joins B's clique and hands over its indirect bytes
 * ("if the new block was itself a clique leader ... add its indirect_szB
 * to the new clique leader").  C is not counted twice.
 */
static void test_clique_later_leader_absorbs_earlier(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t a = blk(&r, 0, 16);
	uint64_t b = blk(&r, 1, 32);
	uint64_t c = blk(&r, 2, 64);
	put(r.f, a, c);
	put(r.f, b, a);
	classify(&r);
	expect(&r, 0, SCAN_INDIRECTLY_LOST, 0);
	expect(&r, 1, SCAN_DEFINITELY_LOST, 16 + 64);
	expect(&r, 2, SCAN_INDIRECTLY_LOST, 0);
	run_free(&r);
}

/* A -> C and B -> C: C belongs to the first clique only. */
static void test_clique_shared_target_counted_once(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t a = blk(&r, 0, 16);
	uint64_t b = blk(&r, 1, 32);
	uint64_t c = blk(&r, 2, 64);
	put(r.f, a, c);
	put(r.f, b, c);
	classify(&r);
	expect(&r, 0, SCAN_DEFINITELY_LOST, 64);
	expect(&r, 1, SCAN_DEFINITELY_LOST, 0);
	expect(&r, 2, SCAN_INDIRECTLY_LOST, 0);
	run_free(&r);
}

#define CHAIN	100000
#define CSZ	32

/* CHAIN blocks of CSZ bytes, each pointing to the next (or previous when
 * DOWN): block i at HEAP + i * CSZ. */
static void chain_init(struct run *r, int down)
{
	size_t i;

	run_init(r, CHAIN, BASE, (HEAP - BASE) + (size_t)CHAIN * CSZ);
	for (i = 0; i < CHAIN; i++) {
		r->b[i].addr = HEAP + i * CSZ;
		r->b[i].size = CSZ;
	}
	for (i = 0; i < CHAIN; i++) {
		size_t next = down ? i - 1 : i + 1;

		if (down ? i > 0 : i + 1 < CHAIN)
			put(r->f, r->b[i].addr + 8, r->b[next].addr);
	}
}

static void test_chain_rooted(void **state)
{
	struct run r;
	size_t i;

	chain_init(&r, 0);
	put(r.f, ROOT, r.b[0].addr);
	add_root(&r, ROOT, ROOT + 0x1000);
	classify(&r);
	for (i = 0; i < CHAIN; i++)
		expect(&r, i, SCAN_STILL_REACHABLE, 0);
	run_free(&r);
}

static void test_chain_unrooted(void **state)
{
	struct run r;
	size_t i;

	chain_init(&r, 0);
	add_root(&r, ROOT, ROOT + 0x1000);
	classify(&r);
	expect(&r, 0, SCAN_DEFINITELY_LOST, (uint64_t)(CHAIN - 1) * CSZ);
	for (i = 1; i < CHAIN; i++)
		expect(&r, i, SCAN_INDIRECTLY_LOST, 0);
	run_free(&r);
}

/* Head at the highest address: every block leads a clique in turn and is
 * absorbed by the next; the head ends with everything. */
static void test_chain_unrooted_downward(void **state)
{
	struct run r;
	size_t i;

	chain_init(&r, 1);
	classify(&r);
	for (i = 0; i + 1 < CHAIN; i++)
		expect(&r, i, SCAN_INDIRECTLY_LOST, 0);
	expect(&r, CHAIN - 1, SCAN_DEFINITELY_LOST,
	       (uint64_t)(CHAIN - 1) * CSZ);
	run_free(&r);
}

static void test_unreadable_root(void **state)
{
	struct run r;

	std_init(&r, 2);
	uint64_t a = blk(&r, 0, 32);
	uint64_t b = blk(&r, 1, 32);
	put(r.f, ROOT + 0x100, a);	/* readable part */
	put(r.f, ROOT + 0x900, b);	/* in the hole */
	r.f->bad_lo = ROOT + 0x800;
	r.f->bad_hi = ROOT + 0x1000;
	add_root(&r, ROOT, ROOT + 0x1000);
	add_root(&r, 0x900000, 0x901000);	/* unmapped */
	classify(&r);
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	expect(&r, 1, SCAN_DEFINITELY_LOST, 0);
	assert_int_equal(r.st.unreadable_bytes, 0x800 + 0x1000);
	run_free(&r);
}

/* An unreadable block is still classified; its contents hold no
 * pointers. */
static void test_unreadable_block(void **state)
{
	struct run r;

	std_init(&r, 2);
	uint64_t a = blk(&r, 0, 32);
	uint64_t b = blk(&r, 1, 32);
	r.values[r.nvalues++] = a;
	put(r.f, a, b);
	r.f->bad_lo = a;
	r.f->bad_hi = a + 32;
	classify(&r);
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	expect(&r, 1, SCAN_DEFINITELY_LOST, 0);
	assert_int_equal(r.st.unreadable_bytes, 0);
	run_free(&r);
}

static void test_zero_size_block(void **state)
{
	struct run r;

	std_init(&r, 3);
	uint64_t a = blk(&r, 0, 0);
	uint64_t b = blk(&r, 1, 0);
	blk(&r, 2, 0);
	put(r.f, ROOT, a);
	put(r.f, ROOT + 8, b + 8);	/* not inside a 0-byte block */
	add_root(&r, ROOT, ROOT + 16);
	classify(&r);
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	expect(&r, 1, SCAN_DEFINITELY_LOST, 0);
	expect(&r, 2, SCAN_DEFINITELY_LOST, 0);
	run_free(&r);
}

static void test_unaligned_words_ignored(void **state)
{
	struct run r;

	std_init(&r, 4);
	uint64_t a = blk(&r, 0, 32);
	uint64_t b = blk(&r, 1, 32);
	uint64_t c = blk(&r, 2, 32);
	uint64_t d = blk(&r, 3, 32);
	put(r.f, ROOT + 0x13, a);	/* unaligned in a root */
	put(r.f, ROOT + 0x40, b);	/* aligned, range starts unaligned */
	put(r.f, ROOT + 0x50, d);	/* partly past the range's end */
	add_root(&r, ROOT + 3, ROOT + 0x54);
	put(r.f, b + 4, c);		/* unaligned in a block */
	classify(&r);
	expect(&r, 0, SCAN_DEFINITELY_LOST, 0);
	expect(&r, 1, SCAN_STILL_REACHABLE, 0);
	expect(&r, 2, SCAN_DEFINITELY_LOST, 0);
	expect(&r, 3, SCAN_DEFINITELY_LOST, 0);
	run_free(&r);
}

/* Ranges are read in pieces of at most 128 KiB, never word by word. */
static void test_large_root_chunked(void **state)
{
	struct run r;
	size_t big = 3u << 20;

	run_init(&r, 1, BASE, big + 0x1000);
	r.b[0].addr = BASE + big;
	r.b[0].size = 16;
	put(r.f, BASE + big - 8, r.b[0].addr);
	add_root(&r, BASE, BASE + big);
	classify(&r);
	expect(&r, 0, SCAN_STILL_REACHABLE, 0);
	assert_int_equal(r.f->max_read, 128u << 10);
	assert_int_equal(r.f->nreads, 24 + 1);	/* root + the block */
	run_free(&r);
}

/*
 * Randomised check of the lookup (bucketed binary search, 0-byte blocks,
 * gaps) and of phase 1 against a naive fixpoint of valgrind's rules:
 * Reachable = start pointer from a root or a Reachable block; Possible =
 * otherwise any pointer from a root, Reachable or Possible block.  Lost
 * blocks: their bytes are split exactly between definitely lost blocks
 * (size + indirect) and indirectly lost ones.
 */
#define RN	3000

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static long ref_find(const struct scan_block *b, size_t n, uint64_t w)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w == b[i].addr || (w > b[i].addr && w - b[i].addr < b[i].size))
			return (long)i;
	return -1;
}

/*
 * A lost list whose links point down in address order (each block to
 * the one below it, as a list built by pushing at the head): leaders go
 * up in address order, each absorbing the previous leader with its whole
 * clique.  Same classes as valgrind, and every block read once (a former
 * leader is not read again when absorbed).
 */
static void test_reverse_chain_read_once(void **state)
{
	struct run r;
	size_t i;

	std_init(&r, 8);
	for (i = 0; i < 8; i++) {
		uint64_t a = blk(&r, i, 32);

		if (i)
			put(r.f, a, r.b[i - 1].addr);
	}
	classify(&r);
	expect(&r, 7, SCAN_DEFINITELY_LOST, 7 * 32);
	for (i = 0; i < 7; i++)
		expect(&r, i, SCAN_INDIRECTLY_LOST, 0);
	assert_int_equal(r.st.bytes_scanned, 8 * 32);
	run_free(&r);
}

static void test_random_against_reference(void **state)
{
	struct run r;
	uint64_t x = 0x9e3779b97f4a7c15ULL, a = HEAP, lost = 0, acc = 0;
	int *ref = calloc(RN, sizeof(int));	/* 0 lost, 1 possible, 2 reach */
	size_t i, j, memsz = 0x200000;
	int changed, round;

	assert_non_null(ref);
	run_init(&r, RN, BASE, memsz);
	for (i = 0; i < RN; i++) {
		a += (rnd(&x) % 4) * 16;
		r.b[i].addr = a;
		r.b[i].size = (rnd(&x) % 5) * 8 + (rnd(&x) % 3 == 0 ? 0 : 4);
		a += r.b[i].size ? (r.b[i].size + 15) / 16 * 16 : 16;
	}
	assert_true(a < BASE + memsz);
	/* sprinkle pointers: start, interior, just past the end, junk */
	for (round = 0; round < 2 * RN; round++) {
		size_t src = rnd(&x) % RN, dst = rnd(&x) % RN;
		uint64_t v, where;

		if (r.b[src].size < 8)
			continue;
		switch (rnd(&x) % 4) {
		case 0: v = r.b[dst].addr; break;
		case 1: v = r.b[dst].addr + 1 + rnd(&x) % (r.b[dst].size + 1); break;
		case 2: v = r.b[dst].addr + r.b[dst].size; break;
		default: v = rnd(&x); break;
		}
		where = (r.b[src].addr + rnd(&x) % r.b[src].size) & ~7ULL;
		if (where + 8 <= r.b[src].addr + r.b[src].size)
			put(r.f, where, v);
	}
	for (i = 0; i < 150; i++) {
		size_t dst = rnd(&x) % RN;

		put(r.f, ROOT + 8 * i, r.b[dst].addr + (i % 2) * (rnd(&x) % 8));
	}
	add_root(&r, ROOT, ROOT + 0x1000);
	classify(&r);

	/* reference phase 1 */
	for (i = 0; i < 0x1000 / 8; i++) {
		uint64_t w;
		long k;

		memcpy(&w, r.f->mem + (ROOT - BASE) + 8 * i, 8);
		k = ref_find(r.b, RN, w);
		if (k >= 0 && ref[k] < (w == r.b[k].addr ? 2 : 1))
			ref[k] = w == r.b[k].addr ? 2 : 1;
	}
	do {
		changed = 0;
		for (i = 0; i < RN; i++) {
			if (!ref[i])
				continue;
			for (j = 0; j + 8 <= r.b[i].size; j += 8) {
				uint64_t w, base = (r.b[i].addr + 7) & ~7ULL;
				long k;
				int want;

				if (base + j + 8 > r.b[i].addr + r.b[i].size)
					break;
				memcpy(&w, r.f->mem + (base + j - BASE), 8);
				k = ref_find(r.b, RN, w);
				if (k < 0)
					continue;
				want = (w == r.b[k].addr && ref[i] == 2) ? 2 : 1;
				if (ref[k] < want) {
					ref[k] = want;
					changed = 1;
				}
			}
		}
	} while (changed);

	for (i = 0; i < RN; i++) {
		enum scan_class c = r.b[i].cls;

		if (ref[i] == 2 && c != SCAN_STILL_REACHABLE)
			fail_msg("block %zu: want still reachable", i);
		if (ref[i] == 1 && c != SCAN_POSSIBLY_LOST)
			fail_msg("block %zu: want possibly lost", i);
		if (ref[i] == 0 && c != SCAN_DEFINITELY_LOST &&
		    c != SCAN_INDIRECTLY_LOST)
			fail_msg("block %zu: want lost", i);
		if (c != SCAN_DEFINITELY_LOST && r.b[i].indirect)
			fail_msg("block %zu: indirect on a non-leader", i);
		if (!ref[i])
			lost += r.b[i].size;
		if (c == SCAN_DEFINITELY_LOST)
			acc += r.b[i].size + r.b[i].indirect;
	}
	assert_int_equal(acc, lost);
	if (getenv("SCAN_TEST_VERBOSE")) {
		size_t cnt[4] = { 0 };

		for (i = 0; i < RN; i++)
			cnt[r.b[i].cls]++;
		print_message("D %zu I %zu P %zu R %zu\n", cnt[0], cnt[1],
			      cnt[2], cnt[3]);
	}
	free(ref);
	run_free(&r);
}

#define MANY	1000000

static void test_million_lost_blocks(void **state)
{
	struct run r;
	size_t i;

	run_init(&r, MANY, BASE, (HEAP - BASE) + (size_t)MANY * 16);
	for (i = 0; i < MANY; i++) {
		r.b[i].addr = HEAP + i * 16;
		r.b[i].size = 16;
		put(r.f, r.b[i].addr, 42);	/* no pointers */
	}
	add_root(&r, ROOT, ROOT + 0x1000);
	classify(&r);
	for (i = 0; i < MANY; i++)
		if (r.b[i].cls != SCAN_DEFINITELY_LOST || r.b[i].indirect)
			fail_msg("block %zu misclassified", i);
	assert_true(r.f->nreads <= 1 + MANY);	/* one read per block */
	run_free(&r);
}

/*
 * More pending blocks than the work stack holds (scan.c: STACK_MIN +
 * n / 16): a reachable array of pointers to 50,000 of 100,000 blocks,
 * each of which points to one of the others (phase 1 spills), and a lost array of
 * 50,000 pointers (phase 2 spills): the same classes as ever.
 */
static void test_stack_spills(void **state)
{
	enum { M = 100000, K = 50000 };
	uint64_t arr = HEAP, small = HEAP + 8 * M, lost = small + 32 * (uint64_t)M;
	uint64_t lsmall = lost + 8 * K, end = lsmall + 32 * (uint64_t)K;
	struct run r;
	size_t i, nb = 2 + M + K;

	(void)state;
	run_init(&r, nb, BASE, (size_t)(end - BASE));
	r.b[0].addr = arr;
	r.b[0].size = 8 * M;
	for (i = 0; i < M; i++) {
		r.b[1 + i].addr = small + 32 * i;
		r.b[1 + i].size = 32;
		if (i % 2) {
			put(r.f, arr + 8 * i, small + 32 * i);
			put(r.f, small + 32 * i, small + 32 * (i - 1));
		}
	}
	r.b[1 + M].addr = lost;
	r.b[1 + M].size = 8 * K;
	for (i = 0; i < K; i++) {
		r.b[2 + M + i].addr = lsmall + 32 * i;
		r.b[2 + M + i].size = 32;
		put(r.f, lost + 8 * i, lsmall + 32 * i);
	}
	put(r.f, ROOT, arr);
	add_root(&r, ROOT, ROOT + 8);
	classify(&r);
	for (i = 0; i <= M; i++)
		if (r.b[i].cls != SCAN_STILL_REACHABLE || r.b[i].indirect)
			fail_msg("block %zu: class %d", i, (int)r.b[i].cls);
	assert_int_equal(r.b[1 + M].cls, SCAN_DEFINITELY_LOST);
	assert_int_equal(r.b[1 + M].indirect, 32ull * K);
	for (i = 2 + M; i < nb; i++)
		if (r.b[i].cls != SCAN_INDIRECTLY_LOST || r.b[i].indirect)
			fail_msg("block %zu: class %d", i, (int)r.b[i].cls);
	run_free(&r);
}

/* Memory in far-apart segments (the scan's regions: 4 GiB each). */
struct seg {
	uint64_t base;
	size_t size;
	uint8_t *mem;
};

static long segs_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct seg *sg = ctx;
	int i;

	for (i = 0; i < 3; i++)
		if (addr >= sg[i].base && addr < sg[i].base + sg[i].size) {
			size_t n = len;

			if (addr + n > sg[i].base + sg[i].size)
				n = (size_t)(sg[i].base + sg[i].size - addr);
			memcpy(buf, sg[i].mem + (addr - sg[i].base), n);
			return (long)n;
		}
	return -1;
}

static void seg_put(struct seg *sg, uint64_t addr, uint64_t v)
{
	int i;

	for (i = 0; i < 3; i++)
		if (addr >= sg[i].base && addr + 8 <= sg[i].base + sg[i].size) {
			memcpy(sg[i].mem + (addr - sg[i].base), &v, 8);
			return;
		}
	fail_msg("no segment at %#llx", (unsigned long long)addr);
}

/*
 * Blocks in three regions of the scan: 100 at 0x20000 (a rooted chain),
 * one (X) across the boundary of the first 4 GiB, reached only by a
 * pointer past that boundary into it (its region holds no block start),
 * 100 at 0x7f0000000000 (a chain from the first chain's end, and a lost
 * chain of 10).  A root word in the empty region after X points nowhere.
 */
static void test_regions(void **state)
{
	enum { NA = 100, NB = 110 };
	uint64_t a0 = 0x20000, x = 0x20000 + (1ull << 32) - 0x80;
	uint64_t b0 = 0x7f0000000000ull;
	struct seg sg[3] = {
		{ 0x10000, 0x20000, NULL },
		{ x, 0x100, NULL },
		{ b0, NB * 64, NULL },
	};
	struct scan_block b[NA + 1 + NB];
	struct scan_range root = { 0x10000, 0x10018, 0 };
	struct scan_input in;
	size_t i;
	int k;

	(void)state;
	for (k = 0; k < 3; k++) {
		sg[k].mem = calloc(1, sg[k].size);
		assert_non_null(sg[k].mem);
	}
	memset(b, 0, sizeof(b));
	for (i = 0; i < NA; i++) {
		b[i].addr = a0 + 64 * i;
		b[i].size = 48;
		if (i + 1 < NA)
			seg_put(sg, b[i].addr, b[i].addr + 64);
	}
	seg_put(sg, b[NA - 1].addr, b0);	/* the first chain's end -> B */
	b[NA].addr = x;
	b[NA].size = 0x100;
	for (i = 0; i < NB; i++) {
		b[NA + 1 + i].addr = b0 + 64 * i;
		b[NA + 1 + i].size = 64;
		if (i + 1 < NB && i != 99)
			seg_put(sg, b0 + 64 * i, b0 + 64 * (i + 1));
	}
	seg_put(sg, 0x10000, a0);
	seg_put(sg, 0x10008, x + 0x90);		/* past the 4 GiB boundary */
	seg_put(sg, 0x10010, x + 0x100 + 0x1000);	/* after X: nothing */
	memset(&in, 0, sizeof(in));
	in.blocks = b;
	in.nblocks = NA + 1 + NB;
	in.roots = &root;
	in.nroots = 1;
	in.read = segs_read;
	in.ctx = sg;
	assert_int_equal(scan_classify(&in, NULL), 0);
	for (i = 0; i < NA; i++)
		assert_int_equal(b[i].cls, SCAN_STILL_REACHABLE);
	assert_int_equal(b[NA].cls, SCAN_POSSIBLY_LOST);
	for (i = 0; i < 100; i++)
		assert_int_equal(b[NA + 1 + i].cls, SCAN_STILL_REACHABLE);
	assert_int_equal(b[NA + 101].cls, SCAN_DEFINITELY_LOST);
	assert_int_equal(b[NA + 101].indirect, 9 * 64);
	for (i = 102; i < NB + 1; i++)
		assert_int_equal(b[NA + i].cls, SCAN_INDIRECTLY_LOST);
	for (k = 0; k < 3; k++)
		free(sg[k].mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_keys),
		cmocka_unit_test(test_glibc_next_chunk_header),
		cmocka_unit_test(test_root_range_reachable),
		cmocka_unit_test(test_born_before),
		cmocka_unit_test(test_skip_untouched),
		cmocka_unit_test(test_root_value_reachable),
		cmocka_unit_test(test_interior_only_possibly_lost),
		cmocka_unit_test(test_lost_list_of_three),
		cmocka_unit_test(test_reachable_list),
		cmocka_unit_test(test_reachable_from_reachable),
		cmocka_unit_test(test_interior_from_reachable),
		cmocka_unit_test(test_cycle_of_two_lost),
		cmocka_unit_test(test_self_pointer_lost),
		cmocka_unit_test(test_start_ptr_from_possibly_lost),
		cmocka_unit_test(test_possible_upgraded_rescans),
		cmocka_unit_test(test_lost_points_to_reachable),
		cmocka_unit_test(test_clique_earlier_leader_takes_later),
		cmocka_unit_test(test_clique_later_leader_absorbs_earlier),
		cmocka_unit_test(test_clique_shared_target_counted_once),
		cmocka_unit_test(test_chain_rooted),
		cmocka_unit_test(test_chain_unrooted),
		cmocka_unit_test(test_chain_unrooted_downward),
		cmocka_unit_test(test_unreadable_root),
		cmocka_unit_test(test_unreadable_block),
		cmocka_unit_test(test_zero_size_block),
		cmocka_unit_test(test_unaligned_words_ignored),
		cmocka_unit_test(test_large_root_chunked),
		cmocka_unit_test(test_reverse_chain_read_once),
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_million_lost_blocks),
		cmocka_unit_test(test_stack_spills),
		cmocka_unit_test(test_regions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
