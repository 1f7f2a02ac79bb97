/* test_patch.c - the recorder's prologue relocation (arch_patch.h) on
 * byte strings: glibc 2.36's allocator entries read from libc.so.6 by
 * symbol, synthetic bodies for each refusal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <capstone/capstone.h>

#include "arch/arch_patch.h"
#include "fastdec.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define NEAR 0x200000ull		/* relocated code within reach of libc */
#define FAR 0x7f0000000000ull		/* out of rel32 reach */

struct func {
	uint64_t addr;
	size_t len;
	uint8_t body[4096];
};

/* The bytes of NAME's body in libc's .dynsym (address = link address). */
static void libc_func(const char *name, struct func *f)
{
	Elf_Scn *scn = NULL, *text;
	int fd = open(LIBC, O_RDONLY), found = 0;
	GElf_Shdr sh, th;
	GElf_Sym sym;
	Elf_Data *d;
	Elf *e;
	size_t i;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	while (!found && (scn = elf_nextscn(e, scn))) {
		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			gelf_getsym(d, (int)i, &sym);
			if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size &&
			    !strcmp(elf_strptr(e, sh.sh_link, sym.st_name), name)) {
				found = 1;
				break;
			}
		}
	}
	assert_true(found);
	f->addr = sym.st_value;
	f->len = sym.st_size;
	assert_true(f->len <= sizeof(f->body));
	text = elf_getscn(e, sym.st_shndx);
	gelf_getshdr(text, &th);
	d = elf_getdata(text, NULL);
	memcpy(f->body, (char *)d->d_buf + (f->addr - th.sh_addr), f->len);
	elf_end(e);
	close(fd);
}

/* Plan + relocate FN to TO; the relocated bytes must be WANT. */
static void relocated(const struct func *f, unsigned want_len, uint64_t to,
		      const uint8_t *want, size_t want_n)
{
	uint8_t buf[ARCH_RELOC_MAX], jmp[ARCH_PATCH_MAX_LEN];
	struct arch_patch p;
	char err[256] = "";
	int n;

	assert_int_equal(arch_patch_plan(&p, f->body, f->len, f->addr, err,
					 sizeof(err)), 0);
	assert_int_equal(p.len, want_len);
	assert_memory_equal(p.orig, f->body + (p.at - p.func), p.len);
	n = arch_relocate(&p, to, buf, err, sizeof(err));
	assert_int_equal(n, (int)want_n);
	assert_memory_equal(buf, want, want_n);
	/* the entry's jump to TO, int3s after it */
	assert_int_equal(arch_patch_jump(&p, p.at + 0x1000, jmp, err,
					 sizeof(err)), 0);
	assert_memory_equal(jmp, "\xe9\xfb\x0f\x00\x00", 5);
	for (n = 5; n < (int)p.len; n++)
		assert_int_equal(jmp[n], 0xcc);
}

/* push %r12; push %rbp; push %rbx; mov %rdi,%rbx */
static void test_glibc_malloc(void **state)
{
	static const uint8_t want[] = { 0x41, 0x54, 0x55, 0x53, 0x48, 0x89,
		0xfb, 0xe9, 0x2b, 0x89, 0xe9, 0xff };
	struct func f;

	libc_func("malloc", &f);
	assert_int_equal(f.addr, 0x98930);
	relocated(&f, 7, NEAR, want, sizeof(want));
}

/* test %rdi,%rdi; je rel32: the jcc is re-aimed from the new place. */
static void test_glibc_free(void **state)
{
	static const uint8_t want[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xaf,
		0x8f, 0xe9, 0xff, 0xe9, 0xeb, 0x8e, 0xe9, 0xff };
	/* out of reach: jne over `jmp *0(%rip)` to the je's target */
	static const uint8_t far[] = { 0x48, 0x85, 0xff, 0x75, 0x0e, 0xff,
		0x25, 0, 0, 0, 0, 0xb8, 0x8f, 0x09, 0, 0, 0, 0, 0, 0xff, 0x25,
		0, 0, 0, 0, 0xf9, 0x8e, 0x09, 0, 0, 0, 0, 0 };
	struct func f;

	libc_func("free", &f);
	assert_int_equal(f.addr, 0x98ef0);
	relocated(&f, 9, NEAR, want, sizeof(want));
	relocated(&f, 9, FAR, far, sizeof(far));
}

