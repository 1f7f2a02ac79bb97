/*
 * test_arch.c - the x86-64 arch layer: instruction analysis, emulation of
 * glibc's allocator prologues, out-of-line slots, system call injection.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libunwind-x86_64.h>

#include "arch/arch.h"
#include "fastdec.h"

#define FL_CF 0x001
#define FL_PF 0x004
#define FL_AF 0x010
#define FL_ZF 0x040
#define FL_SF 0x080
#define FL_DF 0x400
#define FL_OF 0x800
#define FL_BASE 0x202ULL	/* IF and the always-one bit */
#define FL_ARITH (FL_CF | FL_PF | FL_AF | FL_ZF | FL_SF | FL_OF)

#ifdef __GLIBC__
#define LIBC_IS_GLIBC 1
#else
#define LIBC_IS_GLIBC 0
#endif

/* ------------------------------------------------------------------ */
/* a fake address space: one array at BASE */

#define FMEM_BASE 0x7ffff000ULL
#define FMEM_SIZE 256

struct fmem {
	uint8_t buf[FMEM_SIZE];
	int fail;
	uint64_t last_read;
};

static int fmem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fmem *m = ctx;

	m->last_read = addr;
	if (m->fail || addr < FMEM_BASE || addr + len > FMEM_BASE + FMEM_SIZE)
		return -1;
	memcpy(buf, m->buf + (addr - FMEM_BASE), len);
	return 0;
}

static int fmem_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct fmem *m = ctx;

	if (m->fail || addr < FMEM_BASE || addr + len > FMEM_BASE + FMEM_SIZE)
		return -1;
	memcpy(m->buf + (addr - FMEM_BASE), buf, len);
	return 0;
}

static struct fmem fm;
static const struct arch_mem mem = { fmem_read, fmem_write, &fm };

static void fmem_reset(void)
{
	memset(&fm, 0, sizeof(fm));
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(fm.buf + (addr - FMEM_BASE), &v, 8);
}

static uint64_t get64(uint64_t addr)
{
	uint64_t v;

	memcpy(&v, fm.buf + (addr - FMEM_BASE), 8);
	return v;
}

/* registers with a recognisable value everywhere */
static void regs_init(struct arch_regs *r)
{
	unsigned long long *p = (unsigned long long *)&r->r;
	size_t i;

	for (i = 0; i < sizeof(r->r) / sizeof(*p); i++)
		p[i] = 0x1111111111111111ULL * ((i % 15) + 1);
	r->r.rsp = FMEM_BASE + 128;
	r->r.eflags = FL_BASE;
}

#define CODE_ADDR 0x401000ULL
static char err[256];

/* analyse BYTES at CODE_ADDR; must succeed */
static void analyse_ok(struct arch_insn *insn, uint64_t addr,
		       const uint8_t *bytes, size_t n)
{
	err[0] = '\0';
	if (arch_insn_analyse(insn, addr, bytes, n, err, sizeof(err)))
		fail_msg("analyse failed: %s", err);
	assert_non_null(insn->ops);
}

/* analyse and emulate; returns emulate's result */
static int emulate(const uint8_t *bytes, size_t n, struct arch_regs *r,
		   const char *ops_name, size_t len)
{
	struct arch_insn insn;

	analyse_ok(&insn, CODE_ADDR, bytes, n);
	assert_string_equal(insn.ops->name, ops_name);
	assert_int_equal(insn.len, len);
	assert_non_null(insn.ops->emulate);
	assert_false(arch_insn_is_xol(&insn));
	return insn.ops->emulate(&insn, r, &mem);
}

#define EMU_OK(r, name, len, ...) do { \
	static const uint8_t b_[] = { __VA_ARGS__ }; \
	assert_int_equal(emulate(b_, sizeof(b_), r, name, len), 0); \
} while (0)

/* ------------------------------------------------------------------ */
/* push */

#define REG_OFF(name) offsetof(struct user_regs_struct, name)

static void check_push(const uint8_t *bytes, size_t n, size_t reg_off,
		       uint64_t val)
{
	struct arch_regs r, before;
	unsigned long long v = val;
	uint64_t sp;

	fmem_reset();
	regs_init(&r);
	memcpy((char *)&r.r + reg_off, &v, sizeof(v));
	sp = r.r.rsp;
	before = r;
	assert_int_equal(emulate(bytes, n, &r, "push", n), 0);
	assert_int_equal(r.r.rip, CODE_ADDR + n);
	assert_int_equal(r.r.rsp, sp - 8);
	assert_int_equal(get64(sp - 8), val);
	/* nothing else moved */
	r.r.rip = before.r.rip;
	r.r.rsp = before.r.rsp;
	assert_memory_equal(&r, &before, sizeof(r));
}

static void test_push_r12(void **state)
{
	static const uint8_t b[] = { 0x41, 0x54 };

	check_push(b, 2, REG_OFF(r12), 0x1122334455667788ULL);
	/* bytes on the stack, little-endian */
	assert_int_equal(fm.buf[120], 0x88);
	assert_int_equal(fm.buf[127], 0x11);
}

static void test_push_r13_r15_rbp(void **state)
{
	static const uint8_t r13[] = { 0x41, 0x55 }, r15[] = { 0x41, 0x57 },
			     rbp[] = { 0x55 }, rbx[] = { 0x53 };

	check_push(r13, 2, REG_OFF(r13), 0xdeadbeefcafef00dULL);
	check_push(r15, 2, REG_OFF(r15), 42);
	check_push(rbp, 1, REG_OFF(rbp), 0x7fffffffe000ULL);
	check_push(rbx, 1, REG_OFF(rbx), 0);
}

/* the int3 over "41 54" must resume at addr + 2, not addr + 1 */
static void test_push_rex_resumes_after_prefix(void **state)
{
	static const uint8_t b[] = { 0x41, 0x54, 0x55, 0x53 };
	struct arch_insn insn;
	struct arch_regs r;

	fmem_reset();
	regs_init(&r);
	analyse_ok(&insn, CODE_ADDR, b, sizeof(b));
	assert_int_equal(insn.len, 2);
	assert_string_equal(insn.text, "pushq %r12");
	assert_int_equal(insn.ops->emulate(&insn, &r, &mem), 0);
	assert_int_equal(r.r.rip, CODE_ADDR + 2);
}

static void test_push_rsp_pushes_old_value(void **state)
{
	struct arch_regs r;
	uint64_t sp;

	fmem_reset();
	regs_init(&r);
	sp = r.r.rsp;
	EMU_OK(&r, "push", 1, 0x54);
	assert_int_equal(get64(sp - 8), sp);
	assert_int_equal(r.r.rsp, sp - 8);
}

static void test_push_write_fault(void **state)
{
	static const uint8_t b[] = { 0x41, 0x54 };
	struct arch_regs r, before;

	fmem_reset();
	regs_init(&r);
	fm.fail = 1;
	before = r;
	assert_int_equal(emulate(b, 2, &r, "push", 2), -1);
	assert_memory_equal(&r, &before, sizeof(r));
}

/* ------------------------------------------------------------------ */
/* test */


/* RFLAGS after "test %rdi,%rdi" (48 85 ff) with RDI and FLAGS_IN */
static uint64_t flags_test_rdi(uint64_t rdi, uint64_t flags_in)
{
	struct arch_regs r, before;

	regs_init(&r);
	r.r.rdi = rdi;
	r.r.eflags = flags_in;
	before = r;
	EMU_OK(&r, "test", 3, 0x48, 0x85, 0xff);
	assert_int_equal(r.r.rip, CODE_ADDR + 3);
	/* only the flags and the pc changed */
	r.r.rip = before.r.rip;
	before.r.eflags = r.r.eflags;
	assert_memory_equal(&r, &before, sizeof(r));
	return r.r.eflags;
}

static void test_test_rdi_flags(void **state)
{
	/* zero: ZF, PF */
	assert_int_equal(flags_test_rdi(0, FL_BASE), 0x246);
	/* negative, low byte 0 (even parity): SF, PF */
	assert_int_equal(flags_test_rdi(0xffffffffffffff00ULL, FL_BASE), 0x286);
	/* negative, low byte 1 (odd parity): SF */
	assert_int_equal(flags_test_rdi(0x8000000000000001ULL, FL_BASE), 0x282);
	/* positive, low byte 3 (even parity): PF */
	assert_int_equal(flags_test_rdi(3, FL_BASE), 0x206);
	/* positive, low byte 1 (odd parity): nothing */
	assert_int_equal(flags_test_rdi(1, FL_BASE), 0x202);
	/* parity only looks at the low byte */
	assert_int_equal(flags_test_rdi(0x100, FL_BASE), 0x206);
	/* CF, OF, AF cleared; DF, IF and bit 1 kept */
	assert_int_equal(flags_test_rdi(1, FL_BASE | FL_DF | FL_ARITH),
			 FL_BASE | FL_DF);
	assert_int_equal(flags_test_rdi(0, FL_BASE | FL_DF | FL_ARITH),
			 FL_BASE | FL_DF | FL_ZF | FL_PF);
}

static void test_test_widths(void **state)
{
	struct arch_regs r;

	/* test %eax,%eax looks at 32 bits only */
	regs_init(&r);
	r.r.rax = 0xffffffff00000000ULL;
	EMU_OK(&r, "test", 2, 0x85, 0xc0);
	assert_int_equal(r.r.eflags, 0x246);
	assert_int_equal(r.r.rip, CODE_ADDR + 2);
	r.r.rax = 0x80000000ULL;
	EMU_OK(&r, "test", 2, 0x85, 0xc0);
	assert_int_equal(r.r.eflags, 0x286);

	/* test %ah,%ah */
	regs_init(&r);
	r.r.rax = 0x8000;
	EMU_OK(&r, "test", 2, 0x84, 0xe4);
	assert_int_equal(r.r.eflags, 0x282);
	/* test %al,%al on the same value: zero */
	EMU_OK(&r, "test", 2, 0x84, 0xc0);
	assert_int_equal(r.r.eflags, 0x246);

	/* test %sil,%sil (REX) */
	regs_init(&r);
	r.r.rsi = 0xff01;
	EMU_OK(&r, "test", 3, 0x40, 0x84, 0xf6);
	assert_int_equal(r.r.eflags, 0x202);
	assert_int_equal(r.r.rip, CODE_ADDR + 3);

	/* test %si,%di */
	regs_init(&r);
	r.r.rsi = 0xf0f0;
	r.r.rdi = 0x8f00;
	EMU_OK(&r, "test", 3, 0x66, 0x85, 0xf7);
	assert_int_equal(r.r.eflags, 0x286);

	/* test $0xfff,%r9d (glibc mmap's second instruction) */
	regs_init(&r);
	r.r.r9 = 0x1000;
	EMU_OK(&r, "test-imm", 7, 0x41, 0xf7, 0xc1, 0xff, 0x0f, 0x00, 0x00);
	assert_int_equal(r.r.eflags, 0x246);
	r.r.r9 = 0x1001;
	EMU_OK(&r, "test-imm", 7, 0x41, 0xf7, 0xc1, 0xff, 0x0f, 0x00, 0x00);
	assert_int_equal(r.r.eflags, 0x202);
}

