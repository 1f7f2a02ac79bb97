/*
 * cfi.c - CFI rows from libdw, and a one-pass interpreter of an FDE's
 * call frame instructions (cfi.h).
 *
 * The interpreter follows libdw's execute_cfi (elfutils libdw/cfi.c) rule
 * for rule, so that its rows are the ones dwarf_cfi_addrframe gives: the
 * CIE's state is the ABI's rules then the CIE's instructions; an FDE's
 * state starts there; DW_CFA_restore takes the CIE's rule back; a row
 * asked at pc is the state at the first advance past pc, and it ends
 * there.  Whatever libdw would refuse, or we do not follow exactly, is
 * CFI_FALLBACK: the caller asks libdw for that FDE.
 */
#include <dwarf.h>
#include <string.h>

#include "recorder/cfi.h"

/* DW_CFA_remember_state nesting kept here; deeper ones are libdw's. */
#define STATE_DEPTH 8

/*
 * Register numbers from this one on are libdw's (it refuses those past
 * INT32_MAX / 8); lower ones past CFI_NREGS are accepted, not tracked.
 */
#define LIBDW_MAX_REG 0x10000u

void cfi_frame_row(Dwarf_Frame *frame, bool signalp, struct cfi_row *row)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int i;

	row->signal = signalp;
	row->cfa_ops = NULL;
	row->cfa_nops = 0;
	if (dwarf_frame_cfa(frame, &ops, &n) < 0) {
		row->cfa = CFI_CFA_INVALID;
	} else if (n == 0) {
		row->cfa = CFI_CFA_UNDEFINED;
	} else if (n == 1 && ops[0].atom == DW_OP_bregx) {
		row->cfa = CFI_CFA_REG;
		row->cfa_reg = ops[0].number;
		row->cfa_off = (int64_t)ops[0].number2;
	} else if (n == 1 && ops[0].atom >= DW_OP_breg0 &&
		   ops[0].atom <= DW_OP_breg31) {
		row->cfa = CFI_CFA_REG;
		row->cfa_reg = ops[0].atom - DW_OP_breg0;
		row->cfa_off = (int64_t)ops[0].number;
	} else {
		row->cfa = CFI_CFA_EXPR;
		row->cfa_ops = ops;
		row->cfa_nops = n;
	}
	for (i = 0; i < CFI_NREGS; i++) {
		struct cfi_loc *l = &row->regs[i];

		l->off = 0;
		if (dwarf_frame_register(frame, i, mem, &ops, &n) < 0)
			l->where = CFI_ERROR;
		else if (n == 0)
			l->where = ops == NULL ? CFI_SAME : CFI_UNDEFINED;
		else if (ops[0].atom != DW_OP_call_frame_cfa)
			l->where = CFI_ELSEWHERE;
		else if (n == 1)
			l->where = CFI_AT_CFA;
		else if (n == 2 && ops[1].atom == DW_OP_plus_uconst)
			*l = (struct cfi_loc){ (int64_t)ops[1].number, CFI_AT_CFA };
		else
			l->where = CFI_ELSEWHERE;
	}
}

/* An interpreter's run: the state, its remembered copies, the operands. */
struct run {
	const struct cfi_cie *cie;	/* NULL while running the CIE's */
	uint64_t caf;
	int64_t daf;
	const uint8_t *p, *end;
	struct cfi_row *fs;
	struct cfi_row stack[STATE_DEPTH + 1];
	unsigned depth;
};

/*
 * A LEB128 operand of at most MAX bytes into *V (its bits, not sign
 * extended), *N bytes: 0, or -1 if it does not end by then or by the
 * instructions' end.  libdw reads at most 10 bytes of a ULEB128 and 9 of
 * an SLEB128 (past that its value is arbitrary: ours is libdw's then).
 */
static int leb(struct run *r, unsigned max, uint64_t *v, unsigned *n)
{
	uint8_t b;

	*v = 0;
	*n = 0;
	do {
		if (r->p >= r->end || *n == max)
			return -1;
		b = *r->p++;
		*v |= (uint64_t)(b & 0x7f) << (7 * *n);
		++*n;
	} while (b & 0x80);
	return 0;
}

static int uleb(struct run *r, uint64_t *v)
{
	unsigned n;

	return leb(r, 10, v, &n);
}

static int sleb(struct run *r, uint64_t *v)
{
	unsigned n;

	if (leb(r, 9, v, &n) < 0)
		return -1;
	if (r->p[-1] & 0x40)
		*v |= ~0ull << (7 * n);
	return 0;
}