/* push %r13; mov %rdi,%rax */
static void test_glibc_calloc(void **state)
{
	static const uint8_t want[] = { 0x41, 0x55, 0x48, 0x89, 0xf8, 0xe9,
		0xdb, 0x96, 0xe9, 0xff };
	struct func f;

	libc_func("calloc", &f);
	relocated(&f, 5, NEAR, want, sizeof(want));
}

/* push %r15; push %r14; push %r13 */
static void test_glibc_realloc(void **state)
{
	static const uint8_t want[] = { 0x41, 0x57, 0x41, 0x56, 0x41, 0x55,
		0xe9, 0x2b, 0x91, 0xe9, 0xff };
	struct func f;

	libc_func("realloc", &f);
	relocated(&f, 6, NEAR, want, sizeof(want));
}

/* cmpb $0x0,0x140e71(%rip): the displacement rewritten for the new place
 * (same target 0x1da488); refused out of reach. */
static void test_glibc_memalign(void **state)
{
	static const uint8_t want[] = { 0x80, 0x3d, 0x81, 0xa4, 0xfd, 0xff,
		0x00, 0xe9, 0x0b, 0x96, 0xe9, 0xff };
	uint8_t buf[ARCH_RELOC_MAX];
	struct arch_patch p;
	char err[256];
	struct func f;

	libc_func("memalign", &f);
	relocated(&f, 7, NEAR, want, sizeof(want));
	assert_int_equal(arch_patch_plan(&p, f.body, f.len, f.addr, err,
					 sizeof(err)), 0);
	assert_int_equal(arch_relocate(&p, FAR, buf, err, sizeof(err)), -1);
	assert_string_equal(err, "the %rip-relative operand at 0x99610 "
			    "(0x1da488) is out of rel32 reach from 0x7f0000000000");
}

static void body(struct func *f, const char *bytes, size_t n)
{
	f->addr = 0x401000;
	f->len = n;
	memcpy(f->body, bytes, n);
}

static void refused(const char *bytes, size_t n, const char *msg)
{
	struct arch_patch p;
	char err[256] = "";
	struct func f;

	body(&f, bytes, n);
	assert_int_equal(arch_patch_plan(&p, f.body, f.len, f.addr, err,
					 sizeof(err)), -1);
	assert_string_equal(err, msg);
}

#define REFUSED(b, msg) refused(b, sizeof(b) - 1, msg)

static void test_refusals(void **state)
{
	REFUSED("\xe8\x00\x00\x00\x00\xc3", "cannot relocate 'callq 0x401005' "
		"at 0x401000: a call (its return address would be the code page's)");
	REFUSED("\x31\xc0\xc3\x90\x90\x90", "cannot relocate 'retq' at 0x401002: "
		"a return");
	REFUSED("\x55\xe3\x02\x90\x90\x90", "cannot relocate 'jrcxz 0x401005' at "
		"0x401001: a branch with no rel32 form");
	REFUSED("\x55\xe2\x02\x90\x90\x90", "cannot relocate 'loop 0x401005' at "
		"0x401001: a branch with no rel32 form");
	REFUSED("\x55\xcc\x90\x90\x90\x90", "cannot relocate 'int3' at 0x401001: "
		"a trap");
	REFUSED("\x90\x90", "function shorter than a 5-byte jump at 0x401002: "
		"its symbol's size ends before");
	/* push %rbp; mov %rsp,%rbp; push %rbx | ...; jmp back to byte 1 */
	REFUSED("\x55\x48\x89\xe5\x53\x5b\x5d\xeb\xf8",
		"'jmp 0x401001' at 0x401007 branches into the patched bytes "
		"[0x401000, 0x401005)");
}

/* A branch to the first displaced byte or just after them is fine. */
static void test_branch_to_edges(void **state)
{
	static const uint8_t want[] = { 0x55, 0x48, 0x89, 0xe5, 0x53, 0xe9,
		0xfb, 0x0f, 0x20, 0x00 };
	struct func f;

	body(&f, "\x55\x48\x89\xe5\x53\x5b\x74\xf8\xeb\xfb", 10);
	relocated(&f, 5, 0x200000, want, sizeof(want));
}

