/*
 * fastdec.c - lengths of the plain instructions that open functions,
 * without capstone (fastdec.h).
 *
 * Capstone's first disassembly costs ~1 ms (its tables faulted in and
 * sorted), paid at every launch while the program waits: yet the
 * prologues ptleak displaces are almost all push, mov, lea, sub, test,
 * cmp, xor, nop and endbr64.  These are decoded here; anything else
 * (and any doubt) is left to capstone.  tests/unit/test_patch.c checks
 * every answer against capstone's on every function of the system's
 * libraries.
 */
#include <string.h>

#include "fastdec.h"

int x86_fast_off;

/* One-byte opcodes with a ModRM byte and no immediate that only compute
 * (add/or/adc/sbb/and/sub/xor/cmp in their r/m forms, test, mov, lea,
 * movsxd); their 8-bit forms too. */
static int plain_modrm(uint8_t op)
{
	if (op < 0x40)
		return (op & 7) <= 3;
	return op == 0x63 || op == 0x84 || op == 0x85 ||
	       (op >= 0x88 && op <= 0x8b) || op == 0x8d;
}

/* Bytes of the ModRM byte at B[0], its SIB and displacement (B holds
 * N), or -1; *RIP_OFF: offset of a %rip-relative disp32 from B, else 0. */
static int modrm_len(const uint8_t *b, size_t n, unsigned *rip_off)
{
	unsigned mod, rm, len = 1;

	if (n < 1)
		return -1;
	mod = b[0] >> 6;
	rm = b[0] & 7;
	*rip_off = 0;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (n < 2)
			return -1;
		len = 2;
		if (mod == 0 && (b[1] & 7) == 5)
			len += 4;	/* disp32, no base */
	} else if (mod == 0 && rm == 5) {
		*rip_off = 1;		/* disp32(%rip), whatever REX.B says */
		len += 4;
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len <= n ? (int)len : -1;
}

