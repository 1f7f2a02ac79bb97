/*
 * emulate.c - x86-64 emulation of the instructions a breakpoint displaces
 * (the forms insn.c's arch_insn_analyse() sorts as emulated): the effect
 * on the registers, and for push on the stack, computed by the tracer.
 *
 * Flags: test sets CF = OF = 0 and ZF, SF, PF from the result; AF, which
 * the architecture leaves undefined, is cleared (what Intel and AMD CPUs
 * do).  cmp sets CF, PF, AF, ZF, SF, OF exactly as sub.  Other RFLAGS bits
 * are never changed.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "emulate.h"
#include "insn_enc.h"

#define FL_CF	0x001ULL
#define FL_PF	0x004ULL
#define FL_AF	0x010ULL
#define FL_ZF	0x040ULL
#define FL_SF	0x080ULL
#define FL_OF	0x800ULL
#define FL_ARITH (FL_CF | FL_PF | FL_AF | FL_ZF | FL_SF | FL_OF)

/* ------------------------------------------------------------------ */
/* registers */

static const size_t gpr_off[16] = {
	offsetof(struct user_regs_struct, rax),
	offsetof(struct user_regs_struct, rcx),
	offsetof(struct user_regs_struct, rdx),
	offsetof(struct user_regs_struct, rbx),
	offsetof(struct user_regs_struct, rsp),
	offsetof(struct user_regs_struct, rbp),
	offsetof(struct user_regs_struct, rsi),
	offsetof(struct user_regs_struct, rdi),
	offsetof(struct user_regs_struct, r8),
	offsetof(struct user_regs_struct, r9),
	offsetof(struct user_regs_struct, r10),
	offsetof(struct user_regs_struct, r11),
	offsetof(struct user_regs_struct, r12),
	offsetof(struct user_regs_struct, r13),
	offsetof(struct user_regs_struct, r14),
	offsetof(struct user_regs_struct, r15),
};


static uint64_t gpr_get(const struct arch_regs *r, int idx)
{
	unsigned long long v;

	memcpy(&v, (const char *)&r->r + gpr_off[idx & 15], sizeof(v));
	return v;
}

static void gpr_put(struct arch_regs *r, int idx, uint64_t val)
{
	unsigned long long v = val;

	memcpy((char *)&r->r + gpr_off[idx & 15], &v, sizeof(v));
}

/* Register REG (see the file comment) read as SIZE bytes, zero-extended. */
static uint64_t reg_read(const struct arch_regs *r, int reg, int size)
{
	if (reg >= REG_AH && reg < REG_AH + 4)
		return (gpr_get(r, reg - REG_AH) >> 8) & 0xff;
	return gpr_get(r, reg) & size_mask(size);
}

/* Write like the CPU: 32-bit writes zero-extend, 8/16-bit ones merge. */
static void reg_write(struct arch_regs *r, int reg, int size, uint64_t val)
{
	uint64_t old;

	if (reg >= REG_AH && reg < REG_AH + 4) {
		old = gpr_get(r, reg - REG_AH);
		gpr_put(r, reg - REG_AH, (old & ~0xff00ULL) | ((val & 0xff) << 8));
		return;
	}
	if (size == 8 || size == 4) {
		gpr_put(r, reg, val & size_mask(size));
		return;
	}
	old = gpr_get(r, reg);
	gpr_put(r, reg, (old & ~size_mask(size)) | (val & size_mask(size)));
}

/* ------------------------------------------------------------------ */
/* flags */

static uint64_t flags_szp(uint64_t res, int size)
{
	uint64_t f = 0;

	if (res == 0)
		f |= FL_ZF;
	if ((res >> (8 * size - 1)) & 1)
		f |= FL_SF;
	if (!__builtin_parity((unsigned int)(res & 0xff)))
		f |= FL_PF;
	return f;
}

/* RFLAGS arithmetic bits of "and A, B" (test); AF cleared */
static uint64_t flags_logic(uint64_t a, uint64_t b, int size)
{
	return flags_szp(a & b & size_mask(size), size);
}