/* endbr64 stays in place; jcc rel8 becomes rel32. */
static void test_endbr_jcc8(void **state)
{
	static const uint8_t want[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0x05,
		0x10, 0x20, 0x00, 0xe9, 0xfb, 0x0f, 0x20, 0x00 };
	struct arch_patch p;
	char err[256];
	struct func f;

	body(&f, "\xf3\x0f\x1e\xfa\x48\x85\xff\x74\x05\x55\x5d\xc3\x31\xc0\xc3", 15);
	assert_int_equal(arch_patch_plan(&p, f.body, f.len, f.addr, err,
					 sizeof(err)), 0);
	assert_int_equal(p.at, 0x401004);
	assert_int_equal(p.ninsns, 2);
	relocated(&f, 5, 0x200000, want, sizeof(want));
}

/* A tail call `jmp rel32` alone, near and out of reach; the
 * trampoline's bytes. */
static void test_tail_jmp_and_trampoline(void **state)
{
	static const uint8_t want[] = { 0xe9, 0xfb, 0x1f, 0x20, 0x00, 0xe9,
		0xfb, 0x0f, 0x20, 0x00 };
	/* mov %r11, -16(%rsp); mov %r10, -24(%rsp); lea orig(%rip), %r11;
	 * mov $7, %r10d; jmp stub; int3 padding */
	static const uint8_t tramp[ARCH_TRAMP_LEN] = { 0x4c, 0x89, 0x5c, 0x24,
		0xf0, 0x4c, 0x89, 0x54, 0x24, 0xe8, 0x4c, 0x8d, 0x1d, 0xef,
		0x00, 0x00, 0x00, 0x41, 0xba, 0x07, 0x00, 0x00, 0x00, 0xe9,
		0xe4, 0xff, 0xff, 0xff, 0xcc, 0xcc, 0xcc, 0xcc };
	uint8_t buf[ARCH_TRAMP_LEN];
	char err[256];
	struct func f;

	/* out of reach: both jumps absolute */
	static const uint8_t far[] = { 0xff, 0x25, 0, 0, 0, 0, 0x00, 0x20,
		0x40, 0, 0, 0, 0, 0, 0xff, 0x25, 0, 0, 0, 0, 0x05, 0x10, 0x40, 0,
		0, 0, 0, 0 };

	body(&f, "\xe9\xfb\x0f\x00\x00", 5);	/* jmp 0x402000 */
	relocated(&f, 5, 0x200000, want, sizeof(want));
	relocated(&f, 5, FAR, far, sizeof(far));
	assert_int_equal(arch_trampoline_build(0x10000, 7, 0x10100, 0x10000,
					       buf, err, sizeof(err)), 0);
	assert_memory_equal(buf, tramp, sizeof(tramp));
	assert_int_equal(arch_trampoline_build(0x10000, 7, FAR, 0x10000, buf,
					       err, sizeof(err)), -1);
}

/* What fastdec (arch/x86_64/fastdec.h) was checked on. */
struct fast_stats {
	unsigned insns;		/* instructions it decoded, capstone agreeing */
	unsigned plans;		/* entries planned the same both ways */
	unsigned plans_fast;	/* of which without capstone */
};

/* Every instruction capstone finds in BODY (at ADDR): where fastdec
 * decodes one, the same length, %rip displacement and branch target. */
static void fast_insns(const char *fn, const uint8_t *body, size_t len,
		       uint64_t addr, struct fast_stats *st)
{
	static csh h;
	static cs_insn *ci;
	const uint8_t *c = body;
	uint64_t a = addr;
	size_t n = len;
	struct x86_fast f;

	if (!h) {
		assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &h), CS_ERR_OK);
		cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
		ci = cs_malloc(h);
	}
	while (n) {
		const uint8_t *at = c;
		const cs_x86 *x;
		unsigned rip = 0;
		int i;

		if (!cs_disasm_iter(h, &c, &n, &a, ci)) {
			c++, n--, a++;
			continue;
		}
		if (!x86_fast_decode(at, len - (size_t)(at - body), &f))
			continue;
		x = &ci->detail->x86;
		for (i = 0; i < x->op_count; i++)
			if (x->operands[i].type == X86_OP_MEM &&
			    x->operands[i].mem.base == X86_REG_RIP)
				rip = x->encoding.disp_offset;
		if (f.len != ci->size || f.rip_off != rip ||
		    (f.branch && (uint64_t)x->operands[0].imm !=
		     ci->address + ci->size + (uint64_t)(int64_t)f.rel) ||
		    f.branch != (cs_insn_group(h, ci, CS_GRP_BRANCH_RELATIVE) &&
				 ci->id != X86_INS_CALL))
			fail_msg("%s+%#lx: '%s %s': fastdec len %u rip %u branch %u, "
				 "capstone len %u rip %u", fn,
				 (unsigned long)(ci->address - addr), ci->mnemonic,
				 ci->op_str, f.len, f.rip_off, f.branch, ci->size, rip);
		st->insns++;
	}
}

