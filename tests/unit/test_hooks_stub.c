/*
 * test_hooks_stub.c - the recorder's patching, stubs and nesting rule proven in
 * the test process (docs/recorder.md, pieces 4 and 5).  The allocator of
 * stub_talloc.c is patched exactly as ptleak will patch a target's: a
 * code page within rel32 reach (MAP_FIXED_NOREPLACE) holding the hook
 * blob, a trampoline and the relocated prologue per function, made r-x;
 * the 5-byte jumps written through mprotect of the functions' pages
 * (never writable and executable at once).  The records are read by the
 * consumer of src/ring.c.
 *
 * PTLEAK_BENCH=1 in the environment prints ns per call (no assertion).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "patch_self.h"
#include "stub_talloc.h"

#define RING_LOG2	27	/* 128 MiB: a whole run fits (see run_workers) */
#define HSIZE		T_SIGSAFE	/* the signal handler's allocation */

static struct fn fns[] = {
	{ .addr = (void *)t_malloc, .name = "t_malloc", .kind = REC_FN_MALLOC },
	{ .addr = (void *)t_free, .name = "t_free", .kind = REC_FN_FREE },
	{ .addr = (void *)t_calloc, .name = "t_calloc", .kind = REC_FN_CALLOC },
	{ .addr = (void *)t_realloc, .name = "t_realloc", .kind = REC_FN_REALLOC },
	{ .addr = (void *)t_malloc_tail, .name = "t_malloc_tail", .kind = REC_FN_MALLOC },
	{ .addr = (void *)t_posix_memalign, .name = "t_posix_memalign", .kind = REC_FN_POSIX_MEMALIGN },
	{ .addr = (void *)t_align, .name = "t_align", .kind = REC_FN_MALLOC },
	{ .addr = (void *)t_reallocarray, .name = "t_reallocarray", .kind = REC_FN_REALLOCARRAY },
};
#define NFNS (sizeof(fns) / sizeof(fns[0]))
#define FN(i) REC_FN(fns[i].kind, 0) /* object 0 for all: one object */

static struct rec_conf conf;
static struct ring *ring;
static struct ring_reader *rd;
static uint8_t *code;
static volatile int nsig;

/* ---- setup ---- */

static int setup(void **state)
{
	unsigned i;

	if (ring_map(RING_LOG2, &ring, &rd))
		return -1;
	conf.ring = ring;
	conf.tid_off = find_tid_off();
	for (i = 0; i < NFNS; i++)
		fns[i].size = elf_func("/proc/self/exe", SHT_SYMTAB, fns[i].name,
				       NULL);
	return patch_self(&conf, fns, NFNS, &code);
}

static int teardown(void **state)
{
	ring_reader_delete(rd);
	munmap(code, PATCH_CODE_LEN);
	munmap(ring, ring_mem_size(RING_LOG2));
	return 0;
}

/* ---- reading the records ---- */

struct rec {
	unsigned type, npcs, nwords;
	uint64_t w[12];
};

struct got {
	struct rec r[64];
	unsigned n;
};

static int collect(void *ctx, const struct ring_rec *rec)
{
	struct got *g = ctx;
	struct rec *r = &g->r[g->n < 64 ? g->n : 63];

	r->type = rec->type;
	r->npcs = rec->npcs;
	r->nwords = rec->nwords;
	memcpy(r->w, rec->w, 8 * (rec->nwords < 12 ? rec->nwords : 12));
	g->n++;
	return 0;
}

static void drain(struct got *g)
{
	g->n = 0;
	while (ring_consume(rd, collect, g, 1000) > 0)
		;
}

/* 1 if records of TYPE end with a stack (hash, pcs). */
static int has_stack(unsigned type)
{
	return type == REC_ALLOC || type == REC_REALLOC_END || type == REC_MEMALIGN;
}

/* The hash of the one-pc stack RA. */
static uint64_t hash1(uint64_t ra)
{
	return rec_stack_hash_end(rec_stack_hash_add(REC_STACK_HASH_SEED, ra, 0), 1);
}

/* Record I of G is TYPE from function FN of this thread with the words
 * W (N of them); an allocation's was called from within the function
 * [LO, LO + SIZE) (no tables here: its stack is the caller alone). */