/* ------------------------------------------------------------------ */
/* cmp */

/* the cmp's memory operand lives at this address of the fake memory */
#define CMP_TARGET (FMEM_BASE + 0x40)

/* "80 3d disp32 imm8" at ADDR with disp reaching CMP_TARGET */
static uint64_t flags_cmpb_rip(uint8_t memval, uint8_t imm, uint64_t flags_in)
{
	uint64_t addr = CMP_TARGET - 7 - 0x140201;
	uint8_t b[7] = { 0x80, 0x3d, 0x01, 0x02, 0x14, 0x00, imm };
	struct arch_insn insn;
	struct arch_regs r, before;

	fmem_reset();
	fm.buf[CMP_TARGET - FMEM_BASE] = memval;
	regs_init(&r);
	r.r.eflags = flags_in;
	before = r;
	analyse_ok(&insn, addr, b, sizeof(b));
	assert_string_equal(insn.ops->name, "cmp-rip");
	assert_int_equal(insn.len, 7);
	assert_int_equal(insn.rip_relative, 1);
	assert_int_equal(insn.disp_off, 2);
	assert_int_equal(insn.ops->emulate(&insn, &r, &mem), 0);
	/* rip-relative: from the end of the instruction */
	assert_int_equal(fm.last_read, CMP_TARGET);
	assert_int_equal(r.r.rip, addr + 7);
	r.r.rip = before.r.rip;
	before.r.eflags = r.r.eflags;
	assert_memory_equal(&r, &before, sizeof(r));
	return r.r.eflags;
}

static void test_cmpb_rip_flags(void **state)
{
	/* cmpb $0 (glibc's posix_memalign, memalign, valloc, close...) */
	assert_int_equal(flags_cmpb_rip(0, 0, FL_BASE), 0x246);
	assert_int_equal(flags_cmpb_rip(1, 0, FL_BASE), 0x202);
	assert_int_equal(flags_cmpb_rip(3, 0, FL_BASE | FL_ARITH), 0x206);
	assert_int_equal(flags_cmpb_rip(0x80, 0, FL_BASE), 0x282);
	/* equal operands */
	assert_int_equal(flags_cmpb_rip(1, 1, FL_BASE), 0x246);
	/* borrow: 0 - 1 = 0xff: CF, AF, SF, PF */
	assert_int_equal(flags_cmpb_rip(0, 1, FL_BASE), 0x297);
	/* signed overflow: 0x80 - 1 = 0x7f: OF, AF */
	assert_int_equal(flags_cmpb_rip(0x80, 1, FL_BASE), 0xa12);
	/* signed overflow the other way: 0x7f - 0xff(-1) = 0x80 */
	assert_int_equal(flags_cmpb_rip(0x7f, 0xff, FL_BASE),
			 FL_BASE | FL_CF | FL_SF | FL_OF);
	/* nibble borrow only: 0x10 - 1 = 0x0f: AF, PF */
	assert_int_equal(flags_cmpb_rip(0x10, 1, FL_BASE), 0x216);
	/* no nibble borrow: 0x21 - 0x10 = 0x11: PF */
	assert_int_equal(flags_cmpb_rip(0x21, 0x10, FL_BASE), 0x206);
	/* DF kept */
	assert_int_equal(flags_cmpb_rip(0, 0, FL_BASE | FL_DF), 0x646);
}

static uint64_t flags_cmp_at(const uint8_t *b, size_t n, const char *name,
			     uint64_t memval, uint64_t flags_in)
{
	struct arch_insn insn;
	struct arch_regs r;
	uint64_t addr = CODE_ADDR;

	fmem_reset();
	put64(CMP_TARGET, memval);
	regs_init(&r);
	r.r.eflags = flags_in;
	analyse_ok(&insn, addr, b, n);
	/* place the instruction so its rip-relative operand hits CMP_TARGET */
	if (insn.rip_relative) {
		addr = CMP_TARGET - insn.len - (uint64_t)insn.disp;
		analyse_ok(&insn, addr, b, n);
	} else {
		r.r.rdi = CMP_TARGET - 8;
		r.r.rax = 0;
	}
	assert_string_equal(insn.ops->name, name);
	assert_int_equal(insn.len, n);
	assert_int_equal(insn.ops->emulate(&insn, &r, &mem), 0);
	assert_int_equal(fm.last_read, CMP_TARGET);
	assert_int_equal(r.r.rip, addr + n);
	return r.r.eflags;
}

static void test_cmp_imm_forms(void **state)
{
	/* cmpl $0x80000000,disp(%rip): imm32 after disp32 */
	static const uint8_t cmpl[] = { 0x81, 0x3d, 0x00, 0x01, 0x00, 0x00,
					0x00, 0x00, 0x00, 0x80 };
	/* cmpq $-1,disp(%rip): imm8 sign-extended to 64 bits */
	static const uint8_t cmpq8[] = { 0x48, 0x83, 0x3d, 0xf0, 0xff, 0xff,
					 0xff, 0xff };
	/* cmpq $0xffffffff80000000,disp(%rip): imm32 sign-extended */
	static const uint8_t cmpq32[] = { 0x48, 0x81, 0x3d, 0x10, 0x00, 0x00,
					  0x00, 0x00, 0x00, 0x00, 0x80 };
	/* cmpl $-1,disp(%rip): imm8 sign-extended to 32 bits */
	static const uint8_t cmpl8[] = { 0x83, 0x3d, 0x10, 0x00, 0x00, 0x00,
					 0xff };
	/* cmpb $0x0,0x8(%rdi) */
	static const uint8_t cmpb_rdi[] = { 0x80, 0x7f, 0x08, 0x00 };
	/* cmpq $0x0,0x8(%rdi,%rax,8) with rax = 0 */
	static const uint8_t cmpq_sib[] = { 0x48, 0x83, 0x7c, 0xc7, 0x08, 0x00 };

	/* 0 - 0x80000000: CF, SF, OF, PF */
	assert_int_equal(flags_cmp_at(cmpl, sizeof(cmpl), "cmp-rip", 0, FL_BASE),
			 0xa87);
	assert_int_equal(flags_cmp_at(cmpl, sizeof(cmpl), "cmp-rip",
				      0xffffffff80000000ULL, FL_BASE), 0x246);
	/* ~0 - ~0 */
	assert_int_equal(flags_cmp_at(cmpq8, sizeof(cmpq8), "cmp-rip", ~0ULL,
				      FL_BASE), 0x246);
	/* 0 - ~0 = 1: CF, AF */
	assert_int_equal(flags_cmp_at(cmpq8, sizeof(cmpq8), "cmp-rip", 0,
				      FL_BASE), 0x213);
	/* only equal if the immediate was sign-extended to 64 bits */
	assert_int_equal(flags_cmp_at(cmpq32, sizeof(cmpq32), "cmp-rip",
				      0xffffffff80000000ULL, FL_BASE), 0x246);
	assert_int_equal(flags_cmp_at(cmpq32, sizeof(cmpq32), "cmp-rip",
				      0x80000000ULL, FL_BASE) & FL_ZF, 0);
	/* 32-bit: the high half of memory is not looked at */
	assert_int_equal(flags_cmp_at(cmpl8, sizeof(cmpl8), "cmp-rip",
				      0x12345678ffffffffULL, FL_BASE), 0x246);
	/* base register */
	assert_int_equal(flags_cmp_at(cmpb_rdi, sizeof(cmpb_rdi), "cmp-mem",
				      0, FL_BASE), 0x246);
	assert_int_equal(flags_cmp_at(cmpb_rdi, sizeof(cmpb_rdi), "cmp-mem",
				      0xff01, FL_BASE), 0x202);
	/* base + index * 8 + disp: rdi + 0 + 8 (rax = 0) */
	assert_int_equal(flags_cmp_at(cmpq_sib, sizeof(cmpq_sib), "cmp-mem",
				      0, FL_BASE), 0x246);
	assert_int_equal(flags_cmp_at(cmpq_sib, sizeof(cmpq_sib), "cmp-mem",
				      0x8000000000000000ULL, FL_BASE), 0x286);
}

static void test_cmp_index_scale(void **state)
{
	/* cmpq $0x5,(%rdi,%rax,8) */
	static const uint8_t b[] = { 0x48, 0x83, 0x3c, 0xc7, 0x05 };
	struct arch_insn insn;
	struct arch_regs r;

	fmem_reset();
	put64(FMEM_BASE + 0x10 + 3 * 8, 5);
	regs_init(&r);
	r.r.rdi = FMEM_BASE + 0x10;
	r.r.rax = 3;
	analyse_ok(&insn, CODE_ADDR, b, sizeof(b));
	assert_string_equal(insn.ops->name, "cmp-mem");
	assert_int_equal(insn.ops->emulate(&insn, &r, &mem), 0);
	assert_int_equal(fm.last_read, FMEM_BASE + 0x28);
	assert_int_equal(r.r.eflags, 0x246);
}

static void test_cmp_fs_segment(void **state)
{
	/* cmpq $0x0,%fs:0x10 */
	static const uint8_t b[] = { 0x64, 0x48, 0x83, 0x3c, 0x25, 0x10, 0x00,
				     0x00, 0x00, 0x00 };
	struct arch_insn insn;
	struct arch_regs r;

	fmem_reset();
	regs_init(&r);
	r.r.fs_base = FMEM_BASE + 0x20;
	put64(FMEM_BASE + 0x30, 1);
	analyse_ok(&insn, CODE_ADDR, b, sizeof(b));
	assert_string_equal(insn.ops->name, "cmp-mem");
	assert_int_equal(insn.ops->emulate(&insn, &r, &mem), 0);
	assert_int_equal(fm.last_read, FMEM_BASE + 0x30);
	assert_int_equal(r.r.eflags, 0x202);
}

