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

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "fastdec.h"

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

/* CODE's answer without capstone (when it gives one) equal to
 * capstone's; 1 if it gave one. */
static int same_both_ways(const uint8_t *code, size_t len, uint64_t entry,
			  const char *what)
{
	uint64_t a = 1, b = 1;
	int ra, rb;

	ra = x86_main_fast(code, len, entry, &a);
	x86_fast_off = 1;
	rb = arch_main_from_entry(code, len, entry, &b);
	x86_fast_off = 0;
	if (ra == -2)
		return 0;
	if (ra != rb || a != b)
		fail_msg("%s: without capstone %d %#lx, capstone %d %#lx", what, ra,
			 (unsigned long)a, rb, (unsigned long)b);
	return 1;
}

/* The 64 bytes at the entry of the ELF file PATH, or 0. */
static size_t entry_code(const char *path, uint8_t *code, uint64_t *entry)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	unsigned i;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_machine == EM_X86_64 && eh.e_entry)
		for (i = 0; i < eh.e_phnum; i++) {
			ssize_t n;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph) || ph.p_type != PT_LOAD ||
			    eh.e_entry < ph.p_vaddr || eh.e_entry >= ph.p_vaddr + ph.p_filesz)
				continue;
			n = pread(fd, code, 64, (off_t)(ph.p_offset + eh.e_entry - ph.p_vaddr));
			got = n > 0 ? (size_t)n : 0;
			*entry = eh.e_entry;
			break;
		}
	close(fd);
	return got;
}

/* Without capstone, the same answers: the cases here and the entry of
 * every executable of /usr/bin and /usr/sbin. */
static void test_without_capstone(void **state)
{
	static const char *const dirs[] = { "/usr/bin", "/usr/sbin" };
	unsigned fast = 0, files = 0, d;
	uint8_t code[64];
	uint64_t entry;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		fast += same_both_ways(cases[i].code, cases[i].len, cases[i].entry,
				       cases[i].what);
	assert_int_equal(fast, 4);
	/* lea main(%rip),%rdi, then each of these, then the call: the
	 * writers of %rdi left to capstone, the others passed over */
	{
		static const uint8_t after[][5] = {
			{ 1, 0x5f }, { 2, 0x31, 0xff }, { 3, 0x48, 0x89, 0xc7 },
			{ 3, 0x48, 0x8b, 0xf8 }, { 4, 0x48, 0x8d, 0x78, 0x08 },
			{ 3, 0x0f, 0xb6, 0xf8 }, { 4, 0x48, 0x0f, 0x45, 0xf8 },
			{ 4, 0x48, 0x83, 0xc7, 0x01 }, { 4, 0x48, 0xc1, 0xe7, 0x01 },
			{ 3, 0x48, 0xf7, 0xdf }, { 3, 0x40, 0xb7, 0x01 },
			{ 4, 0x40, 0x0f, 0x95, 0xc7 }, { 3, 0x48, 0x39, 0xf8 },
			{ 3, 0x48, 0x85, 0xff }, { 4, 0x48, 0x83, 0xff, 0x01 },
			{ 1, 0x57 }, { 3, 0x48, 0xf7, 0xe7 }, { 3, 0x48, 0x89, 0xf8 },
		};
		static const uint8_t head[] = { START_HEAD, 0x48, 0x8d, 0x3d, 0x23,
						0x01, 0x00, 0x00 };
		unsigned k, passed = 0;
		char what[32];

		for (k = 0; k < sizeof(after) / sizeof(after[0]); k++) {
			uint8_t c[64];
			size_t len = sizeof(head);

			memcpy(c, head, len);
			memcpy(c + len, after[k] + 1, after[k][0]);
			len += after[k][0];
			memcpy(c + len, "\xff\x15\x2f\x2f\x00\x00", 6);
			len += 6;
			snprintf(what, sizeof(what), "synthetic case %u", k);
			passed += same_both_ways(c, len, 0x1070, what);
		}
		/* cmp, test, cmp $imm, push, mul, mov %rdi,%rax */
		assert_int_equal(passed, 6);
	}
	for (d = 0; d < 2; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *e;

		if (!dir)
			continue;
		while ((e = readdir(dir))) {
			char path[512];

			snprintf(path, sizeof(path), "%s/%s", dirs[d], e->d_name);
			n = entry_code(path, code, &entry);
			if (n < 16)
				continue;
			files++;
			fast += same_both_ways(code, n, entry, path);
		}
		closedir(dir);
	}
	printf("# main found without capstone in %u of %u executables' entry code\n",
	       fast - 4, files);
	/* Debian's are nearly all glibc's _start */
	assert_true(files > 100);
	assert_true(fast - 4 > files * 9 / 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recognised),
		cmocka_unit_test(test_not_recognised),
		cmocka_unit_test(test_without_capstone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
