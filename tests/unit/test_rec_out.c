/*
 * test_rec_out.c - a thread taken out of the stub's scrub at detach
 * (arch/x86_64/rec_out.c, stub.S): the scrub zeroes with %xmm0, kept
 * meanwhile in the frame's argument words; a thread stopped between
 * xmm_saved and xmm_back gets it back (struct arch_regs.xmm0_set), one
 * stopped before or after does not need it; from regs_back on, where the
 * frame is being zeroed, its registers are the live ones.  And arch_set_regs puts
 * xmm0 into a real stopped thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/arch.h"
#include "arch/arch_patch.h"
#include "recorder/recblob.h"
#include "recorder/rechook.h"

#define PAGE	0x7f0000100000ull	/* where the fake code page is */

/* the stub frame and what is above it: the saved rbp, the return address */
static uint64_t frame[REC_CALL_SIZE / 8 + 2];

static int f_read(void *ctx, uint64_t addr, uint64_t *v)
{
	uint64_t lo = (uint64_t)(uintptr_t)frame;

	(void)ctx;
	if (addr < lo || addr + 8 > lo + sizeof(frame))
		return -1;
	memcpy(v, (const void *)(uintptr_t)addr, 8);
	return 0;
}

static uint64_t f_page_of(void *ctx, uint64_t pc)
{
	(void)ctx;
	return pc >= PAGE && pc < PAGE + rec_blob_size ? PAGE : 0;
}

static uint64_t f_fn_entry(void *ctx, uint64_t fn)
{
	(void)ctx, (void)fn;
	return 0;
}

static uint64_t f_tramp_entry(void *ctx, uint64_t pc, uint64_t *tramp)
{
	(void)ctx, (void)pc, (void)tramp;
	return 0;
}

static const struct arch_rec_ops ops = {
	f_read, f_page_of, f_fn_entry, f_tramp_entry,
};

/* A thread at stub offset OFF with the frame above: taken out.  Before
 * regs_back its registers are in the frame (the live ones garbage);
 * from there on they are live, the frame's being zeroed. */
static void take_out(unsigned off, struct arch_regs *r)
{
	uint64_t c = (uint64_t)(uintptr_t)frame;
	int live = off >= RECBLOB_OFF_rec_stub_regs_back;

	memset(frame, 0, sizeof(frame));
	frame[REC_CALL_ARGS / 8] = 0x1111222233334444ull;	/* xmm0 */
	frame[REC_CALL_ARGS / 8 + 1] = 0x5555666677778888ull;
	frame[REC_CALL_RET / 8] = live ? 0 : 0xb10c;
	frame[REC_CALL_RBX / 8] = live ? 0x99 : 0xbb;
	frame[REC_CALL_SIZE / 8] = 0xf00;		/* the caller's rbp */
	frame[REC_CALL_SIZE / 8 + 1] = 0x401234;	/* its return address */
	memset(r, 0, sizeof(*r));
	r->r.rip = PAGE + off;
	r->r.rsp = c;
	r->r.rbp = c + REC_CALL_SIZE;
	r->r.rax = live ? 0xb10c : 0x77;
	r->r.rbx = live ? 0xbb : 0x77;
	assert_int_equal(arch_rec_take_out(r, &ops, NULL), 1);
	assert_int_equal(r->r.rip, 0x401234);
	assert_int_equal(r->r.rsp, c + REC_CALL_SIZE + 16);
	assert_int_equal(r->r.rax, 0xb10c);
	assert_int_equal(r->r.rbx, 0xbb);
	assert_int_equal(r->r.rbp, 0xf00);
}

/* Every offset from hook_leave's return to the leave: the registers
 * from the frame or live, xmm0 from the frame from the save to the
 * restore */
static void test_scrub_xmm0(void **state)
{
	struct arch_regs r;
	unsigned off;

	(void)state;
	assert_true(RECBLOB_OFF_rec_stub_after_leave < RECBLOB_OFF_rec_stub_xmm_saved);
	assert_true(RECBLOB_OFF_rec_stub_xmm_saved < RECBLOB_OFF_rec_stub_regs_back);
	assert_true(RECBLOB_OFF_rec_stub_regs_back < RECBLOB_OFF_rec_stub_xmm_back);
	assert_true(RECBLOB_OFF_rec_stub_xmm_back <= RECBLOB_OFF_rec_stub_leave);
	for (off = RECBLOB_OFF_rec_stub_after_leave;
	     off <= RECBLOB_OFF_rec_stub_leave; off++) {
		int in = off >= RECBLOB_OFF_rec_stub_xmm_saved &&
			 off < RECBLOB_OFF_rec_stub_xmm_back;

		take_out(off, &r);
		assert_int_equal(r.xmm0_set, in);
		if (in) {
			assert_int_equal(r.xmm0[0], 0x1111222233334444ull);
			assert_int_equal(r.xmm0[1], 0x5555666677778888ull);
		}
	}
}

/* A free's call after its original returned, with no hook_leave (the
 * stub's no_leave path): at offset OFF, taken out.  The registers are
 * live but %rax while the frame's result word keeps it, %xmm0 while the
 * argument words do. */