static void test_cmp_read_fault(void **state)
{
	static const uint8_t b[] = { 0x80, 0x3d, 0x01, 0x02, 0x14, 0x00, 0x00 };
	struct arch_insn insn;
	struct arch_regs r, before;

	fmem_reset();
	fm.fail = 1;
	regs_init(&r);
	before = r;
	analyse_ok(&insn, CODE_ADDR, b, sizeof(b));
	assert_int_equal(insn.ops->emulate(&insn, &r, &mem), -1);
	assert_memory_equal(&r, &before, sizeof(r));
}

static void test_cmp_reg_forms(void **state)
{
	struct arch_regs r;

	/* cmp %rsi,%rdi: rdi - rsi */
	regs_init(&r);
	r.r.rdi = 1;
	r.r.rsi = 2;
	EMU_OK(&r, "cmp", 3, 0x48, 0x39, 0xf7);
	assert_int_equal(r.r.eflags, 0x297);
	/* cmp $0x7,%eax (83 f8 07) */
	regs_init(&r);
	r.r.rax = 0xffffffff00000007ULL;
	EMU_OK(&r, "cmp-imm", 3, 0x83, 0xf8, 0x07);
	assert_int_equal(r.r.eflags, 0x246);
	/* cmp $0x1,%al (3c 01) */
	regs_init(&r);
	r.r.rax = 0x100;
	EMU_OK(&r, "cmp-imm", 2, 0x3c, 0x01);
	assert_int_equal(r.r.eflags, 0x297);
}

/* ------------------------------------------------------------------ */
/* flags against the real CPU */

#define NATIVE(insn, T, a, b, fin) ({ \
	uint64_t f_; T a_ = (T)(a), b_ = (T)(b); \
	__asm__ volatile("lea -128(%%rsp), %%rsp\n\t" \
			 "pushq %[fi]\n\tpopfq\n\t" \
			 insn " %[bb], %[aa]\n\t" \
			 "pushfq\n\tpopq %[f]\n\t" \
			 "lea 128(%%rsp), %%rsp" \
			 : [f] "=&r"(f_) \
			 : [fi] "r"((uint64_t)(fin)), [aa] "r"(a_), [bb] "r"(b_) \
			 : "cc", "memory"); \
	f_; })

static uint64_t native(int is_test, int size, uint64_t a, uint64_t b,
		       uint64_t fin)
{
	switch (size * 2 + is_test) {
	case 2: return NATIVE("cmpb", uint8_t, a, b, fin);
	case 3: return NATIVE("testb", uint8_t, a, b, fin);
	case 4: return NATIVE("cmpw", uint16_t, a, b, fin);
	case 5: return NATIVE("testw", uint16_t, a, b, fin);
	case 8: return NATIVE("cmpl", uint32_t, a, b, fin);
	case 9: return NATIVE("testl", uint32_t, a, b, fin);
	case 16: return NATIVE("cmpq", uint64_t, a, b, fin);
	case 17: return NATIVE("testq", uint64_t, a, b, fin);
	}
	fail();
	return 0;
}

static void test_flags_match_cpu(void **state)
{
	static const uint64_t vals[] = {
		0, 1, 2, 0xf, 0x10, 0x11, 0x7f, 0x80, 0x81, 0xff, 0x100,
		0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
		0x100000000ULL, 0x7fffffffffffffffULL, 0x8000000000000000ULL,
		0xffffffffffffffffULL, 0x123456789abcdef0ULL,
		0xfedcba9876543210ULL, 0x5555555555555555ULL,
	};
	/* rdi OP rsi at every width */
	static const struct {
		int is_test, size;
		uint8_t b[3];
		size_t n;
	} forms[] = {
		{ 0, 1, { 0x40, 0x38, 0xf7 }, 3 }, { 1, 1, { 0x40, 0x84, 0xf7 }, 3 },
		{ 0, 2, { 0x66, 0x39, 0xf7 }, 3 }, { 1, 2, { 0x66, 0x85, 0xf7 }, 3 },
		{ 0, 4, { 0x39, 0xf7 }, 2 },       { 1, 4, { 0x85, 0xf7 }, 2 },
		{ 0, 8, { 0x48, 0x39, 0xf7 }, 3 }, { 1, 8, { 0x48, 0x85, 0xf7 }, 3 },
	};
	static const uint64_t fins[] = { FL_BASE, FL_BASE | FL_ARITH };
	size_t f, i, j, k, checked = 0;

	for (f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		struct arch_insn insn;

		analyse_ok(&insn, CODE_ADDR, forms[f].b, forms[f].n);
		assert_string_equal(insn.ops->name,
				    forms[f].is_test ? "test" : "cmp");
		assert_int_equal(insn.size, forms[f].size);
		for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		for (j = 0; j < sizeof(vals) / sizeof(vals[0]); j++)
		for (k = 0; k < 2; k++) {
			struct arch_regs r;
			uint64_t want, mask = ~0ULL;

			regs_init(&r);
			r.r.rdi = vals[i];
			r.r.rsi = vals[j];
			r.r.eflags = fins[k];
			assert_int_equal(insn.ops->emulate(&insn, &r, &mem), 0);
			want = native(forms[f].is_test, forms[f].size, vals[i],
				      vals[j], fins[k]);
			if (forms[f].is_test)
				mask &= ~(uint64_t)FL_AF;	/* undefined */
			if ((r.r.eflags & mask) != (want & mask))
				fail_msg("%s%d %#llx, %#llx (flags in %#llx): "
					 "emulated %#llx, cpu %#llx",
					 forms[f].is_test ? "test" : "cmp",
					 forms[f].size * 8,
					 (unsigned long long)vals[i],
					 (unsigned long long)vals[j],
					 (unsigned long long)fins[k],
					 (unsigned long long)r.r.eflags,
					 (unsigned long long)want);
			/* the AF we leave for test is cleared */
			if (forms[f].is_test)
				assert_int_equal(r.r.eflags & FL_AF, 0);
			checked++;
		}
	}
	assert_int_equal(checked, 8 * 24 * 24 * 2);
}

/* ------------------------------------------------------------------ */
/* mov, nop, endbr64, ret, jmp */

static void test_mov_r64(void **state)
{
	struct arch_regs r, before;

	/* mov %rsi,%rax (reallocarray) */
	regs_init(&r);
	r.r.rsi = 0x8877665544332211ULL;
	before = r;
	EMU_OK(&r, "mov", 3, 0x48, 0x89, 0xf0);
	assert_int_equal(r.r.rax, 0x8877665544332211ULL);
	assert_int_equal(r.r.rip, CODE_ADDR + 3);
	r.r.rip = before.r.rip;
	before.r.rax = r.r.rax;
	assert_memory_equal(&r, &before, sizeof(r));
	/* mov %rdi,%rax (calloc's second instruction); the 8b form too */
	regs_init(&r);
	r.r.rdi = 5;
	EMU_OK(&r, "mov", 3, 0x48, 0x89, 0xf8);
	assert_int_equal(r.r.rax, 5);
	EMU_OK(&r, "mov", 3, 0x4c, 0x8b, 0xe0);	/* mov %rax,%r12 */
	assert_int_equal(r.r.r12, 5);
}

static void test_mov_r32_zero_extends(void **state)
{
	struct arch_regs r;

	/* mov %esi,%eax */
	regs_init(&r);
	r.r.rax = 0xffffffffffffffffULL;
	r.r.rsi = 0x1234567887654321ULL;
	EMU_OK(&r, "mov", 2, 0x89, 0xf0);
	assert_int_equal(r.r.rax, 0x87654321ULL);
	assert_int_equal(r.r.rip, CODE_ADDR + 2);
	/* mov %ecx,%r10d (glibc mmap) */
	regs_init(&r);
	r.r.rcx = 0xaaaaaaaa00000022ULL;
	EMU_OK(&r, "mov", 3, 0x41, 0x89, 0xca);
	assert_int_equal(r.r.r10, 0x22);
	assert_int_equal(r.r.rip, CODE_ADDR + 3);
	/* mov %si,%ax and mov %sil,%ah merge */
	regs_init(&r);
	r.r.rax = 0xffffffffffffffffULL;
	r.r.rsi = 0x1234;
	EMU_OK(&r, "mov", 3, 0x66, 0x89, 0xf0);
	assert_int_equal(r.r.rax, 0xffffffffffff1234ULL);
	EMU_OK(&r, "mov", 2, 0x88, 0xd4);	/* mov %dl,%ah */
	assert_int_equal(r.r.rax, ((0xffffffffffff0034ULL |
				    ((r.r.rdx & 0xff) << 8))));
}

static void test_mov_imm(void **state)
{
	struct arch_regs r;

	regs_init(&r);
	/* mov $0xb,%eax (munmap): zero-extends */
	EMU_OK(&r, "mov-imm", 5, 0xb8, 0x0b, 0x00, 0x00, 0x00);
	assert_int_equal(r.r.rax, 0xb);
	/* mov $-1,%rax: sign-extends */
	EMU_OK(&r, "mov-imm", 7, 0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff);
	assert_int_equal(r.r.rax, ~0ULL);
	/* movabs */
	EMU_OK(&r, "mov-imm", 10, 0x48, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44,
	       0x33, 0x22, 0x11);
	assert_int_equal(r.r.rax, 0x1122334455667788ULL);
	/* mov $0xffffffff,%edx */
	EMU_OK(&r, "mov-imm", 5, 0xba, 0xff, 0xff, 0xff, 0xff);
	assert_int_equal(r.r.rdx, 0xffffffffULL);
	assert_int_equal(r.r.rip, CODE_ADDR + 5);
}

/* CODE analysed with the fast path (x86_fast_analyse) and by capstone
 * alone: the same result, field by field; 1 if the fast path took it. */
static int analyse_both(const uint8_t *code, size_t len)
{
	struct arch_insn a, b;
	char ea[256], eb[256];
	uint8_t buf[16];
	int ra, rb;

	memset(buf, 0x90, sizeof(buf));
	memcpy(buf, code, len);
	x86_fast_off = 0;
	ra = arch_insn_analyse(&a, CODE_ADDR, buf, sizeof(buf), ea, sizeof(ea));
	x86_fast_off = 1;
	rb = arch_insn_analyse(&b, CODE_ADDR, buf, sizeof(buf), eb, sizeof(eb));
	x86_fast_off = 0;
	assert_int_equal(ra, rb);
	if (ra)
		return 0;
	if (a.ops != b.ops || a.len != b.len || memcmp(a.bytes, b.bytes, 16) ||
	    a.reg != b.reg || a.reg2 != b.reg2 || a.size != b.size ||
	    a.imm != b.imm || a.disp != b.disp || a.disp_off != b.disp_off ||
	    a.disp_size != b.disp_size || a.rip_relative != b.rip_relative ||
	    strcmp(a.text, b.text))
		fail_msg("%02x %02x %02x: fast '%s' len %u reg %d,%d size %d imm %lld, "
			 "capstone '%s' len %u reg %d,%d size %d imm %lld", buf[0],
			 buf[1], buf[2], a.text, a.len, a.reg, a.reg2, a.size,
			 (long long)a.imm, b.text, b.len, b.reg, b.reg2, b.size,
			 (long long)b.imm);
	memset(&a, 0, sizeof(a));
	return x86_fast_analyse(&a, buf, sizeof(buf));
}