/* The plan of BODY's entry and its relocation (near and out of reach)
 * the same with fastdec as with capstone alone. */
static void fast_plan(const char *fn, const uint8_t *body, size_t len,
		      uint64_t addr, struct fast_stats *st)
{
	static const uint64_t to[2] = { 0x200000, FAR };
	struct arch_patch p[2];
	uint8_t rb[2][ARCH_RELOC_MAX];
	char err[2][256];
	struct x86_fast f;
	int r[2], k, t, j;

	for (t = 0; t < 2; t++) {
		x86_fast_off = t;
		err[t][0] = '\0';
		r[t] = arch_patch_plan(&p[t], body, len, addr, err[t], sizeof(err[t]));
	}
	x86_fast_off = 0;
	if (r[0] != r[1] || strcmp(err[0], err[1]) || memcmp(&p[0], &p[1], sizeof(p[0])))
		fail_msg("%s: plan with fastdec %d '%s', capstone %d '%s'", fn,
			 r[0], err[0], r[1], err[1]);
	if (r[0])
		return;
	st->plans++;
	for (j = 0; j < (int)p[0].len; j += f.len)
		if (!x86_fast_decode(p[0].orig + j, p[0].len - (size_t)j, &f))
			break;
	st->plans_fast += j >= (int)p[0].len;
	for (k = 0; k < 2; k++) {
		for (t = 0; t < 2; t++) {
			x86_fast_off = t;
			memset(rb[t], 0, sizeof(rb[t]));
			err[t][0] = '\0';
			r[t] = arch_relocate(&p[0], addr + to[k], rb[t], err[t], sizeof(err[t]));
		}
		x86_fast_off = 0;
		if (r[0] != r[1] || strcmp(err[0], err[1]) || memcmp(rb[0], rb[1], sizeof(rb[0])))
			fail_msg("%s: relocated to +%#lx with fastdec %d '%s', "
				 "capstone %d '%s'", fn, (unsigned long)to[k],
				 r[0], err[0], r[1], err[1]);
	}
}

/* arch_patch_plan's body check: the fast one (every byte scanned for a
 * relative branch into the displaced bytes, decoded only if there could
 * be one) gives the exact one's answer on every function of the .dynsym
 * of libc and the files in FILES, bodies up to 64 KiB; *DECODED counts
 * the functions the fast check had to decode. */
static void check_file(const char *path, unsigned *ok, unsigned *into,
		       struct fast_stats *st)
{
	static uint8_t body[64 << 10];
	Elf_Scn *scn = NULL, *text;
	struct arch_patch p;
	char err[256], err2[256];
	GElf_Shdr sh, th;
	GElf_Sym sym;
	Elf_Data *d, *td;
	int fd = open(path, O_RDONLY), r;
	Elf *e;
	size_t i, len;

	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	while ((scn = elf_nextscn(e, scn))) {
		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			gelf_getsym(d, (int)i, &sym);
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
				continue;
			text = elf_getscn(e, sym.st_shndx);
			gelf_getshdr(text, &th);
			td = elf_getdata(text, NULL);
			if (th.sh_type != SHT_PROGBITS || sym.st_value < th.sh_addr ||
			    sym.st_value - th.sh_addr >= td->d_size)
				continue;
			len = sym.st_size < sizeof(body) ? sym.st_size : sizeof(body);
			if (len > td->d_size - (sym.st_value - th.sh_addr))
				len = td->d_size - (sym.st_value - th.sh_addr);
			memcpy(body, (char *)td->d_buf + (sym.st_value - th.sh_addr), len);
			fast_plan(elf_strptr(e, sh.sh_link, sym.st_name), body, len,
				  sym.st_value, st);
			fast_insns(elf_strptr(e, sh.sh_link, sym.st_name), body, len,
				   sym.st_value, st);
			err[0] = '\0';
			r = arch_patch_plan(&p, body, len, sym.st_value, err, sizeof(err));
			if (r && !strstr(err, "branches into the patched bytes"))
				continue;	/* refused before the body check */
			err2[0] = '\0';
			if (arch_patch_check_body(&p, body, len, 1, err2, sizeof(err2)) != r ||
			    strcmp(err, err2))
				fail_msg("%s: %s at %#lx: fast %d '%s', exact '%s'", path,
					 elf_strptr(e, sh.sh_link, sym.st_name),
					 (unsigned long)sym.st_value, r, err, err2);
			*(r ? into : ok) += 1;
		}
	}
	elf_end(e);
	close(fd);
}

