/*
 * entry.c - main's address from an x86-64 glibc executable's _start.
 *
 * glibc's _start (sysdeps/x86_64/start.S) ends with
 *	lea main(%rip), %rdi		PIE, after the linker's relaxation
 *	mov $main, %rdi			position-dependent
 *	mov main@GOTPCREL(%rip), %rdi	PIE linked with --no-relax
 *	call *__libc_start_main@GOTPCREL(%rip)	(a direct call when static)
 * so the last value given to %rdi before the first call is main.  Stripped
 * executables have no symbol for it; this is how their stacks are still
 * cut at main.
 */
#include "arch/arch.h"
#include "cs.h"
#include "fastdec.h"
#include <string.h>

/* What INSN, which writes %rdi or %edi, puts there: 0 value, 1 pointer to
 * it, -1 unknown. */
static int rdi_source(const cs_insn *insn, uint64_t *v)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *src;

	if (x->op_count != 2 || x->operands[0].type != X86_OP_REG)
		return -1;
	src = &x->operands[1];
	if (insn->id == X86_INS_MOV && src->type == X86_OP_IMM) {
		*v = x->operands[0].reg == X86_REG_EDI ? (uint32_t)src->imm :
							 (uint64_t)src->imm;
		return 0;
	}
	if (src->type != X86_OP_MEM || src->mem.base != X86_REG_RIP ||
	    src->mem.index != X86_REG_INVALID ||
	    x->operands[0].reg != X86_REG_RDI)
		return -1;
	*v = insn->address + insn->size + (uint64_t)src->mem.disp;
	if (insn->id == X86_INS_LEA)
		return 0;
	return insn->id == X86_INS_MOV ? 1 : -1;
}

static int writes_rdi(const cs_insn *insn)
{
	const cs_detail *d = insn->detail;
	uint8_t i;

	for (i = 0; i < d->regs_write_count; i++)
		if (d->regs_write[i] == X86_REG_RDI || d->regs_write[i] == X86_REG_EDI)
			return 1;
	return d->x86.op_count >= 1 && d->x86.operands[0].type == X86_OP_REG &&
	       (d->x86.operands[0].access & CS_AC_WRITE) &&
	       (d->x86.operands[0].reg == X86_REG_RDI ||
		d->x86.operands[0].reg == X86_REG_EDI ||
		d->x86.operands[0].reg == X86_REG_DI ||
		d->x86.operands[0].reg == X86_REG_DIL);
}

/*
 * The register an instruction fastdec decoded (F at C) writes, for what
 * glibc's _start holds: 16 none (or memory, or %rsp), else 0-15; -1 an
 * 8-bit form with register 7 or a prefix other than REX (not worth
 * telling apart: capstone decides).
 */
static int fast_dest(const uint8_t *c, const struct x86_fast *f)
{
	unsigned i = 0, rex = 0, op, m, reg, rm, rexr, rexb;
	int byte;

	if (f->endbr64)
		return 16;
	if ((c[0] & 0xf0) == 0x40)
		rex = c[i++];
	if (c[i] == 0x66 || c[i] == 0x64 || c[i] == 0x65)
		return -1;
	op = c[i++];
	rexr = rex & 4 ? 8 : 0;
	rexb = rex & 1 ? 8 : 0;
	if (op == 0x0f) {
		op = 0x100 | c[i++];
		if (op == 0x11f)
			return 16;		/* nopl */
	}
	if (op >= 0x50 && op <= 0x57)
		return 16;			/* push */
	if (op >= 0x58 && op <= 0x5f)
		return (int)((op & 7) + rexb);	/* pop */
	if (op >= 0xb0 && op <= 0xbf)		/* mov $imm, reg */
		return op < 0xb8 && (op & 7) == 7 ? -1 : (int)((op & 7) + rexb);
	if (op == 0x90 || op == 0xa8 || op == 0xa9 || op == 0x84 || op == 0x85 ||
	    (op < 0x40 && ((op & 7) == 4 || (op & 7) == 5)))
		return 16;			/* nop, test; op $imm, %al/%eax */
	m = c[i];
	reg = ((m >> 3) & 7) + rexr;
	rm = m >> 6 == 3 ? (m & 7) + rexb : 16;	/* 16: memory */
	byte = op == 0x80 || op == 0xc0 || op == 0xc6 || op == 0xf6 ||
	       op == 0x88 || op == 0x8a || (op < 0x40 && !(op & 1)) ||
	       (op & 0x1f0) == 0x190;
	if (op < 0x40 && (op & 0x38) == 0x38)
		return 16;			/* cmp */
	if ((op == 0x80 || op == 0x81 || op == 0x83) && ((m >> 3) & 7) == 7)
		return 16;			/* cmp $imm */
	if ((op == 0xf6 || op == 0xf7) && ((m >> 3) & 7) != 2 && ((m >> 3) & 7) != 3)
		return 16;			/* test $imm; mul/div: %rax, %rdx */
	if ((op < 0x40 && (op & 2)) || op == 0x8a || op == 0x8b || op == 0x8d ||
	    op == 0x63 || (op & 0x1f0) == 0x140 || op == 0x1af || op == 0x1b6 ||
	    op == 0x1b7 || op == 0x1be || op == 0x1bf)
		rm = reg;			/* the destination is ModRM.reg */
	return byte && (rm & 7) == 7 ? -1 : (int)rm;
}

