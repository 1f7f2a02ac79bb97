/*
 * test_unwtab.c - unwind tables (unwtab.h) compiled from real objects,
 * and the table walker (unwtab_walk.h) over real stacks; the walker's
 * corner cases on synthetic tables are in test_unwtab_walk.c.
 *
 * The real test: this binary (built -O2 -fomit-frame-pointer) stops in a
 * signal handler raised from a qsort comparator (a frame inside libc,
 * below a signal frame), and its own stack, walked with the tables
 * compiled from every loaded object, must give the pcs of libunwind's
 * unw_backtrace() and of glibc's backtrace() (libgcc's unwinder) one for
 * one, and the return addresses the frames recorded themselves.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "recorder/unwtab.h"
#include "recorder/unwtab_walk.h"
#include "unwtab_self.h"

#define MAXF 128
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define NOINLINE __attribute__((noinline, noipa))
#define RA() ((uint64_t)(uintptr_t)__builtin_return_address(0))

static struct self_tabs tabs;

/* what the frames saw, filled inside the signal handler */
static struct {
	void *bt[MAXF];		/* libunwind's */
	int nbt;
	void *bt_glibc[MAXF];
	int nbt_glibc;
	uint64_t pc_glibc;	/* its call's return address */
	uint64_t ours[MAXF];
	unsigned nours;
	struct ut_regs regs;
	/* return addresses recorded by the frames themselves, innermost first */
	uint64_t ra_handler2, ra_handler1, ra_handler, ra_cmp, ra_sort,
		 ra_vla, ra_chain[4];
} seen;

static volatile int raised;
static volatile int sink;

/*
 * Walk from the registers ut_capture saved, called by the function that
 * called ut_capture (its frame and those above are as they were then),
 * over the stack up to HI.
 */
static NOINLINE void walk_captured(uint64_t hi)
{
	struct unwtab_stack st = { ut_regs.sp, hi };
	struct unwtab_frame f = { ut_regs.pc, ut_regs.sp, ut_regs.fp, 0, NULL };

	seen.regs = ut_regs;
	seen.nours = unwtab_walk(tabs.objs, tabs.n, &st, f, seen.ours, MAXF);
}

static int (*glibc_backtrace)(void **, int);

static NOINLINE void in_handler2(void)
{
	seen.ra_handler2 = RA();
	ut_backtrace = glibc_backtrace;
	seen.nbt_glibc = ut_capture(seen.bt_glibc, MAXF);
	seen.pc_glibc = ut_regs.pc;
	ut_backtrace = unw_backtrace;
	seen.nbt = ut_capture(seen.bt, MAXF);
	walk_captured(self_stack_end());
	sink++;
}

static NOINLINE void in_handler1(void)
{
	seen.ra_handler1 = RA();
	in_handler2();
	sink++;
}

static void handler(int sig)
{
	seen.ra_handler = RA();
	in_handler1();
	sink++;
}

static int cmp(const void *a, const void *b)
{
	if (!raised) {
		raised = 1;
		seen.ra_cmp = RA();
		raise(SIGUSR1);
	}
	return *(const int *)a - *(const int *)b;
}

static NOINLINE void sort_it(int *v, size_t n)
{
	seen.ra_sort = RA();
	qsort(v, n, sizeof(*v), cmp);
	sink++;
}

/* a variable-length array: rbp becomes the frame pointer (CFA = rbp + 16) */
static NOINLINE int with_vla(int n)
{
	volatile int v[n];
	int i;

	seen.ra_vla = RA();
	for (i = 0; i < n; i++)
		v[i] = n - i;
	sort_it((int *)v, n);
	return v[0];
}

/* fixed-size frames: CFA = rsp + N */
static NOINLINE int chain(int n)
{
	volatile char buf[48];
	int r;

	seen.ra_chain[n] = RA();
	buf[0] = (char)n;
	r = n ? chain(n - 1) : with_vla(5);
	return r + buf[0];
}

static int setup(void **state)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	/* libunwind.so exports a backtrace too, found first here */
	glibc_backtrace = libc ? (int (*)(void **, int))dlsym(libc, "backtrace") : NULL;
	self_tabs_load(&tabs);
	return tabs.failed || !glibc_backtrace ? -1 : 0;
}

static int teardown(void **state)
{
	self_tabs_free(&tabs);
	return 0;
}

