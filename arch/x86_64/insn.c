/*
 * insn.c - x86-64 instruction analysis and out-of-line execution (the
 * emulation of what it sorts as emulated is emulate.c).
 *
 * arch_insn_analyse() decodes the instruction a breakpoint displaces (with
 * capstone; endbr64, ret, push r64, mov r,r and mov $imm32 without it:
 * x86_fast_analyse) and sorts it into one of three classes:
 *
 *   emulated   push r64, test, cmp (reg/imm/memory forms), mov reg/imm to
 *              reg, nop/endbr, ret, jmp rel8/rel32, jmp *reg, jmp *mem:
 *              the tracer computes the effect on the registers (and, for
 *              push, the stack) itself.
 *   XOL        any other instruction that is not control flow: it is run
 *              from a slot of the scratch page, followed by an absolute
 *              jump back (arch_xol_build).
 *   refused    call, jcc, loop/jrcxz, ret imm16, far transfers, int/int3/
 *              syscall/sysenter, iret, xbegin, ud0/ud2, privileged
 *              instructions, %rip used other than as the base of a memory
 *              operand, eip-relative addressing, anything capstone cannot
 *              decode.
 *
 * Private encoding of struct arch_insn's operand fields:
 *   reg, reg2  register numbers: 0..15 in hardware order (rax, rcx, rdx,
 *              rbx, rsp, rbp, rsi, rdi, r8..r15), 16..19 for ah, ch, dh, bh,
 *              -1 for none.  For a memory operand reg is its base (REG_RIP
 *              for rip-relative) and reg2 packs the index register, the
 *              scale and the segment (MEM_* in insn_priv.h).
 *   size       operand size in bytes.
 *   imm        immediate, sign-extended from its encoding then truncated to
 *              size; for jmp rel8/rel32 the absolute target.
 *   disp       displacement of a memory operand (sign-extended).
 */
#include <capstone/capstone.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "cs.h"
#include "fastdec.h"
#include "emulate.h"
#include "insn_enc.h"

/*
 * int3 (where hijacked returns land); syscall, jmp . (injections); the
 * clone's: syscall, its child (rax 0) exit_group(0), the caller jmp .
 * ptleak takes the thread at the step's trap right after the syscall;
 * the spins only run if ptleak dies meanwhile: the thread waits there
 * for the guardian (guard.h), a snapshot's child leaves.
 */
const uint8_t arch_trampoline_code[] = {
	0xcc,				/* 0: int3 */
	0x0f, 0x05,			/* 1: syscall */
	0xeb, 0xfe,			/* 3: jmp . */
	0x0f, 0x05,			/* 5: syscall */
	0x48, 0x85, 0xc0,		/* 7: test %rax,%rax */
	0x75, 0x09,			/* 10: jnz 21 */
	0xb8, 0xe7, 0x00, 0x00, 0x00,	/* 12: mov $231 (exit_group),%eax */
	0x31, 0xff,			/* 17: xor %edi,%edi */
	0x0f, 0x05,			/* 19: syscall */
	0xeb, 0xfe,			/* 21: jmp . */
};
const size_t arch_trampoline_syscall = 1;
const size_t arch_trampoline_clone = 5;
_Static_assert(sizeof(arch_trampoline_code) <= ARCH_XOL_SLOT_SIZE,
	       "the trampoline takes one scratch slot");
const size_t arch_trampoline_len = sizeof(arch_trampoline_code);

/* ------------------------------------------------------------------ */
/* capstone registers */

