/*
 * test_hooks_stack.c - the stacks the recorder's hooks record
 * (docs/recorder.md, piece 6 in the hook; rechook.h's record contract),
 * on the main thread: calls through known call chains (hookstack.h, built
 * -O2 -fomit-frame-pointer: frames with and without a frame pointer)
 * record the pcs of libunwind's unw_backtrace() taken in the same frame,
 * one for one; the depth cut, the stop after main, no tables, the stub
 * pages, the stack set, the rule cache, a thread with no TLS, a signal
 * handler's stack through the stub, a sigaltstack.  Other threads:
 * test_hooks_stack_mt.c.
 */
#include "hookstack.h"

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

/* need_tsc 0 (one thread so far): the record's time is 0, its stack
 * the same (one_call checks both) */
static void test_time_one_thread(void **state)
{
	struct seen s;
	struct got g;
	unsigned n, m;

	n = one_call(3, MAXF, 0, conf.main_tid, 0, &s, &g);
	conf.need_tsc = 0;
	m = one_call(3, MAXF, 0, conf.main_tid, 0, &s, &g);
	conf.need_tsc = 1;
	assert_int_equal(m, n);
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
		/* the stack cache would take the frames of the last call
		 * again without their rules: the planted ones unread */
		memset(scache, 0, sizeof(scache));
		n = one_call(3, MAXF, k == 1, conf.main_tid, 0, &s, &g);
	}
	assert_int_equal(n, s.nbt);
	conf.objs = objs;
	memset(pccache, 0, sizeof(pccache));
	free(copy);
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
 * address into the stub (left out), then the interrupted call's stack.
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
	/* the walk goes through the stub's frame (its unwind rule) but
	 * leaves its pc out: ptleak's code, not the program's */
	n = expected(&alrm_seen, pcs, j);
	assert_int_equal(n, j);
	n += expected(&s, pcs + n, MAXF - n);
	assert_int_equal(n, j + s.nbt);
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
	assert_int_equal(g.r[0].w[0] >> 32, 0);
	assert_int_equal(g.r[0].w[2], (uint64_t)no_tls_p);
	assert_int_equal(g.r[0].npcs, 1);
	assert_int_equal(g.r[1].w[0] >> 32, conf.main_tid);
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
	assert_int_equal(g->r[1].w[0] >> 32, gettid());
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

/* ---- the stack cache (rechook.h, struct rec_scache) ---- */

static void clear_ways(struct rec_scache *sc)
{
	unsigned i;

	for (i = 0; i < REC_SCACHE_WAYS; i++)
		sc->way[i].nwords = 0;
}

/*
 * The main thread (no entry: conf.main_scache): chains of changing depth
 * after each other, each equal to libunwind's; a chain seen before is a
 * way (3, 5 and 3 again: 4 walks written as ways of 7); a cache in use
 * (gen odd, as a signal handler finds it in the middle of a walk) is
 * neither used nor written; a cached frame or a way whose words no
 * longer hold is walked again.
 */
static void test_stack_cache(void **state)
{
	static const int depths[] = { 3, 3, 5, 2, 5, 0, 3 };
	static const unsigned ways[] = { 1, 1, 2, 3, 3, 4, 4 };
	struct rec_scache *sc = conf.main_scache, copy;
	struct seen s;
	struct got g;
	unsigned i, n;

	if (!sc)
		skip();
	memset(sc, 0, sizeof(*sc));
	for (i = 0; i < ARRAY_LEN(depths); i++) {
		n = one_call(depths[i], MAXF, 0, conf.main_tid, 0, &s, &g);
		assert_int_equal(n, s.nbt);
		assert_int_equal(sc->gen % 2, 0);
		assert_int_equal(sc->gen, 2 * (i + 1));
		assert_int_equal(sc->way_next, ways[i]);
	}
	/* a way whose return address no longer holds: walked, written
	 * (the first round), then taken (the second: the same call site) */
	for (i = 0; i < REC_SCACHE_WAYS; i++)
		sc->way[i].val[0] ^= 0x10;
	for (i = 0; i < 2; i++) {
		n = one_call(3, MAXF, 0, conf.main_tid, 0, &s, &g);
		assert_int_equal(n, s.nbt);
		assert_int_equal(sc->way_next, 5);
	}
	sc->gen++;
	copy = *sc;
	one_call(4, MAXF, 0, conf.main_tid, 0, &s, &g);
	assert_memory_equal(sc, &copy, sizeof(copy));
	sc->gen++;
	one_call(4, MAXF, 0, conf.main_tid, 0, &s, &g);
	/* a return address the cache holds, not the stack: frame 3 on
	 * (chain, call_chain, ...) taken again from the stack */
	assert_true(sc->n > 4);
	sc->f[3].pc ^= 0x10;
	clear_ways(sc);
	n = one_call(4, MAXF, 0, conf.main_tid, 0, &s, &g);
	assert_int_equal(n, s.nbt);
	assert_int_equal(sc->gen % 2, 0);
}

