/*
 * test_hookstack.c - the stacks the recorder's hooks record
 * (docs/recorder.md, piece 6 in the hook; rechook.h's record contract).
 *
 * stub_talloc.c's allocator is patched in this process as in test_stub
 * (patch_self.h); the blob is given unwind tables compiled from every
 * loaded object (unwtab_self.h), a thread table whose stacks come from
 * /proc/self/maps, and the main thread's stack bounds.  Calls made
 * through known call chains of this file (built -O2
 * -fomit-frame-pointer: frames with and without a frame pointer) must
 * record the pcs of libunwind's unw_backtrace() taken in the same frame,
 * one for one; the depth cut, the stop after main, a thread with no
 * entry, a sigaltstack, the stack set and four threads are exact.
 *
 * PTLEAK_BENCH=1 in the environment prints CPU ns per call with 16-frame
 * stacks at 1 and 4 threads (no assertion).
 */
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
static volatile int sink;

/* ---- where the stacks are ---- */

/* The mapping of /proc/self/maps holding ADDR: [*LO, *HI).  0 or -1. */
static int maps_range(uint64_t addr, uint64_t *lo, uint64_t *hi)
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
static struct rec_thread *add_thread(uint64_t lo, uint64_t hi)
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
static void clear_threads(void)
{
	memset(threads, 0, sizeof(threads));
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
	unsigned type, npcs, nwords;
	uint64_t w[MAXF + 8];
};

struct got {
	struct rec r[16];
	unsigned n;
};

static int collect(void *ctx, const struct ring_rec *rec)
{
	struct got *g = ctx;
	struct rec *r = &g->r[g->n < 16 ? g->n : 15];

	r->type = rec->type;
	r->npcs = rec->npcs;
	r->nwords = rec->nwords;
	memcpy(r->w, rec->w, 8 * (rec->nwords < MAXF + 8 ? rec->nwords : MAXF + 8));
	g->n++;
	return 0;
}

static void drain(struct got *g)
{
	g->n = 0;
	while (ring_consume(rd, collect, g, 1000) > 0)
		;
}

/* The hash of the N pcs PCS. */
static uint64_t hash_of(const uint64_t *pcs, unsigned n)
{
	uint64_t h = REC_STACK_HASH_SEED;
	unsigned i;

	for (i = 0; i < n; i++)
		h = rec_stack_hash_add(h, pcs[i]);
	return rec_stack_hash_end(h, n);
}

/* The stack S should give: t_malloc's return address, then libunwind's
 * from its second on (its first is its own call's); at most MAX, and up
 * to the first return address into [conf.main_lo, conf.main_hi). */