/* capstone register -> our number and its size; -1 if not a GPR */
static int cs_gpr(unsigned int reg, int *size)
{
	static const struct {
		uint16_t cs;
		int8_t num, size;
	} map[] = {
#define GPR(n, q, d, w, b) \
	{ X86_REG_##q, n, 8 }, { X86_REG_##d, n, 4 }, \
	{ X86_REG_##w, n, 2 }, { X86_REG_##b, n, 1 }
		GPR(0, RAX, EAX, AX, AL), GPR(1, RCX, ECX, CX, CL),
		GPR(2, RDX, EDX, DX, DL), GPR(3, RBX, EBX, BX, BL),
		GPR(4, RSP, ESP, SP, SPL), GPR(5, RBP, EBP, BP, BPL),
		GPR(6, RSI, ESI, SI, SIL), GPR(7, RDI, EDI, DI, DIL),
		GPR(8, R8, R8D, R8W, R8B), GPR(9, R9, R9D, R9W, R9B),
		GPR(10, R10, R10D, R10W, R10B), GPR(11, R11, R11D, R11W, R11B),
		GPR(12, R12, R12D, R12W, R12B), GPR(13, R13, R13D, R13W, R13B),
		GPR(14, R14, R14D, R14W, R14B), GPR(15, R15, R15D, R15W, R15B),
#undef GPR
		{ X86_REG_AH, REG_AH + 0, 1 }, { X86_REG_CH, REG_AH + 1, 1 },
		{ X86_REG_DH, REG_AH + 2, 1 }, { X86_REG_BH, REG_AH + 3, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].cs == reg) {
			if (size)
				*size = map[i].size;
			return map[i].num;
		}
	return -1;
}

static int is_rip(unsigned int reg)
{
	return reg == X86_REG_RIP || reg == X86_REG_EIP || reg == X86_REG_IP;
}

/* ------------------------------------------------------------------ */
/* analysis */

static void fmt_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fmt_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int64_t sext(uint64_t v, int size)
{
	int sh = 64 - 8 * size;

	return size >= 8 ? (int64_t)v : (int64_t)(v << sh) >> sh;
}

/* little-endian SIZE-byte field at OFF of the instruction, sign-extended */
static int64_t field(const struct arch_insn *insn, int off, int size)
{
	uint64_t v = 0;
	int i;

	for (i = size - 1; i >= 0; i--)
		v = v << 8 | insn->bytes[off + i];
	return sext(v, size);
}

/* immediate of the instruction truncated to SIZE; -1 if not found */
static int get_imm(struct arch_insn *insn, const cs_x86 *x, int size)
{
	int off = x->encoding.imm_offset, n = x->encoding.imm_size;

	if (!off || (n != 1 && n != 2 && n != 4 && n != 8) ||
	    off + n > insn->len)
		return -1;
	insn->imm = (int64_t)((uint64_t)field(insn, off, n) & size_mask(size));
	return 0;
}

/*
 * Describe memory operand OP in insn->reg/reg2/disp, for emulation.
 * -1 if the tracer cannot compute its address (32-bit addressing, an
 * index that is not a general register).
 */
static int get_mem(struct arch_insn *insn, const cs_x86 *x, const cs_x86_op *op)
{
	int base = REG_NONE, index = MEM_NO_INDEX, seg = 0, shift;

	if (x->addr_size != 8)
		return -1;
	if (op->mem.base == X86_REG_RIP)
		base = REG_RIP;
	else if (op->mem.base != X86_REG_INVALID) {
		int sz;

		base = cs_gpr(op->mem.base, &sz);
		if (base < 0 || base >= 16 || sz != 8)
			return -1;
	}
	if (op->mem.index != X86_REG_INVALID && op->mem.index != X86_REG_RIZ) {
		int sz;

		index = cs_gpr(op->mem.index, &sz);
		if (index < 0 || index >= 16 || sz != 8)
			return -1;
	}
	switch (op->mem.scale) {
	case 1: shift = 0; break;
	case 2: shift = 1; break;
	case 4: shift = 2; break;
	case 8: shift = 3; break;
	default: return -1;
	}
	if (op->mem.segment == X86_REG_FS)
		seg = MEM_SEG_FS;
	else if (op->mem.segment == X86_REG_GS)
		seg = MEM_SEG_GS;
	insn->reg = base;
	insn->reg2 = MEM_PACK(index, shift, seg);
	insn->disp = op->mem.disp;
	return 0;
}

/* An operand size the emulator handles. */
static int ok_size(int size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/*
 * Choose an emulation for the decoded instruction: sets insn->ops and the
 * operand fields and returns 1, or returns 0 (then the caller decides
 * between XOL and refusal).
 */
static int pick_emulation(struct arch_insn *insn, const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	int n = x->op_count, s0 = 0, s1 = 0, r0 = -1, r1 = -1;

	if (n >= 1 && o0->type == X86_OP_REG)
		r0 = cs_gpr(o0->reg, &s0);
	if (n >= 2 && o1->type == X86_OP_REG)
		r1 = cs_gpr(o1->reg, &s1);

	switch (ci->id) {
	case X86_INS_NOP:
	case X86_INS_ENDBR64:
	case X86_INS_ENDBR32:
		insn->ops = &x86_ops_nop;
		return 1;

	case X86_INS_PUSH:
		/* push r64 (50+r, 41 50+r); pushw and push imm/mem go XOL */
		if (n == 1 && r0 >= 0 && s0 == 8) {
			insn->ops = &x86_ops_push;
			insn->reg = r0;
			insn->size = 8;
			return 1;
		}
		return 0;

	case X86_INS_RET:
		/* c3, rep/bnd ret; not ret imm16, not the 16-bit 66 c3 */
		if (n == 0 && x->prefix[2] != 0x66) {
			insn->ops = &x86_ops_ret;
			return 1;
		}
		return 0;

	case X86_INS_JMP:
		if (x->prefix[2] == 0x66 || n != 1)
			return 0;	/* jmp rel16 / jmpw: refused */
		if (o0->type == X86_OP_IMM) {
			insn->ops = &x86_ops_jmp;
			insn->imm = o0->imm;	/* capstone's absolute target */
			return 1;
		}
		if (o0->type == X86_OP_REG && r0 >= 0 && r0 < 16 && s0 == 8) {
			insn->ops = &x86_ops_jmp_reg;
			insn->reg = r0;
			insn->size = 8;
			return 1;
		}
		if (o0->type == X86_OP_MEM && o0->size == 8 &&
		    !get_mem(insn, x, o0)) {
			insn->ops = &x86_ops_jmp_mem;
			insn->size = 8;
			return 1;
		}
		return 0;

	case X86_INS_MOV:
	case X86_INS_MOVABS:
		if (n != 2 || r0 < 0 || !ok_size(s0))
			return 0;
		if (r1 >= 0 && s1 == s0) {
			insn->ops = &x86_ops_mov_rr;
			insn->reg = r0;
			insn->reg2 = r1;
			insn->size = s0;
			return 1;
		}
		if (o1->type == X86_OP_IMM && !get_imm(insn, x, s0)) {
			insn->ops = &x86_ops_mov_ri;
			insn->reg = r0;
			insn->size = s0;
			return 1;
		}
		return 0;

	case X86_INS_TEST:
	case X86_INS_CMP: {
		int is_test = ci->id == X86_INS_TEST;

		if (n != 2)
			return 0;
		if (r0 >= 0 && r1 >= 0 && s0 == s1 && ok_size(s0)) {
			insn->ops = is_test ? &x86_ops_test_rr : &x86_ops_cmp_rr;
			insn->reg = r0;
			insn->reg2 = r1;
			insn->size = s0;
			return 1;
		}
		if (r0 >= 0 && ok_size(s0) && o1->type == X86_OP_IMM &&
		    !get_imm(insn, x, s0)) {
			insn->ops = is_test ? &x86_ops_test_ri : &x86_ops_cmp_ri;
			insn->reg = r0;
			insn->size = s0;
			return 1;
		}
		if (o0->type == X86_OP_MEM && ok_size(o0->size) &&
		    o1->type == X86_OP_IMM && !get_imm(insn, x, o0->size) &&
		    !get_mem(insn, x, o0)) {
			if (insn->reg == REG_RIP)
				insn->ops = is_test ? &x86_ops_test_rip : &x86_ops_cmp_rip;
			else
				insn->ops = is_test ? &x86_ops_test_mi : &x86_ops_cmp_mi;
			insn->size = o0->size;
			return 1;
		}
		/* reg/mem pairs go XOL: get_imm/get_mem may have left data */
		insn->reg = insn->reg2 = REG_NONE;
		insn->imm = insn->disp = 0;
		return 0;
	}
	}
	return 0;
}

/* Why an instruction can be neither emulated nor run out of line, or NULL. */
static const char *refusal(const cs_insn *ci)
{
	const cs_detail *d = ci->detail;
	const cs_x86 *x = &d->x86;
	int i;

	switch (ci->id) {
	case X86_INS_CALL:
	case X86_INS_LCALL:
		return "a call";
	case X86_INS_LOOP:
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
	case X86_INS_JRCXZ:
	case X86_INS_JECXZ:
	case X86_INS_JCXZ:
		return "a loop or jump on rcx";
	case X86_INS_RET:
		return x->op_count ? "ret with an immediate" : "a 16-bit ret";
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_LJMP:
		return "a far transfer";
	case X86_INS_JMP:
		return "a jump the tracer cannot emulate";
	case X86_INS_INT:
	case X86_INS_INT1:
	case X86_INS_INT3:
	case X86_INS_INTO:
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
		return "an interrupt or system call";
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
	case X86_INS_SYSRET:
	case X86_INS_SYSEXIT:
		return "an interrupt return";
	case X86_INS_XBEGIN:
		return "a transaction start with a relative abort address";
	case X86_INS_UD0:
	case X86_INS_UD2:
	case X86_INS_UD2B:
		return "an undefined instruction";
	}
	for (i = 0; i < d->groups_count; i++) {
		switch (d->groups[i]) {
		case CS_GRP_JUMP:
		case CS_GRP_BRANCH_RELATIVE:
			return "a conditional or relative jump";
		case CS_GRP_CALL:
			return "a call";
		case CS_GRP_RET:
		case CS_GRP_IRET:
			return "a return";
		case CS_GRP_INT:
			return "an interrupt or system call";
		case CS_GRP_PRIVILEGE:
			return "a privileged instruction";
		}
	}
	for (i = 0; i < d->regs_read_count; i++)
		if (is_rip(d->regs_read[i]))
			return "it reads %rip";
	for (i = 0; i < d->regs_write_count; i++)
		if (is_rip(d->regs_write[i]))
			return "it writes %rip";
	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_REG && is_rip(op->reg))
			return "it uses %rip as an operand";
		if (op->type == X86_OP_MEM && is_rip(op->mem.index))
			return "it uses %rip as an index";
		if (op->type == X86_OP_MEM &&
		    (op->mem.base == X86_REG_EIP || op->mem.base == X86_REG_IP))
			return "it uses eip-relative addressing";
	}
	return NULL;
}

/*
 * Record where the rip-relative displacement sits, for arch_xol_build.
 * -1 with a message if capstone's encoding offsets look wrong.
 */
static int find_rip_disp(struct arch_insn *insn, const cs_insn *ci,
			 char *err, size_t errlen)
{
	const cs_x86 *x = &ci->detail->x86;
	const cs_x86_op *mop = NULL;
	int i, off = x->encoding.disp_offset;

	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM &&
		    x->operands[i].mem.base == X86_REG_RIP)
			mop = &x->operands[i];
	if (!mop)
		return 0;
	if (x->encoding.disp_size != 4 || off < 1 || off + 4 > insn->len ||
	    field(insn, off, 4) != (int64_t)(int32_t)mop->mem.disp) {
		fmt_err(err, errlen, "cannot locate the rip-relative displacement "
			"of '%s' at %#" PRIx64, insn->text, insn->addr);
		return -1;
	}
	insn->rip_relative = 1;
	insn->disp_off = off;
	insn->disp_size = 4;
	insn->disp = field(insn, off, 4);
	return 0;
}