/* ---- what the hooks leave in dead stack ---- */

#define PAINT		8192
#define PAINT_WORD	0xa5a5a5a5a5a5a5a5ull

static NOINLINE uint64_t paint(void)
{
	volatile uint64_t area[PAINT / 8];
	unsigned i;

	for (i = 0; i < PAINT / 8; i++)
		area[i] = PAINT_WORD;
	return area[0];
}

/* The distance below SP of the deepest word of the paint that is now
 * neither zero nor as painted (ZERO: that is zero). */
static uint64_t deepest_word(uint64_t sp, int zero)
{
	uint64_t a, v;

	for (a = sp - PAINT + 256; a < sp; a += 8) {
		v = *(volatile uint64_t *)(uintptr_t)a;
		if (zero ? !v : v && v != PAINT_WORD)
			return sp - a;
	}
	return 0;
}

/* The deepest word below this frame's sp that a t_malloc (ZERO: the
 * deepest zero word, how deep the stub zeroed) left neither zero nor as
 * painted: its distance.  *P: the block. */
static NOINLINE uint64_t residue(void **p, int zero)
{
	uint64_t sp;

	if (paint() != PAINT_WORD)
		return 0;
	*p = t_malloc(24);
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp) : : "memory");
	return deepest_word(sp, zero);
}

/* The same after a t_free of P. */
static NOINLINE uint64_t residue_free(void *p, int zero)
{
	uint64_t sp;

	if (paint() != PAINT_WORD)
		return 0;
	t_free(p);
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp) : : "memory");
	return deepest_word(sp, zero);
}

/* Below the caller's sp: the return address, the stub's saved rbp, its
 * struct rec_call, then the scrub of class CLASS. */
#define SCRUBBED(class)	(8 + 8 + REC_CALL_SIZE + (class))

/* No recorded call in progress left behind: the main thread's word and
 * every entry's (a free's is cleared by the stub, hook_leave not called:
 * REC_RECORD_DONE). */
static void assert_no_outer(void)
{
	unsigned i;

	assert_int_equal(conf.main_outer, 0);
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(threads[i].outer, 0);
}

/* A malloc from residue() (the same site each time) and its free: each
 * scrubbed exactly as deep as class MALLOC (FREE), the hooks' words
 * within. */
static void scrub_pair(uint64_t malloc_class, uint64_t free_class,
		       uint64_t *hash)
{
	struct got g;
	uint64_t d;
	void *p;

	d = residue(&p, 0);
	assert_true(d > 0);
	assert_true(d <= SCRUBBED(malloc_class));
	assert_no_outer();
	t_free(p);
	assert_no_outer();
	drain(&g);
	d = residue(&p, 1);
	assert_int_equal(d, SCRUBBED(malloc_class));
	drain(&g);
	assert_int_equal(g.n, 1);
	*hash = g.r[0].w[5];
	d = residue_free(p, 0);
	assert_true(d <= SCRUBBED(free_class));
	assert_no_outer();
	p = t_malloc(40);
	drain(&g);
	d = residue_free(p, 1);
	assert_int_equal(d, SCRUBBED(free_class));
	drain(&g);
}