/* libdw keeps a register's offset in a 61-bit field. */
static int64_t trunc61(uint64_t v)
{
	return (int64_t)(v << 3) >> 3;
}

/* Rule WHERE (offset V) for register REG; -1 if libdw would refuse REG. */
static int set_reg(struct run *r, uint64_t reg, uint8_t where, uint64_t v)
{
	if (reg >= LIBDW_MAX_REG)
		return -1;
	if (reg < CFI_NREGS)
		r->fs->regs[reg] = (struct cfi_loc){
			where == CFI_AT_CFA ? trunc61(v) : 0, where };
	return 0;
}

/* libdw: redefining the CFA's register or offset needs a register CFA. */
static void require_cfa_reg(struct run *r)
{
	if (r->fs->cfa != CFI_CFA_REG)
		r->fs->cfa = CFI_CFA_INVALID;
}

/*
 * One instruction whose opcode OP does not move the location: 0, or -1
 * for CFI_FALLBACK.
 */
static int execute_one(struct run *r, uint8_t op)
{
	uint64_t reg, v;

	switch (op & 0xc0) {
	case DW_CFA_offset:
		if (uleb(r, &v) < 0)
			return -1;
		return set_reg(r, op & 0x3f, CFI_AT_CFA, v * (uint64_t)r->daf);
	case DW_CFA_restore:
		reg = op & 0x3f;
		goto restore;
	}
	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		if (uleb(r, &reg) < 0 ||
		    (op == DW_CFA_def_cfa ? uleb(r, &v) : sleb(r, &v)) < 0)
			return -1;
		if (op == DW_CFA_def_cfa_sf)
			v *= (uint64_t)r->daf;
		r->fs->cfa = CFI_CFA_REG;
		r->fs->cfa_reg = reg;
		r->fs->cfa_off = (int64_t)v;
		return 0;
	case DW_CFA_def_cfa_register:
		if (uleb(r, &reg) < 0)
			return -1;
		require_cfa_reg(r);
		r->fs->cfa_reg = reg;
		return 0;
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
		if ((op == DW_CFA_def_cfa_offset ? uleb(r, &v) : sleb(r, &v)) < 0)
			return -1;
		if (op == DW_CFA_def_cfa_offset_sf)
			v *= (uint64_t)r->daf;
		require_cfa_reg(r);
		r->fs->cfa_off = (int64_t)v;
		return 0;
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		if (uleb(r, &reg) < 0)
			return -1;
		return set_reg(r, reg, op == DW_CFA_undefined ? CFI_UNDEFINED :
			       CFI_SAME, 0);
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
		if (uleb(r, &reg) < 0 ||
		    ((op == DW_CFA_offset_extended || op == DW_CFA_val_offset) ?
		     uleb(r, &v) : sleb(r, &v)) < 0)
			return -1;
		return set_reg(r, reg, op == DW_CFA_offset_extended ||
			       op == DW_CFA_offset_extended_sf ? CFI_AT_CFA :
			       CFI_ELSEWHERE, v * (uint64_t)r->daf);
	case DW_CFA_GNU_negative_offset_extended:
		if (uleb(r, &reg) < 0 || uleb(r, &v) < 0)
			return -1;
		return set_reg(r, reg, CFI_AT_CFA, -v * (uint64_t)r->daf);
	case DW_CFA_register:
		if (uleb(r, &reg) < 0 || uleb(r, &v) < 0)
			return -1;
		return set_reg(r, reg, CFI_ELSEWHERE, 0);
	case DW_CFA_restore_extended:
		if (uleb(r, &reg) < 0)
			return -1;
	restore:
		/* not in the CIE's own instructions (libdw refuses it) */
		if (!r->cie || reg >= LIBDW_MAX_REG)
			return -1;
		if (reg < CFI_NREGS)
			r->fs->regs[reg] = r->cie->init.regs[reg];
		return 0;
	case DW_CFA_remember_state:
		if (r->depth == STATE_DEPTH)
			return -1;
		r->stack[r->depth + 1] = *r->fs;
		r->fs = &r->stack[++r->depth];
		return 0;
	case DW_CFA_restore_state:
		if (r->depth == 0)
			return -1;
		r->fs = &r->stack[--r->depth];
		return 0;
	case DW_CFA_GNU_args_size:
		return uleb(r, &v);
	default:
		/* expressions, set_loc, window_save, unknown opcodes */
		return -1;
	}
}

/* The FDE's location operand of advance opcode OP into *D: 1, 0 if OP is
 * not an advance, -1 if its operand is cut short. */