/* "mnemonic operands" into insn->text, truncated if need be */
static void set_text(struct arch_insn *insn, const cs_insn *ci)
{
	size_t n = sizeof(insn->text) - 1, i = 0;
	const char *p;

	for (p = ci->mnemonic; *p && i < n; p++)
		insn->text[i++] = *p;
	if (ci->op_str[0] && i < n)
		insn->text[i++] = ' ';
	for (p = ci->op_str; *p && i < n; p++)
		insn->text[i++] = *p;
	insn->text[i] = '\0';
}

static const char *const gpr64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/* "%eax", "%r10d": register R (0-15) at SIZE 4 or 8. */
static const char *gpr_name(int r, int size, char *buf, size_t len)
{
	const char *name = gpr64[r & 15];

	if (size == 8)
		snprintf(buf, len, "%%%s", name);
	else if ((r & 15) >= 8)
		snprintf(buf, len, "%%%sd", name);
	else
		snprintf(buf, len, "%%e%s", name + 1);
	return buf;
}

int x86_fast_analyse(struct arch_insn *insn, const uint8_t *c, size_t n)
{
	struct x86_fast f;
	unsigned rex = 0, i = 0;
	char a[8], b[8];

	if (x86_fast_off || !n)
		return 0;
	if (c[0] == 0xc3) {
		/* not a fastdec instruction: the patch planner refuses it */
		f.len = 1;
		insn->ops = &x86_ops_ret;
		snprintf(insn->text, sizeof(insn->text), "retq");
	} else if (!x86_fast_decode(c, n, &f)) {
		return 0;
	} else if (f.endbr64) {
		insn->ops = &x86_ops_nop;
		snprintf(insn->text, sizeof(insn->text), "endbr64");
	} else {
		if ((c[0] & 0xf0) == 0x40)
			rex = c[i++];
		if (c[i] >= 0x50 && c[i] <= 0x57 && (!rex || rex == 0x41)) {
			insn->ops = &x86_ops_push;
			insn->reg = (c[i] & 7) + (rex ? 8 : 0);
			insn->size = 8;
			snprintf(insn->text, sizeof(insn->text), "pushq %s",
				 gpr_name(insn->reg, 8, a, sizeof(a)));
		} else if (c[i] >= 0xb8 && c[i] <= 0xbf && (!rex || rex == 0x41) &&
			   f.len == i + 5) {
			uint32_t v;

			memcpy(&v, c + i + 1, 4);
			insn->ops = &x86_ops_mov_ri;
			insn->reg = (c[i] & 7) + (rex ? 8 : 0);
			insn->size = 4;
			insn->imm = v;
			/* capstone's: decimal up to 9 */
			snprintf(insn->text, sizeof(insn->text),
				 v > 9 ? "movl $0x%x, %s" : "movl $%u, %s",
				 v, gpr_name(insn->reg, 4, a, sizeof(a)));
		} else if ((c[i] == 0x89 || c[i] == 0x8b) && c[i + 1] >> 6 == 3 &&
			   (rex & 0xf2) == (rex ? 0x40 : 0)) {
			/* no REX.X; sizes 4 and 8 */
			int size = rex & 8 ? 8 : 4;
			int rm = (c[i + 1] & 7) + (rex & 1 ? 8 : 0);
			int reg = ((c[i + 1] >> 3) & 7) + (rex & 4 ? 8 : 0);

			insn->ops = &x86_ops_mov_rr;
			insn->reg = c[i] == 0x89 ? rm : reg;
			insn->reg2 = c[i] == 0x89 ? reg : rm;
			insn->size = size;
			snprintf(insn->text, sizeof(insn->text), "mov%c %s, %s",
				 size == 8 ? 'q' : 'l',
				 gpr_name(insn->reg2, size, a, sizeof(a)),
				 gpr_name(insn->reg, size, b, sizeof(b)));
		} else {
			return 0;
		}
	}
	insn->len = f.len;
	memcpy(insn->bytes, c, f.len);
	return 1;
}