/*
 * The hooks' frames lie within what the stub scrubs below its frame,
 * whose depth is the call's class (rechook.h, REC_SCRUB*): below the
 * return address, the stub's saved rbp and struct rec_call, only zeros
 * or what was there, zeros down to the class's depth and no deeper.  A
 * walk: REC_SCRUB; a free without a thread entry: REC_SCRUB_WAIT; with
 * one, a free: REC_SCRUB_MIN (emit tail-called), a malloc whose stack is
 * a way of the thread's cache, interned (emit_fast): REC_SCRUB_EMIT.
 */
static void test_scrubbed(void **state)
{
	/* malloc's class and free's, each pair's calls from the same sites
	 * (a way is a whole stack) */
	static const uint64_t cls[][2] = {
		{ REC_SCRUB, REC_SCRUB_WAIT },	/* no entry */
		{ REC_SCRUB, REC_SCRUB_WAIT },	/* no entry: no emit_fast */
		{ REC_SCRUB, REC_SCRUB_MIN },	/* an entry, a way not interned */
		{ REC_SCRUB_EMIT, REC_SCRUB_MIN },
	};
	uint64_t h;
	unsigned i;

	memset(scache, 0, sizeof(scache));
	memset(stackset, 0, sizeof(stackset));
	for (i = 0; i < ARRAY_LEN(cls); i++) {
		if (i == 2) {
			assert_non_null(add_thread(0, 0));
			memset(stackset, 0, sizeof(stackset));
		}
		scrub_pair(cls[i][0], cls[i][1], &h);
		intern(h);
	}
	clear_threads();
	memset(stackset, 0, sizeof(stackset));
}

static void *amend_q;
static struct ring *amend_lane;
static struct ring_reader *amend_rd;

/* G: the open record of the block at P not amended, another record,
 * P's free. */
static void expect_unamended(const struct got *g, const void *p)
{
	assert_int_equal(g->n, 3);
	assert_int_equal(g->r[0].w[2], (uint64_t)(uintptr_t)p);
	assert_int_equal(g->r[0].open, 1);
	assert_int_equal(g->r[0].amended, 0);
	assert_int_equal(g->r[2].type, REC_FREE);
	assert_int_equal(g->r[2].w[2], (uint64_t)(uintptr_t)p);
}