static void want(const struct got *g, unsigned i, unsigned type, unsigned fn,
		 const uint64_t *w, unsigned n, void *lo, const char *name)
{
	const struct rec *r = &g->r[i];
	uint64_t ra = r->w[r->nwords - 1];
	uint64_t size = elf_func("/proc/self/exe", SHT_SYMTAB, name, NULL);

	assert_true(i < g->n);
	assert_int_equal(r->type, type);
	assert_int_equal((uint32_t)r->w[0], FN(fn));
	assert_int_equal(r->w[0] >> 32, gettid());
	assert_memory_equal(r->w + 2, w, 8 * n);
	if (!has_stack(type)) {
		assert_int_equal(r->npcs, 0);
		assert_int_equal(r->nwords, n + 2);
		return;
	}
	assert_int_equal(r->npcs, 1);
	assert_int_equal(r->nwords, n + 4);
	assert_int_equal(r->w[n + 2], hash1(ra));
	assert_true(ra > (uint64_t)lo && ra <= (uint64_t)lo + size);
}

#define W(...) (const uint64_t[]){ __VA_ARGS__ }, \
	sizeof((const uint64_t[]){ __VA_ARGS__ }) / 8
#define HERE(f) (void *)f, #f

/* ---- the tests ---- */

/* glibc 2.36: struct pthread's tid at 0x2d0, found as ptleak will. */
static void test_tid_offset(void **state)
{
	assert_int_equal(conf.tid_off, 0x2d0);
}

/* Each kind of call once; the calls nested inside t_realloc (malloc,
 * free, or a tail call) and t_malloc_tail's tail call to t_malloc are
 * not recorded. */
static void test_calls(void **state)
{
	void *a, *c, *r, *r2, *x, *ra, *ra2, *pm = NULL, *pm2 = (void *)1;
	struct got g;

	a = t_malloc(100);
	t_free(a);
	c = t_calloc(3, 8);
	r = t_realloc(NULL, 10);
	r2 = t_realloc(r, 200);
	assert_null(t_realloc(r2, 0));
	x = t_malloc_tail(24);
	assert_int_equal(t_posix_memalign(&pm, 16, 40), 0);
	assert_int_equal(t_posix_memalign(&pm2, 64, 40), 22);
	t_free(NULL);
	ra = t_reallocarray(NULL, 3, 10);
	ra2 = t_reallocarray(ra, 5, 10);
	drain(&g);
	assert_int_equal(g.n, 17);
	want(&g, 0, REC_ALLOC, 0, W((uint64_t)a, 100, 0), HERE(test_calls));
	want(&g, 1, REC_FREE, 1, W((uint64_t)a), HERE(test_calls));
	want(&g, 2, REC_ALLOC, 2, W((uint64_t)c, 3, 8), HERE(test_calls));
	want(&g, 3, REC_REALLOC_BEGIN, 3, W(0), HERE(test_calls));
	want(&g, 4, REC_REALLOC_END, 3, W(0, 10, 0, (uint64_t)r), HERE(test_calls));
	want(&g, 5, REC_REALLOC_BEGIN, 3, W((uint64_t)r), HERE(test_calls));
	want(&g, 6, REC_REALLOC_END, 3, W((uint64_t)r, 200, 0, (uint64_t)r2),
	     HERE(test_calls));
	want(&g, 7, REC_REALLOC_BEGIN, 3, W((uint64_t)r2), HERE(test_calls));
	want(&g, 8, REC_REALLOC_END, 3, W((uint64_t)r2, 0, 0, 0), HERE(test_calls));
	want(&g, 9, REC_ALLOC, 4, W((uint64_t)x, 24, 0), HERE(test_calls));
	want(&g, 10, REC_MEMALIGN, 5, W((uint64_t)&pm, 16, 40, 0, (uint64_t)pm),
	     HERE(test_calls));
	want(&g, 11, REC_MEMALIGN, 5, W((uint64_t)&pm2, 64, 40, 22, 0),
	     HERE(test_calls));
	want(&g, 12, REC_FREE, 1, W(0), HERE(test_calls));
	/* reallocarray: its inner t_realloc (a call or a tail call) nested */
	want(&g, 13, REC_REALLOC_BEGIN, 7, W(0), HERE(test_calls));
	want(&g, 14, REC_REALLOC_END, 7, W(0, 3, 10, (uint64_t)ra), HERE(test_calls));
	want(&g, 15, REC_REALLOC_BEGIN, 7, W((uint64_t)ra), HERE(test_calls));
	want(&g, 16, REC_REALLOC_END, 7, W((uint64_t)ra, 5, 10, (uint64_t)ra2),
	     HERE(test_calls));
	t_free(c);
	t_free(x);
	t_free(pm);
	t_free(ra2);
	drain(&g);
	assert_int_equal(g.n, 4);
}