/* What breakpoints of a launch sit on, analysed without capstone: endbr64,
 * ret, push r64, mov $imm32 to r32, mov between r32/r64, with every
 * register and REX combination, as capstone would. */
static void test_fast_analysis(void **state)
{
	static const uint32_t imms[] = { 0, 0x3b, 0x142, 0x7fffffff, 0x80000000,
					 0xffffffff };
	uint8_t c[8];
	unsigned fast = 0, op, rex, m, i;

	(void)state;
	fast += analyse_both((const uint8_t *)"\xf3\x0f\x1e\xfa", 4);
	fast += analyse_both((const uint8_t *)"\xc3", 1);
	for (op = 0x50; op < 0x58; op++) {
		c[0] = (uint8_t)op;
		fast += analyse_both(c, 1);
		c[0] = 0x41, c[1] = (uint8_t)op;
		fast += analyse_both(c, 2);
	}
	for (op = 0xb8; op < 0xc0; op++)
		for (i = 0; i < sizeof(imms) / sizeof(imms[0]); i++) {
			c[0] = 0x41, c[1] = (uint8_t)op;
			memcpy(c + 2, &imms[i], 4);
			fast += analyse_both(c + 1, 5);
			fast += analyse_both(c, 6);
		}
	for (op = 0x89; op <= 0x8b; op += 2)
		for (rex = 0x3f; rex < 0x50; rex++)
			for (m = 0xc0; m < 0x100; m++) {
				unsigned k = 0;

				if (rex >= 0x40)
					c[k++] = (uint8_t)rex;
				c[k++] = (uint8_t)op;
				c[k++] = (uint8_t)m;
				fast += analyse_both(c, k);
			}
	/* endbr64, ret, push, mov $imm, mov without REX and with the 8 REX
	 * prefixes without X (with X: capstone's) */
	assert_int_equal(fast, 1 + 1 + 16 + 96 + 2 * (64 + 8 * 64));
}

static void test_endbr64_and_nops(void **state)
{
	struct arch_regs r, before;

	fmem_reset();
	regs_init(&r);
	before = r;
	EMU_OK(&r, "nop", 4, 0xf3, 0x0f, 0x1e, 0xfa);
	assert_int_equal(r.r.rip, CODE_ADDR + 4);
	r.r.rip = before.r.rip;
	assert_memory_equal(&r, &before, sizeof(r));
	EMU_OK(&r, "nop", 1, 0x90);
	assert_int_equal(r.r.rip, CODE_ADDR + 1);
	EMU_OK(&r, "nop", 2, 0x66, 0x90);
	assert_int_equal(r.r.rip, CODE_ADDR + 2);
	EMU_OK(&r, "nop", 4, 0x0f, 0x1f, 0x40, 0x00);
	assert_int_equal(r.r.rip, CODE_ADDR + 4);
	EMU_OK(&r, "nop", 10, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00,
	       0x00, 0x00);
	assert_int_equal(r.r.rip, CODE_ADDR + 10);
	/* no memory access for the nopw operand */
	assert_int_equal(fm.last_read, 0);
}

static void test_ret(void **state)
{
	struct arch_regs r;
	uint64_t sp;

	fmem_reset();
	regs_init(&r);
	sp = r.r.rsp;
	put64(sp, 0x401234);
	EMU_OK(&r, "ret", 1, 0xc3);
	assert_int_equal(r.r.rip, 0x401234);
	assert_int_equal(r.r.rsp, sp + 8);
	/* rep ret */
	put64(sp + 8, 0x405678);
	EMU_OK(&r, "ret", 2, 0xf3, 0xc3);
	assert_int_equal(r.r.rip, 0x405678);
	assert_int_equal(r.r.rsp, sp + 16);
	/* a failed read leaves the registers alone */
	fm.fail = 1;
	{
		static const uint8_t c3[] = { 0xc3 };
		struct arch_regs before = r;

		assert_int_equal(emulate(c3, 1, &r, "ret", 1), -1);
		assert_memory_equal(&r, &before, sizeof(r));
	}
}

static void test_jmp(void **state)
{
	struct arch_regs r;

	fmem_reset();
	regs_init(&r);
	EMU_OK(&r, "jmp", 2, 0xeb, 0x05);
	assert_int_equal(r.r.rip, CODE_ADDR + 7);
	EMU_OK(&r, "jmp", 2, 0xeb, 0xfe);
	assert_int_equal(r.r.rip, CODE_ADDR);
	EMU_OK(&r, "jmp", 5, 0xe9, 0x00, 0x01, 0x00, 0x00);
	assert_int_equal(r.r.rip, CODE_ADDR + 5 + 0x100);
	EMU_OK(&r, "jmp", 5, 0xe9, 0xfb, 0xef, 0xff, 0xff);
	assert_int_equal(r.r.rip, CODE_ADDR - 0x1000);
	/* bnd jmp */
	EMU_OK(&r, "jmp", 6, 0xf2, 0xe9, 0x00, 0x00, 0x00, 0x00);
	assert_int_equal(r.r.rip, CODE_ADDR + 6);
	/* jmp *%rax */
	r.r.rax = 0x4abcde;
	EMU_OK(&r, "jmp-reg", 2, 0xff, 0xe0);
	assert_int_equal(r.r.rip, 0x4abcde);
	/* jmp *disp(%rip) (a PLT entry) */
	{
		static const uint8_t b[] = { 0xff, 0x25, 0x00, 0x01, 0x00, 0x00 };
		struct arch_insn insn;
		uint64_t addr = FMEM_BASE + 0x20 - 6 - 0x100;

		put64(FMEM_BASE + 0x20, 0x7f0012345678ULL);
		analyse_ok(&insn, addr, b, sizeof(b));
		assert_string_equal(insn.ops->name, "jmp-mem");
		assert_int_equal(insn.ops->emulate(&insn, &r, &mem), 0);
		assert_int_equal(r.r.rip, 0x7f0012345678ULL);
		/* a branch has no out-of-line form */
		{
			uint8_t buf[ARCH_XOL_SLOT_SIZE];

			assert_int_equal(arch_xol_build(&insn, 0x7f0000000000ULL,
							buf, err, sizeof(err)), -1);
		}
	}
}

/* ------------------------------------------------------------------ */
/* out-of-line slots */

#define SLOT 0x7f1234560040ULL

/*
 * Build the slot for BYTES at ADDR and decode it back: the instruction
 * (returned in *SLOT_INSN, an array of 2 to cs_free) then jmp *0(%rip) and the
 * absolute address ADDR + len.
 */
static void xol_check(const uint8_t *bytes, size_t n, uint64_t addr,
		      csh h, cs_insn **slot_insn, struct arch_insn *insn)
{
	uint8_t buf[ARCH_XOL_SLOT_SIZE];
	cs_insn *ci;
	uint64_t back;
	size_t count;

	analyse_ok(insn, addr, bytes, n);
	assert_true(arch_insn_is_xol(insn));
	assert_string_equal(insn->ops->name, "xol");
	assert_int_equal(insn->len, n);
	if (arch_xol_build(insn, SLOT, buf, err, sizeof(err)))
		fail_msg("xol build failed: %s", err);

	count = cs_disasm(h, buf, insn->len + 6, SLOT, 2, &ci);
	assert_int_equal(count, 2);
	assert_int_equal(ci[0].size, n);
	assert_int_equal(ci[1].size, 6);
	/* jmp *0(%rip) */
	assert_int_equal(ci[1].id, X86_INS_JMP);
	assert_int_equal(ci[1].detail->x86.op_count, 1);
	assert_int_equal(ci[1].detail->x86.operands[0].type, X86_OP_MEM);
	assert_int_equal(ci[1].detail->x86.operands[0].mem.base, X86_REG_RIP);
	assert_int_equal(ci[1].detail->x86.operands[0].mem.disp, 0);
	memcpy(&back, buf + n + 6, 8);
	assert_int_equal(back, addr + n);
	*slot_insn = ci;
}

static csh cs_handle(void)
{
	csh h;

	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &h), CS_ERR_OK);
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	return h;
}

static void test_xol_plain(void **state)
{
	static const uint8_t sub[] = { 0x48, 0x83, 0xec, 0x18 };
	static const uint8_t fsmov[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28,
					 0x00, 0x00, 0x00 };
	/* mul %rdx (reallocarray's second instruction) */
	static const uint8_t mul[] = { 0x48, 0xf7, 0xe2 };
	struct arch_insn insn;
	csh h = cs_handle();
	cs_insn *ci;
	uint8_t buf[ARCH_XOL_SLOT_SIZE];

	xol_check(sub, sizeof(sub), CODE_ADDR, h, &ci, &insn);
	assert_int_equal(ci->id, X86_INS_SUB);
	assert_memory_equal(ci->bytes, sub, sizeof(sub));
	assert_int_equal(insn.rip_relative, 0);
	cs_free(ci, 2);

	xol_check(fsmov, sizeof(fsmov), CODE_ADDR + 0x10, h, &ci, &insn);
	assert_int_equal(ci->id, X86_INS_MOV);
	assert_memory_equal(ci->bytes, fsmov, sizeof(fsmov));
	cs_free(ci, 2);

	xol_check(mul, sizeof(mul), CODE_ADDR + 0x20, h, &ci, &insn);
	assert_int_equal(ci->id, X86_INS_MUL);
	cs_free(ci, 2);

	/* the rest of the slot is int3 padding */
	analyse_ok(&insn, CODE_ADDR, sub, sizeof(sub));
	assert_int_equal(arch_xol_build(&insn, SLOT, buf, err, sizeof(err)), 0);
	assert_int_equal(buf[4 + 14], 0xcc);
	assert_int_equal(buf[ARCH_XOL_SLOT_SIZE - 1], 0xcc);
	cs_close(&h);
}

