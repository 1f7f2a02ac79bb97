/*
 * fuzz_fastdec - the instruction decoder the patch planner uses without
 * capstone (arch/x86_64/fastdec.c), differentially against capstone:
 * an instruction fastdec decodes, capstone decodes too, with the same
 * length, the same %rip displacement offset, the same branch target.
 *
 * Input: the bytes (at most 15 are looked at past the first).  Returns
 * the length fastdec decoded, 0 if it left the bytes to capstone.
 * A disagreement aborts (the crash is the finding).
 */
#include <capstone/capstone.h>

#include "fuzz.h"
#include "fastdec.h"

FUZZ(fastdec)
{
	static csh h;
	static cs_insn *ci;
	const uint8_t *c = data;
	size_t n = size < 16 ? size : 16;
	uint64_t a = 0x1000;
	struct x86_fast f;
	const cs_x86 *x;
	unsigned rip = 0;
	int i, branch;

	if (!x86_fast_decode(data, n, &f))
		return 0;
	if (!h) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
			abort();
		cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
		ci = cs_malloc(h);
	}
	if (f.len == 0 || f.len > n || !cs_disasm_iter(h, &c, &n, &a, ci)) {
		fprintf(stderr, "fastdec: %u bytes capstone does not decode\n", f.len);
		abort();
	}
	x = &ci->detail->x86;
	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM &&
		    x->operands[i].mem.base == X86_REG_RIP)
			rip = x->encoding.disp_offset;
	branch = cs_insn_group(h, ci, CS_GRP_BRANCH_RELATIVE) && ci->id != X86_INS_CALL;
	if (f.len != ci->size || f.rip_off != rip || f.branch != branch ||
	    (f.branch && (uint64_t)x->operands[0].imm !=
	     ci->address + ci->size + (uint64_t)(int64_t)f.rel)) {
		fprintf(stderr, "fastdec: '%s %s': fastdec len %u rip %u branch %u, "
			"capstone len %u rip %u branch %d\n", ci->mnemonic, ci->op_str,
			f.len, f.rip_off, f.branch, ci->size, rip, branch);
		abort();
	}
	return f.len;
}
