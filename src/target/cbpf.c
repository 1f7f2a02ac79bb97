/*
 * cbpf.c - a classic BPF interpreter (the seccomp subset and the rest of
 * the classic instruction set), following the kernel's semantics: 32-bit
 * unsigned accumulator A and index X, 16 scratch words, forward jumps only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "target/cbpf.h"

static int fail(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* A op V; 0, or -1 for an unknown operation. */
static int alu(uint16_t op, uint32_t *a, uint32_t v)
{
	switch (op) {
	case BPF_ADD: *a += v; break;
	case BPF_SUB: *a -= v; break;
	case BPF_MUL: *a *= v; break;
	case BPF_DIV: *a = v ? *a / v : 0; break;
	case BPF_MOD: *a = v ? *a % v : 0; break;
	case BPF_AND: *a &= v; break;
	case BPF_OR: *a |= v; break;
	case BPF_XOR: *a ^= v; break;
	case BPF_LSH: *a = v < 32 ? *a << v : 0; break;
	case BPF_RSH: *a = v < 32 ? *a >> v : 0; break;
	case BPF_NEG: *a = -*a; break;
	default:
		return -1;
	}
	return 0;
}

/* Is the condition of jump OP true for A and V?  -1: unknown jump. */
static int cond(uint16_t op, uint32_t a, uint32_t v)
{
	switch (op) {
	case BPF_JEQ: return a == v;
	case BPF_JGT: return a > v;
	case BPF_JGE: return a >= v;
	case BPF_JSET: return (a & v) != 0;
	default:
		return -1;
	}
}

/* The 32-bit word at OFF of DATA into *V; -1 if out of range. */
static int load(const void *data, size_t len, uint32_t off, uint32_t *v)
{
	if ((off & 3) || off > len || len - off < 4)
		return -1;
	memcpy(v, (const char *)data + off, 4);
	return 0;
}

int cbpf_run(const struct sock_filter *prog, size_t n, const void *data,
	     size_t len, uint32_t *ret, char *err, size_t errlen)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS];
	size_t pc;

	memset(mem, 0, sizeof(mem));
	for (pc = 0; pc < n; pc++) {
		const struct sock_filter *f = &prog[pc];
		uint16_t cls = BPF_CLASS(f->code);
		uint32_t v = BPF_SRC(f->code) == BPF_X ? x : f->k;
		int c;

		switch (cls) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t *dst = cls == BPF_LD ? &a : &x;

			if (BPF_SIZE(f->code) != BPF_W && BPF_MODE(f->code) != BPF_IMM &&
			    BPF_MODE(f->code) != BPF_MEM)
				return fail(err, errlen, "instruction %zu: load "
					    "size %#x", pc, BPF_SIZE(f->code));
			switch (BPF_MODE(f->code)) {
			case BPF_IMM: *dst = f->k; break;
			case BPF_LEN: *dst = (uint32_t)len; break;
			case BPF_MEM:
				if (f->k >= BPF_MEMWORDS)
					return fail(err, errlen, "instruction %zu: "
						    "scratch word %u", pc, f->k);
				*dst = mem[f->k];
				break;
			case BPF_ABS:
				if (cls != BPF_LD || load(data, len, f->k, dst))
					return fail(err, errlen, "instruction %zu: "
						    "load at %u", pc, f->k);
				break;
			default:
				return fail(err, errlen, "instruction %zu: load "
					    "mode %#x", pc, BPF_MODE(f->code));
			}
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				return fail(err, errlen, "instruction %zu: scratch "
					    "word %u", pc, f->k);
			mem[f->k] = cls == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			if (alu(BPF_OP(f->code), &a, v))
				return fail(err, errlen, "instruction %zu: ALU "
					    "operation %#x", pc, BPF_OP(f->code));
			break;
		case BPF_JMP:
			if (BPF_OP(f->code) == BPF_JA) {
				if (f->k >= n - pc - 1)
					return fail(err, errlen, "instruction %zu: "
						    "jump out of the program", pc);
				pc += f->k;
				break;
			}
			c = cond(BPF_OP(f->code), a, v);
			if (c < 0)
				return fail(err, errlen, "instruction %zu: jump "
					    "%#x", pc, BPF_OP(f->code));
			if ((size_t)(c ? f->jt : f->jf) >= n - pc - 1)
				return fail(err, errlen, "instruction %zu: jump "
					    "out of the program", pc);
			pc += c ? f->jt : f->jf;
			break;
		case BPF_RET:
			if (BPF_RVAL(f->code) == BPF_K)
				*ret = f->k;
			else if (BPF_RVAL(f->code) == BPF_A)
				*ret = a;
			else
				return fail(err, errlen, "instruction %zu: return "
					    "%#x", pc, BPF_RVAL(f->code));
			return 0;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else if (BPF_MISCOP(f->code) == BPF_TXA)
				a = x;
			else
				return fail(err, errlen, "instruction %zu: misc "
					    "%#x", pc, BPF_MISCOP(f->code));
			break;
		default:
			return fail(err, errlen, "instruction %zu: class %#x", pc,
				    cls);
		}
	}
	return fail(err, errlen, "no return at the end of the program");
}