/* rip-relative BYTES at ADDR: the slot's copy reaches the same target */
static void check_xol_rip(const uint8_t *bytes, size_t n, uint64_t addr,
			  unsigned int id)
{
	struct arch_insn insn;
	csh h = cs_handle();
	cs_insn *ci;
	const cs_x86 *x;
	uint64_t target;
	int32_t disp;

	memcpy(&disp, bytes + n - 4, 4);
	target = addr + n + (int64_t)disp;
	xol_check(bytes, n, addr, h, &ci, &insn);
	assert_int_equal(insn.rip_relative, 1);
	assert_int_equal(insn.disp_size, 4);
	assert_int_equal(insn.disp_off, n - 4);
	assert_int_equal(ci->id, id);
	x = &ci->detail->x86;
	assert_int_equal(x->op_count, 2);
	assert_int_equal(x->operands[1].type, X86_OP_MEM);
	assert_int_equal(x->operands[1].mem.base, X86_REG_RIP);
	assert_int_equal(SLOT + n + x->operands[1].mem.disp, target);
	/* the opcode and register bytes are unchanged */
	assert_memory_equal(ci->bytes, bytes, n - 4);
	cs_free(ci, 2);
	cs_close(&h);
}

static void test_xol_rip_relative(void **state)
{
	/* mov 0x140201(%rip),%rax */
	static const uint8_t mov[] = { 0x48, 0x8b, 0x05, 0x01, 0x02, 0x14, 0x00 };
	/* lea -0x1234(%rip),%rdi */
	static const uint8_t lea[] = { 0x48, 0x8d, 0x3d, 0xcc, 0xed, 0xff, 0xff };

	/* a library near the slot */
	check_xol_rip(mov, sizeof(mov), 0x7f1234400000ULL, X86_INS_MOV);
	check_xol_rip(lea, sizeof(lea), 0x7f1234400000ULL, X86_INS_LEA);
	/* slot below the code */
	check_xol_rip(mov, sizeof(mov), SLOT + 0x7f000000ULL, X86_INS_MOV);
	/* code right below the slot, negative displacement in the slot */
	check_xol_rip(lea, sizeof(lea), SLOT - 0x1000, X86_INS_LEA);
}

static void test_xol_rip_with_imm(void **state)
{
	/* movl $0xa,0x10(%rip): the displacement is followed by an imm32 */
	static const uint8_t b[] = { 0xc7, 0x05, 0x10, 0x00, 0x00, 0x00,
				     0x0a, 0x00, 0x00, 0x00 };
	struct arch_insn insn;
	csh h = cs_handle();
	cs_insn *ci;
	uint64_t addr = 0x7f1234500000ULL;

	xol_check(b, sizeof(b), addr, h, &ci, &insn);
	assert_int_equal(insn.disp_off, 2);
	assert_int_equal(ci->detail->x86.operands[0].mem.base, X86_REG_RIP);
	assert_int_equal(SLOT + sizeof(b) + ci->detail->x86.operands[0].mem.disp,
			 addr + sizeof(b) + 0x10);
	assert_int_equal(ci->detail->x86.operands[1].imm, 0xa);
	cs_free(ci, 2);
	cs_close(&h);
}

static void test_xol_emulated_cmp_rip(void **state)
{
	/* an emulated rip-relative cmp can be built out of line too */
	static const uint8_t b[] = { 0x80, 0x3d, 0x01, 0x02, 0x14, 0x00, 0x00 };
	struct arch_insn insn;
	uint8_t buf[ARCH_XOL_SLOT_SIZE];
	int32_t d;
	uint64_t addr = 0x7f1234400000ULL;

	analyse_ok(&insn, addr, b, sizeof(b));
	assert_int_equal(arch_xol_build(&insn, SLOT, buf, err, sizeof(err)), 0);
	memcpy(&d, buf + 2, 4);
	assert_int_equal(SLOT + 7 + (int64_t)d, addr + 7 + 0x140201);
	assert_int_equal(buf[6], 0x00);
}

static void test_xol_rip_out_of_range(void **state)
{
	static const uint8_t mov[] = { 0x48, 0x8b, 0x05, 0x01, 0x02, 0x14, 0x00 };
	struct arch_insn insn;
	uint8_t buf[ARCH_XOL_SLOT_SIZE];

	analyse_ok(&insn, 0x400000, mov, sizeof(mov));
	err[0] = '\0';
	assert_int_equal(arch_xol_build(&insn, 0x7f0000000000ULL, buf, err,
					sizeof(err)), -1);
	assert_non_null(strstr(err, "out of reach"));
	assert_non_null(strstr(err, "0x400000"));
	/* just in reach / just out of reach */
	analyse_ok(&insn, 0x400000, mov, sizeof(mov));
	assert_int_equal(arch_xol_build(&insn, 0x400000 + 0x140201 + 0x80000000ULL,
					buf, err, sizeof(err)), 0);
	assert_int_equal(arch_xol_build(&insn, 0x400000 + 0x140201 + 0x80000001ULL,
					buf, err, sizeof(err)), -1);
}

/* run slots on this CPU: the rewritten instruction, then the jump back */
static void test_xol_executes(void **state)
{
	/* mov 0x1000-7(%rip),%rax; ret  and  lea 0x1000-7(%rip),%rax; ret */
	static const uint8_t mov[] = { 0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0x00,
				       0xc3 };
	static const uint8_t lea[] = { 0x48, 0x8d, 0x05, 0xf9, 0x0f, 0x00, 0x00,
				       0xc3 };
	const uint8_t *const codes[] = { mov, lea };
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *map, *code, *slot;
	struct arch_insn insn;
	uint64_t (*fn)(void);
	int k;

	/* code page, data page, slot page */
	map = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	code = map;
	slot = map + 2 * pg + 64;
	memcpy(map + 0x1000, "\x88\x77\x66\x55\x44\x33\x22\x11", 8);
	for (k = 0; k < 2; k++) {
		assert_int_equal(mprotect(map, 3 * pg, PROT_READ | PROT_WRITE), 0);
		memcpy(code, codes[k], 8);
		analyse_ok(&insn, (uint64_t)code, code, 8);
		assert_true(arch_insn_is_xol(&insn));
		assert_int_equal(arch_xol_build(&insn, (uint64_t)slot, slot, err,
						sizeof(err)), 0);
		assert_int_equal(mprotect(map, 3 * pg, PROT_READ | PROT_EXEC), 0);
		fn = (uint64_t (*)(void))(uintptr_t)slot;
		if (k == 0)
			assert_int_equal(fn(), 0x1122334455667788ULL);
		else
			assert_int_equal(fn(), (uint64_t)(map + 0x1000));
	}
	munmap(map, 3 * pg);
}

static void test_xol_fixup_pc(void **state)
{
	static const uint8_t sub[] = { 0x48, 0x83, 0xec, 0x18 };
	struct arch_insn insn;

	analyse_ok(&insn, CODE_ADDR, sub, sizeof(sub));
	assert_int_equal(arch_xol_fixup_pc(&insn, SLOT, SLOT), CODE_ADDR);
	assert_int_equal(arch_xol_fixup_pc(&insn, SLOT, SLOT + 4), CODE_ADDR + 4);
	/* anything past the instruction is the jump back */
	assert_int_equal(arch_xol_fixup_pc(&insn, SLOT, SLOT + 10), CODE_ADDR + 4);
	/* not in the slot: unchanged */
	assert_int_equal(arch_xol_fixup_pc(&insn, SLOT, 0x1234), 0x1234);
	assert_int_equal(arch_xol_fixup_pc(&insn, SLOT, SLOT + ARCH_XOL_SLOT_SIZE),
			 SLOT + ARCH_XOL_SLOT_SIZE);
}

/* ------------------------------------------------------------------ */
/* refusals */

static void refuse(const uint8_t *b, size_t n, const char *what)
{
	struct arch_insn insn;

	err[0] = '\0';
	assert_int_equal(arch_insn_analyse(&insn, CODE_ADDR, b, n, err,
					   sizeof(err)), -1);
	assert_null(insn.ops);
	if (!strstr(err, what))
		fail_msg("message \"%s\" does not mention \"%s\"", err, what);
}

#define REFUSE(what, ...) do { \
	static const uint8_t b_[] = { __VA_ARGS__ }; \
	refuse(b_, sizeof(b_), what); \
} while (0)

static void test_refuse_call_rel32(void **state)
{
	REFUSE("call", 0xe8, 0x00, 0x00, 0x00, 0x00);
	REFUSE("a call", 0xe8, 0x10, 0x00, 0x00, 0x00);
}

static void test_refuse_jz_rel32(void **state)
{
	REFUSE("je", 0x0f, 0x84, 0x00, 0x00, 0x00, 0x00);
	REFUSE("jump", 0x0f, 0x84, 0x00, 0x00, 0x00, 0x00);
}

static void test_refuse_others(void **state)
{
	REFUSE("jne", 0x75, 0x10);			/* jne rel8 */
	REFUSE("callq *%rax", 0xff, 0xd0);		/* call *%rax */
	REFUSE("loop", 0xe2, 0xfe);
	REFUSE("jrcxz", 0xe3, 0x00);
	REFUSE("ret", 0xc2, 0x08, 0x00);		/* ret $8 */
	REFUSE("int3", 0xcc);
	REFUSE("int", 0xcd, 0x80);
	REFUSE("syscall", 0x0f, 0x05);
	REFUSE("sysenter", 0x0f, 0x34);
	REFUSE("iret", 0x48, 0xcf);
	REFUSE("xbegin", 0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00);
	REFUSE("ud2", 0x0f, 0x0b);
	REFUSE("hlt", 0xf4);				/* privileged */
	REFUSE("eip-relative", 0x67, 0x48, 0x8b, 0x05, 0x01, 0x02, 0x03, 0x04);
	REFUSE("jmp", 0x66, 0xe9, 0x00, 0x00);		/* jmpw rel16 */
	REFUSE("cannot decode", 0x06);			/* push %es: not in 64-bit */
	REFUSE("06", 0x06);
	REFUSE("cannot decode", 0x48, 0x8b);		/* truncated */
	refuse(NULL, 0, "cannot decode");
}

