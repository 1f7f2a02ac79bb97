/*
 * test_unwtab_walk.c - the table walker (unwtab_walk.h) and unwtab_check on
 * a synthetic table and synthetic stacks: exact pcs, registers and
 * stopping points.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "recorder/unwtab.h"
#include "recorder/unwtab_walk.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define A(p) ((uint64_t)(uintptr_t)(p))

/*
 * A synthetic object: table pcs 0x1000-0x1040 run at 0x5000 (bias 0x4000).
 *   0x1000 CFA = sp + 8                (function entry)
 *   0x1001 CFA = sp + 16, fp at CFA-16 (after push rbp)
 *   0x1004 CFA = fp + 16, fp at CFA-16 (after mov rsp, rbp)
 *   0x1020 CFA = sp + 8                (after leave)
 *   0x1030 INVALID
 *   0x1040 STOP (end)
 * in 16-byte buckets starting at rows 0, 2, 3, 4, 5.
 */
static const struct unwtab_rule syn_rules[] = {
	{ .kind = UNWTAB_STOP },
	{ .kind = UNWTAB_CFA_SP, .cfa_off = 8, .ra_off = -8 },
	{ .kind = UNWTAB_CFA_SP, .cfa_off = 16, .ra_off = -8, .fp_off = -16 },
	{ .kind = UNWTAB_CFA_FP, .cfa_off = 16, .ra_off = -8, .fp_off = -16 },
	{ .kind = UNWTAB_INVALID },
};
static const struct unwtab_row syn_rows[] = {
	{ 0x1000, 1, 0 }, { 0x1001, 2, 0 }, { 0x1004, 3, 0 },
	{ 0x1020, 1, 0 }, { 0x1030, 4, 0 }, { 0x1040, 0, 0 },
};

static const uint32_t syn_buckets[] = { 0, 2, 3, 4, 5 };

static struct {
	struct unwtab_hdr h;
	struct unwtab_row rows[ARRAY_LEN(syn_rows)];
	uint32_t buckets[ARRAY_LEN(syn_buckets)];
	struct unwtab_rule rules[ARRAY_LEN(syn_rules)];
} syn;

static struct unwtab_obj syn_obj(void)
{
	syn.h = (struct unwtab_hdr){
		.magic = UNWTAB_MAGIC, .version = UNWTAB_VERSION,
		.nrules = ARRAY_LEN(syn_rules), .nrows = ARRAY_LEN(syn_rows),
		.rows_off = offsetof(__typeof__(syn), rows),
		.rules_off = offsetof(__typeof__(syn), rules),
		.size = sizeof(syn), .lo = 0x1000, .hi = 0x1040,
		.buckets_off = offsetof(__typeof__(syn), buckets),
		.nbuckets = ARRAY_LEN(syn_buckets), .bucket_shift = 4,
	};
	memcpy(syn.rows, syn_rows, sizeof(syn_rows));
	memcpy(syn.buckets, syn_buckets, sizeof(syn_buckets));
	memcpy(syn.rules, syn_rules, sizeof(syn_rules));
	return (struct unwtab_obj){ 0x5000, 0x5040, 0x4000, &syn.h };
}

/*
 * A stack of three frames over the synthetic object: fp-based (twice), then
 * sp-based after push rbp, then a return into INVALID.  The first pc is a
 * return address exactly at the row boundary 0x1020: its row is the
 * call's (0x101f, fp-based), not the next one.
 */
static void syn_stack(uint64_t *stk)
{
	memset(stk, 0, 16 * sizeof(*stk));
	stk[0] = 0xdead;		/* what sp + 8 would give */
	stk[4] = A(&stk[10]);		/* saved fp */
	stk[5] = 0x5010;
	stk[10] = A(&stk[12]);
	stk[11] = 0x5003;		/* after push rbp */
	stk[12] = 0x1234;		/* its saved fp */
	stk[13] = 0x5031;		/* into INVALID */
}

static unsigned syn_walk(uint64_t *stk, uint64_t lo, uint64_t hi, uint64_t *pcs)
{
	struct unwtab_obj o = syn_obj();
	struct unwtab_stack st = { lo, hi };
	struct unwtab_frame f = { 0x5020, A(&stk[0]), A(&stk[4]), 0, NULL };

	assert_int_equal(unwtab_check(&syn, sizeof(syn)), 0);
	return unwtab_walk(&o, 1, &st, f, pcs, 8);
}