static unsigned expected(const struct seen *s, uint64_t *pcs, unsigned max)
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
static void want_stack(const struct rec *r, const struct seen *s, size_t size,
		       uint64_t tid, const uint64_t *pcs, unsigned n,
		       int interned)
{
	unsigned i;

	assert_int_equal(r->type, REC_ALLOC);
	assert_int_equal(r->w[0], REC_FN(REC_FN_MALLOC, 0));
	assert_int_equal(r->w[1], tid);
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
static unsigned one_call(int nchain, unsigned max, int one, uint64_t tid,
			 int interned, struct seen *s, struct got *g)
{
	uint64_t pcs[MAXF];
	unsigned n;

	t_free(call_chain(s, nchain, 24));
	drain(g);
	assert_int_equal(g->n, 2);
	assert_int_equal(g->r[1].type, REC_FREE);
	assert_int_equal(g->r[1].npcs, 0);
	assert_int_equal(g->r[1].nwords, 3);
	assert_int_equal(g->r[1].w[1], tid);
	assert_int_equal(g->r[1].w[2], (uint64_t)s->p);
	n = expected(s, pcs, one ? 1 : max);
	want_stack(&g->r[0], s, 24, tid, pcs, n, interned);
	return n;
}

static int rule_kind_at(uint64_t pc)
{
	const struct unwtab_obj *o = unwtab_find_obj(objs->obj, (unsigned)objs->n, pc);
	const struct unwtab_rule *r = o ? unwtab_find_rule(o->tab, pc - o->bias) : NULL;

	return r ? r->kind : -1;
}

/* ---- setup ---- */

/* The tables: every loaded object's, and the blob's own in the code
 * page (recblob.h), sorted by lo. */
static int add_objs(void)
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

static int setup(void **state)
{
	uint64_t lo, hi;
	unsigned i;

	ring = mmap(NULL, ring_mem_size(RING_LOG2), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ring == MAP_FAILED || ring_init(ring, RING_LOG2) < 0)
		return -1;
	rd = ring_reader_new(ring, ring_mem_size(RING_LOG2));
	if (!rd)
		return -1;
	self_tabs_load(&tabs);
	if (tabs.failed || !tabs.n)
		return -1;
	if (maps_range((uint64_t)(uintptr_t)&lo, &lo, &hi))
		return -1;
	conf.ring = ring;
	conf.depth = MAXF;
	conf.main_stack_lo = lo;
	conf.main_stack_hi = hi;
	conf.main_tid = (uint64_t)gettid();
	conf.threads = threads;
	conf.threads_mask = NTHREADS - 1;
	conf.stackset = stackset;
	conf.stackset_mask = ARRAY_LEN(stackset) - 1;
	if (!getenv("NO_PCCACHE")) {
		conf.pccache = pccache;
		conf.pccache_mask = ARRAY_LEN(pccache) - 1;
	}
	for (i = 0; i < NFNS; i++)
		fns[i].size = elf_func("/proc/self/exe", SHT_SYMTAB, fns[i].name,
				       NULL);
	if (patch_self(&conf, fns, NFNS, &code))
		return -1;
	return add_objs();
}

static int teardown(void **state)
{
	unpatch_self(fns, NFNS);
	ring_reader_delete(rd);
	munmap(code, PATCH_CODE_LEN);
	munmap(ring, ring_mem_size(RING_LOG2));
	free(objs);
	self_tabs_free(&tabs);
	return 0;
}

/* ---- the tests ---- */

/* The main thread, no entry in the table: its stack bounds and tid from
 * the conf; the whole stack, up to _start (no caller: STOP), as
 * libunwind's. */
static void test_main_thread(void **state)
{
	struct seen s;
	struct got g;
	unsigned n;

	n = one_call(3, MAXF, 0, conf.main_tid, 0, &s, &g);
	/* leaf, with_vla, 4 x chain, call_chain, one_call, the test,
	 * cmocka's frames, main, libc's start, _start */
	assert_true(n >= 12);
	assert_int_equal(n, s.nbt);
	assert_int_equal(rule_kind_at(g.r[0].w[6 + n - 1] - 1), UNWTAB_STOP);
	assert_true(rule_kind_at(s.ra - 1) == UNWTAB_CFA_SP);	/* leaf */
	assert_true(rule_kind_at(g.r[0].w[7] - 1) == UNWTAB_CFA_FP); /* with_vla */
}

/* At most depth pcs; depth 0 and 1: the caller alone. */
static void test_depth(void **state)
{
	struct seen s;
	struct got g;

	conf.depth = 3;
	assert_int_equal(one_call(3, 3, 0, conf.main_tid, 0, &s, &g), 3);
	conf.depth = 1;
	assert_int_equal(one_call(3, 1, 0, conf.main_tid, 0, &s, &g), 1);
	conf.depth = 0;
	assert_int_equal(one_call(3, 1, 0, conf.main_tid, 0, &s, &g), 1);
	conf.depth = 7;
	assert_int_equal(one_call(3, 7, 0, conf.main_tid, 0, &s, &g), 7);
	conf.depth = MAXF;
}

/* The last pc is the first return address into "main" (here chain):
 * leaf's caller's, with_vla's caller's = chain(0)'s call of with_vla. */
static void test_main_stop(void **state)
{
	uint64_t size = elf_func("/proc/self/exe", SHT_SYMTAB, "chain", NULL);
	struct seen s;
	struct got g;

	assert_true(size > 0);
	conf.main_lo = (uint64_t)(uintptr_t)chain;
	conf.main_hi = conf.main_lo + size;
	assert_int_equal(one_call(3, MAXF, 0, conf.main_tid, 0, &s, &g), 3);
	/* the stack's first return address in it is one: the cut holds
	 * when the caller itself is main */
	conf.main_lo = (uint64_t)(uintptr_t)leaf;
	conf.main_hi = conf.main_lo + elf_func("/proc/self/exe", SHT_SYMTAB,
					      "leaf", NULL);
	assert_int_equal(one_call(3, MAXF, 0, conf.main_tid, 0, &s, &g), 1);
	conf.main_lo = conf.main_hi = 0;
}

/* No tables, or a stack outside every known bound: the caller alone. */
static void test_no_walk(void **state)
{
	uint64_t lo = conf.main_stack_lo;
	struct seen s;
	struct got g;

	conf.objs = NULL;
	one_call(3, MAXF, 1, conf.main_tid, 0, &s, &g);
	conf.objs = objs;
	conf.main_stack_lo = conf.main_stack_hi;	/* sp below: not on it */
	one_call(3, MAXF, 1, 0, 0, &s, &g);
	conf.main_stack_lo = lo;
}

/* A return address in another stub page: a nested call, not recorded. */
static void test_stub_pages(void **state)
{
	struct seen s;
	struct got g;

	conf.stub[1].lo = (uint64_t)(uintptr_t)leaf;
	conf.stub[1].hi = conf.stub[1].lo +
		elf_func("/proc/self/exe", SHT_SYMTAB, "leaf", NULL);
	conf.nstubs = 2;
	seen_at = &s;
	t_free(leaf(24));
	drain(&g);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.r[0].type, REC_FREE);
	conf.nstubs = 0;
	one_call(0, MAXF, 0, conf.main_tid, 0, &s, &g);
}