/* The nesting rule is per object: t_realloc's body said to be another
 * object's, its inner t_malloc and t_free are recorded; the original
 * runs with sp % 16 == 8 at its entry, as the ABI wants. */
static void test_object_rule_and_alignment(void **state)
{
	void *p = t_malloc(16), *q, *in;
	struct got g;

	conf.range[3].obj = 1;		/* fns[3]: t_realloc */
	q = t_realloc(p, 100);
	conf.range[3].obj = 0;
	assert_null(t_align(5));
	drain(&g);
	assert_int_equal(g.n, 6);
	in = (void *)g.r[2].w[2];
	assert_ptr_equal(in, q);
	want(&g, 0, REC_ALLOC, 0, W((uint64_t)p, 16, 0), HERE(test_object_rule_and_alignment));
	want(&g, 1, REC_REALLOC_BEGIN, 3, W((uint64_t)p), HERE(test_object_rule_and_alignment));
	want(&g, 2, REC_ALLOC, 0, W((uint64_t)q, 100, 0), HERE(t_realloc));
	want(&g, 3, REC_FREE, 1, W((uint64_t)p), HERE(t_realloc));
	want(&g, 4, REC_REALLOC_END, 3, W((uint64_t)p, 100, 0, (uint64_t)q),
	     HERE(test_object_rule_and_alignment));
	want(&g, 5, REC_ALLOC, 6, W(0, 5, 0), HERE(test_object_rule_and_alignment));
	t_free(q);
	drain(&g);
}

static void *last_h;

static void on_alrm(int sig)
{
	last_h = t_malloc(HSIZE);
	t_free(last_h);
	__atomic_fetch_add(&nsig, 1, __ATOMIC_RELAXED);
}

/* A handler that allocates while its thread is inside t_malloc, inside
 * t_realloc's body (where t_malloc calls are nested), and inside that
 * nested t_malloc (not recorded itself): recorded, between the outer
 * call's records. */
static void test_signal_inside(void **state)
{
	struct sigaction sa = { .sa_handler = on_alrm };
	void *p, *q, *h[3];
	struct got g;

	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	p = t_malloc(T_RAISE);
	h[0] = last_h;
	q = t_realloc(p, T_RAISE);
	h[2] = last_h;
	t_free(q);
	drain(&g);
	assert_int_equal(g.n, 10);
	h[1] = (void *)g.r[4].w[2];
	want(&g, 0, REC_ALLOC, 0, W((uint64_t)h[0], HSIZE, 0), HERE(on_alrm));
	want(&g, 1, REC_FREE, 1, W((uint64_t)h[0]), HERE(on_alrm));
	want(&g, 2, REC_ALLOC, 0, W((uint64_t)p, T_RAISE, 0), HERE(test_signal_inside));
	want(&g, 3, REC_REALLOC_BEGIN, 3, W((uint64_t)p), HERE(test_signal_inside));
	want(&g, 4, REC_ALLOC, 0, W((uint64_t)h[1], HSIZE, 0), HERE(on_alrm));
	want(&g, 5, REC_FREE, 1, W((uint64_t)h[1]), HERE(on_alrm));
	want(&g, 6, REC_ALLOC, 0, W((uint64_t)h[2], HSIZE, 0), HERE(on_alrm));
	want(&g, 7, REC_FREE, 1, W((uint64_t)h[2]), HERE(on_alrm));
	want(&g, 8, REC_REALLOC_END, 3, W((uint64_t)p, T_RAISE, 0, (uint64_t)q),
	     HERE(test_signal_inside));
	want(&g, 9, REC_FREE, 1, W((uint64_t)q), HERE(test_signal_inside));
	assert_true(h[0] != h[1] && h[1] != h[2]);
	assert_int_equal(nsig, 3);
}