static int advance(struct run *r, uint8_t op, uint64_t *d)
{
	size_t n;

	if ((op & 0xc0) == DW_CFA_advance_loc) {
		*d = op & 0x3f;
		return 1;
	}
	switch (op) {
	case DW_CFA_advance_loc1: n = 1; break;
	case DW_CFA_advance_loc2: n = 2; break;
	case DW_CFA_advance_loc4: n = 4; break;
	case DW_CFA_MIPS_advance_loc8: n = 8; break;
	default: return 0;
	}
	if ((size_t)(r->end - r->p) < n)
		return -1;
	*d = 0;
	memcpy(d, r->p, n);	/* little-endian: unwtab.c checks the file */
	r->p += n;
	return 1;
}

void cfi_cie_init(struct cfi_cie *cie, const Dwarf_CIE *e, bool signalp)
{
	struct run r = {
		.p = e->initial_instructions, .end = e->initial_instructions_end,
		.caf = e->code_alignment_factor, .daf = e->data_alignment_factor,
	};

	cie->ok = false;
	cie->caf = r.caf;
	cie->daf = r.daf;
	arch_cfi_abi(&r.stack[0]);
	r.fs = &r.stack[0];
	/* no advance in a CIE: libdw refuses it */
	while (r.p < r.end)
		if (execute_one(&r, *r.p++) < 0)
			return;
	cie->init = *r.fs;
	cie->init.signal = signalp;
	cie->ok = true;
}

int cfi_fde_rows(const struct cfi_cie *cie, const uint8_t *insns,
		 const uint8_t *end, uint64_t lo, uint64_t hi,
		 cfi_row_fn fn, void *arg)
{
	struct run r;	/* not zeroed: 2.7 KiB, 10% of the time */
	uint64_t loc = lo, pc = lo, d, e;
	uint8_t op;
	int rc;

	if (!cie->ok)
		return CFI_FALLBACK;
	r.cie = cie;
	r.caf = cie->caf;
	r.daf = cie->daf;
	r.p = insns;
	r.end = end;
	r.depth = 0;
	r.stack[0] = cie->init;
	r.fs = &r.stack[0];
	while (r.p < r.end && pc < hi) {
		op = *r.p++;
		rc = advance(&r, op, &d);
		if (rc < 0 || (rc == 0 && execute_one(&r, op) < 0))
			return CFI_FALLBACK;
		if (rc == 0)
			continue;
		loc += d * r.caf;
		/* libdw's row at pc ends at the first advance past it */
		if (loc > pc) {
			e = loc > hi ? hi : loc;
			rc = fn(r.fs, pc, e, arg);
			if (rc)
				return rc;
			pc = e;
		}
	}
	/* the last row runs to the FDE's end */
	return pc < hi ? fn(r.fs, pc, hi, arg) : 0;
}

/* The value encoded DW_EH_PE_sdata4 at P. */
static int64_t sdata4(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

int cfi_hdr_open(struct cfi_hdr *h, const uint8_t *data, size_t size,
		 uint64_t vaddr, uint64_t eh_frame_addr)
{
	uint64_t eh_frame, n;
	uint32_t count;

	*h = (struct cfi_hdr){ .vaddr = vaddr, .frame_vaddr = eh_frame_addr };
	/* version 1; eh_frame_ptr pcrel sdata4, fde_count udata4, table
	 * datarel sdata4: what every linker writes */
	if (size < 12 || data[0] != 1 || data[1] != 0x1b || data[2] != 0x03 ||
	    data[3] != 0x3b)
		return -1;
	eh_frame = vaddr + 4 + (uint64_t)sdata4(data + 4);
	memcpy(&count, data + 8, 4);
	n = count;
	if (n > (size - 12) / 8)
		return -1;	/* libdw refuses the whole CFI */
	if (n == 0 || eh_frame != eh_frame_addr)
		return 0;	/* libdw ignores the table */
	h->table = data + 12;
	h->n = n;
	return 1;
}

uint64_t cfi_hdr_find(const struct cfi_hdr *h, uint64_t pc)
{
	size_t l = 0, u = h->n, i;
	uint64_t start, next;

	/* libdw's binary_search_fde, step for step */
	while (l < u) {
		i = (l + u) / 2;
		start = h->vaddr + (uint64_t)sdata4(h->table + 8 * i);
		if (pc < start) {
			u = i;
			continue;
		}
		l = i + 1;
		if (l < h->n) {
			next = h->vaddr + (uint64_t)sdata4(h->table + 8 * l);
			if (pc >= next)
				continue;
		}
		return h->vaddr + (uint64_t)sdata4(h->table + 8 * i + 4) -
		       h->frame_vaddr;
	}
	return (uint64_t)-1;
}
