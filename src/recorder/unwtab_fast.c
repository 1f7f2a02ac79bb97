/*
 * unwtab_fast.c - where the unwind-table compiler may run cfi.h's
 * interpreter instead of asking libdw for every row, and running it.
 *
 * The interpreter's rows are libdw's for the same FDE; what remains is
 * that libdw, asked for a pc, finds the FDE being compiled.  It finds the
 * FDE of an earlier lookup covering the pc, else searches .eh_frame_hdr's
 * table, else reads the FDEs in order (libdw/fde.c).  So the interpreter
 * runs only in an object where no two FDEs overlap (then which FDEs libdw
 * looked up before cannot matter), whose entries all read and whose CIEs'
 * augmentations libdw and cie_encoding decode alike (then our FDE ranges
 * are libdw's, and the first FDE in order covering a pc is the only one),
 * and, with a search table, for an FDE the table's search gives at its
 * first pc.  Anything else is asked of libdw, as unwtab_compile_slow
 * does for everything.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "arch/unwtab_arch.h"
#include "unwtab_priv.h"
#include "base/util.h"

/* The interpreter stopped an FDE at a row libdw would refuse. */
#define ROWS_REFUSED 2

/* [start, end) of an FDE, for the overlap check */
struct span {
	uint64_t start, end;
};

/*
 * The augmentation of CIE E, if both libdw (intern_new_cie) and
 * cie_encoding read it, and alike: "" or 'z' then L, P, R, S.  *SIZED
 * ('z'), *SIGNAL ('S').  The FDE encoding is cie_encoding's business.
 */
static bool aug_known(const struct compiler *c, const Dwarf_CIE *e,
		      bool *sized, bool *signal)
{
	const uint8_t *p = e->augmentation_data;
	const uint8_t *end = p + e->augmentation_data_size;
	const char *a = e->augmentation;
	uint64_t skip;

	*sized = *signal = false;
	if (!a || !*a)
		return true;
	if (*a++ != 'z')
		return false;
	*sized = true;
	for (; *a; a++) {
		if (*a == 'S') {
			*signal = true;
		} else if ((*a == 'L' || *a == 'R') && p < end) {
			p++;
		} else if (*a == 'P' && p < end) {
			uint8_t enc = *p++;

			/* libdw skips any encoding, cie_encoding these */
			if (read_encoded(c, enc & 0x7f, &p, end, &skip) < 0)
				return false;
		} else {
			return false;
		}
	}
	return true;
}

void fast_cie(struct compiler *c, struct cie *cie, const Dwarf_CIE *e)
{
	bool signal;

	cie->fast.ok = false;
	/* dwarf_frame_info returns the return address register as an int */
	if (!c->fast || !aug_known(c, e, &cie->sized, &signal) ||
	    e->return_address_register >= 0x10000)
		return;
	cfi_cie_init(&cie->fast, e, signal);
}

/* An FDE's augmentation length at *P (CIE 'z'): 0 and past it, or -1. */
static int skip_fde_aug(const uint8_t **p, const uint8_t *end)
{
	uint64_t len = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*p >= end || shift > 49)
			return -1;
		b = *(*p)++;
		len |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (len > (uint64_t)(end - *p))
		return -1;
	*p += len;
	return 0;
}

/* The FDE E's range, if it reads: 0, or -1 (the object is libdw's). */
static int fde_span(const struct compiler *c, const Dwarf_FDE *e,
		    const struct cie *cies, size_t ncies, struct span *s)
{
	const uint8_t *p = e->start;
	uint64_t len;
	size_t i;

	for (i = ncies; i-- > 0;)
		if (cies[i].off == e->CIE_pointer)
			break;
	if (i == (size_t)-1 ||
	    read_encoded(c, cies[i].enc, &p, e->end, &s->start) < 0 ||
	    read_encoded(c, cies[i].enc & 0x0f, &p, e->end, &len) < 0 ||
	    (cies[i].sized && skip_fde_aug(&p, e->end) < 0))
		return -1;
	s->end = s->start + len;
	return 0;
}

/* Whether two of the N SPANS overlap (or one ends past 4 GiB). */
static bool overlap(const struct span *spans, size_t n)
{
	struct kv32 *keys = xmalloc(2 * (n + 1) * sizeof(*keys));
	bool over = false;
	size_t i;

	for (i = 0; i < n && !over; i++) {
		over = spans[i].end > UINT32_MAX;
		keys[i] = (struct kv32){ (uint32_t)spans[i].start, (uint32_t)i };
	}
	if (!over)
		radix_sort_kv32(keys, keys + n, n);
	for (i = 1; i < n && !over; i++)
		over = spans[keys[i - 1].val].end > keys[i].key;
	free(keys);
	return over;
}