static void test_analyse_fields(void **state)
{
	static const uint8_t b[] = { 0x48, 0x83, 0xec, 0x18, 0xcc, 0xcc };
	struct arch_insn insn;

	analyse_ok(&insn, CODE_ADDR, b, sizeof(b));
	assert_int_equal(insn.addr, CODE_ADDR);
	assert_int_equal(insn.len, 4);
	assert_memory_equal(insn.bytes, b, 4);
	assert_string_equal(insn.text, "subq $0x18, %rsp");
	/* push imm, push mem, pushw: XOL */
	{
		static const uint8_t pi[] = { 0x6a, 0x01 };
		static const uint8_t pw[] = { 0x66, 0x55 };

		analyse_ok(&insn, CODE_ADDR, pi, sizeof(pi));
		assert_true(arch_insn_is_xol(&insn));
		analyse_ok(&insn, CODE_ADDR, pw, sizeof(pw));
		assert_true(arch_insn_is_xol(&insn));
	}
	/* cmp reg,mem: XOL */
	{
		static const uint8_t cm[] = { 0x48, 0x3b, 0x07 };

		analyse_ok(&insn, CODE_ADDR, cm, sizeof(cm));
		assert_true(arch_insn_is_xol(&insn));
		assert_int_equal(insn.rip_relative, 0);
	}
}

/* the allocator entries of the libc we run on all have a plan */
static void test_analyse_this_libc(void **state)
{
	static const char *const names[] = {
		"malloc", "free", "calloc", "realloc", "reallocarray",
		"posix_memalign", "aligned_alloc", "memalign", "valloc",
		"pvalloc", "malloc_usable_size", "strdup", "strndup", "open",
		"close", "fopen", "fclose", "mmap", "munmap", "dup", "socket",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct arch_insn insn;
		void *p = dlsym(RTLD_DEFAULT, names[i]);

		if (!p)
			continue;
		err[0] = '\0';
		if (arch_insn_analyse(&insn, (uint64_t)p, p, ARCH_MAX_INSN_LEN,
				      err, sizeof(err)))
			fail_msg("%s: %s", names[i], err);
	}
	if (LIBC_IS_GLIBC) {
		struct arch_insn insn;
		void *p = dlsym(RTLD_DEFAULT, "malloc");

		/* glibc's malloc starts with a push (of %r12 in 2.36) */
		assert_int_equal(arch_insn_analyse(&insn, (uint64_t)p, p, 15,
						   err, sizeof(err)), 0);
		if (strcmp(insn.ops->name, "push") && strcmp(insn.ops->name, "nop"))
			print_message("note: malloc starts with %s\n", insn.text);
	}
}

/* ------------------------------------------------------------------ */
/* misc */

static void test_trampoline(void **state)
{
	/* int3 (returns land there); syscall, jmp . (injections run it);
	 * the clone's syscall, its child's exit_group(0), the caller's
	 * jmp . */
	static const uint8_t want[] = {
		0xcc, 0x0f, 0x05, 0xeb, 0xfe, 0x0f, 0x05, 0x48, 0x85, 0xc0,
		0x75, 0x09, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0x31, 0xff, 0x0f,
		0x05, 0xeb, 0xfe,
	};

	assert_int_equal(arch_trampoline_len, sizeof(want));
	assert_memory_equal(arch_trampoline_code, want, sizeof(want));
	assert_int_equal(arch_trampoline_syscall, 1);
	assert_int_equal(arch_trampoline_clone, 5);
	assert_true(arch_trampoline_len <= ARCH_XOL_SLOT_SIZE);
	assert_int_equal(ARCH_BP_LEN, 1);
	assert_int_equal(arch_bp_addr_from_stop_pc(0x401001), 0x401000);
}

static void test_unw_reg(void **state)
{
	static const struct {
		int unw;
		size_t off;
	} map[] = {
		{ UNW_X86_64_RAX, offsetof(struct user_regs_struct, rax) },
		{ UNW_X86_64_RDX, offsetof(struct user_regs_struct, rdx) },
		{ UNW_X86_64_RCX, offsetof(struct user_regs_struct, rcx) },
		{ UNW_X86_64_RBX, offsetof(struct user_regs_struct, rbx) },
		{ UNW_X86_64_RSI, offsetof(struct user_regs_struct, rsi) },
		{ UNW_X86_64_RDI, offsetof(struct user_regs_struct, rdi) },
		{ UNW_X86_64_RBP, offsetof(struct user_regs_struct, rbp) },
		{ UNW_X86_64_RSP, offsetof(struct user_regs_struct, rsp) },
		{ UNW_X86_64_R8, offsetof(struct user_regs_struct, r8) },
		{ UNW_X86_64_R9, offsetof(struct user_regs_struct, r9) },
		{ UNW_X86_64_R10, offsetof(struct user_regs_struct, r10) },
		{ UNW_X86_64_R11, offsetof(struct user_regs_struct, r11) },
		{ UNW_X86_64_R12, offsetof(struct user_regs_struct, r12) },
		{ UNW_X86_64_R13, offsetof(struct user_regs_struct, r13) },
		{ UNW_X86_64_R14, offsetof(struct user_regs_struct, r14) },
		{ UNW_X86_64_R15, offsetof(struct user_regs_struct, r15) },
		{ UNW_X86_64_RIP, offsetof(struct user_regs_struct, rip) },
	};
	struct arch_regs r;
	unsigned long long *p = (unsigned long long *)&r.r;
	size_t i;
	uint64_t v;

	for (i = 0; i < sizeof(r.r) / sizeof(*p); i++)
		p[i] = 0x1000 + i;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		v = 0;
		assert_int_equal(arch_unw_reg(&r, map[i].unw, &v), 0);
		assert_int_equal(v, 0x1000 + map[i].off / 8);
	}
	assert_int_equal(arch_unw_reg(&r, UNW_X86_64_RIP + 1, &v), -1);
	assert_int_equal(arch_unw_reg(&r, -1, &v), -1);
	assert_int_equal(arch_unw_reg(&r, 1000, &v), -1);
	assert_int_equal(arch_sys_mmap, SYS_mmap);
	assert_int_equal(arch_sys_munmap, SYS_munmap);
}

/* ------------------------------------------------------------------ */
/* live: system call injection */

static pid_t child = -1;

static int kill_child(void **state)
{
	int st;

	if (child > 0) {
		kill(child, SIGKILL);
		while (waitpid(child, &st, __WALL) == -1 && errno == EINTR)
			;
		child = -1;
	}
	return 0;
}

/* a child that stopped itself under PTRACE_TRACEME */
static pid_t spawn_stopped(void)
{
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (;;)
			pause();
	}
	child = pid;
	assert_int_equal(waitpid(pid, &st, __WALL), pid);
	assert_true(WIFSTOPPED(st));
	assert_int_equal(WSTOPSIG(st), SIGSTOP);
	/* as ptleak's (arch_inject's syscall stops) */
	assert_int_equal(ptrace(PTRACE_SETOPTIONS, pid, NULL,
				(void *)(long)PTRACE_O_TRACESYSGOOD), 0);
	return pid;
}

/* does /proc/PID/maps have a mapping starting at ADDR? */
static int maps_has(pid_t pid, uint64_t addr)
{
	char path[64], line[512];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strtoull(line, NULL, 16) == addr)
			found = 1;
	fclose(f);
	return found;
}

static void assert_untouched(pid_t pid, const struct arch_regs *before,
			     long code_before)
{
	struct arch_regs now;
	long code;

	assert_int_equal(arch_get_regs(pid, &now), 0);
	assert_memory_equal(&now, before, sizeof(now));
	errno = 0;
	code = ptrace(PTRACE_PEEKTEXT, pid, (void *)before->r.rip, NULL);
	assert_int_equal(errno, 0);
	assert_int_equal(code, code_before);
}

/* LEN bytes of CODE at ADDR of stopped PID, a word at a time */
static void poke_code(pid_t pid, uint64_t addr, const uint8_t *code, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 8) {
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKTEXT, pid, (void *)(addr + i), NULL);
		assert_int_equal(errno, 0);
		memcpy(&w, code + i, len - i < 8 ? len - i : 8);
		assert_int_equal(ptrace(PTRACE_POKETEXT, pid, (void *)(addr + i),
					(void *)w), 0);
	}
}

/* what an injection tells its watcher (the guardian), and when */
struct notes {
	int begun, ended;
	struct arch_regs saved;
	uint64_t mask, code_lo, code_hi, code_at, code_len;
	long code_now;		/* the word at the pc when first told */
	long code_then;		/* the same when last told */
	uint8_t code[8];
};

static void note(void *ctx, pid_t tid, const struct arch_inject_note *n)
{
	struct notes *N = ctx;

	if (!n) {
		N->ended++;
		return;
	}
	N->begun++;
	N->saved = *n->saved;
	errno = 0;
	N->code_then = ptrace(PTRACE_PEEKTEXT, tid, (void *)n->saved->r.rip, NULL);
	assert_int_equal(errno, 0);
	if (N->begun > 1)
		return;
	N->mask = n->mask;
	N->code_lo = n->code_lo;
	N->code_hi = n->code_hi;
	N->code_at = n->code_at;
	N->code_len = n->code_len;
	memcpy(N->code, n->code, sizeof(N->code));
	errno = 0;
	N->code_now = ptrace(PTRACE_PEEKTEXT, tid, (void *)n->saved->r.rip, NULL);
	assert_int_equal(errno, 0);
}

/* at the thread's pc: told its registers, its own mask, the code it
 * runs (syscall; jmp .: 4 bytes at the pc), the word ptleak changes,
 * before the change and again after the call; once done */
static void test_inject_note(void **state)
{
	pid_t pid = spawn_stopped();
	struct arch_regs before;
	struct notes N = { 0 };
	struct arch_inject_via via = { 0, 0, 0, note, &N };
	uint64_t args[6] = { 0 }, ret = 0, mask;
	int sig;
	long code;

	assert_int_equal(arch_get_regs(pid, &before), 0);
	errno = 0;
	code = ptrace(PTRACE_PEEKTEXT, pid, (void *)before.r.rip, NULL);
	assert_int_equal(errno, 0);
	assert_int_equal(ptrace(PTRACE_GETSIGMASK, pid, (void *)sizeof(mask),
				&mask), 0);
	assert_int_equal(arch_inject(pid, &via, SYS_getpid, args, &ret, &sig,
				     NULL), 0);
	assert_int_equal(ret, pid);
	/* before, and again once the call ran (its rax may have changed):
	 * the call and the spin at the pc then */
	assert_int_equal(N.begun, 2);
	assert_int_equal(N.ended, 1);
	assert_int_equal(N.code_then,
			 (long)(((unsigned long)code & ~0xffffffffUL) | 0xfeeb050fUL));
	assert_memory_equal(&N.saved, &before, sizeof(before));
	assert_int_equal(N.mask, mask);
	assert_int_equal(N.code_lo, before.r.rip);
	assert_int_equal(N.code_hi, before.r.rip + 4);
	assert_int_equal(N.code_at, before.r.rip);
	assert_int_equal(N.code_len, 8);
	assert_memory_equal(N.code, &code, 8);
	assert_int_equal(N.code_now, code);
	assert_untouched(pid, &before, code);
	kill_child(state);
}