int arch_insn_analyse(struct arch_insn *insn, uint64_t addr,
		      const uint8_t *code, size_t n, char *err, size_t errlen)
{
	csh h, att;
	cs_insn *ci = NULL, *ca = NULL;
	const char *why;
	char hex[3 * 16 + 1] = "";
	size_t i, avail = n < sizeof(insn->bytes) ? n : sizeof(insn->bytes);
	int ret = -1;

	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	insn->reg = insn->reg2 = REG_NONE;
	for (i = 0; i < avail && i < ARCH_MAX_INSN_LEN; i++)
		snprintf(hex + 3 * i, 4, "%02x ", code[i]);
	if (i)
		hex[3 * i - 1] = '\0';

	if (x86_fast_analyse(insn, code, avail))
		return 0;
	h = x86_cs_detail();
	att = x86_cs_att();

	if (!h) {
		fmt_err(err, errlen, "cannot initialise capstone");
		return -1;
	}
	if (!avail || cs_disasm(h, code, avail, addr, 1, &ci) != 1) {
		fmt_err(err, errlen, "cannot decode the instruction at %#" PRIx64
			" (bytes: %s)", addr, avail ? hex : "none");
		goto out;
	}
	insn->len = ci->size;
	memcpy(insn->bytes, code, ci->size);

	/* the log text in AT&T syntax ("pushq %r12") */
	if (att && cs_disasm(att, code, ci->size, addr, 1, &ca) == 1)
		set_text(insn, ca);
	else
		set_text(insn, ci);

	if (pick_emulation(insn, ci)) {
		if (insn->reg == REG_RIP && find_rip_disp(insn, ci, err, errlen))
			goto out;
		ret = 0;
		goto out;
	}
	why = refusal(ci);
	if (why) {
		fmt_err(err, errlen, "cannot emulate or execute out of line '%s' "
			"at %#" PRIx64 ": %s", insn->text, addr, why);
		goto out;
	}
	insn->ops = &x86_ops_xol;
	if (find_rip_disp(insn, ci, err, errlen))
		goto out;
	ret = 0;
out:
	if (ret)
		insn->ops = NULL;
	if (ca)
		cs_free(ca, 1);
	if (ci)
		cs_free(ci, 1);
	return ret;
}