/* The CIE E at OFF as fde_span needs it: 0, or -1 (not one we know). */
static int plan_cie(struct compiler *c, Dwarf_Off off, const Dwarf_CIE *e,
		    struct cie **cies, size_t *n, size_t *alloc)
{
	struct cie k = { .off = off, .enc = cie_fde_encoding(c, e) };
	bool signal;

	if (!aug_known(c, e, &k.sized, &signal))
		return -1;
	grow_array((void **)cies, alloc, *n + 1, sizeof(**cies));
	(*cies)[(*n)++] = k;
	return 0;
}

/* Every entry of the CFI section: are the conditions above met? */
static bool plan_entries(struct compiler *c)
{
	const unsigned char *ident =
		(const unsigned char *)elf_getident(c->elf, NULL);
	struct cie *cies = NULL;
	/* an FDE takes 12 bytes at least */
	size_t ncies = 0, acies = 0, n = 0, alloc = c->data->d_size / 12 + 1;
	struct span *spans = xmalloc(alloc * sizeof(*spans)), s;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	bool ok = true;
	int rc;

	for (; ok; off = next) {
		rc = dwarf_next_cfi(ident, c->data, c->eh, off, &next, &e);
		if (rc > 0)
			break;
		if (rc < 0)
			ok = false;
		else if (dwarf_cfi_cie_p(&e))
			ok = plan_cie(c, off, &e.cie, &cies, &ncies, &acies) == 0;
		else if (fde_span(c, &e.fde, cies, ncies, &s) < 0)
			ok = false;
		else if (s.start < s.end) {	/* libdw's FDEs */
			grow_array((void **)&spans, &alloc, n + 1, sizeof(s));
			spans[n++] = s;
		}
	}
	if (ok)
		ok = !overlap(spans, n);
	free(cies);
	free(spans);
	return ok;
}

void fast_plan(struct compiler *c)
{
	GElf_Shdr sh;
	Elf_Data *d;

	if (c->hdr_scn) {
		d = elf_rawdata(c->hdr_scn, NULL);
		if (!gelf_getshdr(c->hdr_scn, &sh) || !d || !d->d_buf ||
		    cfi_hdr_open(&c->hdr, d->d_buf, d->d_size, sh.sh_addr,
				 c->sec_addr) < 0) {
			c->fast = false;
			return;
		}
	}
	c->fast = plan_entries(c);
}

/* A row from the interpreter, kept until the FDE is through. */
static int pend_row(const struct cfi_row *row, uint64_t start, uint64_t end,
		    void *arg)
{
	struct compiler *c = arg;
	struct unwtab_rule r;
	int rc = 0;

	/* as compile_fde_libdw: the rest of the FDE is INVALID */
	if (arch_unwtab_rule(row, &r) < 0) {
		r = (struct unwtab_rule){ .kind = UNWTAB_INVALID };
		end = c->fde_hi;
		c->pend_refused = true;
		rc = ROWS_REFUSED;
	}
	if (c->npend == c->apend)
		grow_array((void **)&c->pend, &c->apend, c->npend + 1,
			   sizeof(*c->pend));
	c->pend[c->npend++] = (struct pending){ start, end, r };
	return rc;
}

int fast_fde(struct compiler *c, Dwarf_Off off, const struct cie *cie,
	     uint64_t start, uint64_t end, const uint8_t *p,
	     const uint8_t *fend)
{
	size_t i;
	int rc;

	if (!cie->fast.ok ||
	    (c->hdr.table && cfi_hdr_find(&c->hdr, start) != off) ||
	    (cie->sized && skip_fde_aug(&p, fend) < 0))
		return 1;
	c->npend = 0;
	c->pend_refused = false;
	c->fde_hi = end;
	rc = cfi_fde_rows(&cie->fast, p, fend, start, end, pend_row, c);
	if (rc == CFI_FALLBACK)
		return 1;
	for (i = 0; i < c->npend; i++)
		if (add_rule(c, c->pend[i].start, c->pend[i].end,
			     &c->pend[i].r) < 0)
			return -1;
	c->st.refused += c->pend_refused;
	return 0;
}