/* never run in the child: where test_inject_write writes its call */
static void __attribute__((noinline, used)) not_run(void)
{
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop");
}

/* VIA->write: the call written at VIA->insn (a place no thread runs; the
 * program's entry point in ptleak) for the time of it, told to the
 * watcher with its bytes; the thread's own code and registers and those
 * bytes as they were after */
static void test_inject_write(void **state)
{
	pid_t pid = spawn_stopped();
	struct arch_regs before;
	struct notes N = { 0 };
	struct arch_inject_via via = { 0, 0, 0, note, &N };
	uint64_t args[6] = { 0 }, ret = 0, at = (uint64_t)(uintptr_t)not_run;
	int sig;
	long code, there;

	assert_int_equal(arch_get_regs(pid, &before), 0);
	errno = 0;
	code = ptrace(PTRACE_PEEKTEXT, pid, (void *)before.r.rip, NULL);
	there = ptrace(PTRACE_PEEKTEXT, pid, (void *)at, NULL);
	assert_int_equal(errno, 0);
	via.insn = at;
	via.end = at + 4;
	via.write = 1;
	assert_int_equal(arch_inject(pid, &via, SYS_getpid, args, &ret, &sig,
				     NULL), 0);
	assert_int_equal(ret, pid);
	assert_int_equal(N.begun, 2);
	assert_int_equal(N.ended, 1);
	assert_int_equal(N.code_at, at);
	assert_int_equal(N.code_lo, at);
	assert_int_equal(N.code_hi, at + 4);
	assert_memory_equal(N.code, &there, 8);
	assert_untouched(pid, &before, code);
	errno = 0;
	assert_int_equal(ptrace(PTRACE_PEEKTEXT, pid, (void *)at, NULL), there);
	assert_int_equal(errno, 0);
	/* nothing mapped there: at the pc instead */
	memset(&N, 0, sizeof(N));
	via.insn = 0x1000;
	via.end = 0x1004;
	assert_int_equal(arch_inject(pid, &via, SYS_getpid, args, &ret, &sig,
				     NULL), 0);
	assert_int_equal(ret, pid);
	assert_int_equal(N.code_at, before.r.rip);
	assert_untouched(pid, &before, code);
	kill_child(state);
}

/* Stopped PID's registers (*BEFORE) and the word at its pc (*CODE); a
 * page mapped into it by an injected mmap, the trampoline's code in it:
 * its address. */
static uint64_t map_trampoline(pid_t pid, struct arch_regs *before, long *code)
{
	uint64_t args[6] = { 0 }, page;
	int sig;

	assert_int_equal(arch_get_regs(pid, before), 0);
	errno = 0;
	*code = ptrace(PTRACE_PEEKTEXT, pid, (void *)before->r.rip, NULL);
	assert_int_equal(errno, 0);
	args[1] = 4096;
	args[2] = PROT_READ | PROT_EXEC;
	args[3] = MAP_PRIVATE | MAP_ANONYMOUS;
	args[4] = (uint64_t)-1;
	assert_int_equal(arch_inject(pid, NULL, arch_sys_mmap, args, &page, &sig,
				     NULL), 0);
	assert_true(page < -4096ULL);
	poke_code(pid, page, arch_trampoline_code, arch_trampoline_len);
	return page;
}

static void *pause_forever(void *arg)
{
	int *fd = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (write(*fd, &tid, sizeof(tid)) != sizeof(tid))
		_exit(1);
	for (;;)
		pause();
	return NULL;
}

/* Wait for a stop of TID within 2 s: its status, or -1. */
static int stop_within(pid_t tid)
{
	int st, i;

	for (i = 0; i < 200; i++) {
		if (waitpid(tid, &st, __WALL | WNOHANG) == tid)
			return st;
		usleep(10000);
	}
	return -1;
}

/* A thread to take part in a group-stop (SIGSTOP delivered through
 * another thread while it was held) runs an injection: resumed after it
 * as ptleak would (PTRACE_CONT, no signal), it still stops for the
 * group-stop, not runs on (h_server's thread asleep in a stopped
 * process: group_stop_attached, 6 in 100 under load) */
static void test_inject_group_stop(void **state)
{
	int p[2], st;
	pid_t pid, b = 0;
	uint64_t args[6] = { 0 }, ret = 0;
	int sig;

	(void)state;
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t th;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (pthread_create(&th, NULL, pause_forever, &p[1]))
			_exit(1);
		for (;;)
			pause();
	}
	child = pid;
	assert_int_equal(read(p[0], &b, sizeof(b)), sizeof(b));
	close(p[0]);
	close(p[1]);
	assert_int_equal(ptrace(PTRACE_SEIZE, pid, NULL,
				(void *)(long)PTRACE_O_TRACESYSGOOD), 0);
	assert_int_equal(ptrace(PTRACE_SEIZE, b, NULL,
				(void *)(long)PTRACE_O_TRACESYSGOOD), 0);
	assert_int_equal(ptrace(PTRACE_INTERRUPT, pid, NULL, NULL), 0);
	assert_int_equal(ptrace(PTRACE_INTERRUPT, b, NULL, NULL), 0);
	assert_int_equal(waitpid(pid, &st, __WALL), pid);
	assert_int_equal(st >> 16, PTRACE_EVENT_STOP);
	assert_int_equal(waitpid(b, &st, __WALL), b);
	assert_int_equal(st >> 16, PTRACE_EVENT_STOP);
	/* the main thread takes the SIGSTOP (b is held); delivered, the
	 * group-stop begins */
	assert_int_equal(kill(pid, SIGSTOP), 0);
	assert_int_equal(ptrace(PTRACE_CONT, pid, NULL, NULL), 0);
	assert_int_equal(waitpid(pid, &st, __WALL), pid);
	assert_true(WIFSTOPPED(st));
	assert_int_equal(WSTOPSIG(st), SIGSTOP);
	assert_int_equal(st >> 16, 0);
	assert_int_equal(ptrace(PTRACE_CONT, pid, NULL, (void *)(long)SIGSTOP), 0);
	assert_int_equal(waitpid(pid, &st, __WALL), pid);
	assert_int_equal(st >> 16, PTRACE_EVENT_STOP);
	assert_int_equal(WSTOPSIG(st), SIGSTOP);
	assert_int_equal(arch_inject(b, NULL, SYS_getpid, args, &ret, &sig, NULL),
			 0);
	assert_int_equal(ret, pid);
	assert_int_equal(sig, 0);
	assert_int_equal(ptrace(PTRACE_CONT, b, NULL, NULL), 0);
	st = stop_within(b);
	assert_true(st != -1 && WIFSTOPPED(st));
	assert_int_equal(WSTOPSIG(st), SIGSTOP);
	/* the leader's death is reported once b is reaped */
	kill(pid, SIGKILL);
	while (waitpid(b, &st, __WALL) == b && !WIFEXITED(st) && !WIFSIGNALED(st))
		;
	kill_child(state);
}

static void test_inject_syscall(void **state)
{
	pid_t pid = spawn_stopped();
	struct arch_regs before;
	uint64_t args[6] = { 0 }, ret = 0;
	int sig;
	long code;

	assert_int_equal(arch_get_regs(pid, &before), 0);
	errno = 0;
	code = ptrace(PTRACE_PEEKTEXT, pid, (void *)before.r.rip, NULL);
	assert_int_equal(errno, 0);

	assert_int_equal(arch_inject(pid, NULL, SYS_getpid, args, &ret, &sig, NULL), 0);
	assert_int_equal(ret, pid);
	assert_untouched(pid, &before, code);

	args[0] = 0;
	args[1] = 4096;
	args[2] = PROT_READ | PROT_WRITE;
	args[3] = MAP_PRIVATE | MAP_ANONYMOUS;
	args[4] = (uint64_t)-1;
	args[5] = 0;
	assert_int_equal(arch_inject(pid, NULL, arch_sys_mmap, args, &ret, &sig, NULL), 0);
	assert_true(ret < -4096ULL);
	assert_int_equal(ret & 4095, 0);
	assert_true(maps_has(pid, ret));
	assert_untouched(pid, &before, code);

	/* and unmap it */
	memset(args, 0, sizeof(args));
	args[0] = ret;
	args[1] = 4096;
	assert_int_equal(arch_inject(pid, NULL, arch_sys_munmap, args, &ret, &sig, NULL), 0);
	assert_int_equal(ret, 0);
	assert_false(maps_has(pid, args[0]));
	/* an error comes back raw */
	assert_int_equal(arch_inject(pid, NULL, arch_sys_munmap, args, &ret, &sig, NULL), 0);
	assert_int_equal(ret, 0);	/* munmap of nothing is fine */
	args[0] = 1;			/* unaligned */
	assert_int_equal(arch_inject(pid, NULL, arch_sys_munmap, args, &ret, &sig, NULL), 0);
	assert_int_equal((int64_t)ret, -EINVAL);
	assert_untouched(pid, &before, code);
	kill_child(state);
}

/* a PTRACE_SEIZEd child interrupted while blocked in read(): the injection
 * must not break the restart of its read */