/* ------------------------------------------------------------------ */
/* out-of-line execution */

/* jmp *0(%rip) followed by the absolute target */
static const uint8_t jmp_abs[6] = { 0xff, 0x25, 0, 0, 0, 0 };

int arch_xol_build(const struct arch_insn *insn, uint64_t slot, uint8_t *buf,
		   char *err, size_t errlen)
{
	uint64_t back = insn->addr + insn->len;
	int i;

	if (!insn->ops || x86_is_branch_ops(insn->ops) || !insn->len) {
		fmt_err(err, errlen, "'%s' at %#" PRIx64 " cannot be executed "
			"out of line", insn->text, insn->addr);
		return -1;
	}
	if (insn->len + sizeof(jmp_abs) + 8 > ARCH_XOL_SLOT_SIZE) {
		fmt_err(err, errlen, "'%s' at %#" PRIx64 " does not fit an "
			"out-of-line slot", insn->text, insn->addr);
		return -1;
	}
	memset(buf, 0xcc, ARCH_XOL_SLOT_SIZE);
	memcpy(buf, insn->bytes, insn->len);
	if (insn->rip_relative) {
		uint64_t target = insn->addr + insn->len + (uint64_t)insn->disp;
		int64_t d = (int64_t)(target - (slot + insn->len));
		int32_t d32 = (int32_t)d;

		if (d != d32) {
			fmt_err(err, errlen, "'%s' at %#" PRIx64 ": its rip-relative "
				"target %#" PRIx64 " is out of reach of a 32-bit "
				"displacement from the out-of-line slot at %#"
				PRIx64, insn->text, insn->addr, target, slot);
			return -1;
		}
		for (i = 0; i < 4; i++)
			buf[insn->disp_off + i] = (uint32_t)d32 >> (8 * i);
	}
	memcpy(buf + insn->len, jmp_abs, sizeof(jmp_abs));
	for (i = 0; i < 8; i++)
		buf[insn->len + sizeof(jmp_abs) + i] = back >> (8 * i);
	return 0;
}

uint64_t arch_xol_fixup_pc(const struct arch_insn *insn, uint64_t slot,
			   uint64_t pc)
{
	if (pc >= slot && pc < slot + insn->len)
		return insn->addr;	/* not executed yet (or restarted) */
	if (pc >= slot + insn->len && pc < slot + ARCH_XOL_SLOT_SIZE)
		return insn->addr + insn->len;	/* executed, at the jump back */
	return pc;
}