/* Far from the entry (beyond a short branch's reach, where the fast check
 * only scans): a jmp rel32, a call rel32 and a jcc rel32 into the
 * displaced bytes are each refused; one to their first byte is not. */
static void synthetic_far_branches(void)
{
	static const uint8_t ops[][2] = { { 0xe9, 0 }, { 0xe8, 0 }, { 0x0f, 0x85 } };
	uint8_t body[1024];
	struct arch_patch p;
	char err[256];
	unsigned k, at, n, target;
	int32_t rel;

	for (k = 0; k < 3; k++) {
		for (target = 0; target < 3; target += 2) {
			memset(body, 0x90, sizeof(body));	/* nops */
			at = 700;
			n = ops[k][0] == 0x0f ? 6 : 5;
			body[at] = ops[k][0];
			if (n == 6)
				body[at + 1] = ops[k][1];
			rel = (int32_t)target - (int32_t)(at + n);
			memcpy(body + at + n - 4, &rel, 4);
			body[sizeof(body) - 1] = 0xc3;
			err[0] = '\0';
			assert_int_equal(arch_patch_plan(&p, body, sizeof(body), 0x1000,
							 err, sizeof(err)), target ? -1 : 0);
			if (target)
				assert_non_null(strstr(err, "branches into the patched bytes"));
		}
	}
}

/* A byte that would be a branch into the displaced bytes but is the
 * middle of another instruction (mov $0xf9eb, %eax: eb f9 is jmp .-7 if
 * read from there) is decoded and let through; the same two bytes as an
 * instruction are refused. */
static void synthetic_candidates(void)
{
	/* push %rbp; mov %rsp,%rbp; push %rbx: displaced (5 bytes) */
	static const uint8_t inside_mov[] = { 0x55, 0x48, 0x89, 0xe5, 0x53,
		0x90, 0xb8, 0xeb, 0xf9, 0x00, 0x00, 0x5b, 0x5d, 0xc3 };
	static const uint8_t real_jmp[] = { 0x55, 0x48, 0x89, 0xe5, 0x53,
		0x90, 0x90, 0xeb, 0xf8, 0x5b, 0x5d, 0xc3 };
	struct arch_patch p;
	char err[256];

	assert_int_equal(arch_patch_plan(&p, inside_mov, sizeof(inside_mov),
					 0x1000, err, sizeof(err)), 0);
	assert_int_equal(p.len, 5);
	err[0] = '\0';
	assert_int_equal(arch_patch_plan(&p, real_jmp, sizeof(real_jmp),
					 0x1000, err, sizeof(err)), -1);
	assert_string_equal(err, "'jmp 0x1001' at 0x1007 branches into the "
			    "patched bytes [0x1000, 0x1005)");
}

static void test_fast_body_check(void **state)
{
	static const char *const files[] = {
		LIBC,
		"/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/lib/x86_64-linux-gnu/libm.so.6",
		"/lib64/ld-linux-x86-64.so.2",
	};
	struct fast_stats st = { 0 };
	unsigned ok = 0, into = 0, i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		check_file(files[i], &ok, &into, &st);
	printf("# fastdec: %u instructions as capstone decodes them; %u of %u "
	       "entries planned without capstone\n", st.insns, st.plans_fast,
	       st.plans);
	/* libc alone has about 2,000 exported functions */
	assert_true(ok > 2000);
	assert_true(into > 0);
	synthetic_far_branches();
	synthetic_candidates();
	if (getenv("PTLEAK_BENCH"))
		printf("# body check: %u functions patchable, %u refused for a "
		       "branch into the displaced bytes\n", ok, into);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glibc_malloc),
		cmocka_unit_test(test_glibc_free),
		cmocka_unit_test(test_glibc_calloc),
		cmocka_unit_test(test_glibc_realloc),
		cmocka_unit_test(test_glibc_memalign),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_branch_to_edges),
		cmocka_unit_test(test_endbr_jcc8),
		cmocka_unit_test(test_tail_jmp_and_trampoline),
		cmocka_unit_test(test_fast_body_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