/*
 * The stack set: a hash found within REC_STACKSET_PROBES entries from
 * hash & mask gives the hash alone; one further on, or after a free
 * entry, is not found (the pcs are sent again); another stack is not
 * taken for it.  The stacks end at one_call (as if it were main): the
 * compiler may call one_call from several places here.
 */
static void test_stackset(void **state)
{
	static const struct {
		int nchain, interned;
	} step[] = {
		{ 2, 0 },	/* nothing in the set */
		{ 2, 1 },	/* h at the last entry probed */
		{ 2, 0 },	/* h one entry further */
		{ 2, 0 },	/* h after a free entry */
		{ 3, 0 },	/* h at its first entry, another stack */
		{ 2, 1 },	/* ... and this one */
	};
	uint64_t h = 0, mask = ARRAY_LEN(stackset) - 1;
	struct seen s;
	struct got g;
	unsigned k, i, n;

	conf.main_lo = (uint64_t)(uintptr_t)one_call;
	conf.main_hi = conf.main_lo + elf_func("/proc/self/exe", SHT_SYMTAB,
					      "one_call", NULL);
	for (k = 0; k < ARRAY_LEN(step); k++) {
		memset(stackset, 0, sizeof(stackset));
		for (i = 0; k && i < REC_STACKSET_PROBES + 1; i++)
			stackset[(h + i) & mask] = h + 1 + i;
		if (k == 1)
			stackset[(h + REC_STACKSET_PROBES - 1) & mask] = h;
		else if (k == 2)
			stackset[(h + REC_STACKSET_PROBES) & mask] = h;
		else if (k == 3)
			stackset[(h + 1) & mask] = 0, stackset[(h + 2) & mask] = h;
		else if (k >= 4)
			stackset[h & mask] = h;
		n = one_call(step[k].nchain, MAXF, 0, conf.main_tid,
			     step[k].interned, &s, &g);
		if (!k)
			h = hash_of(g.r[0].w + 6, n);
		if (step[k].nchain == 2)
			assert_int_equal(g.r[0].w[5], h);
		else
			assert_true(g.r[0].w[5] != h);
	}
	conf.main_lo = conf.main_hi = 0;
	memset(stackset, 0, sizeof(stackset));
}

