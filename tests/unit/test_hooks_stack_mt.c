/*
 * test_hooks_stack_mt.c - the stacks the recorder's hooks record on other
 * threads than main (hookstack.h): a thread with an entry in the thread
 * table (its whole stack, to clone's child) and one without (tid 0, the
 * caller alone); four threads with the consumer interning stacks as
 * ptleak will; a timer's handler allocating wherever its thread was.
 *
 * PTLEAK_BENCH=1 in the environment prints CPU ns per call with 16-frame
 * stacks at 1 and 4 threads (no assertion).
 */
#include "hookstack.h"

#include <sys/time.h>
#include <ucontext.h>

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
	assert_int_equal(g.r[1].w[0] >> 32, t.tid);
	clear_threads();

	t.entry = 0;
	assert_int_equal(pthread_create(&t.th, NULL, thread_main, &t), 0);
	pthread_join(t.th, NULL);
	drain(&g);
	assert_int_equal(g.n, 2);
	want_stack(&g.r[0], &t.s, 24, 0, pcs, expected(&t.s, pcs, 1), 0);
	assert_int_equal(g.r[1].w[0] >> 32, 0);
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

static int check_four(void *ctx, const struct ring_rec *rec)
{
	struct four *f = ctx;
	const uint64_t *w = rec->w;
	unsigned i, k;

	for (k = 0; k < 4 && f->t[k].tid != w[0] >> 32; k++)
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
		/* the first went before any was interned (how many more
		 * did depends on when the consumer ran) */
		assert_true(f.sent[k] >= 1);
	}
	assert_int_equal(ring->lost + ring->dropped, 0);
	clear_threads();
	memset(stackset, 0, sizeof(stackset));
}

/* ---- a timer's handler allocating wherever its thread was ---- */

#define STRESS_ITER 20000
#define STRESS_MAX (1u << 16)	/* handler runs the test can check */

static volatile int stress_runs;
static uint64_t stress_restore;	/* the handler's return address */
/* the pc each handler run interrupted, by (its block >> 4) % STRESS_MAX:
 * the handlers' blocks are consecutive 16-byte slots of one arena */
static uint64_t stress_rip[STRESS_MAX];

