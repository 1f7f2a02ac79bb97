/*
 * patch.c - x86-64 side of the recorder's patching (include/arch_patch.h):
 * which instructions a 5-byte jmp displaces at a function's entry, their
 * relocation next to the stub, the entry's jump and the per-function
 * trampoline.  The plain instructions prologues open with are decoded by
 * fastdec.c, the others with the shared capstone handle (cs.h).
 *
 * Why each refusal: a call or ret among the displaced bytes would run with
 * the wrong return address or stack; loop/jrcxz/jecxz and xbegin have
 * only a rel8/rel32 form that cannot be re-aimed further; int3/int/
 * syscall would trap from the code page; an instruction reading %rip
 * other than as a memory base cannot be moved.  A branch of the body into
 * the middle of the displaced bytes would land inside the jump.
 */
#include <capstone/capstone.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch_patch.h"
#include "cs.h"
#include "fastdec.h"

#define OP_JMP_REL32	0xe9
#define OP_JMP_REL8	0xeb
#define OP_INT3		0xcc

static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int fits_rel32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void put32(uint8_t *p, int64_t v)
{
	uint32_t u = (uint32_t)v;

	memcpy(p, &u, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t u;

	memcpy(&u, p, 4);
	return u;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Opcode position after the prefixes a branch may carry (cs/ds branch
 * hints, bnd). */
static unsigned skip_prefixes(const uint8_t *b, unsigned len)
{
	unsigned i = 0;

	while (i < len && (b[i] == 0x2e || b[i] == 0x3e || b[i] == 0xf2))
		i++;
	return i;
}

/* Condition code (0..15) of a jcc rel8/rel32, or -1; jmp: 16. */
static int branch_cc(const uint8_t *b, unsigned len)
{
	unsigned i = skip_prefixes(b, len);

	if (i < len && (b[i] & 0xf0) == 0x70)
		return b[i] & 0xf;
	if (i + 1 < len && b[i] == 0x0f && (b[i + 1] & 0xf0) == 0x80)
		return b[i + 1] & 0xf;
	if (i < len && (b[i] == OP_JMP_REL8 || b[i] == OP_JMP_REL32))
		return 16;
	return -1;
}

/* The absolute target of a relative branch or call, or 0. */
static uint64_t rel_target(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;

	if (!cs_insn_group(x86_cs_detail(), ci, CS_GRP_JUMP) &&
	    !cs_insn_group(x86_cs_detail(), ci, CS_GRP_CALL))
		return 0;
	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return 0;
	return (uint64_t)x->operands[0].imm;
}

static int is_rip(unsigned reg)
{
	return reg == X86_REG_RIP || reg == X86_REG_EIP || reg == X86_REG_IP;
}

/* Why CI cannot be displaced, or NULL. */
static const char *refusal(const cs_insn *ci)
{
	csh h = x86_cs_detail();
	const cs_x86 *x = &ci->detail->x86;
	int i;

	if (cs_insn_group(h, ci, CS_GRP_CALL))
		return "a call (its return address would be the code page's)";
	if (cs_insn_group(h, ci, CS_GRP_RET) || cs_insn_group(h, ci, CS_GRP_IRET))
		return "a return";
	if (cs_insn_group(h, ci, CS_GRP_INT) || ci->id == X86_INS_INT3)
		return "a trap";
	switch (ci->id) {
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
	case X86_INS_JRCXZ: case X86_INS_JECXZ: case X86_INS_JCXZ:
	case X86_INS_XBEGIN:
		return "a branch with no rel32 form";
	}
	if (cs_insn_group(h, ci, CS_GRP_PRIVILEGE))
		return "privileged";
	if (cs_insn_group(h, ci, CS_GRP_BRANCH_RELATIVE) &&
	    branch_cc(ci->bytes, ci->size) < 0)
		return "a relative branch of an unknown encoding";
	if (cs_insn_group(h, ci, CS_GRP_JUMP))
		return NULL;	/* jmp *reg / *mem: a rip base is rewritten */
	for (i = 0; i < ci->detail->regs_read_count; i++)
		if (is_rip(ci->detail->regs_read[i]))
			return "it reads %rip";
	for (i = 0; i < x->op_count; i++) {
		if (x->operands[i].type == X86_OP_REG && is_rip(x->operands[i].reg))
			return "it uses %rip as an operand";
		if (x->operands[i].type == X86_OP_MEM &&
		    (is_rip(x->operands[i].mem.index) ||
		     x->operands[i].mem.base == X86_REG_EIP))
			return "it addresses through %eip or a %rip index";
	}
	return NULL;
}

/* "push %r12"-style text of CI for messages. */
static const char *att(const cs_insn *ci, char *buf, size_t len)
{
	cs_insn *a;

	if (cs_disasm(x86_cs_att(), ci->bytes, ci->size, ci->address, 1, &a) != 1) {
		snprintf(buf, len, "%s %s", ci->mnemonic, ci->op_str);
		return buf;
	}
	snprintf(buf, len, "%s%s%s", a->mnemonic, a->op_str[0] ? " " : "",
		 a->op_str);
	cs_free(a, 1);
	return buf;
}

/* Choose the displaced instructions of P from CODE (N bytes at p->at):
 * the plain ones by fastdec, the others by capstone. */
static int plan_insns(struct arch_patch *p, const uint8_t *code, size_t n,
		      char *err, size_t errlen)
{
	const uint8_t *c = code;
	uint64_t addr = p->at;
	cs_insn *ci = NULL;
	struct x86_fast f;
	const char *why;
	char text[256];
	int ret = -1;

	while (p->len < ARCH_PATCH_JMP_LEN) {
		unsigned size;

		if (x86_fast_decode(c, n, &f)) {
			size = f.len;
			c += size, n -= size, addr += size;
		} else {
			csh h = x86_cs_detail();

			if (!h) {
				fail(err, errlen, "capstone could not be opened");
				goto out;
			}
			if (!ci && !(ci = cs_malloc(h))) {
				fail(err, errlen, "capstone: out of memory");
				goto out;
			}
			if (!cs_disasm_iter(h, &c, &n, &addr, ci)) {
				fail(err, errlen, "%s at %#llx: %s", n ? "undecodable instruction" :
				     "function shorter than a 5-byte jump",
				     (unsigned long long)addr, n ? "not patched" :
				     "its symbol's size ends before");
				goto out;
			}
			why = refusal(ci);
			if (why) {
				fail(err, errlen, "cannot relocate '%s' at %#llx: %s",
				     att(ci, text, sizeof(text)),
				     (unsigned long long)ci->address, why);
				goto out;
			}
			size = ci->size;
		}
		p->insn_len[p->ninsns++] = (uint8_t)size;
		p->len += size;
	}
	memcpy(p->orig, code, p->len);
	ret = 0;
out:
	if (ci)
		cs_free(ci, 1);
	return ret;
}

/* Decode BODY from its start (the function's entry) to its end: -1 with
 * a message at the first branch into the displaced bytes, else 0. */
static int decode_all(const struct arch_patch *p, const uint8_t *body,
		      size_t n, char *err, size_t errlen)
{
	csh h = x86_cs_detail();
	cs_insn *ci = h ? cs_malloc(h) : NULL;
	uint64_t addr = p->func, t;
	const uint8_t *c = body;
	char text[256];
	int ret = 0;

	if (!h)
		return fail(err, errlen, "capstone could not be opened");
	if (!ci)
		return fail(err, errlen, "capstone: out of memory");
	while (n) {
		if (!cs_disasm_iter(h, &c, &n, &addr, ci)) {
			/* data or padding: resynchronise a byte further */
			c++, n--, addr++;
			continue;
		}
		t = rel_target(ci);
		if (t > p->at && t < p->at + p->len) {
			ret = fail(err, errlen, "'%s' at %#llx branches into the "
				   "patched bytes [%#llx, %#llx)",
				   att(ci, text, sizeof(text)),
				   (unsigned long long)ci->address,
				   (unsigned long long)p->at,
				   (unsigned long long)(p->at + p->len));
			break;
		}
	}
	cs_free(ci, 1);
	return ret;
}

/* Whether a branch ending at offset END of the body with displacement
 * DISP lands in the displaced bytes (after their first). */
static int lands_inside(const struct arch_patch *p, size_t end, int64_t disp)
{
	uint64_t t = p->func + end + (uint64_t)disp;

	return t > p->at && t < p->at + p->len;
}

/*
 * 1 if some byte of BODY starts a relative branch into the displaced
 * bytes, as if an instruction began there: jmp/jcc/loop/jrcxz rel8,
 * jmp/call/jcc rel32, and their rel16 forms under an operand-size
 * prefix.  Every real such branch has its opcode at some offset, so a
 * body with no candidate has none (no decoding needed); a candidate may
 * be the middle of another instruction: the exact decode decides.
 */
static int branch_candidate(const struct arch_patch *p, const uint8_t *b,
			    size_t n)
{
	size_t o;

	for (o = 0; o + 2 <= n; o++) {
		uint8_t c = b[o];

		if ((c & 0xf0) == 0x70 || c == 0xeb || (c >= 0xe0 && c <= 0xe3)) {
			if (lands_inside(p, o + 2, (int8_t)b[o + 1]))
				return 1;
		} else if (c == 0xe8 || c == 0xe9) {
			if (o + 5 <= n &&
			    lands_inside(p, o + 5, (int32_t)get32(b + o + 1)))
				return 1;
		} else if (c == 0x0f && (b[o + 1] & 0xf0) == 0x80) {
			if (o + 6 <= n &&
			    lands_inside(p, o + 6, (int32_t)get32(b + o + 2)))
				return 1;
		}
		if (c != 0x66 || o + 4 > n)
			continue;
		/* 66 e8/e9 rel16, 66 0f 8x rel16 */
		if ((b[o + 1] == 0xe8 || b[o + 1] == 0xe9) &&
		    lands_inside(p, o + 4, (int16_t)(b[o + 2] | b[o + 3] << 8)))
			return 1;
		if (b[o + 1] == 0x0f && o + 5 <= n && (b[o + 2] & 0xf0) == 0x80 &&
		    lands_inside(p, o + 5, (int16_t)(b[o + 3] | b[o + 4] << 8)))
			return 1;
	}
	return 0;
}

int arch_patch_check_body(const struct arch_patch *p, const uint8_t *body,
			  size_t n, int exact, char *err, size_t errlen)
{
	/* most bodies have no candidate at all: no decoding (capstone
	 * takes ~0.4 us an instruction) */
	if (!exact && !branch_candidate(p, body, n))
		return 0;
	return decode_all(p, body, n, err, errlen);
}

int arch_patch_plan(struct arch_patch *p, const uint8_t *body, size_t body_len,
		    uint64_t func_addr, char *err, size_t errlen)
{
	size_t skip = 0;

	memset(p, 0, sizeof(*p));
	if (body_len >= sizeof(endbr64) && !memcmp(body, endbr64, sizeof(endbr64)))
		skip = sizeof(endbr64);	/* IBT: the landing pad stays first */
	p->func = func_addr;
	p->at = func_addr + skip;
	if (plan_insns(p, body + skip, body_len - skip, err, errlen) < 0)
		return -1;
	return arch_patch_check_body(p, body, body_len, 0, err, errlen);
}

/* A jump from FROM to T: rel32, or `jmp *0(%rip)` + the address. */
static unsigned emit_jmp(uint8_t *b, uint64_t from, uint64_t t)
{
	int64_t rel = (int64_t)(t - (from + 5));

	if (fits_rel32(rel)) {
		b[0] = OP_JMP_REL32;
		put32(b + 1, rel);
		return 5;
	}
	memcpy(b, "\xff\x25\0\0\0\0", 6);
	put64(b + 6, t);
	return 14;
}

/* jcc CC from FROM to T: rel32, or the inverted jcc over an absolute jmp. */
static unsigned emit_jcc(uint8_t *b, uint64_t from, int cc, uint64_t t)
{
	int64_t rel = (int64_t)(t - (from + 6));

	if (fits_rel32(rel)) {
		b[0] = 0x0f;
		b[1] = (uint8_t)(0x80 | cc);
		put32(b + 2, rel);
		return 6;
	}
	b[0] = (uint8_t)(0x70 | (cc ^ 1));
	b[1] = 14;
	return 2 + emit_jmp(b + 2, from + 2, t);
}

/* A jmp (CC 16) or jcc CC from FROM to T: rel32, else absolute. */
static int emit_branch(uint8_t *b, uint64_t from, int cc, uint64_t t)
{
	return cc == 16 ? (int)emit_jmp(b, from, t) : (int)emit_jcc(b, from, cc, t);
}

/* The disp32(%rip) at OFF of the SIZE-byte instruction copied from FROM
 * into B (to run at TO) aimed at its target again: 0, or -1 out of
 * rel32 reach. */
static int rip_retarget(uint8_t *b, unsigned size, unsigned off, uint64_t from,
			uint64_t to, char *err, size_t errlen)
{
	uint64_t target = from + size + (uint64_t)(int64_t)(int32_t)get32(b + off);
	int64_t disp = (int64_t)(target - (to + size));

	if (!fits_rel32(disp))
		return fail(err, errlen, "the %%rip-relative operand at "
			    "%#llx (%#llx) is out of rel32 reach from %#llx",
			    (unsigned long long)from, (unsigned long long)target,
			    (unsigned long long)to);
	put32(b + off, disp);
	return 0;
}

/* One displaced instruction CI moved to TO into B.  Bytes, or -1. */
static int reloc_one(const cs_insn *ci, uint64_t to, uint8_t *b,
		     char *err, size_t errlen)
{
	const cs_x86 *x = &ci->detail->x86;
	int cc = branch_cc(ci->bytes, ci->size), i;

	if (cc >= 0 && cs_insn_group(x86_cs_detail(), ci, CS_GRP_BRANCH_RELATIVE))
		return emit_branch(b, to, cc, (uint64_t)x->operands[0].imm);
	memcpy(b, ci->bytes, ci->size);
	for (i = 0; i < x->op_count; i++) {
		if (x->operands[i].type != X86_OP_MEM ||
		    x->operands[i].mem.base != X86_REG_RIP)
			continue;
		if (x->encoding.disp_size != 4 || x->encoding.disp_offset < 1 ||
		    x->encoding.disp_offset + 4u > ci->size)
			return fail(err, errlen, "capstone gave no displacement "
				    "offset at %#llx", (unsigned long long)ci->address);
		if (rip_retarget(b, ci->size, x->encoding.disp_offset, ci->address,
				 to, err, errlen))
			return -1;
	}
	return ci->size;
}

/* A displaced instruction F (fastdec) at FROM moved to TO into B, as
 * reloc_one does.  Bytes written, or -1. */
static int reloc_fast(const struct x86_fast *f, const uint8_t *code,
		      uint64_t from, uint64_t to, uint8_t *b, char *err,
		      size_t errlen)
{
	if (f->branch)
		return emit_branch(b, to, f->cc,
				   from + f->len + (uint64_t)(int64_t)f->rel);
	memcpy(b, code, f->len);
	if (f->rip_off && rip_retarget(b, f->len, f->rip_off, from, to, err, errlen))
		return -1;
	return f->len;
}

int arch_relocate(const struct arch_patch *p, uint64_t to, uint8_t *buf,
		  char *err, size_t errlen)
{
	const uint8_t *c = p->orig;
	size_t n = p->len;
	uint64_t addr = p->at;
	cs_insn *ci = NULL;
	struct x86_fast f;
	int len = 0, k;

	while (n) {
		if (x86_fast_decode(c, n, &f)) {
			k = reloc_fast(&f, c, addr, to + len, buf + len, err, errlen);
			if (k < 0) {
				len = -1;
				break;
			}
			c += f.len, n -= f.len, addr += f.len;
			len += k;
			continue;
		}
		if (!ci && (!x86_cs_detail() || !(ci = cs_malloc(x86_cs_detail())))) {
			len = fail(err, errlen, "capstone could not be opened");
			break;
		}
		if (!cs_disasm_iter(x86_cs_detail(), &c, &n, &addr, ci)) {
			len = fail(err, errlen, "undecodable instruction at %#llx",
				   (unsigned long long)addr);
			break;
		}
		k = reloc_one(ci, to + len, buf + len, err, errlen);
		if (k < 0) {
			len = -1;
			break;
		}
		len += k;
	}
	if (ci)
		cs_free(ci, 1);
	if (len < 0)
		return -1;
	return len + (int)emit_jmp(buf + len, to + len, p->at + p->len);
}

int arch_patch_jump(const struct arch_patch *p, uint64_t dest, uint8_t *buf,
		    char *err, size_t errlen)
{
	int64_t rel = (int64_t)(dest - (p->at + 5));

	if (!fits_rel32(rel))
		return fail(err, errlen, "stub %#llx out of rel32 reach of %#llx",
			    (unsigned long long)dest, (unsigned long long)p->at);
	memset(buf, OP_INT3, p->len);
	buf[0] = OP_JMP_REL32;
	put32(buf + 1, rel);
	return 0;
}

int arch_trampoline_build(uint64_t at, uint32_t fn, uint64_t orig,
			  uint64_t stub, uint8_t *buf, char *err, size_t errlen)
{
	int64_t rel_orig = (int64_t)(orig - (at + 17));
	int64_t rel_stub = (int64_t)(stub - (at + 28));

	if (!fits_rel32(rel_orig) || !fits_rel32(rel_stub))
		return fail(err, errlen, "trampoline at %#llx: original or stub "
			    "out of rel32 reach", (unsigned long long)at);
	memset(buf, OP_INT3, ARCH_TRAMP_LEN);
	/* %r11 and %r10 as the caller left them, below the return address
	 * where the stub's frame will hold them (rechook.h REC_CALL_IN_R1x):
	 * a caller compiled with -fipa-ra may count on the registers its
	 * callee does not touch */
	memcpy(buf, "\x4c\x89\x5c\x24\xf0", 5);	/* mov %r11, -16(%rsp) */
	memcpy(buf + 5, "\x4c\x89\x54\x24\xe8", 5);	/* mov %r10, -24(%rsp) */
	memcpy(buf + 10, "\x4c\x8d\x1d", 3);		/* lea rel32(%rip), %r11 */
	put32(buf + 13, rel_orig);
	buf[17] = 0x41;				/* mov $fn, %r10d */
	buf[18] = 0xba;
	put32(buf + 19, fn);
	buf[23] = OP_JMP_REL32;			/* jmp rec_stub */
	put32(buf + 24, rel_stub);
	return 0;
}