/*
 * The rule cache: an entry whose check holds for the current tables is
 * used (a STOP rule planted at the first lookup cuts the stack to the
 * caller); a torn entry (check made with another rule) or one made for
 * another struct rec_objs is not.
 */
static void test_pccache(void **state)
{
	static const struct unwtab_rule stop = { .kind = UNWTAB_STOP }, other;
	struct rec_objs *copy = malloc(sizeof(*objs) + objs->n * sizeof(objs->obj[0]));
	uint64_t key, r = (uint64_t)(uintptr_t)&stop;
	struct rec_pccache *e;
	struct seen s;
	struct got g;
	unsigned n, k;

	assert_non_null(conf.pccache);
	memcpy(copy, objs, sizeof(*objs) + objs->n * sizeof(objs->obj[0]));
	for (k = 0; k < 4; k++) {
		/* 1: a rule planted for t_malloc's caller's frame, 2: torn,
		 * 3: planted, but the tables are another struct rec_objs */
		if (k) {
			key = s.ra - 1;
			e = &pccache[rec_pccache_slot(key, ARRAY_LEN(pccache) - 1)];
			e->rule = r;
			e->check = key ^ (uint64_t)(uintptr_t)objs ^
				   (k == 2 ? (uint64_t)(uintptr_t)&other : r);
			conf.objs = k == 3 ? copy : objs;
		}
		n = one_call(3, MAXF, k == 1, conf.main_tid, 0, &s, &g);
	}
	assert_int_equal(n, s.nbt);
	conf.objs = objs;
	memset(pccache, 0, sizeof(pccache));
	free(copy);
}

/* ---- threads ---- */

struct thr {
	pthread_t th;
	int entry;		/* put itself in the thread table */
	int nchain;
	unsigned calls;
	uint64_t tid;
	struct seen s;
	uint64_t ptrs[4];
};

static void *thread_main(void *arg)
{
	struct thr *t = arg;

	t->tid = (uint64_t)gettid();
	if (t->entry && !add_thread(0, 0))
		return NULL;
	t_free(call_chain(&t->s, t->nchain, 24));
	return NULL;
}

/* A thread with an entry: its stack (to clone's child: STOP) and tid;
 * one without (and no TCB offset): tid 0, the caller alone. */
static void test_threads(void **state)
{
	struct thr t = { .entry = 1, .nchain = 2 };
	uint64_t pcs[MAXF];
	struct got g;
	unsigned n;

	assert_int_equal(pthread_create(&t.th, NULL, thread_main, &t), 0);
	pthread_join(t.th, NULL);
	drain(&g);
	assert_int_equal(g.n, 2);
	n = expected(&t.s, pcs, MAXF);
	assert_int_equal(n, t.s.nbt);
	/* leaf, with_vla, 3 x chain, call_chain, thread_main, start_thread,
	 * clone3 */
	assert_int_equal(n, 9);
	want_stack(&g.r[0], &t.s, 24, t.tid, pcs, n, 0);
	assert_int_equal(rule_kind_at(pcs[n - 1] - 1), UNWTAB_STOP);
	assert_int_equal(g.r[1].w[1], t.tid);
	clear_threads();

	t.entry = 0;
	assert_int_equal(pthread_create(&t.th, NULL, thread_main, &t), 0);
	pthread_join(t.th, NULL);
	drain(&g);
	assert_int_equal(g.n, 2);
	want_stack(&g.r[0], &t.s, 24, 0, pcs, expected(&t.s, pcs, 1), 0);
	assert_int_equal(g.r[1].w[1], 0);
}