static void test_no_leave(void **state)
{
	uint64_t c = (uint64_t)(uintptr_t)frame;
	struct arch_regs r;
	unsigned off;

	(void)state;
	assert_true(RECBLOB_OFF_rec_stub_no_leave < RECBLOB_OFF_rec_stub_nl_rax_saved);
	assert_true(RECBLOB_OFF_rec_stub_nl_rax_saved < RECBLOB_OFF_rec_stub_nl_xmm_saved);
	assert_true(RECBLOB_OFF_rec_stub_nl_xmm_saved < RECBLOB_OFF_rec_stub_nl_rax_back);
	assert_true(RECBLOB_OFF_rec_stub_nl_rax_back < RECBLOB_OFF_rec_stub_nl_xmm_back);
	assert_true(RECBLOB_OFF_rec_stub_nl_xmm_back < RECBLOB_OFF_rec_stub_nl_leave);
	for (off = RECBLOB_OFF_rec_stub_no_leave;
	     off <= RECBLOB_OFF_rec_stub_nl_leave; off++) {
		int rax_in = off >= RECBLOB_OFF_rec_stub_nl_rax_saved &&
			     off < RECBLOB_OFF_rec_stub_nl_rax_back;
		int xmm_in = off >= RECBLOB_OFF_rec_stub_nl_xmm_saved &&
			     off < RECBLOB_OFF_rec_stub_nl_xmm_back;

		memset(frame, 0, sizeof(frame));
		frame[REC_CALL_ARGS / 8] = 0x1111222233334444ull;
		frame[REC_CALL_ARGS / 8 + 1] = 0x5555666677778888ull;
		frame[REC_CALL_RET / 8] = rax_in ? 0xf4ee : 0x99;
		frame[REC_CALL_RBX / 8] = 0x99;		/* not read */
		frame[REC_CALL_SIZE / 8] = 0xf00;
		frame[REC_CALL_SIZE / 8 + 1] = 0x401234;
		memset(&r, 0, sizeof(r));
		r.r.rip = PAGE + off;
		r.r.rsp = c;
		r.r.rbp = c + REC_CALL_SIZE;
		r.r.rax = rax_in ? 0x77 : 0xf4ee;
		r.r.rbx = 0xbb;
		r.r.rcx = 0xcc;
		assert_int_equal(arch_rec_take_out(&r, &ops, NULL), 1);
		assert_int_equal(r.r.rip, 0x401234);
		assert_int_equal(r.r.rsp, c + REC_CALL_SIZE + 16);
		assert_int_equal(r.r.rbp, 0xf00);
		assert_int_equal(r.r.rax, 0xf4ee);
		assert_int_equal(r.r.rbx, 0xbb);
		assert_int_equal(r.r.rcx, 0xcc);
		assert_int_equal(r.xmm0_set, xmm_in);
		if (xmm_in) {
			assert_int_equal(r.xmm0[0], 0x1111222233334444ull);
			assert_int_equal(r.xmm0[1], 0x5555666677778888ull);
		}
	}
	/* at its ret */
	frame[0] = 0x401234;
	memset(&r, 0, sizeof(r));
	r.r.rip = PAGE + RECBLOB_OFF_rec_stub_nl_ret;
	r.r.rsp = c;
	assert_int_equal(arch_rec_take_out(&r, &ops, NULL), 1);
	assert_int_equal(r.r.rip, 0x401234);
	assert_int_equal(r.r.rsp, c + 8);
}

static pid_t child = -1;

/* A child that loads xmm0 with a known value and stops under
 * PTRACE_TRACEME; then it exits 0 if xmm0 holds 42 in its low word. */
static void child_main(void)
{
	uint64_t v[2] = { 7, 7 };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	__asm__ volatile("movdqu %0, %%xmm0" : : "m"(v) : "xmm0");
	raise(SIGSTOP);
	__asm__ volatile("movdqu %%xmm0, %0" : "=m"(v) : : "memory");
	_exit(v[0] == 42 && v[1] == 43 ? 0 : 1);
}

static void test_set_xmm0(void **state)
{
	struct user_fpregs_struct fp;
	struct arch_regs r;
	uint64_t x[2];
	int st;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		child_main();
	assert_int_equal(waitpid(child, &st, __WALL), child);
	assert_true(WIFSTOPPED(st));
	assert_int_equal(arch_get_regs(child, &r), 0);
	assert_int_equal(r.xmm0_set, 0);
	assert_int_equal(ptrace(PTRACE_GETFPREGS, child, NULL, &fp), 0);
	memcpy(x, &fp.xmm_space[0], sizeof(x));
	assert_int_equal(x[0], 7);
	r.xmm0_set = 1;
	r.xmm0[0] = 42;
	r.xmm0[1] = 43;
	assert_int_equal(arch_set_regs(child, &r), 0);
	assert_int_equal(ptrace(PTRACE_CONT, child, NULL, NULL), 0);
	assert_int_equal(waitpid(child, &st, __WALL), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	child = -1;
}

static int kill_child(void **state)
{
	int st;

	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		while (waitpid(child, &st, __WALL) == -1 && errno == EINTR)
			;
		child = -1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrub_xmm0),
		cmocka_unit_test(test_no_leave),
		cmocka_unit_test_teardown(test_set_xmm0, kill_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
