/*
 * test_entry.c - main's address from glibc's x86-64 _start (the bytes of
 * Debian 12's crt1.o/Scrt1.o as linked by gcc 12: PIE, -no-pie, PIE with
 * -Wl,--no-relax, and static).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "arch.h"

/* xor %ebp,%ebp; mov %rdx,%r9; pop %rsi; mov %rsp,%rdx; and $-16,%rsp;
 * push %rax; push %rsp; xor %r8d,%r8d; xor %ecx,%ecx */
#define START_HEAD 0x31, 0xed, 0x49, 0x89, 0xd1, 0x5e, 0x48, 0x89, 0xe2, \
	0x48, 0x83, 0xe4, 0xf0, 0x50, 0x54, 0x45, 0x31, 0xc0, 0x31, 0xc9

struct entry_case {
	const char *what;
	const uint8_t *code;
	size_t len;
	uint64_t entry;
	int ret;
	uint64_t addr;
};

#define CODE(...) (const uint8_t[]){ __VA_ARGS__ }, \
	sizeof((const uint8_t[]){ __VA_ARGS__ })

static const struct entry_case cases[] = {
	/* 1084: lea 0x123(%rip),%rdi -> 0x11ae; call *0x2f2f(%rip); hlt */
	{ "PIE", CODE(START_HEAD, 0x48, 0x8d, 0x3d, 0x23, 0x01, 0x00, 0x00,
		      0xff, 0x15, 0x2f, 0x2f, 0x00, 0x00, 0xf4),
	  0x1070, 0, 0x11ae },
	/* mov $0x40119b,%rdi; call *0x2f57(%rip) */
	{ "-no-pie", CODE(START_HEAD, 0x48, 0xc7, 0xc7, 0x9b, 0x11, 0x40, 0x00,
			  0xff, 0x15, 0x57, 0x2f, 0x00, 0x00, 0xf4),
	  0x401060, 0, 0x40119b },
	/* 1084: mov 0x2f45(%rip),%rdi -> a pointer at 0x3fd0 */
	{ "--no-relax", CODE(START_HEAD, 0x48, 0x8b, 0x3d, 0x45, 0x2f, 0x00, 0x00,
			     0xff, 0x15, 0x27, 0x2f, 0x00, 0x00, 0xf4),
	  0x1070, 1, 0x3fd0 },
	/* static, with endbr64 (CET): mov $0x401745,%rdi; addr32 call rel32 */
	{ "static", CODE(0xf3, 0x0f, 0x1e, 0xfa, START_HEAD,
			 0x48, 0xc7, 0xc7, 0x45, 0x17, 0x40, 0x00,
			 0x67, 0xe8, 0x9f, 0x0b, 0x00, 0x00, 0xf4),
	  0x401650, 0, 0x401745 },
};

static void test_recognised(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct entry_case *c = &cases[i];
		uint64_t a = 0;

		print_message("%s\n", c->what);
		assert_int_equal(arch_main_from_entry(c->code, c->len, c->entry, &a),
				 c->ret);
		assert_int_equal(a, c->addr);
	}
}

static void test_not_recognised(void **state)
{
	/* %rdi changed by something else before the call: xor %edi,%edi */
	static const uint8_t clobbered[] = { START_HEAD,
		0x48, 0x8d, 0x3d, 0x23, 0x01, 0x00, 0x00, 0x31, 0xff,
		0xff, 0x15, 0x2f, 0x2f, 0x00, 0x00 };
	/* no call before a jump */
	static const uint8_t jumps[] = { 0x48, 0x8d, 0x3d, 0x23, 0x01, 0x00, 0x00,
		0xeb, 0xfe };
	/* the code ends before a call */
	static const uint8_t cut[] = { START_HEAD, 0x48, 0x8d, 0x3d };
	uint64_t a = 7;

	assert_int_equal(arch_main_from_entry(clobbered, sizeof(clobbered), 0x1070, &a), -1);
	assert_int_equal(arch_main_from_entry(jumps, sizeof(jumps), 0x1070, &a), -1);
	assert_int_equal(arch_main_from_entry(cut, sizeof(cut), 0x1070, &a), -1);
	assert_int_equal(a, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recognised),
		cmocka_unit_test(test_not_recognised),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