/* The index of V in SEEN.OURS at or after FROM, or -1. */
static int find_pc(uint64_t v, unsigned from)
{
	unsigned i;

	for (i = from; i < seen.nours; i++)
		if (seen.ours[i] == v)
			return (int)i;
	return -1;
}

static int rule_kind_at(uint64_t pc)
{
	const struct unwtab_obj *o = unwtab_find_obj(tabs.objs, tabs.n, pc);
	const struct unwtab_rule *r = o ? unwtab_find_rule(o->tab, pc - o->bias) : NULL;

	return r ? r->kind : -1;
}

static void test_walk_equals_backtrace(void **state)
{
	struct sigaction sa = { .sa_handler = handler }, old;
	const struct unwtab_obj *libc = self_obj_of(&tabs, (void *)qsort);
	int i, at;

	glibc_backtrace(seen.bt, 1);	/* loads libgcc_s before the test */
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	raised = 0;
	chain(3);
	sigaction(SIGUSR1, &old, NULL);

	/* pc for pc what libunwind says */
	assert_true(seen.nbt >= 16);
	assert_int_equal(seen.nours, seen.nbt);
	for (i = 0; i < seen.nbt; i++)
		assert_int_equal(seen.ours[i], (uint64_t)(uintptr_t)seen.bt[i]);
	/* and glibc's backtrace(), called from the line before */
	assert_int_equal(seen.nbt_glibc, seen.nbt);
	assert_int_equal((uint64_t)(uintptr_t)seen.bt_glibc[0], seen.pc_glibc);
	for (i = 1; i < seen.nbt; i++)
		assert_int_equal(seen.ours[i], (uint64_t)(uintptr_t)seen.bt_glibc[i]);

	/* and what the frames recorded: the handler's frames first ... */
	assert_int_equal(seen.ours[0], seen.regs.pc);
	assert_int_equal(seen.ours[1], seen.ra_handler2);
	assert_int_equal(seen.ours[2], seen.ra_handler1);
	assert_int_equal(seen.ours[3], seen.ra_handler);	/* __restore_rt */
	assert_int_equal(rule_kind_at(seen.ra_handler - 1), UNWTAB_SIGNAL);
	/* ... the interrupted pc in raise(), exact, in libc ... */
	assert_non_null(libc);
	assert_true(seen.ours[4] >= libc->lo && seen.ours[4] < libc->hi);
	/* ... libc's qsort frames calling cmp, then this binary's */
	at = find_pc(seen.ra_cmp, 5);
	assert_true(at > 5);
	assert_true(seen.ra_cmp >= libc->lo && seen.ra_cmp < libc->hi);
	at = find_pc(seen.ra_sort, at + 1);
	assert_true(at > 0);
	assert_int_equal(seen.ours[at + 1], seen.ra_vla);
	for (i = 0; i <= 3; i++)
		assert_int_equal(seen.ours[at + 2 + i], seen.ra_chain[i]);
	/* both kinds of frame of the -fomit-frame-pointer binary */
	assert_int_equal(rule_kind_at(seen.ra_sort - 1), UNWTAB_CFA_FP);
	assert_int_equal(rule_kind_at(seen.ra_chain[2] - 1), UNWTAB_CFA_SP);
	/* the last frame is _start's: CFI says its return address is undefined */
	assert_int_equal(rule_kind_at(seen.ours[seen.nours - 1] - 1), UNWTAB_STOP);
}

#define A(p) ((uint64_t)(uintptr_t)(p))

/* The first row of T with a rule of KIND, or NULL. */
static const struct unwtab_row *row_of_kind(const struct unwtab_hdr *t, int kind)
{
	const struct unwtab_row *rows = unwtab_rows(t);
	uint32_t i;

	for (i = 0; i < t->nrows; i++)
		if (unwtab_rules(t)[rows[i].rule].kind == kind)
			return &rows[i];
	return NULL;
}

