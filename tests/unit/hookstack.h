/*
 * hookstack.h - what test_hooks_stack and test_hooks_stack_mt share: the
 * allocator of stub_talloc.c patched in the test process (patch_self.h),
 * the blob given unwind tables of every loaded object and its own
 * (unwtab_self.h, recblob.h), a thread table whose stacks come from
 * /proc/self/maps, the main thread's stack bounds; call chains built
 * -O2 -fomit-frame-pointer whose leaf takes libunwind's backtrace next to
 * its t_malloc call; the records read back and checked against it.
 * One includer per test binary (it defines the test's state).
 */
#ifndef HOOKSTACK_H
#define HOOKSTACK_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <libunwind.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "patch_self.h"
#include "stub_talloc.h"
#include "unwtab_self.h"

#define RING_LOG2	24
#define MAXF		128
#define NOINLINE	__attribute__((noinline, noipa))
#define RA()		((uint64_t)(uintptr_t)__builtin_return_address(0))
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

static struct fn fns[] = {
	{ .addr = (void *)t_malloc, .name = "t_malloc", .kind = REC_FN_MALLOC },
	{ .addr = (void *)t_free, .name = "t_free", .kind = REC_FN_FREE },
	{ .addr = (void *)t_realloc, .name = "t_realloc", .kind = REC_FN_REALLOC },
};
#define NFNS (sizeof(fns) / sizeof(fns[0]))

static struct rec_conf conf;
static struct ring *ring;
static struct ring_reader *rd;
static uint8_t *code;
static struct self_tabs tabs;
static struct rec_objs *objs;
#define NTHREADS 16
static struct rec_thread threads[NTHREADS];
static uint64_t stackset[64];
static struct rec_pccache pccache[1024];
static struct rec_scache scache[NTHREADS + 1];
static volatile int sink;

/* ---- where the stacks are ---- */

/* The mapping of /proc/self/maps holding ADDR: [*LO, *HI).  0 or -1. */
static inline int maps_range(uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long a, b;
	char line[512];
	int ret = -1;

	while (f && ret && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && addr >= a && addr < b)
			*lo = a, *hi = b, ret = 0;
	if (f)
		fclose(f);
	return ret;
}

/* Enter the calling thread in the thread table with the stack [LO, HI)
 * (its own mapping if HI is 0), as ptleak does: fields, then tcb. */
static inline struct rec_thread *add_thread(uint64_t lo, uint64_t hi)
{
	uint64_t tcb = (uint64_t)pthread_self(), i, s;
	struct rec_thread *e = NULL;

	if (!hi && maps_range((uint64_t)(uintptr_t)&tcb, &lo, &hi))
		return NULL;
	s = rec_thread_slot(tcb, NTHREADS - 1);
	for (i = 0; i < NTHREADS && !e; i++) {
		e = &threads[(s + i) & (NTHREADS - 1)];
		if (e->tcb && e->tcb != tcb)
			e = NULL;
	}
	if (!e)
		return NULL;
	e->lo = lo;
	e->hi = hi;
	e->tid = (uint64_t)gettid();
	__atomic_store_n(&e->tcb, tcb, __ATOMIC_RELEASE);
	return e;
}

/* Take the calling thread's entry out (the table is only filled in
 * order and emptied whole between tests: no probe chain breaks). */
static inline void clear_threads(void)
{
	memset(threads, 0, sizeof(threads));
	memset(scache, 0, sizeof(scache));
}

/* ---- call chains ---- */

/*
 * cap_malloc(n): t_malloc(n) by a tail call, its caller's return address
 * saved in cap_ra first: the stub then sees that return address.
 */
uint64_t cap_ra;
void *cap_malloc(size_t n);
__asm__(".text\n"
	".globl cap_malloc\n"
	".type cap_malloc, @function\n"
	"cap_malloc:\n"
	"	movq (%rsp), %rax\n"
	"	movq %rax, cap_ra(%rip)\n"
	"	jmp t_malloc\n"
	".size cap_malloc, .-cap_malloc\n");

/* What the leaf saw: libunwind's pcs from a call next to t_malloc's. */
struct seen {
	void *bt[MAXF];
	int nbt;
	uint64_t ra;		/* t_malloc's return address */
	void *p;
};

static __thread struct seen *seen_at;

/* libunwind's backtrace from here, then t_malloc(N) */
static NOINLINE void *leaf(size_t n)
{
	struct seen *s = seen_at;

	ut_backtrace = unw_backtrace;
	s->nbt = ut_capture(s->bt, MAXF);
	s->p = cap_malloc(n);
	s->ra = cap_ra;
	sink++;
	return s->p;
}