int x86_main_fast(const uint8_t *code, size_t len, uint64_t entry,
		  uint64_t *addr)
{
	size_t o = 0;
	uint64_t v = 0;
	int kind = -1;

	while (o < len) {
		const uint8_t *c = code + o;
		size_t n = len - o;
		struct x86_fast f;
		int32_t d;
		int r;

		/* call rel32, addr32 call rel32, call *disp32(%rip) */
		if ((n >= 5 && c[0] == 0xe8) || (n >= 6 && c[0] == 0x67 && c[1] == 0xe8) ||
		    (n >= 6 && c[0] == 0xff && c[1] == 0x15)) {
			if (kind >= 0)
				*addr = v;
			return kind;
		}
		if (!x86_fast_decode(c, n, &f))
			return -2;
		if (f.branch)
			return -1;		/* no call before a jump */
		o += f.len;
		if (f.len == 7 && c[0] == 0x48 && (c[1] == 0x8d || c[1] == 0x8b) &&
		    c[2] == 0x3d) {
			/* lea/mov disp32(%rip), %rdi */
			memcpy(&d, c + 3, 4);
			v = entry + o + (uint64_t)(int64_t)d;
			kind = c[1] == 0x8d ? 0 : 1;
			continue;
		}
		if (f.len == 7 && c[0] == 0x48 && c[1] == 0xc7 && c[2] == 0xc7) {
			memcpy(&d, c + 3, 4);		/* mov $imm32, %rdi */
			v = (uint64_t)(int64_t)d;
			kind = 0;
			continue;
		}
		if (f.len == 5 && c[0] == 0xbf) {
			uint32_t u;

			memcpy(&u, c + 1, 4);		/* mov $imm32, %edi */
			v = u;
			kind = 0;
			continue;
		}
		r = fast_dest(c, &f);
		if (r == 7 || r < 0)
			return -2;
	}
	return -2;
}

int arch_main_from_entry(const uint8_t *code, size_t len, uint64_t entry,
			 uint64_t *addr)
{
	const uint8_t *p = code;
	uint64_t pc = entry, v = 0;
	int kind = -1, ret = -1;
	csh h;
	cs_insn *insn;

	if (!x86_fast_off) {
		ret = x86_main_fast(code, len, entry, addr);
		if (ret != -2)
			return ret;
		ret = -1;
	}
	h = x86_cs_detail();
	if (!h)
		return -1;
	insn = cs_malloc(h);
	while (insn && cs_disasm_iter(h, &p, &len, &pc, insn)) {
		if (cs_insn_group(h, insn, CS_GRP_CALL)) {
			if (kind >= 0) {
				*addr = v;
				ret = kind;
			}
			break;
		}
		if (cs_insn_group(h, insn, CS_GRP_JUMP) ||
		    cs_insn_group(h, insn, CS_GRP_RET) || insn->id == X86_INS_HLT)
			break;
		if (writes_rdi(insn))
			kind = rdi_source(insn, &v);
	}
	if (insn)
		cs_free(insn, 1);
	return ret;
}
