/*
 * test_unwtab.c - unwind tables (unwtab.h) and the table walker
 * (unwtab_walk.h).
 *
 * The real test: this binary (built -O2 -fomit-frame-pointer) stops in a
 * signal handler raised from a qsort comparator (a frame inside libc,
 * below a signal frame), and its own stack, walked with the tables
 * compiled from every loaded object, must give glibc backtrace()'s pcs one
 * for one, and the return addresses the frames recorded themselves.
 */
#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "unwtab.h"
#include "unwtab_walk.h"
#include "unwtab_self.h"

#define MAXF 128
#define NOINLINE __attribute__((noinline, noipa))
#define RA() ((uint64_t)(uintptr_t)__builtin_return_address(0))

static struct self_tabs tabs;

/* what the frames saw, filled inside the signal handler */
static struct {
	void *bt[MAXF];
	int nbt;
	uint64_t ours[MAXF];
	unsigned nours;
	struct ut_regs regs;
	/* return addresses recorded by the frames themselves, innermost first */
	uint64_t ra_handler2, ra_handler1, ra_handler, ra_cmp, ra_sort,
		 ra_vla, ra_chain[4];
} seen;

static volatile int raised;
static volatile int sink;

static NOINLINE void in_handler2(void)
{
	struct unwtab_stack st;
	struct unwtab_frame f;

	seen.ra_handler2 = RA();
	seen.nbt = ut_capture(seen.bt, MAXF);
	seen.regs = ut_regs;
	st = (struct unwtab_stack){ ut_regs.sp, self_stack_end() };
	f = (struct unwtab_frame){ ut_regs.pc, ut_regs.sp, ut_regs.fp, 0 };
	seen.nours = unwtab_walk(tabs.objs, tabs.n, &st, f, seen.ours, MAXF);
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
	self_tabs_load(&tabs);
	return tabs.failed ? -1 : 0;
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

	backtrace(seen.bt, 1);		/* loads libgcc_s before the test */
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	raised = 0;
	chain(3);
	sigaction(SIGUSR1, &old, NULL);

	/* pc for pc what glibc's backtrace() (libgcc's unwinder) says */
	assert_true(seen.nbt >= 16);
	assert_int_equal(seen.nours, seen.nbt);
	for (i = 0; i < seen.nbt; i++)
		assert_int_equal(seen.ours[i], (uint64_t)(uintptr_t)seen.bt[i]);

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_equals_backtrace),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
