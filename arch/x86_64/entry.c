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
#include "arch.h"
#include "cs.h"

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

int arch_main_from_entry(const uint8_t *code, size_t len, uint64_t entry,
			 uint64_t *addr)
{
	const uint8_t *p = code;
	uint64_t pc = entry, v = 0;
	int kind = -1, ret = -1;
	csh h = x86_cs_detail();
	cs_insn *insn;

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