/* test_amend's step I after its malloc of P (residue: D) */
static NOINLINE void amend_step(int i, void *p, uint64_t d,
				const struct rec_thread *e)
{
	struct got g;

	switch (i) {
	case 0:
		/* walked: its records as before */
		t_free(p);
		drain_ring(amend_rd, &g);
		assert_int_equal(g.n, 2);
		assert_int_equal(g.r[0].type, REC_ALLOC);
		assert_int_equal(g.r[0].open, 0);
		assert_true(g.r[0].npcs > 0);
		assert_int_equal(g.r[1].type, REC_FREE);
		assert_int_equal(g.r[1].w[2], (uint64_t)(uintptr_t)p);
		intern(g.r[0].w[5]);
		break;
	case 1:
		/* a way, interned: the pair is one record */
		assert_int_equal(e->open_end, amend_lane->head);
		d = residue_free(p, 0);
		assert_true(d > 0 && d <= SCRUBBED(REC_SCRUB_MIN));
		drain_ring(amend_rd, &g);
		assert_int_equal(g.n, 1);
		assert_int_equal(g.r[0].type, REC_ALLOC);
		assert_int_equal(g.r[0].open, 1);
		assert_int_equal(g.r[0].amended, 1);
		assert_int_equal(g.r[0].npcs, 0);
		assert_int_equal(g.r[0].nwords, 7);
		assert_int_equal(g.r[0].w[0] >> 32, e->tid);
		assert_int_equal(g.r[0].w[2], (uint64_t)(uintptr_t)p);
		assert_int_equal(g.r[0].w[3], 24);
		assert_true(g.r[0].w[6] >= g.r[0].w[1]);
		assert_true(g.r[0].w[6] <= ring_arch_tsc());
		break;
	case 2:
		/* scrubbed as deep as their classes, no deeper */
		assert_int_equal(d, SCRUBBED(REC_SCRUB_EMIT));
		d = residue_free(p, 1);
		assert_int_equal(d, SCRUBBED(REC_SCRUB_MIN));
		drain_ring(amend_rd, &g);
		assert_int_equal(g.n, 1);
		assert_int_equal(g.r[0].amended, 1);
		break;
	case 3:
		/* taken before its free: the free a record */
		drain_ring(amend_rd, &g);
		assert_int_equal(g.n, 1);
		assert_int_equal(g.r[0].open, 1);
		assert_int_equal(g.r[0].amended, 0);
		assert_int_equal(g.r[0].w[6], 0);
		t_free(p);
		drain_ring(amend_rd, &g);
		assert_int_equal(g.n, 1);
		assert_int_equal(g.r[0].type, REC_FREE);
		assert_int_equal(g.r[0].w[2], (uint64_t)(uintptr_t)p);
		break;
	case 4:
		amend_q = p;
		break;
	case 5:
		/* a record after q's: only p's, the last, amended */
		t_free(p);
		t_free(amend_q);
		drain_ring(amend_rd, &g);
		expect_unamended(&g, amend_q);
		assert_int_equal(g.r[1].w[2], (uint64_t)(uintptr_t)p);
		assert_int_equal(g.r[1].amended, 1);
		break;
	case 6: {
		/* a record made in the lane after p's (as a signal handler
		 * would, inside the free's hook): p's free a record */
		uint64_t w = 99;

		assert_int_equal(ring_produce(amend_lane, 99, 0, &w, 1), 0);
		t_free(p);
		drain_ring(amend_rd, &g);
		expect_unamended(&g, p);
		assert_int_equal(g.r[1].type, 99);
		break;
	}
	}
}

/*
 * A thread with a lane of its own: a malloc whose stack is a way of its
 * cache, interned, is committed open, and the thread's free of that
 * block, its next call, amends it (no record; its time in the last word,
 * after the malloc's), scrubbed as deep as a free's class and no deeper;
 * a record taken before its free, one with a record after it (another
 * block's, or one a signal handler made), or a walk's, gets a free
 * record as before.  Nothing goes to the shared ring.
 */
static void test_amend(void **state)
{
	struct rec_thread *e;
	struct got g;
	uint64_t d;
	void *p;
	int i;

	(void)state;
	memset(scache, 0, sizeof(scache));
	memset(stackset, 0, sizeof(stackset));
	assert_int_equal(ring_map(RING_LOG2, &amend_lane, &amend_rd), 0);
	e = add_thread(0, 0);
	assert_non_null(e);
	e->lane = 1;
	conf.lanes = (uint64_t)(uintptr_t)amend_lane;
	conf.lane_stride = ring_mem_size(RING_LOG2);
	__atomic_store_n(&conf.nlanes, 2, __ATOMIC_RELEASE);
	/* every malloc from one site: a way is a whole stack */
	for (i = 0; i < 7; i++) {
		d = residue(&p, i == 2);
		amend_step(i, p, d, e);
	}
	drain(&g);
	assert_int_equal(g.n, 0);
	__atomic_store_n(&conf.nlanes, 0, __ATOMIC_RELEASE);
	conf.lanes = 0;
	clear_threads();
	memset(stackset, 0, sizeof(stackset));
	ring_reader_delete(amend_rd);
	munmap(amend_lane, ring_mem_size(RING_LOG2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_main_thread),
		cmocka_unit_test(test_time_one_thread),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_main_stop),
		cmocka_unit_test(test_no_walk),
		cmocka_unit_test(test_stub_pages),
		cmocka_unit_test(test_stackset),
		cmocka_unit_test(test_pccache),
		cmocka_unit_test(test_sigaltstack),
		cmocka_unit_test(test_no_tls),
		cmocka_unit_test(test_signal_through_stub),
		cmocka_unit_test(test_stack_cache),
		cmocka_unit_test(test_scrubbed),
		cmocka_unit_test(test_amend),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