static void on_stress(int sig, siginfo_t *si, void *uc)
{
	void *p;

	(void)sig;
	(void)si;
	__atomic_store_n(&stress_restore, RA(), __ATOMIC_RELAXED);
	p = t_malloc(T_SIGSAFE);
	stress_rip[((uintptr_t)p >> 4) % STRESS_MAX] =
		(uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	__atomic_fetch_add(&stress_runs, 1, __ATOMIC_RELAXED);
}

static NOINLINE void stress_loop(void)
{
	unsigned i;

	for (i = 0; i < STRESS_ITER; i++)
		t_free(t_malloc(16 + i % 64));
	sink++;
}

static void *stress_main(void *arg)
{
	add_thread(0, 0);
	__atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		sched_yield();
	stress_loop();
	__atomic_fetch_add(&done, 1, __ATOMIC_RELEASE);
	return arg;
}

/* A handler's record, kept until every handler returned: the consumer
 * may read it before its handler stored the pc it interrupted. */
struct stress_rec {
	uint64_t block;
	uint64_t pcs[3];
	unsigned npcs;
};

struct stress {
	uint64_t lo, hi;	/* stress_loop */
	uint64_t hlo, hhi;	/* on_stress */
	unsigned handler, blob, code, other, bad;
	uint64_t allocs, frees;
	struct stress_rec *recs;	/* STRESS_MAX */
};

/* Every record counted; a handler's kept for check_handler. */
static int check_stress(void *ctx, const struct ring_rec *rec)
{
	struct stress *st = ctx;
	const uint64_t *pcs = &rec->w[6];

	if (rec->type == REC_FREE) {
		st->frees++;
		return 0;
	}
	if (rec->type != REC_ALLOC || rec->w[3] != T_SIGSAFE) {
		st->allocs++;
		return 0;
	}
	if (st->handler < STRESS_MAX) {
		struct stress_rec *s = &st->recs[st->handler];
		unsigned i;

		s->block = rec->w[2];
		s->npcs = rec->npcs;
		for (i = 0; i < 3 && i < rec->npcs; i++)
			s->pcs[i] = pcs[i];
	}
	st->handler++;
	return 0;
}

/* Handler record S, once its handler stored the pc it interrupted. */
/*
 * A handler's record: its caller on_stress, __restore_rt, then the
 * interrupted pc RIP.  In the blob (stub, hooks, walker) RIP is left
 * out (ptleak's code, not the program's) and the walk goes through the
 * stub's frame on to stress_loop, the patched call's caller; in the rest
 * of the code page (trampolines, relocated prologues: no unwind rules)
 * the walk ends at __restore_rt; elsewhere RIP is the third pc.
 */
static void check_handler(struct stress *st, const struct stress_rec *s)
{
	uint64_t lo = (uint64_t)(uintptr_t)code, rip;
	const uint64_t *pcs = s->pcs;

	rip = stress_rip[(s->block >> 4) % STRESS_MAX];
	if (s->npcs < 2 || pcs[0] - 1 < st->hlo || pcs[0] - 1 >= st->hhi ||
	    pcs[1] != __atomic_load_n(&stress_restore, __ATOMIC_RELAXED)) {
		st->bad++;
	} else if (rip >= lo && rip < lo + rec_blob_size) {
		st->blob++;
		st->bad += s->npcs < 3 || pcs[2] - 1 < st->lo ||
			   pcs[2] - 1 >= st->hi;
	} else if (rip >= lo && rip < lo + PATCH_CODE_LEN) {
		st->code++;
		st->bad += s->npcs != 2;
	} else {
		st->other++;
		st->bad += s->npcs < 3 || pcs[2] != rip;
	}
}

/*
 * Four threads allocating under a 200 us ITIMER_REAL whose handler
 * allocates: the handler lands anywhere (the test's loop, the
 * trampolines, the stub, the hooks, the walker, the allocator) and its
 * walk never faults; its stack is as check_stress says; every record
 * arrives.  No stack is interned: every record has its pcs.
 */
static void test_signals_anywhere(void **state)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa = { .sa_sigaction = on_stress,
				  .sa_flags = SA_SIGINFO }, old;
	struct stress st = { .recs = calloc(STRESS_MAX, sizeof(*st.recs)) };
	pthread_t th[4];
	sigset_t alrm;
	unsigned k;

	st.lo = (uint64_t)(uintptr_t)stress_loop;
	st.hi = st.lo + elf_func("/proc/self/exe", SHT_SYMTAB, "stress_loop", NULL);
	assert_true(st.hi > st.lo);
	st.hlo = (uint64_t)(uintptr_t)on_stress;
	st.hhi = st.hlo + elf_func("/proc/self/exe", SHT_SYMTAB, "on_stress", NULL);
	assert_true(st.hhi > st.hlo);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	ready = go = done = stress_runs = 0;
	for (k = 0; k < 4; k++)
		assert_int_equal(pthread_create(&th[k], NULL, stress_main, NULL), 0);
	/* the handler runs in the workers only, once they are in the thread
	 * table (before, a record has tid 0 and one pc, rightly) */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < 4)
		sched_yield();
	setitimer(ITIMER_REAL, &it, NULL);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < 4)
		if (!ring_consume(rd, check_stress, &st, 4096))
			sched_yield();
	setitimer(ITIMER_REAL, &off, NULL);
	for (k = 0; k < 4; k++)
		pthread_join(th[k], NULL);
	while (ring_consume(rd, check_stress, &st, 4096) > 0)
		;
	while (sigtimedwait(&alrm, NULL, &(struct timespec){ 0, 0 }) > 0)
		;
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	sigaction(SIGALRM, &old, NULL);
	clear_threads();
	/* every handler has returned: the pcs they interrupted are known */
	for (k = 0; k < st.handler && k < STRESS_MAX; k++)
		check_handler(&st, &st.recs[k]);
	free(st.recs);
	assert_int_equal(st.bad, 0);
	assert_int_equal(st.allocs, 4 * STRESS_ITER);
	assert_int_equal(st.frees, 4 * STRESS_ITER);
	assert_int_equal(st.handler, stress_runs);
	assert_true(st.handler < STRESS_MAX);
	/* nearly every run lands in a patched call, most in the blob */
	assert_true(st.blob > 0);
	assert_int_equal(ring->lost + ring->dropped, 0);
	if (getenv("PTLEAK_BENCH"))
		printf("# timer: %u handler runs: %u in the blob, %u in the "
		       "rest of the code page, %u elsewhere\n", st.handler,
		       st.blob, st.code, st.other);
}

/* ---- CPU ns per call, 16-frame stacks ---- */

#define BENCH_ITER 200000

struct bw {
	pthread_t th;
	uint64_t cpu_ns;
};

static int bench_sites;	/* 1: malloc + free from two sites in turn */

static NOINLINE void bench_site_a(unsigned i)
{
	t_free(t_malloc(16 + i % 64));
}

static NOINLINE void bench_site_b(unsigned i)
{
	t_free(t_malloc(32 + i % 64));
}

static NOINLINE void bench_loop(void)
{
	unsigned i;

	for (i = 0; i < BENCH_ITER; i++) {
		if (!bench_sites)
			t_free(t_malloc(16 + i % 64));
		else if (i & 1)
			bench_site_a(i);
		else
			bench_site_b(i);
	}
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
	bench_sites = 1;
	bench("16-frame stacks from two sites in turn, interned", &w1, &w4);
	bench_sites = 0;
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
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_four_threads),
		cmocka_unit_test(test_signals_anywhere),
		cmocka_unit_test(test_bench),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
