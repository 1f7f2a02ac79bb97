/* test_cbpf.c - the classic BPF interpreter on seccomp-style programs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include "target/cbpf.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))

static struct seccomp_data call(int nr, uint64_t a2, uint64_t a3)
{
	struct seccomp_data d;

	memset(&d, 0, sizeof(d));
	d.nr = nr;
	d.arch = AUDIT_ARCH_X86_64;
	d.instruction_pointer = 0x7f0000001002ULL;
	d.args[2] = a2;
	d.args[3] = a3;
	return d;
}

static uint32_t run(const struct sock_filter *f, size_t n, const struct seccomp_data *d)
{
	char err[128];
	uint32_t ret = 0xdeadbeef;

	assert_int_equal(cbpf_run(f, n, d, sizeof(*d), &ret, err, sizeof(err)), 0);
	return ret;
}

/* kill on mmap(PROT_EXEC, MAP_ANONYMOUS), as tests/targets/h_seccomp */
static const struct sock_filter jit_filter[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 3),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(3)),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static void test_jit_filter(void **state)
{
	struct seccomp_data d;

	d = call(SYS_mmap, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS);
	assert_int_equal(run(jit_filter, N(jit_filter), &d), SECCOMP_RET_ERRNO | 1);
	d = call(SYS_mmap, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	assert_int_equal(run(jit_filter, N(jit_filter), &d), SECCOMP_RET_ALLOW);
	d = call(SYS_mmap, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
	assert_int_equal(run(jit_filter, N(jit_filter), &d), SECCOMP_RET_ALLOW);
	d = call(SYS_munmap, PROT_READ | PROT_EXEC, MAP_ANONYMOUS);
	assert_int_equal(run(jit_filter, N(jit_filter), &d), SECCOMP_RET_ALLOW);
	d.arch = AUDIT_ARCH_I386;
	assert_int_equal(run(jit_filter, N(jit_filter), &d), SECCOMP_RET_KILL_PROCESS);
}

/* ALU, X, scratch words, JGT/JGE, RET A, LEN */
static void test_alu_and_memory(void **state)
{
	static const struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 10),	/* 90 */
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 7),
		BPF_STMT(BPF_ALU | BPF_MOD | BPF_X, 0),		/* 90 % 7 = 6 */
		BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 4),		/* 96 */
		BPF_STMT(BPF_MISC | BPF_TAX, 0),
		BPF_STMT(BPF_LD | BPF_MEM, 3),			/* 90 */
		BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),		/* 186 */
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 185, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 1),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 187, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 2),
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),		/* 0, as the kernel */
		BPF_STMT(BPF_ALU | BPF_OR | BPF_K, 0x30000),
		BPF_STMT(BPF_LDX | BPF_W | BPF_LEN, 0),		/* 64 */
		BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),
		BPF_STMT(BPF_JMP | BPF_JA, 1),
		BPF_STMT(BPF_RET | BPF_K, 3),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct seccomp_data d = call(9, 0, 0);

	assert_int_equal(run(f, N(f), &d), 0x30000 + 64);
}

static void expect_error(const struct sock_filter *f, size_t n, const char *what)
{
	struct seccomp_data d = call(SYS_mmap, 0, 0);
	char err[128] = "";
	uint32_t ret;

	if (cbpf_run(f, n, &d, sizeof(d), &ret, err, sizeof(err)) != -1)
		fail_msg("%s: accepted", what);
	assert_non_null(strstr(err, what));
}

static void test_refused_programs(void **state)
{
	static const struct sock_filter past_end[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	static const struct sock_filter misaligned[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	static const struct sock_filter halfword[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	static const struct sock_filter jump_out[] = {
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),	/* A is 0 */
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	static const struct sock_filter no_return[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_IMM, 1),
	};
	static const struct sock_filter bad_slot[] = {
		BPF_STMT(BPF_ST, 16),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};

	expect_error(past_end, N(past_end), "load at 64");
	expect_error(misaligned, N(misaligned), "load at 2");
	expect_error(halfword, N(halfword), "load size");
	expect_error(jump_out, N(jump_out), "jump out");
	expect_error(no_return, N(no_return), "no return");
	expect_error(bad_slot, N(bad_slot), "scratch word 16");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jit_filter),
		cmocka_unit_test(test_alu_and_memory),
		cmocka_unit_test(test_refused_programs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