/* a variable-length array: rbp is the frame pointer (CFA = rbp + 16) */
static NOINLINE void *with_vla(int n, size_t size)
{
	volatile int v[n];
	void *p;

	v[0] = n;
	p = leaf(size);
	sink += v[0];
	return p;
}

/* fixed-size frames: CFA = rsp + N */
static NOINLINE void *chain(int n, size_t size)
{
	volatile char buf[48];
	void *p;

	buf[0] = (char)n;
	p = n ? chain(n - 1, size) : with_vla(5, size);
	sink += buf[0];
	return p;
}

/* Through CHAIN (N frames) with *S filled; the caller frees. */
static NOINLINE void *call_chain(struct seen *s, int n, size_t size)
{
	void *p;

	seen_at = s;
	p = chain(n, size);
	sink++;
	return p;
}

/* ---- reading the records ---- */

struct rec {
	unsigned type, npcs, nwords, open, amended;
	uint64_t w[MAXF + 8];
};

struct got {
	struct rec r[16];
	unsigned n;
};

static inline int collect(void *ctx, const struct ring_rec *rec)
{
	struct got *g = ctx;
	struct rec *r = &g->r[g->n < 16 ? g->n : 15];

	r->type = rec->type;
	r->npcs = rec->npcs;
	r->nwords = rec->nwords;
	r->open = rec->open;
	r->amended = rec->amended;
	memcpy(r->w, rec->w, 8 * (rec->nwords < MAXF + 8 ? rec->nwords : MAXF + 8));
	g->n++;
	return 0;
}

/* The records of ring R (reader RD) into G. */
static inline void drain_ring(struct ring_reader *from, struct got *g)
{
	g->n = 0;
	while (ring_consume(from, collect, g, 1000) > 0)
		;
}

static inline void drain(struct got *g)
{
	drain_ring(rd, g);
}

/* The hash of the N pcs PCS. */
static inline uint64_t hash_of(const uint64_t *pcs, unsigned n)
{
	uint64_t h = REC_STACK_HASH_SEED;
	unsigned i;

	for (i = 0; i < n; i++)
		h = rec_stack_hash_add(h, pcs[i], i);
	return rec_stack_hash_end(h, n);
}

/* The stack S should give: t_malloc's return address, then libunwind's
 * from its second on (its first is its own call's); at most MAX, and up
 * to the first return address into [conf.main_lo, conf.main_hi). */
static inline unsigned expected(const struct seen *s, uint64_t *pcs,
				unsigned max)
{
	unsigned n = 0;

	pcs[n++] = s->ra;
	while (n < max && n < (unsigned)s->nbt &&
	       !(pcs[n - 1] - 1 >= conf.main_lo && pcs[n - 1] - 1 < conf.main_hi)) {
		pcs[n] = (uint64_t)(uintptr_t)s->bt[n];
		n++;
	}
	return n;
}

/* Record R is the malloc of S of SIZE bytes by thread TID whose stack
 * is PCS (N); its pcs are interned (not sent) if INTERNED. */
static inline void want_stack(const struct rec *r, const struct seen *s,
			      size_t size, uint64_t tid, const uint64_t *pcs,
			      unsigned n, int interned)
{
	unsigned i;

	assert_int_equal(r->type, REC_ALLOC);
	assert_int_equal((uint32_t)r->w[0], REC_FN(REC_FN_MALLOC, 0));
	assert_int_equal(r->w[0] >> 32, tid);
	/* its time: the TSC before it was reserved; 0 while the process
	 * has had no second thread */
	if (conf.need_tsc)
		assert_true(r->w[1] && r->w[1] <= ring_arch_tsc());
	else
		assert_int_equal(r->w[1], 0);
	assert_int_equal(r->w[2], (uint64_t)s->p);
	assert_int_equal(r->w[3], size);
	assert_int_equal(r->w[4], 0);
	assert_int_equal(r->w[5], hash_of(pcs, n));
	assert_int_equal(r->npcs, interned ? 0 : n);
	assert_int_equal(r->nwords, 6 + r->npcs);
	for (i = 0; i < r->npcs; i++)
		assert_int_equal(r->w[6 + i], pcs[i]);
}

/*
 * One malloc through CHAIN(NCHAIN) on this thread, then its free: the
 * malloc's record is thread TID's with the stack libunwind saw, cut as
 * expected() says with MAX (or, if ONE, the caller alone), interned if
 * INTERNED.  Returns the number of pcs of the stack.
 */