static void test_walk_synthetic(void **state)
{
	uint64_t stk[16], pcs[8];
	const uint64_t want[] = { 0x5020, 0x5010, 0x5003, 0x5031 };
	struct unwtab_obj o = syn_obj();
	struct unwtab_stack st = { A(&stk[0]), A(&stk[16]) };
	struct unwtab_frame f = { 0x5003, A(&stk[12]), 0x1234, 0, NULL };

	syn_stack(stk);
	assert_int_equal(syn_walk(stk, A(&stk[0]), A(&stk[16]), pcs), 4);
	assert_memory_equal(pcs, want, sizeof(want));
	/* the last step: fp restored from CFA - 16 */
	assert_int_equal(unwtab_step(&o, 1, &st, &f), 1);
	assert_int_equal(f.pc, 0x5031);
	assert_int_equal(f.sp, A(&stk[14]));
	assert_int_equal(f.fp, 0x1234);
	/* exact pc at the boundary: the sp-based row of 0x1020 */
	f = (struct unwtab_frame){ 0x5020, A(&stk[0]), 0, 1, NULL };
	assert_int_equal(unwtab_step(&o, 1, &st, &f), 1);
	assert_int_equal(f.pc, 0xdead);
	/* outside the object, before its first row, in its STOP: no caller */
	f = (struct unwtab_frame){ 0x5041, A(&stk[0]), 0, 0, NULL };
	assert_int_equal(unwtab_step(&o, 1, &st, &f), 0);
	f = (struct unwtab_frame){ 0x5000, A(&stk[0]), 0, 0, NULL };
	assert_int_equal(unwtab_step(&o, 1, &st, &f), 0);
	assert_int_equal(unwtab_walk(&o, 1, &st, f, pcs, 0), 0);
	assert_int_equal(unwtab_walk(&o, 1, &st, f, pcs, 1), 1);
	/* at a function's entry: the caller's pc is at sp */
	assert_int_equal(unwtab_entry_frame(&st, A(&stk[13]), 5, &f), 0);
	assert_int_equal(f.pc, 0x5031);
	assert_int_equal(f.sp, A(&stk[14]));
	assert_int_equal(f.fp, 5);
	assert_int_equal(f.exact, 0);
	assert_int_equal(unwtab_entry_frame(&st, A(&stk[16]), 5, &f), -1);
}

static void test_walk_stays_in_bounds(void **state)
{
	uint64_t stk[16], pcs[8];

	syn_stack(stk);
	/* the third frame's return address is at stk[13]: just outside */
	assert_int_equal(syn_walk(stk, A(&stk[0]), A(&stk[13]), pcs), 3);
	assert_int_equal(syn_walk(stk, A(&stk[0]), A(&stk[14]), pcs), 4);
	/* the second frame's at stk[11], its saved fp at stk[10] */
	assert_int_equal(syn_walk(stk, A(&stk[0]), A(&stk[11]), pcs), 2);
	/* the first frame's return address at stk[5], its saved fp at stk[4] */
	assert_int_equal(syn_walk(stk, A(&stk[4]), A(&stk[16]), pcs), 4);
	assert_int_equal(syn_walk(stk, A(&stk[5]), A(&stk[16]), pcs), 1);
	/* a saved fp below the frame: the caller's caller's sp would not be
	 * above its caller's */
	stk[4] = A(&stk[0]) - 64;
	assert_int_equal(syn_walk(stk, 0, UINT64_MAX, pcs), 2);
	/* an empty or tiny stack */
	assert_int_equal(syn_walk(stk, 0, 0, pcs), 1);
	assert_int_equal(syn_walk(stk, 0, 7, pcs), 1);
}

static void test_check_rejects(void **state)
{
	syn_obj();
	assert_int_equal(unwtab_check(&syn, sizeof(syn)), 0);
	assert_int_equal(unwtab_check(&syn, sizeof(syn) - 1), -1);
	syn.rows[2].pc = 0x1001;	/* not increasing */
	assert_int_equal(unwtab_check(&syn, sizeof(syn)), -1);
	syn_obj();
	syn.rows[1].rule = ARRAY_LEN(syn_rules);
	assert_int_equal(unwtab_check(&syn, sizeof(syn)), -1);
	syn_obj();
	syn.rules[4].kind = UNWTAB_SIGNAL + 1;
	assert_int_equal(unwtab_check(&syn, sizeof(syn)), -1);
	syn_obj();
	syn.rows[5].rule = 1;		/* does not end with STOP */
	assert_int_equal(unwtab_check(&syn, sizeof(syn)), -1);
	syn_obj();
	syn.h.version = 2;
	assert_int_equal(unwtab_check(&syn, sizeof(syn)), -1);
	syn_obj();
	syn.h.nrows = 100;
	assert_int_equal(unwtab_check(&syn, sizeof(syn)), -1);
	syn_obj();
	syn.buckets[1] = 1;		/* row 1 starts after 0x1010 */
	assert_int_equal(unwtab_check(&syn, sizeof(syn)), -1);
	syn_obj();
	syn.buckets[2] = 2;		/* row 3 starts at 0x1020 */
	assert_int_equal(unwtab_check(&syn, sizeof(syn)), -1);
	syn_obj();
	syn.h.nbuckets = 4;
	assert_int_equal(unwtab_check(&syn, sizeof(syn)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_synthetic),
		cmocka_unit_test(test_walk_stays_in_bounds),
		cmocka_unit_test(test_check_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