/* RFLAGS arithmetic bits of "sub A, B" (cmp) */
static uint64_t flags_sub(uint64_t a, uint64_t b, int size)
{
	uint64_t m = size_mask(size), res, f;

	a &= m;
	b &= m;
	res = (a - b) & m;
	f = flags_szp(res, size);
	if (a < b)
		f |= FL_CF;
	if ((((a ^ b) & (a ^ res)) >> (8 * size - 1)) & 1)
		f |= FL_OF;
	if ((a ^ b ^ res) & 0x10)
		f |= FL_AF;
	return f;
}

static void set_flags(struct arch_regs *r, uint64_t f)
{
	r->r.eflags = (r->r.eflags & ~FL_ARITH) | f;
}

/* ------------------------------------------------------------------ */
/* emulation */

static uint64_t next_pc(const struct arch_insn *insn)
{
	return insn->addr + insn->len;
}

/* effective address of the memory operand described by reg/reg2/disp */
static uint64_t mem_ea(const struct arch_insn *insn, const struct arch_regs *r)
{
	uint64_t ea = (uint64_t)insn->disp;

	if (insn->reg == REG_RIP)
		ea += next_pc(insn);
	else if (insn->reg != REG_NONE)
		ea += gpr_get(r, insn->reg);
	if (MEM_INDEX(insn->reg2) != MEM_NO_INDEX)
		ea += gpr_get(r, MEM_INDEX(insn->reg2)) << MEM_SHIFT(insn->reg2);
	if (MEM_SEG(insn->reg2) == MEM_SEG_FS)
		ea += r->r.fs_base;
	else if (MEM_SEG(insn->reg2) == MEM_SEG_GS)
		ea += r->r.gs_base;
	return ea;
}

/* SIZE bytes (1, 2, 4, 8) little-endian at ADDR, zero-extended */
static int mem_load(const struct arch_mem *mem, uint64_t addr, int size,
		    uint64_t *val)
{
	uint8_t b[8];
	uint64_t v = 0;
	int i;

	if (mem->read(mem->ctx, addr, b, size))
		return -1;
	for (i = size - 1; i >= 0; i--)
		v = v << 8 | b[i];
	*val = v;
	return 0;
}

static int em_nop(const struct arch_insn *insn, struct arch_regs *r,
		  const struct arch_mem *mem)
{
	r->r.rip = next_pc(insn);
	return 0;
}

static int em_push(const struct arch_insn *insn, struct arch_regs *r,
		   const struct arch_mem *mem)
{
	uint64_t v = reg_read(r, insn->reg, 8);	/* push %rsp: the old value */
	uint64_t sp = r->r.rsp - 8;
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = v >> (8 * i);
	if (mem->write(mem->ctx, sp, b, 8))
		return -1;
	r->r.rsp = sp;
	r->r.rip = next_pc(insn);
	return 0;
}

static int em_ret(const struct arch_insn *insn, struct arch_regs *r,
		  const struct arch_mem *mem)
{
	uint64_t pc;

	if (mem_load(mem, r->r.rsp, 8, &pc))
		return -1;
	r->r.rsp += 8;
	r->r.rip = pc;
	return 0;
}

static int em_jmp(const struct arch_insn *insn, struct arch_regs *r,
		  const struct arch_mem *mem)
{
	r->r.rip = (uint64_t)insn->imm;
	return 0;
}

static int em_jmp_reg(const struct arch_insn *insn, struct arch_regs *r,
		      const struct arch_mem *mem)
{
	r->r.rip = reg_read(r, insn->reg, 8);
	return 0;
}

static int em_jmp_mem(const struct arch_insn *insn, struct arch_regs *r,
		      const struct arch_mem *mem)
{
	uint64_t pc;

	if (mem_load(mem, mem_ea(insn, r), 8, &pc))
		return -1;
	r->r.rip = pc;
	return 0;
}

static int em_mov_rr(const struct arch_insn *insn, struct arch_regs *r,
		     const struct arch_mem *mem)
{
	reg_write(r, insn->reg, insn->size, reg_read(r, insn->reg2, insn->size));
	r->r.rip = next_pc(insn);
	return 0;
}

static int em_mov_ri(const struct arch_insn *insn, struct arch_regs *r,
		     const struct arch_mem *mem)
{
	reg_write(r, insn->reg, insn->size, (uint64_t)insn->imm);
	r->r.rip = next_pc(insn);
	return 0;
}