/* libc's table: its one signal frame, PLT, function entries */
static void test_libc_table(void **state)
{
	const struct unwtab_obj *libc = self_obj_of(&tabs, (void *)qsort);
	const struct unwtab_row *row;
	const struct unwtab_rule *r;
	Dl_info dli;
	struct unwtab_hdr *t;
	struct unwtab_stats st;

	assert_non_null(libc);
	assert_int_not_equal(dladdr((void *)qsort, &dli), 0);
	assert_int_equal(unwtab_compile(dli.dli_fname, &t, &st), 0);
	assert_int_equal(unwtab_check(t, t->size), 0);
	assert_memory_equal(t, libc->tab, t->size);	/* deterministic */
	assert_int_equal(st.signal, 1);		/* __restore_rt */
	assert_int_equal(st.refused, 0);
	assert_int_equal(st.debug_frame, 0);
	row = row_of_kind(t, UNWTAB_SIGNAL);
	assert_non_null(row);
	r = &unwtab_rules(t)[row->rule];
	/* rip, rsp, rbp of the ucontext's mcontext (sys/ucontext.h) */
	assert_int_equal(r->ra_off, 40 + 8 * 16);
	assert_int_equal(r->cfa_off, 40 + 8 * 15);
	assert_int_equal(r->fp_off, 40 + 8 * 10);
	/* at a function's entry: CFA = rsp + 8, return address at CFA - 8 */
	r = unwtab_find_rule(t, (uint64_t)(uintptr_t)qsort - libc->bias);
	assert_non_null(r);
	assert_int_equal(r->kind, UNWTAB_CFA_SP);
	assert_int_equal(r->cfa_off, 8);
	assert_int_equal(r->ra_off, -8);
	assert_int_equal(r->fp_off, 0);
	free(t);
}

/*
 * A PLT entry (16 bytes: jmp *GOT; push $index; jmp PLT0): before the push
 * (byte 11) the return address is at sp, after it at sp + 8.  libc's own
 * .plt, after PLT0, on a synthetic stack.
 */
static void test_plt_rule(void **state)
{
	const struct unwtab_obj *libc = self_obj_of(&tabs, (void *)qsort);
	const struct unwtab_row *row = row_of_kind(libc->tab, UNWTAB_PLT);
	const struct unwtab_rule *r;
	uint64_t stk[4] = { 0x1111, 0x2222, 0x3333, 0x4444 }, entry;
	struct unwtab_stack st = { A(&stk[0]), A(&stk[4]) };
	struct unwtab_frame f;

	assert_non_null(row);
	r = &unwtab_rules(libc->tab)[row->rule];
	assert_int_equal(r->plt_split, 11);
	assert_int_equal(r->cfa_off, 8);
	entry = libc->bias + row->pc;
	assert_int_equal(entry & 15, 0);
	f = (struct unwtab_frame){ entry + 6, A(&stk[0]), 7, 1, NULL };
	assert_int_equal(unwtab_step(libc, 1, &st, &f), 1);
	assert_int_equal(f.pc, 0x1111);
	assert_int_equal(f.sp, A(&stk[1]));
	assert_int_equal(f.fp, 7);
	f = (struct unwtab_frame){ entry + 11, A(&stk[0]), 7, 1, NULL };
	assert_int_equal(unwtab_step(libc, 1, &st, &f), 1);
	assert_int_equal(f.pc, 0x2222);
	assert_int_equal(f.sp, A(&stk[2]));
}

/* The table of the test object NAME built next to this test (Makefile),
 * dlopen'ed: *H, and its load bias *BIAS. */
static struct unwtab_hdr *test_object(const char *name, struct unwtab_stats *st,
				      void **h, uint64_t *bias)
{
	char path[4096], *slash;
	ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 64);
	struct unwtab_hdr *t;
	struct link_map *lm;

	assert_true(len > 0);
	path[len] = 0;
	slash = strrchr(path, '/');
	strcpy(slash + 1, name);
	assert_int_equal(unwtab_compile(path, &t, st), 0);
	assert_int_equal(unwtab_check(t, t->size), 0);
	*h = dlopen(path, RTLD_NOW);
	assert_non_null(*h);
	assert_int_equal(dlinfo(*h, RTLD_DI_LINKMAP, &lm), 0);
	*bias = lm->l_addr;
	return t;
}

/*
 * An object with .debug_frame only: its two functions, uwt_framed
 * starting with "sub $N, %rsp" (48 83 ec N).
 */