/* longjmp out of t_malloc: the abandoned call left nothing behind. */
static void test_longjmp(void **state)
{
	volatile int jumped = 0;
	jmp_buf jb;
	struct got g;
	void *p;

	t_jmp = &jb;
	if (!setjmp(jb)) {
		t_malloc(T_LONGJMP);
		fail();
	}
	jumped++;
	p = t_malloc(8);
	t_free(p);
	drain(&g);
	assert_int_equal(jumped, 1);
	assert_int_equal(g.n, 2);
	want(&g, 0, REC_ALLOC, 0, W((uint64_t)p, 8, 0), HERE(test_longjmp));
	want(&g, 1, REC_FREE, 1, W((uint64_t)p), HERE(test_longjmp));
}

/* ---- four threads, a timer's handler allocating among them ---- */

#define EACH 100000

struct worker {
	pthread_t th;
	int tid;
	uint64_t cpu_ns;	/* the thread's CPU time for its loop */
};

static int workers_done;
static int w_tid[4];	/* the last run's threads */

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	size_t i, s;
	void *p, *q;

	struct timespec t0, t1;

	w->tid = gettid();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (i = 0; i < EACH; i++) {
		s = 16 + i % 200;
		p = t_malloc(s);
		q = t_realloc(p, 2 * s + 1);
		t_free(q);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	w->cpu_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
		    (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	__atomic_fetch_add(&workers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Per thread: malloc -> realloc begin/end -> free, in order, the values
 * chained; the handler's HSIZE malloc + free pairs anywhere between. */
struct seq {
	int tid;
	unsigned state;
	uint64_t iter, a, b, h, handler;
};

struct check {
	struct seq seq[4];
	uint64_t total;
	unsigned bad;
};

static int check_rec(void *ctx, const struct ring_rec *rec)
{
	struct check *c = ctx;
	const uint64_t *w = rec->w;
	struct seq *s = NULL;
	unsigned i, ok;

	c->total++;
	for (i = 0; i < 4 && !s; i++)
		if ((uint64_t)c->seq[i].tid == w[0] >> 32)
			s = &c->seq[i];
	for (i = 0; i < 4 && !s; i++)	/* a thread's first record */
		if (!c->seq[i].tid) {
			s = &c->seq[i];
			s->tid = (int)(w[0] >> 32);
		}
	if (!s || rec->npcs != (has_stack(rec->type) ? 1 : 0)) {
		c->bad++;
		return 0;
	}
	if (rec->type == REC_ALLOC && w[3] == HSIZE && !s->h) {
		s->h = w[2];
		return 0;
	}
	if (rec->type == REC_FREE && s->h && w[2] == s->h) {
		s->h = 0;
		s->handler++;
		return 0;
	}
	switch (s->state) {
	case 0:
		ok = rec->type == REC_ALLOC && w[3] == 16 + s->iter % 200;
		s->a = w[2];
		break;
	case 1:
		ok = rec->type == REC_REALLOC_BEGIN && w[2] == s->a;
		break;
	case 2:
		ok = rec->type == REC_REALLOC_END && w[2] == s->a &&
		     w[3] == 2 * (16 + s->iter % 200) + 1 && !w[4];
		s->b = w[5];
		break;
	default:
		ok = rec->type == REC_FREE && w[2] == s->b;
		s->iter++;
	}
	c->bad += !ok;
	s->state = (s->state + 1) % 4;
	return 0;
}

/*
 * NT threads x EACH iterations, consumed as they go.  The workers' CPU ns
 * per call (wall time on 2 shared vCPUs says more about the load).
 * The ring holds a whole run (4 x 4 x EACH records of 48-56 bytes): a
 * full ring while a handler produces inside its thread's own reservation
 * would make that handler give its record up after stale_ns (ring.h),
 * and the counts here are exact.
 */
static double run_workers(struct check *c, unsigned nt, int timer)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } }, off = { { 0, 0 }, { 0, 0 } };
	struct worker w[4];
	sigset_t alrm;
	uint64_t cpu = 0;
	unsigned i;
	int n;

	memset(c, 0, sizeof(*c));
	workers_done = 0;
	for (i = 0; i < nt; i++)
		assert_int_equal(pthread_create(&w[i].th, NULL, worker_main, &w[i]), 0);
	/* the handler runs in the workers only: the consumer must not
	 * produce into the ring it alone drains */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	if (timer)
		setitimer(ITIMER_REAL, &it, NULL);
	for (;;) {
		n = ring_consume(rd, check_rec, c, 4096);
		assert_true(n >= 0);
		if (n)
			continue;
		if (__atomic_load_n(&workers_done, __ATOMIC_ACQUIRE) == (int)nt)
			break;
		sched_yield();
	}
	setitimer(ITIMER_REAL, &off, NULL);
	for (i = 0; i < nt; i++) {
		pthread_join(w[i].th, NULL);
		w_tid[i] = w[i].tid;
		cpu += w[i].cpu_ns;
	}
	while (ring_consume(rd, check_rec, c, 4096) > 0)
		;
	/* a last SIGALRM pending for the process, now only us: discard it */
	while (sigtimedwait(&alrm, NULL, &(struct timespec){ 0, 0 }) > 0)
		;
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	return (double)cpu / (nt * EACH * 3.0);
}