static int em_test_rr(const struct arch_insn *insn, struct arch_regs *r,
		      const struct arch_mem *mem)
{
	set_flags(r, flags_logic(reg_read(r, insn->reg, insn->size),
				 reg_read(r, insn->reg2, insn->size),
				 insn->size));
	r->r.rip = next_pc(insn);
	return 0;
}

static int em_test_ri(const struct arch_insn *insn, struct arch_regs *r,
		      const struct arch_mem *mem)
{
	set_flags(r, flags_logic(reg_read(r, insn->reg, insn->size),
				 (uint64_t)insn->imm, insn->size));
	r->r.rip = next_pc(insn);
	return 0;
}

static int em_test_mi(const struct arch_insn *insn, struct arch_regs *r,
		      const struct arch_mem *mem)
{
	uint64_t v;

	if (mem_load(mem, mem_ea(insn, r), insn->size, &v))
		return -1;
	set_flags(r, flags_logic(v, (uint64_t)insn->imm, insn->size));
	r->r.rip = next_pc(insn);
	return 0;
}

static int em_cmp_rr(const struct arch_insn *insn, struct arch_regs *r,
		     const struct arch_mem *mem)
{
	set_flags(r, flags_sub(reg_read(r, insn->reg, insn->size),
			       reg_read(r, insn->reg2, insn->size),
			       insn->size));
	r->r.rip = next_pc(insn);
	return 0;
}

static int em_cmp_ri(const struct arch_insn *insn, struct arch_regs *r,
		     const struct arch_mem *mem)
{
	set_flags(r, flags_sub(reg_read(r, insn->reg, insn->size),
			       (uint64_t)insn->imm, insn->size));
	r->r.rip = next_pc(insn);
	return 0;
}

static int em_cmp_mi(const struct arch_insn *insn, struct arch_regs *r,
		     const struct arch_mem *mem)
{
	uint64_t v;

	if (mem_load(mem, mem_ea(insn, r), insn->size, &v))
		return -1;
	set_flags(r, flags_sub(v, (uint64_t)insn->imm, insn->size));
	r->r.rip = next_pc(insn);
	return 0;
}

const struct arch_insn_ops x86_ops_nop = { "nop", em_nop };
const struct arch_insn_ops x86_ops_push = { "push", em_push };
const struct arch_insn_ops x86_ops_ret = { "ret", em_ret };
const struct arch_insn_ops x86_ops_jmp = { "jmp", em_jmp };
const struct arch_insn_ops x86_ops_jmp_reg = { "jmp-reg", em_jmp_reg };
const struct arch_insn_ops x86_ops_jmp_mem = { "jmp-mem", em_jmp_mem };
const struct arch_insn_ops x86_ops_mov_rr = { "mov", em_mov_rr };
const struct arch_insn_ops x86_ops_mov_ri = { "mov-imm", em_mov_ri };
const struct arch_insn_ops x86_ops_test_rr = { "test", em_test_rr };
const struct arch_insn_ops x86_ops_test_ri = { "test-imm", em_test_ri };
const struct arch_insn_ops x86_ops_test_mi = { "test-mem", em_test_mi };
const struct arch_insn_ops x86_ops_test_rip = { "test-rip", em_test_mi };
const struct arch_insn_ops x86_ops_cmp_rr = { "cmp", em_cmp_rr };
const struct arch_insn_ops x86_ops_cmp_ri = { "cmp-imm", em_cmp_ri };
const struct arch_insn_ops x86_ops_cmp_mi = { "cmp-mem", em_cmp_mi };
const struct arch_insn_ops x86_ops_cmp_rip = { "cmp-rip", em_cmp_mi };
const struct arch_insn_ops x86_ops_xol = { "xol", NULL };

/* Emulated control transfers cannot be copied to a slot. */
int x86_is_branch_ops(const struct arch_insn_ops *ops)
{
	return ops == &x86_ops_ret || ops == &x86_ops_jmp || ops == &x86_ops_jmp_reg ||
	       ops == &x86_ops_jmp_mem;
}