/* ---- a signal handler's stack through the stub ---- */

static struct seen alrm_seen;

/* an allocation through leaf, the interrupted leaf's state kept */
static void on_alrm(int sig)
{
	struct seen *outer = seen_at;
	uint64_t ra = cap_ra;

	t_free(call_chain(&alrm_seen, 0, 24));
	seen_at = outer;
	cap_ra = ra;
}

/*
 * SIGALRM raised inside t_malloc (called through leaf): the handler's
 * malloc's stack goes through the signal frame, raise, t_malloc and the
 * stub's frame (the blob's own table) into t_malloc's caller, leaf, and
 * on to the end: the handler's side as libunwind saw it up to the return
 * address into the stub, then the interrupted call's stack.
 */
static void test_signal_through_stub(void **state)
{
	struct sigaction sa = { .sa_handler = on_alrm }, old;
	uint64_t pcs[MAXF], pc = 0, lo = (uint64_t)(uintptr_t)code;
	const struct rec *r;
	struct seen s;
	struct got g;
	unsigned n, j;

	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	t_free(call_chain(&s, 1, T_RAISE));
	sigaction(SIGALRM, &old, NULL);
	drain(&g);
	assert_int_equal(g.n, 4);
	for (j = 1; j < (unsigned)alrm_seen.nbt; j++) {
		pc = (uint64_t)(uintptr_t)alrm_seen.bt[j];
		if (pc >= lo && pc < lo + rec_blob_size)
			break;
	}
	assert_true(j < (unsigned)alrm_seen.nbt);
	assert_int_equal(rule_kind_at(pc - 1), UNWTAB_CFA_FP);
	n = expected(&alrm_seen, pcs, j + 1);
	assert_int_equal(n, j + 1);
	n += expected(&s, pcs + n, MAXF - n);
	assert_int_equal(n, j + 1 + s.nbt);
	want_stack(&g.r[0], &alrm_seen, 24, conf.main_tid, pcs, n, 0);
	r = &g.r[2];
	n = expected(&s, pcs, MAXF);
	want_stack(r, &s, T_RAISE, conf.main_tid, pcs, n, 0);
}

/* ---- a thread with no TLS ---- */

#define ARCH_SET_FS_ 0x1002
#define ARCH_GET_FS_ 0x1003

/* arch_prctl without libc (which may use TLS around the call) */
static long raw_arch_prctl(long op, unsigned long addr)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "0"(158L), "D"(op), "S"(addr)
			 : "rcx", "r11", "memory");
	return r;
}

static void *no_tls_p;

/* t_malloc with the thread pointer 0 for the call (no TLS use here: the
 * allocator and the hooks use none) */
static void *no_tls_main(void *arg)
{
	unsigned long fs = 0;

	if (raw_arch_prctl(ARCH_GET_FS_, (unsigned long)&fs))
		return NULL;
	raw_arch_prctl(ARCH_SET_FS_, 0);
	no_tls_p = t_malloc(24);
	raw_arch_prctl(ARCH_SET_FS_, fs);
	return arg;
}

/* No thread table and no TID offset: the hooks never read the thread
 * pointer (a thread with none set up, a raw clone, would fault): tid 0,
 * the caller alone. */
static void test_no_tls(void **state)
{
	pthread_t th;
	struct got g;

	conf.threads = NULL;
	assert_int_equal(pthread_create(&th, NULL, no_tls_main, NULL), 0);
	pthread_join(th, NULL);
	conf.threads = threads;
	assert_non_null(no_tls_p);
	t_free(no_tls_p);
	drain(&g);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.r[0].type, REC_ALLOC);
	assert_int_equal(g.r[0].w[1], 0);
	assert_int_equal(g.r[0].w[2], (uint64_t)no_tls_p);
	assert_int_equal(g.r[0].npcs, 1);
	assert_int_equal(g.r[1].w[1], conf.main_tid);
}