int x86_fast_decode(const uint8_t *code, size_t n, struct x86_fast *out)
{
	size_t i = 0;
	int opsize16 = 0, seg = 0, rex = 0, rexw = 0, m;
	unsigned rip = 0, imm = 0;
	uint8_t op;

	memset(out, 0, sizeof(*out));
	if (x86_fast_off)
		return 0;
	if (n >= 4 && !memcmp(code, "\xf3\x0f\x1e\xfa", 4)) {
		out->len = 4;
		out->endbr64 = 1;
		return 1;
	}
	/* an operand-size and an fs/gs prefix (stack protector), in either
	 * order, then REX */
	while (i < n && i < 2 && (code[i] == 0x66 || code[i] == 0x64 ||
				  code[i] == 0x65)) {
		if (code[i] == 0x66) {
			if (opsize16)
				return 0;
			opsize16 = 1;
		} else {
			if (seg)
				return 0;
			seg = 1;
		}
		i++;
	}
	if (i < n && (code[i] & 0xf0) == 0x40) {
		rex = 1;
		rexw = (code[i] & 8) != 0;
		i++;
	}
	if (i >= n)
		return 0;
	if (rexw)
		opsize16 = 0;
	op = code[i++];

	if (plain_modrm(op)) {
		if (op == 0x8d && i < n && code[i] >> 6 == 3)
			return 0;	/* lea with a register: invalid */
		m = modrm_len(code + i, n - i, &rip);
	} else if (op < 0x40 && ((op & 7) == 4 || (op & 7) == 5)) {
		/* op %al/%eax, imm */
		m = 0;
		imm = (op & 7) == 4 ? 1 : opsize16 ? 2 : 4;
	} else if (op >= 0x50 && op <= 0x5f && !opsize16 && !rexw) {
		m = 0;			/* push/pop r64 (41: r8-r15) */
	} else if (op == 0x83 || op == 0x80 || op == 0xc0 || op == 0xc1) {
		/* group 1 and shifts, imm8 */
		m = modrm_len(code + i, n - i, &rip);
		imm = 1;
		if (op >= 0xc0 && i < n && ((code[i] >> 3) & 7) == 6)
			return 0;	/* no such shift */
	} else if (op == 0x81) {
		m = modrm_len(code + i, n - i, &rip);
		imm = opsize16 ? 2 : 4;
	} else if ((op == 0xc6 || op == 0xc7) && i < n && ((code[i] >> 3) & 7) == 0) {
		/* mov $imm, r/m (c6/c7 f8 are xabort/xbegin) */
		m = modrm_len(code + i, n - i, &rip);
		imm = op == 0xc6 ? 1 : opsize16 ? 2 : 4;
	} else if (op >= 0xb0 && op <= 0xbf) {
		m = 0;
		imm = op < 0xb8 ? 1 : rexw ? 8 : opsize16 ? 2 : 4;
	} else if ((op == 0xf6 || op == 0xf7) && i < n &&
		   ((code[i] >> 3) & 7) != 1) {
		/* test $imm (/0), not, neg, mul, imul, div, idiv */
		m = modrm_len(code + i, n - i, &rip);
		if (((code[i] >> 3) & 7) == 0)
			imm = op == 0xf6 ? 1 : opsize16 ? 2 : 4;
	} else if (((op & 0xf0) == 0x70 || op == 0xeb || op == 0xe9) &&
		   i == 1) {
		/* jcc rel8, jmp rel8/rel32, no prefix */
		size_t len = op == 0xe9 ? 5 : 2;

		if (len > n)
			return 0;
		out->len = (uint8_t)len;
		out->cc = op == 0xe9 || op == 0xeb ? 16 : op & 0xf;
		out->rel = op == 0xe9 ? (int32_t)(code[1] | code[2] << 8 |
						  code[3] << 16 | (uint32_t)code[4] << 24)
				      : (int8_t)code[1];
		out->branch = 1;
		return 1;
	} else if (op == 0xa8 || op == 0xa9) {
		m = 0;			/* test $imm, %al/%eax */
		imm = op == 0xa8 ? 1 : opsize16 ? 2 : 4;
	} else if (op == 0x90 && !rex && !seg) {
		m = 0;			/* nop, 66 nop */
	} else if (op == 0x0f && i < n) {
		uint8_t op2 = code[i++];

		if (opsize16 && op2 != 0x1f)
			return 0;	/* 66 0f: SSE */
		if ((op2 & 0xf0) == 0x80 && i == 2) {
			/* jcc rel32, no prefix */
			if (i + 4 > n)
				return 0;
			out->len = 6;
			out->cc = op2 & 0xf;
			out->rel = (int32_t)(code[2] | code[3] << 8 | code[4] << 16 |
					     (uint32_t)code[5] << 24);
			out->branch = 1;
			return 1;
		}
		if (op2 == 0x1f && i < n && ((code[i] >> 3) & 7) == 0 &&
		    code[i] >> 6 != 3)
			/* nopl; its register form (0f 1f c6: no compiler
			 * writes it) capstone refuses: so does this */
			m = modrm_len(code + i, n - i, &rip);
		else if ((op2 & 0xf0) == 0x40 || op2 == 0xaf || op2 == 0xb6 ||
			 op2 == 0xb7 || op2 == 0xbe || op2 == 0xbf)
			m = modrm_len(code + i, n - i, &rip);	/* cmov, imul, movzx/sx */
		else if ((op2 & 0xf0) == 0x90 && i < n && ((code[i] >> 3) & 7) == 0)
			m = modrm_len(code + i, n - i, &rip);	/* setcc */
		else
			return 0;
	} else {
		return 0;
	}
	if (m < 0 || i + (size_t)m + imm > n || i + (size_t)m + imm > 15)
		return 0;
	out->len = (uint8_t)(i + (size_t)m + imm);
	out->rip_off = rip ? (uint8_t)(i + rip) : 0;
	return 1;
}