static void test_debug_frame(void **state)
{
	const struct unwtab_rule *r;
	const uint8_t *code;
	struct unwtab_hdr *t;
	struct unwtab_stats st;
	uint64_t bias, at;
	void *h;

	t = test_object("libuwt_debug_frame.so", &st, &h, &bias);
	assert_int_equal(st.debug_frame, 1);
	assert_int_equal(st.fdes, 2);
	code = dlsym(h, "uwt_framed");
	assert_non_null(code);
	at = A(code) - bias;
	r = unwtab_find_rule(t, at);
	assert_int_equal(r->kind, UNWTAB_CFA_SP);
	assert_int_equal(r->cfa_off, 8);
	assert_memory_equal(code, "\x48\x83\xec", 3);
	r = unwtab_find_rule(t, at + 4);
	assert_int_equal(r->kind, UNWTAB_CFA_SP);
	assert_int_equal(r->cfa_off, 8 + code[3]);
	assert_int_equal(r->ra_off, -8);
	dlclose(h);
	free(t);
}

/*
 * CFI libdw refuses to interpret (libgcrypt's): the rest of that FDE is
 * INVALID, the object's other FDEs are compiled.
 */
static void test_cfi_refused(void **state)
{
	struct unwtab_hdr *t;
	struct unwtab_stats st;
	uint64_t bias, odd, refused, after;
	const struct unwtab_rule *r;
	void *h;

	t = test_object("libuwt_cfi_odd.so", &st, &h, &bias);
	odd = A(dlsym(h, "uwt_odd")) - bias;
	refused = A(dlsym(h, "uwt_odd_refused")) - bias;
	after = A(dlsym(h, "uwt_after")) - bias;
	assert_int_equal(st.fdes, 2);
	assert_int_equal(st.refused, 1);
	r = unwtab_find_rule(t, odd + 1);		/* after push %rbx */
	assert_int_equal(r->kind, UNWTAB_CFA_SP);
	assert_int_equal(r->cfa_off, 16);
	r = unwtab_find_rule(t, refused - 1);		/* the expression */
	assert_int_equal(r->kind, UNWTAB_INVALID);
	r = unwtab_find_rule(t, refused + 2);		/* after the pop */
	assert_int_equal(r->kind, UNWTAB_INVALID);
	r = unwtab_find_rule(t, after);
	assert_int_equal(r->kind, UNWTAB_CFA_SP);
	assert_int_equal(r->cfa_off, 8);
	dlclose(h);
	free(t);
}

static void test_compile_errors(void **state)
{
	struct unwtab_hdr *t = NULL;

	assert_int_equal(unwtab_compile("/nonexistent/libx.so", &t, NULL), -1);
	assert_int_equal(unwtab_compile("/proc/self/status", &t, NULL), -1);
	assert_null(t);
}

static NOINLINE void in_thread(uint64_t hi)
{
	seen.ra_handler2 = RA();
	ut_backtrace = unw_backtrace;
	seen.nbt = ut_capture(seen.bt, MAXF);
	walk_captured(hi);
	sink++;
}

static void *thread_main(void *arg)
{
	pthread_attr_t a;
	void *addr = NULL;
	size_t size = 0;

	if (!pthread_getattr_np(pthread_self(), &a)) {
		pthread_attr_getstack(&a, &addr, &size);
		pthread_attr_destroy(&a);
	}
	in_thread((uint64_t)(uintptr_t)addr + size);
	sink++;
	return NULL;
}

/* A thread's stack ends in clone's child, whose CFI says "no caller". */
static void test_walk_thread(void **state)
{
	const struct unwtab_obj *libc = self_obj_of(&tabs, (void *)qsort);
	pthread_t t;
	int i;

	memset(&seen, 0, sizeof(seen));
	assert_int_equal(pthread_create(&t, NULL, thread_main, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	/* in_thread, thread_main, start_thread, clone3 */
	assert_int_equal(seen.nbt, 4);
	assert_int_equal(seen.nours, seen.nbt);
	for (i = 0; i < seen.nbt; i++)
		assert_int_equal(seen.ours[i], (uint64_t)(uintptr_t)seen.bt[i]);
	assert_int_equal(seen.ours[0], seen.regs.pc);
	assert_int_equal(seen.ours[1], seen.ra_handler2);
	i = seen.nours - 1;
	assert_true(seen.ours[i] >= libc->lo && seen.ours[i] < libc->hi);
	assert_int_equal(rule_kind_at(seen.ours[i] - 1), UNWTAB_STOP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_equals_backtrace),
		cmocka_unit_test(test_walk_thread),
		cmocka_unit_test(test_libc_table),
		cmocka_unit_test(test_plt_rule),
		cmocka_unit_test(test_debug_frame),
		cmocka_unit_test(test_cfi_refused),
		cmocka_unit_test(test_compile_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