static void test_four_threads(void **state)
{
	struct check c;
	double ns;
	unsigned i;

	nsig = 0;
	memset(c.seq, 0, sizeof(c.seq));
	ns = run_workers(&c, 4, 1);
	assert_int_equal(c.bad, 0);
	for (i = 0; i < 4; i++) {
		assert_true(c.seq[i].tid == w_tid[0] || c.seq[i].tid == w_tid[1] ||
			    c.seq[i].tid == w_tid[2] || c.seq[i].tid == w_tid[3]);
		assert_int_equal(c.seq[i].iter, EACH);
		assert_int_equal(c.seq[i].state, 0);
		assert_int_equal(c.seq[i].h, 0);
	}
	assert_int_equal(c.seq[0].handler + c.seq[1].handler + c.seq[2].handler +
			 c.seq[3].handler, nsig);
	assert_int_equal(c.total, 4 * 4 * EACH + 2 * (uint64_t)nsig);
	assert_int_equal(ring->lost + ring->dropped, 0);
	assert_int_equal(ring->head, ring_tail(rd));
	if (getenv("PTLEAK_BENCH"))
		printf("# 4 threads with a 200 us timer: CPU %.0f ns per call "
		       "(%d handler runs)\n", ns, nsig);
}

/* ns per call through an 8 MiB ring (the size planned: fits L3) */
static void bench(const char *what)
{
	struct ring *big = ring, *r;
	struct ring_reader *big_rd = rd;
	struct check c;

	if (!getenv("PTLEAK_BENCH"))
		return;
	r = mmap(NULL, ring_mem_size(23), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	assert_true(r != MAP_FAILED);
	assert_int_equal(ring_init(r, 23), 0);
	conf.ring = ring = r;
	rd = ring_reader_new(r, ring_mem_size(23));
	double a = 1e9, b = 1e9, x;
	int i;

	for (i = 0; i < 3; i++) {	/* best of 3 */
		x = run_workers(&c, 1, 0);
		a = x < a ? x : a;
		x = run_workers(&c, 4, 0);
		b = x < b ? x : b;
	}
	printf("# %s: CPU ns per call, 1 thread %.0f, 4 threads %.0f\n",
	       what, a, b);
	ring_reader_delete(rd);
	conf.ring = ring = big;
	rd = big_rd;
	munmap(r, ring_mem_size(23));
}

/* Unpatch: the bytes are the saved ones, calls go straight to the
 * originals (nothing recorded). */
static void test_unpatch(void **state)
{
	uint64_t head;
	unsigned i;
	void *p;

	bench("patched");
	for (i = 0; i < NFNS; i++)
		assert_memory_not_equal((void *)fns[i].p.at, fns[i].saved, 5);
	unpatch_self(fns, NFNS);
	for (i = 0; i < NFNS; i++)
		assert_memory_equal((void *)fns[i].p.at, fns[i].saved,
				    fns[i].p.len);
	head = ring->head;
	p = t_realloc(t_malloc(10), 20);
	t_free(p);
	assert_int_equal(ring->head, head);
	bench("unpatched");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tid_offset),
		cmocka_unit_test(test_calls),
		cmocka_unit_test(test_object_rule_and_alignment),
		cmocka_unit_test(test_signal_inside),
		cmocka_unit_test(test_longjmp),
		cmocka_unit_test(test_four_threads),
		cmocka_unit_test(test_unpatch),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