/* ---- a sigaltstack ---- */

static struct seen sig_seen;
static uint64_t sig_restore;	/* the handler's return address */
static char altstack[64 << 10] __attribute__((aligned(16)));

static void on_usr1(int sig)
{
	sig_restore = RA();
	t_free(call_chain(&sig_seen, 1, 24));
}

/* Raise SIGUSR1, handled on the alternate stack, with the main thread's
 * entry's stack [LO, HI): the handler's malloc record. */
static void raise_on_altstack(uint64_t lo, uint64_t hi, struct got *g)
{
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) }, old;
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };
	struct sigaction osa;

	assert_non_null(add_thread(lo, hi));
	assert_int_equal(sigaltstack(&ss, &old), 0);
	assert_int_equal(sigaction(SIGUSR1, &sa, &osa), 0);
	raise(SIGUSR1);
	sigaction(SIGUSR1, &osa, NULL);
	sigaltstack(&old, NULL);
	clear_threads();
	drain(g);
	assert_int_equal(g->n, 2);
	assert_int_equal(g->r[1].type, REC_FREE);
	assert_int_equal(g->r[1].w[1], gettid());
}

/*
 * A call on a sigaltstack: with the thread's own stack as its entry's
 * bounds, sp is outside them: the caller alone.  With the alternate stack
 * as the bounds, the walk goes through the handler's frames and the
 * signal frame (read on the alternate stack) to the interrupted pc, and
 * stops there: its frame is outside.  Nothing faults.
 */
static void test_sigaltstack(void **state)
{
	uint64_t pcs[MAXF], alt = (uint64_t)(uintptr_t)altstack;
	struct got g;
	unsigned n, j;

	raise_on_altstack(conf.main_stack_lo, conf.main_stack_hi, &g);
	want_stack(&g.r[0], &sig_seen, 24, gettid(), pcs,
		   expected(&sig_seen, pcs, 1), 0);

	raise_on_altstack(alt, alt + sizeof(altstack), &g);
	for (j = 1; j < (unsigned)sig_seen.nbt; j++)
		if ((uint64_t)(uintptr_t)sig_seen.bt[j] == sig_restore)
			break;
	/* leaf, with_vla, chain x 2, call_chain, on_usr1, __restore_rt,
	 * the interrupted pc (in raise) */
	assert_int_equal(j, 6);
	assert_int_equal(rule_kind_at(sig_restore - 1), UNWTAB_SIGNAL);
	assert_true(sig_seen.nbt > 8);
	n = expected(&sig_seen, pcs, j + 2);
	want_stack(&g.r[0], &sig_seen, 24, gettid(), pcs, n, 0);
	assert_int_equal(g.r[0].npcs, 8);
}

/* ---- four threads, the stack set filled as ptleak fills it ---- */

#define ITER 2000

static int ready, go, done;

