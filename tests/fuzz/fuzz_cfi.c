/*
 * fuzz_cfi - the call frame instruction interpreter (cfi.c) that compiles
 * the target's .eh_frame rows without libdw, and its mirror of libdw's
 * .eh_frame_hdr search.
 *
 * Input, byte 0 even: .eh_frame_hdr bytes from byte 1 (cfi_hdr_open at
 * 0x1000, .eh_frame at 0x2000), then cfi_hdr_find for 64 pcs spread over
 * [0, 0x10000).  Returns the sum of the offsets found (not found: 0), or
 * -1 if the header is refused.
 *
 * Byte 0 odd: bit 1 the CIE's signal flag; byte 1 the code alignment
 * factor (1-255), byte 2 the data alignment factor (signed), byte 3 the
 * length of the CIE's initial instructions, which follow; the rest is
 * the FDE's instructions, covering [0x1000, 0x1000 + 4096).  Returns the
 * number of rows, or -2 if the CIE is not interpreted here, or -3 for
 * CFI_FALLBACK (libdw asked).  Every row's range must lie in the FDE's,
 * in order.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "fuzz.h"
#include "recorder/cfi.h"

struct seen {
	uint64_t next;
	long rows;
};

static int row(const struct cfi_row *r, uint64_t start, uint64_t end, void *arg)
{
	struct seen *s = arg;

	if (start < s->next || end <= start || end > 0x2000)
		abort();
	s->next = end;
	s->rows++;
	return 0;
}

static long hdr(const uint8_t *data, size_t size)
{
	struct cfi_hdr h;
	uint64_t pc, off;
	long sum = 0;

	if (cfi_hdr_open(&h, data, size, 0x1000, 0x2000) < 0)
		return -1;
	for (pc = 0; pc < 0x10000; pc += 0x400) {
		off = cfi_hdr_find(&h, pc);
		if (off != (uint64_t)-1)
			sum += (long)(off & 0xffffff);
	}
	return sum;
}

FUZZ(cfi)
{
	struct cfi_cie cie;
	struct seen s = { 0x1000, 0 };
	Dwarf_CIE e;
	size_t ilen;
	int rc;

	if (!size)
		return 0;
	if (!(data[0] & 1))
		return hdr(data + 1, size - 1);
	if (size < 4)
		return 0;
	ilen = data[3] < size - 4 ? data[3] : size - 4;
	memset(&e, 0, sizeof(e));
	e.CIE_id = DW_CIE_ID_64;
	e.code_alignment_factor = data[1] ? data[1] : 1;
	e.data_alignment_factor = (int8_t)data[2];
	e.return_address_register = 16;
	e.augmentation = "zR";
	e.initial_instructions = data + 4;
	e.initial_instructions_end = data + 4 + ilen;
	cfi_cie_init(&cie, &e, data[0] & 2);
	if (!cie.ok)
		return -2;
	rc = cfi_fde_rows(&cie, data + 4 + ilen, data + size, 0x1000, 0x2000, row, &s);
	return rc == CFI_FALLBACK ? -3 : s.rows;
}