static inline unsigned one_call(int nchain, unsigned max, int one,
				uint64_t tid, int interned, struct seen *s,
				struct got *g)
{
	uint64_t pcs[MAXF];
	unsigned n;

	t_free(call_chain(s, nchain, 24));
	drain(g);
	assert_int_equal(g->n, 2);
	assert_int_equal(g->r[1].type, REC_FREE);
	assert_int_equal(g->r[1].npcs, 0);
	assert_int_equal(g->r[1].nwords, 3);
	assert_int_equal(g->r[1].w[0] >> 32, tid);
	assert_true(g->r[1].w[1] >= g->r[0].w[1]);	/* after the malloc's */
	assert_int_equal(g->r[1].w[2], (uint64_t)s->p);
	n = expected(s, pcs, one ? 1 : max);
	want_stack(&g->r[0], s, 24, tid, pcs, n, interned);
	return n;
}

static inline int rule_kind_at(uint64_t pc)
{
	const struct unwtab_obj *o = unwtab_find_obj(objs->obj, (unsigned)objs->n, pc);
	const struct unwtab_rule *r = o ? unwtab_find_rule(o->tab, pc - o->bias) : NULL;

	return r ? r->kind : -1;
}

/* ---- setup ---- */

/* The tables: every loaded object's, and the blob's own in the code
 * page (recblob.h), sorted by lo. */
static inline int add_objs(void)
{
	struct unwtab_obj blob = {
		.lo = (uint64_t)(uintptr_t)code,
		.hi = (uint64_t)(uintptr_t)code + rec_blob_size,
		.bias = (uint64_t)(uintptr_t)code,
		.tab = (const struct unwtab_hdr *)rec_blob_unwtab,
	};
	unsigned i, j = 0;

	if (unwtab_check(rec_blob_unwtab, rec_blob_unwtab_size) < 0)
		return -1;
	objs = malloc(sizeof(*objs) + (tabs.n + 1) * sizeof(objs->obj[0]));
	if (!objs)
		return -1;
	for (i = 0; i < tabs.n; i++) {
		if (j == i && tabs.objs[i].lo > blob.lo)
			objs->obj[j++] = blob;
		objs->obj[j++] = tabs.objs[i];
	}
	if (j == i)
		objs->obj[j++] = blob;
	objs->n = j;
	conf.objs = objs;
	return 0;
}

static inline int setup(void **state)
{
	uint64_t lo, hi;
	unsigned i;

	if (ring_map(RING_LOG2, &ring, &rd))
		return -1;
	self_tabs_load(&tabs);
	if (tabs.failed || !tabs.n)
		return -1;
	if (maps_range((uint64_t)(uintptr_t)&lo, &lo, &hi))
		return -1;
	conf.ring = ring;
	conf.depth = MAXF;
	conf.need_tsc = 1;
	conf.main_stack_lo = lo;
	conf.main_stack_hi = hi;
	conf.main_tid = (uint64_t)gettid();
	conf.threads = threads;
	conf.threads_mask = NTHREADS - 1;
	conf.stackset = rec_stackset_word((uintptr_t)stackset,
					  __builtin_ctz(ARRAY_LEN(stackset)));
	if (!getenv("NO_PCCACHE")) {
		conf.pccache = pccache;
		conf.pccache_mask = ARRAY_LEN(pccache) - 1;
	}
	if (!getenv("NO_SCACHE")) {
		conf.scache = scache;
		conf.main_scache = &scache[NTHREADS];
	}
	for (i = 0; i < NFNS; i++)
		fns[i].size = elf_func("/proc/self/exe", SHT_SYMTAB, fns[i].name,
				       NULL);
	if (patch_self(&conf, fns, NFNS, &code))
		return -1;
	return add_objs();
}

static inline int teardown(void **state)
{
	unpatch_self(fns, NFNS);
	ring_reader_delete(rd);
	munmap(code, PATCH_CODE_LEN);
	munmap(ring, ring_mem_size(RING_LOG2));
	free(objs);
	self_tabs_free(&tabs);
	return 0;
}


/* Put hash H in the stack set, as ptleak does with a stack it took. */
static inline void intern(uint64_t h)
{
	uint64_t mask = ARRAY_LEN(stackset) - 1, i;

	for (i = 0; i < REC_STACKSET_PROBES; i++)
		if (!stackset[(h + i) & mask] || stackset[(h + i) & mask] == h) {
			__atomic_store_n(&stackset[(h + i) & mask], h,
					 __ATOMIC_RELEASE);
			return;
		}
}

#endif