static void test_inject_syscall_seized_in_syscall(void **state)
{
	int to[2], from[2], st, i;
	char c;
	pid_t pid;
	struct arch_regs before;
	uint64_t args[6] = { 0 }, ret = 0;
	int sig;
	struct pollfd pfd;

	assert_int_equal(pipe(to), 0);
	assert_int_equal(pipe(from), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(to[1]);
		close(from[0]);
		for (;;) {
			if (read(to[0], &c, 1) != 1)
				_exit(1);
			if (write(from[1], &c, 1) != 1)
				_exit(2);
		}
	}
	child = pid;
	close(to[0]);
	close(from[1]);
	assert_int_equal(ptrace(PTRACE_SEIZE, pid, NULL,
				(void *)(long)PTRACE_O_TRACESYSGOOD), 0);

	/* one round trip, then wait until it sleeps in read() again */
	assert_int_equal(write(to[1], "a", 1), 1);
	assert_int_equal(read(from[0], &c, 1), 1);
	assert_int_equal(c, 'a');
	for (i = 0; i < 500; i++) {
		char path[64], buf[256], *p;
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "r");
		assert_non_null(f);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p && p[2] == 'S')
			break;
		usleep(2000);
	}
	usleep(20000);

	assert_int_equal(ptrace(PTRACE_INTERRUPT, pid, NULL, NULL), 0);
	assert_int_equal(waitpid(pid, &st, __WALL), pid);
	assert_true(WIFSTOPPED(st));
	assert_int_equal(st >> 16, PTRACE_EVENT_STOP);
	assert_int_equal(arch_get_regs(pid, &before), 0);
	assert_int_equal(before.r.orig_rax, SYS_read);

	assert_int_equal(arch_inject(pid, NULL, SYS_getpid, args, &ret, &sig, NULL), 0);
	assert_int_equal(ret, pid);
	{
		struct arch_regs now;

		assert_int_equal(arch_get_regs(pid, &now), 0);
		assert_memory_equal(&now, &before, sizeof(now));
	}

	/* resumed, it goes back into read() and still echoes */
	assert_int_equal(ptrace(PTRACE_CONT, pid, NULL, NULL), 0);
	assert_int_equal(write(to[1], "b", 1), 1);
	pfd.fd = from[0];
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(read(from[0], &c, 1), 1);
	assert_int_equal(c, 'b');
	close(to[1]);
	close(from[0]);
	kill_child(state);
}

/* signals pending before the injection (two: queued again one by one,
 * they used to stop every step, forever): blocked during the call, they
 * stay pending, and are delivered once after, with their siginfo */
static void test_inject_syscall_signal_first(void **state)
{
	pid_t pid = spawn_stopped();
	struct arch_regs before;
	uint64_t args[6] = { 0 }, ret = 12345, mask = 0, mask_after = 1;
	union sigval v = { .sival_int = 42 };
	siginfo_t si;
	long code;
	int st, sig = -1;

	assert_int_equal(arch_get_regs(pid, &before), 0);
	errno = 0;
	code = ptrace(PTRACE_PEEKTEXT, pid, (void *)before.r.rip, NULL);
	assert_int_equal(errno, 0);
	assert_int_equal(ptrace(PTRACE_GETSIGMASK, pid, (void *)8, &mask), 0);

	assert_int_equal(sigqueue(pid, SIGUSR2, v), 0);
	assert_int_equal(sigqueue(pid, SIGUSR1, v), 0);
	assert_int_equal(arch_inject(pid, NULL, SYS_getpid, args, &ret, &sig, NULL), 0);
	assert_int_equal(ret, pid);
	assert_int_equal(sig, 0);
	/* everything restored, the mask too */
	assert_untouched(pid, &before, code);
	assert_int_equal(ptrace(PTRACE_GETSIGMASK, pid, (void *)8, &mask_after), 0);
	assert_int_equal(mask_after, mask);
	/* resumed, the thread stops for the first pending signal, which
	 * carries its siginfo */
	assert_int_equal(ptrace(PTRACE_CONT, pid, NULL, NULL), 0);
	assert_int_equal(waitpid(pid, &st, __WALL), pid);
	assert_true(WIFSTOPPED(st));
	assert_int_equal(WSTOPSIG(st), SIGUSR1);
	assert_int_equal(ptrace(PTRACE_GETSIGINFO, pid, NULL, &si), 0);
	assert_int_equal(si.si_signo, SIGUSR1);
	assert_int_equal(si.si_code, SI_QUEUE);
	assert_int_equal(si.si_value.sival_int, 42);
	assert_int_equal(si.si_pid, getpid());
	/* resumed with it, the thread gets it (and dies: no handler) */
	assert_int_equal(ptrace(PTRACE_CONT, pid, NULL, (void *)(long)SIGUSR1), 0);
	assert_int_equal(waitpid(pid, &st, __WALL), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGUSR1);
	child = -1;	/* reaped */
}

/* the instruction in a page of its own (the trampoline's code mapped by
 * an injected mmap): the thread's code is never written, a fork's child
 * comes back as *CHILD, registers as they were; the fork's child, run on,
 * leaves by the clone entry's exit_group(0) */
static void test_inject_syscall_at(void **state)
{
	pid_t pid = spawn_stopped(), c = 0;
	struct arch_regs before;
	struct arch_inject_via via = { 0 };
	uint64_t args[6] = { 0 }, ret = 0, page;
	int sig, st;
	long code;

	page = map_trampoline(pid, &before, &code);
	memset(args, 0, sizeof(args));
	via.insn = page + arch_trampoline_syscall;
	assert_int_equal(arch_inject(pid, &via, SYS_getpid, args, &ret, &sig,
				     NULL), 0);
	assert_int_equal(ret, pid);
	assert_untouched(pid, &before, code);
	/* a fork (PTRACE_O_TRACEFORK) at the clone's entry, as ptleak's
	 * snapshot runs it: the child's pid from its event */
	assert_int_equal(ptrace(PTRACE_SETOPTIONS, pid, NULL,
				(void *)(long)(PTRACE_O_TRACEFORK | PTRACE_O_EXITKILL |
					       PTRACE_O_TRACESYSGOOD)), 0);
	via.insn = page + arch_trampoline_clone;
	assert_int_equal(arch_inject(pid, &via, SYS_fork, args, &ret, &sig, &c),
			 0);
	assert_int_equal(ret, c);
	assert_untouched(pid, &before, code);
	/* the child, traced from birth, in its first stop; let run on from
	 * the call (ptleak dead before it killed it), it leaves, status 0 */
	assert_int_equal(waitpid(c, &st, __WALL), c);
	assert_true(WIFSTOPPED(st));
	assert_int_equal(ptrace(PTRACE_CONT, c, NULL, NULL), 0);
	assert_int_equal(waitpid(c, &st, __WALL), c);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	kill_child(state);
}

/* a thread held at its fork event (inside fork(): its result not yet in
 * rax) runs an injected system call: its fork still returns the child's
 * pid (the first step finishes the fork; that result is given back) */
static void test_inject_syscall_at_fork_event(void **state)
{
	int p[2], st;
	pid_t pid, c, got = 0;
	uint64_t args[6] = { 0 }, ret = 0;
	int sig;
	unsigned long msg = 0;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pid_t f;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		f = fork();
		if (f == 0)
			_exit(0);
		if (write(p[1], &f, sizeof(f)) != sizeof(f))
			_exit(1);
		waitpid(f, NULL, 0);
		_exit(0);
	}
	child = pid;
	close(p[1]);
	assert_int_equal(waitpid(pid, &st, __WALL), pid);
	assert_int_equal(ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACEFORK |
								     PTRACE_O_TRACESYSGOOD)), 0);
	assert_int_equal(ptrace(PTRACE_CONT, pid, NULL, NULL), 0);
	assert_int_equal(waitpid(pid, &st, __WALL), pid);
	assert_int_equal(st >> 8, SIGTRAP | (PTRACE_EVENT_FORK << 8));
	assert_int_equal(ptrace(PTRACE_GETEVENTMSG, pid, NULL, &msg), 0);
	c = (pid_t)msg;
	assert_int_equal(arch_inject(pid, NULL, SYS_getpid, args, &ret, &sig, NULL), 0);
	assert_int_equal(ret, pid);
	/* the child: let it go */
	assert_int_equal(waitpid(c, &st, __WALL), c);
	assert_int_equal(ptrace(PTRACE_DETACH, c, NULL, NULL), 0);
	assert_int_equal(ptrace(PTRACE_DETACH, pid, NULL, NULL), 0);
	assert_int_equal(read(p[0], &got, sizeof(got)), sizeof(got));
	assert_int_equal(got, c);
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	child = -1;
}

static void test_inject_syscall_no_such_thread(void **state)
{
	uint64_t args[6] = { 0 }, ret;
	int sig;

	/* not traced by us */
	assert_int_equal(arch_inject(1, NULL, SYS_getpid, args, &ret, &sig, NULL),
			 -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_r12),
		cmocka_unit_test(test_inject_note),
		cmocka_unit_test(test_inject_write),
		cmocka_unit_test(test_inject_group_stop),
		cmocka_unit_test(test_push_r13_r15_rbp),
		cmocka_unit_test(test_push_rex_resumes_after_prefix),
		cmocka_unit_test(test_push_rsp_pushes_old_value),
		cmocka_unit_test(test_push_write_fault),
		cmocka_unit_test(test_test_rdi_flags),
		cmocka_unit_test(test_test_widths),
		cmocka_unit_test(test_cmpb_rip_flags),
		cmocka_unit_test(test_cmp_imm_forms),
		cmocka_unit_test(test_cmp_index_scale),
		cmocka_unit_test(test_cmp_fs_segment),
		cmocka_unit_test(test_cmp_read_fault),
		cmocka_unit_test(test_cmp_reg_forms),
		cmocka_unit_test(test_flags_match_cpu),
		cmocka_unit_test(test_mov_r64),
		cmocka_unit_test(test_mov_r32_zero_extends),
		cmocka_unit_test(test_mov_imm),
		cmocka_unit_test(test_endbr64_and_nops),
		cmocka_unit_test(test_fast_analysis),
		cmocka_unit_test(test_ret),
		cmocka_unit_test(test_jmp),
		cmocka_unit_test(test_xol_plain),
		cmocka_unit_test(test_xol_rip_relative),
		cmocka_unit_test(test_xol_rip_with_imm),
		cmocka_unit_test(test_xol_emulated_cmp_rip),
		cmocka_unit_test(test_xol_rip_out_of_range),
		cmocka_unit_test(test_xol_executes),
		cmocka_unit_test(test_xol_fixup_pc),
		cmocka_unit_test(test_refuse_call_rel32),
		cmocka_unit_test(test_refuse_jz_rel32),
		cmocka_unit_test(test_refuse_others),
		cmocka_unit_test(test_analyse_fields),
		cmocka_unit_test(test_analyse_this_libc),
		cmocka_unit_test(test_trampoline),
		cmocka_unit_test(test_unw_reg),
		cmocka_unit_test_teardown(test_inject_syscall, kill_child),
		cmocka_unit_test_teardown(test_inject_syscall_seized_in_syscall,
					  kill_child),
		cmocka_unit_test_teardown(test_inject_syscall_signal_first,
					  kill_child),
		cmocka_unit_test(test_inject_syscall_at),
		cmocka_unit_test(test_inject_syscall_at_fork_event),
		cmocka_unit_test(test_inject_syscall_no_such_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