static void *four_main(void *arg)
{
	struct thr *t = arg;
	unsigned i;

	t->tid = (uint64_t)gettid();
	if (!add_thread(0, 0))
		return NULL;
	/* one call site: the first call's stack is every call's */
	for (i = 0; i < ITER; i++) {
		t_free(call_chain(&t->s, t->nchain, 24));
		if (i)
			continue;
		__atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
			sched_yield();
	}
	__atomic_fetch_add(&done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct four {
	struct thr t[4];
	uint64_t pcs[4][MAXF];
	unsigned npcs[4];
	uint64_t hash[4];
	unsigned allocs[4], frees[4], sent[4], bad;
	uint64_t last[4];
};

/* Put hash H in the stack set, as ptleak does with a stack it took. */
static void intern(uint64_t h)
{
	uint64_t mask = ARRAY_LEN(stackset) - 1, i;

	for (i = 0; i < REC_STACKSET_PROBES; i++)
		if (!stackset[(h + i) & mask] || stackset[(h + i) & mask] == h) {
			__atomic_store_n(&stackset[(h + i) & mask], h,
					 __ATOMIC_RELEASE);
			return;
		}
}

static int check_four(void *ctx, const struct ring_rec *rec)
{
	struct four *f = ctx;
	const uint64_t *w = rec->w;
	unsigned i, k;

	for (k = 0; k < 4 && f->t[k].tid != w[1]; k++)
		;
	if (k == 4) {
		f->bad++;
		return 0;
	}
	if (rec->type == REC_FREE) {
		f->bad += rec->nwords != 3 || w[2] != f->last[k];
		f->frees[k]++;
		return 0;
	}
	f->allocs[k]++;
	f->last[k] = w[2];
	if (rec->type != REC_ALLOC || w[3] != 24 || w[5] != f->hash[k] ||
	    rec->nwords != 6 + rec->npcs ||
	    (rec->npcs && rec->npcs != f->npcs[k])) {
		f->bad++;
		return 0;
	}
	for (i = 0; i < rec->npcs; i++)
		f->bad += w[6 + i] != f->pcs[k][i];
	if (rec->npcs) {
		f->sent[k]++;
		intern(w[5]);
	}
	return 0;
}

static void test_four_threads(void **state)
{
	struct four f;
	unsigned k;
	int n;

	memset(&f, 0, sizeof(f));
	ready = go = done = 0;
	for (k = 0; k < 4; k++) {
		f.t[k].nchain = (int)k + 1;
		assert_int_equal(pthread_create(&f.t[k].th, NULL, four_main,
						&f.t[k]), 0);
	}
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < 4)
		sched_yield();
	for (k = 0; k < 4; k++) {
		f.npcs[k] = expected(&f.t[k].s, f.pcs[k], MAXF);
		/* the chain, call_chain, four_main, start_thread, clone3 */
		assert_int_equal(f.npcs[k], f.t[k].nchain + 7);
		assert_int_equal(f.npcs[k], f.t[k].s.nbt);
		f.hash[k] = hash_of(f.pcs[k], f.npcs[k]);
	}
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (;;) {
		n = ring_consume(rd, check_four, &f, 4096);
		assert_true(n >= 0);
		if (n)
			continue;
		if (__atomic_load_n(&done, __ATOMIC_ACQUIRE) == 4)
			break;
		sched_yield();
	}
	for (k = 0; k < 4; k++)
		pthread_join(f.t[k].th, NULL);
	while (ring_consume(rd, check_four, &f, 4096) > 0)
		;
	assert_int_equal(f.bad, 0);
	for (k = 0; k < 4; k++) {
		assert_int_equal(f.allocs[k], ITER);
		assert_int_equal(f.frees[k], ITER);
		/* the first went before any was interned */
		assert_true(f.sent[k] >= 1 && f.sent[k] < ITER);
	}
	assert_int_equal(ring->lost + ring->dropped, 0);
	clear_threads();
	memset(stackset, 0, sizeof(stackset));
}

/* ---- CPU ns per call, 16-frame stacks ---- */

#define BENCH_ITER 200000

struct bw {
	pthread_t th;
	uint64_t cpu_ns;
};

static NOINLINE void bench_loop(void)
{
	unsigned i;

	for (i = 0; i < BENCH_ITER; i++)
		t_free(t_malloc(16 + i % 64));
}

/* 20 distinct frames above bench_loop (a recursion would repeat one
 * return address: easy on caches and branch predictors) */
#define BENCH_FRAME(n, next) \
	static NOINLINE void bench_##n(void) \
	{ \
		volatile char pad[8 + 8 * (n % 4)]; \
		pad[0] = (char)n; \
		next(); \
		sink += pad[0]; \
	}
BENCH_FRAME(0, bench_loop)
BENCH_FRAME(1, bench_0) BENCH_FRAME(2, bench_1) BENCH_FRAME(3, bench_2)
BENCH_FRAME(4, bench_3) BENCH_FRAME(5, bench_4) BENCH_FRAME(6, bench_5)
BENCH_FRAME(7, bench_6) BENCH_FRAME(8, bench_7) BENCH_FRAME(9, bench_8)
BENCH_FRAME(10, bench_9) BENCH_FRAME(11, bench_10) BENCH_FRAME(12, bench_11)
BENCH_FRAME(13, bench_12) BENCH_FRAME(14, bench_13) BENCH_FRAME(15, bench_14)
BENCH_FRAME(16, bench_15) BENCH_FRAME(17, bench_16) BENCH_FRAME(18, bench_17)
BENCH_FRAME(19, bench_18)

static void *bench_main(void *arg)
{
	struct bw *b = arg;
	struct timespec t0, t1;

	add_thread(0, 0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	bench_19();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	b->cpu_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
		    (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	__atomic_fetch_add(&done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int bench_intern = 1;

static int intern_rec(void *ctx, const struct ring_rec *rec)
{
	if (rec->npcs && bench_intern)
		intern(rec->w[rec->nwords - rec->npcs - 1]);
	return 0;
}

/* NT threads, a consumer draining (and interning): CPU ns per call. */
static double bench_run(unsigned nt)
{
	struct bw b[4];
	uint64_t cpu = 0;
	unsigned i;

	done = 0;
	for (i = 0; i < nt; i++)
		pthread_create(&b[i].th, NULL, bench_main, &b[i]);
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < (int)nt)
		if (!ring_consume(rd, intern_rec, NULL, 4096))
			sched_yield();
	for (i = 0; i < nt; i++) {
		pthread_join(b[i].th, NULL);
		cpu += b[i].cpu_ns;
	}
	while (ring_consume(rd, intern_rec, NULL, 4096) > 0)
		;
	clear_threads();
	return (double)cpu / (nt * BENCH_ITER * 2.0);
}

/* Best of 3 of NT threads: *ONE and *FOUR, ns per call. */
static void bench(const char *what, double *one, double *four)
{
	double x;
	int i;

	*one = *four = 1e9;
	for (i = 0; i < 3; i++) {
		x = bench_run(1);
		*one = x < *one ? x : *one;
		x = bench_run(4);
		*four = x < *four ? x : *four;
	}
	printf("# %s: CPU ns per call (malloc + free), 1 thread %.0f, "
	       "4 threads %.0f\n", what, *one, *four);
}

static void test_bench(void **state)
{
	double w1, w4, n1, n4;

	if (!getenv("PTLEAK_BENCH"))
		return;
	conf.depth = 16;
	bench("16-frame stacks, interned", &w1, &w4);
	conf.objs = NULL;
	bench("no walk (the caller alone)", &n1, &n4);
	printf("# so the walk and hash cost per malloc: 1 thread %.0f ns, "
	       "4 threads %.0f ns\n", 2 * (w1 - n1), 2 * (w4 - n4));
	conf.objs = objs;
	conf.pccache = NULL;
	bench("16-frame stacks, interned, no rule cache", &w1, &w4);
	conf.pccache = pccache;
	memset(stackset, 0, sizeof(stackset));
	bench_intern = 0;
	bench("16-frame stacks, never interned (walked twice, 16 pcs sent)",
	      &w1, &w4);
	bench_intern = 1;
	conf.depth = MAXF;
	memset(stackset, 0, sizeof(stackset));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_main_thread),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_main_stop),
		cmocka_unit_test(test_no_walk),
		cmocka_unit_test(test_stub_pages),
		cmocka_unit_test(test_stackset),
		cmocka_unit_test(test_pccache),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_sigaltstack),
		cmocka_unit_test(test_no_tls),
		cmocka_unit_test(test_signal_through_stub),
		cmocka_unit_test(test_four_threads),
		cmocka_unit_test(test_bench),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
