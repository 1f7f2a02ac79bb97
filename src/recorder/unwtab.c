/*
 * unwtab.c - compile an ELF object's CFI into an unwind table (unwtab.h).
 *
 * The FDEs are enumerated with dwarf_next_cfi (their address ranges
 * decoded here: libdw has no FDE iterator), each FDE's rows are run by
 * cfi.c's interpreter in one pass, and the arch half turns a row into a
 * rule.  Rules are interned (a few hundred distinct ones in a whole libc),
 * ranges sorted and merged.
 *
 * libdw is the reference: the table is byte for byte the one compiled by
 * asking libdw for every row (dwarf_cfi_addrframe gives a row and the
 * range it covers, re-running the FDE from its start: 10 ms for libc),
 * which unwtab_compile_slow does, and which an FDE the interpreter does
 * not follow exactly (a DWARF expression) still does.  The interpreter
 * only runs where libdw would find the FDE being compiled for each of its
 * pcs (unwtab_fast.c).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/unwtab.h"
#include "arch/unwtab_arch.h"
#include "unwtab_priv.h"
#include "base/util.h"


/*
 * A gap shorter than this between two FDEs is alignment padding between
 * functions (16-byte aligned): no pc is ever there, so the rule before it
 * extends over it rather than a STOP row (which would also keep the rules
 * either side, typically both "CFA = sp + 8", from merging): 23,331 rows
 * in libc instead of 28,272.
 */
#define GAP_PADDING 16

/*
 * 256-byte buckets: 5.3 rows each on average in libc (43 at most), 16
 * bytes of index per KiB of code (9% of libc's table).  1 KiB buckets
 * (14 rows) left a walk 26% more instructions.
 */
#define BUCKET_SHIFT 8

/* The CIE at OFF, interned: *IDX, its index in c->cies. */
static int cie_encoding(struct compiler *c, Dwarf_Off off, size_t *idx)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	size_t i;

	/* an FDE's CIE is most often the previous FDE's */
	if (c->ncies && c->cies[c->last_cie].off == off) {
		*idx = c->last_cie;
		return 0;
	}
	for (i = 0; i < c->ncies; i++)
		if (c->cies[i].off == off) {
			*idx = c->last_cie = i;
			return 0;
		}
	if (dwarf_next_cfi((const unsigned char *)elf_getident(c->elf, NULL), c->data, c->eh, off,
			   &next, &e) != 0 || !dwarf_cfi_cie_p(&e))
		return error("%s: bad CIE at offset %#lx of its CFI: %s",
			     c->path, (unsigned long)off, dwarf_errmsg(-1));
	grow_array((void **)&c->cies, &c->acies, c->ncies + 1, sizeof(*c->cies));
	c->cies[c->ncies] = (struct cie){ .off = off,
					  .enc = cie_fde_encoding(c, &e.cie) };
	fast_cie(c, &c->cies[c->ncies], &e.cie);
	*idx = c->last_cie = c->ncies++;
	return 0;
}

/*
 * The rows of the FDE covering [START, END), as ranges, asked of libdw.
 * A row libdw refuses to interpret (libgcrypt's hand-written assembly
 * redefines the CFA register after a CFA expression) makes the rest of
 * the FDE INVALID: libdw stops at the same instruction for every later
 * row.
 */
static int compile_fde_libdw(struct compiler *c, uint64_t start, uint64_t end)
{
	const struct unwtab_rule invalid = { .kind = UNWTAB_INVALID };
	uint64_t pc = start, s, e;
	struct unwtab_rule r;
	struct cfi_row row;
	Dwarf_Frame *f;
	bool sig;
	int bad;

	c->st.libdw_fdes++;
	while (pc < end) {
		if (dwarf_cfi_addrframe(c->cfi, pc, &f) < 0) {
			c->st.refused++;
			return add_rule(c, pc, end, &invalid);
		}
		bad = dwarf_frame_info(f, &s, &e, &sig) < 0;
		if (!bad) {
			cfi_frame_row(f, sig, &row);
			bad = arch_unwtab_rule(&row, &r) < 0;
		}
		free(f);
		if (bad) {
			c->st.refused++;
			return add_rule(c, pc, end, &invalid);
		}
		if (e > end || e <= pc)
			e = end;
		if (add_rule(c, pc, e, &r) < 0)
			return -1;
		pc = e;
	}
	return 0;
}

/* The FDE at OFF covering [START, END), its instructions after P. */
static int compile_fde(struct compiler *c, Dwarf_Off off, size_t cie,
		       uint64_t start, uint64_t end, const uint8_t *p,
		       const uint8_t *fend)
{
	int rc = 1;

	c->st.fdes++;
	if (c->fast)
		rc = fast_fde(c, off, &c->cies[cie], start, end, p, fend);
	return rc > 0 ? compile_fde_libdw(c, start, end) : rc;
}

static int compile_cfi(struct compiler *c)
{
	const unsigned char *ident =
		(const unsigned char *)elf_getident(c->elf, NULL);
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	const uint8_t *p;
	uint64_t start, len;
	size_t cie = 0;
	uint8_t enc;
	int rc;

	for (;; off = next) {
		rc = dwarf_next_cfi(ident, c->data, c->eh, off, &next, &e);
		if (rc > 0)
			return 0;
		if (rc < 0 && next == (Dwarf_Off)-1)
			return error("%s: corrupt CFI at offset %#lx: %s", c->path,
				     (unsigned long)off, dwarf_errmsg(-1));
		/* an entry whose length leads back (or nowhere): a loop */
		if (next <= off)
			return error("%s: corrupt CFI at offset %#lx: the next entry "
				     "does not follow it", c->path, (unsigned long)off);
		if (rc < 0 || dwarf_cfi_cie_p(&e))
			continue;
		if (cie_encoding(c, e.fde.CIE_pointer, &cie) < 0)
			return -1;
		enc = c->cies[cie].enc;
		p = e.fde.start;
		if (read_encoded(c, enc, &p, e.fde.end, &start) < 0 ||
		    read_encoded(c, enc & 0x0f, &p, e.fde.end, &len) < 0)
			return error("%s: FDE at offset %#lx: address encoding %#x not supported",
				     c->path, (unsigned long)off, enc);
		if (len == 0 || start == 0)	/* discarded by the linker */
			continue;
		if (start + len > UINT32_MAX)
			return error("%s: code at %#lx, past 4 GiB: the table cannot hold it",
				     c->path, (unsigned long)start);
		if (compile_fde(c, off, cie, start, start + len, p,
				e.fde.end) < 0)
			return -1;
	}
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* ranges each starting where the one before ends (an FDE's) */
struct run {
	uint32_t first, last;	/* the first and last range's start */
	uint32_t end;		/* the last range's end */
	size_t i, n;		/* c->ranges[i .. i + n - 1] */
};

/*
 * The ranges in order of start: the runs to read them in, *NRUNS of
 * them.  .eh_frame's FDEs are not in address order but each FDE's ranges
 * follow one another: runs sorted by their first start are in order when
 * no two FDEs overlap (a qsort of the 25,000 ranges of libc took 40% of
 * its compilation).  Else the ranges are sorted, one run.
 */
static struct run *sort_ranges(struct compiler *c, size_t *nruns)
{
	struct run *runs = xmalloc((c->nranges + 1) * sizeof(*runs)), *sorted;
	struct kv32 *keys;
	size_t i, n = 0;

	for (i = 0; i < c->nranges; i++) {
		const struct range *r = &c->ranges[i];

		if (!i || r->start != r[-1].end)
			runs[n++] = (struct run){ .first = r->start, .i = i };
		runs[n - 1].last = r->start;
		runs[n - 1].end = r->end;
		runs[n - 1].n++;
	}
	keys = xmalloc(2 * (n + 1) * sizeof(*keys));
	for (i = 0; i < n; i++)
		keys[i] = (struct kv32){ runs[i].first, (uint32_t)i };
	radix_sort_kv32(keys, keys + n, n);
	sorted = xmalloc((n + 1) * sizeof(*sorted));
	for (i = 0; i < n; i++)
		sorted[i] = runs[keys[i].val];
	free(keys);
	free(runs);
	runs = sorted;
	/* strictly increasing starts: the one order any sort gives */
	for (i = 1; i < n; i++)
		if (runs[i].first <= runs[i - 1].last)
			break;
	if (i < n) {
		qsort(c->ranges, c->nranges, sizeof(*c->ranges), cmp_range);
		runs[0] = (struct run){ .i = 0, .n = c->nranges };
		for (i = 0; i < c->nranges; i++)
			if (c->ranges[i].end > runs[0].end)
				runs[0].end = c->ranges[i].end;
		n = 1;
	}
	*nruns = n;
	return runs;
}

/* Bucket b's first row: the last one at or before its first pc. */
static void fill_buckets(struct unwtab_hdr *h, const struct unwtab_row *rows,
			 size_t n)
{
	uint32_t *buckets = (uint32_t *)((char *)h + h->buckets_off);
	uint64_t start;
	size_t b, i = 0;

	for (b = 0; b < h->nbuckets; b++) {
		start = h->lo + ((uint64_t)b << h->bucket_shift);
		while (i + 1 < n && rows[i + 1].pc <= start)
			i++;
		buckets[b] = (uint32_t)i;
	}
}

/*
 * The ranges' rows, sorted and merged, with STOP in the gaps and at the
 * end, written at ROWS: their count.
 */
static size_t lay_rows(struct compiler *c, const struct run *runs,
		       size_t nruns, struct unwtab_row *rows)
{
	size_t k, i, n = 0;
	uint32_t end = 0;
	int32_t last = -1;

	for (k = 0; k < nruns; k++)
		for (i = runs[k].i; i < runs[k].i + runs[k].n; i++) {
			struct range r = c->ranges[i];

			if (r.end <= end)	/* inside an earlier FDE: overlap */
				continue;
			if (r.start < end)
				r.start = end;
			if (n && r.start >= (uint64_t)end + GAP_PADDING &&
			    last != UNWTAB_STOP) {
				rows[n++] = (struct unwtab_row){ end, 0, 0 };
				last = UNWTAB_STOP;
			}
			if ((int32_t)r.rule != last) {
				rows[n++] = (struct unwtab_row){
					r.start, (uint16_t)r.rule, 0 };
				last = r.rule;
			}
			end = r.end;
		}
	if (last != UNWTAB_STOP)
		rows[n++] = (struct unwtab_row){ end, 0, 0 };
	return n;
}

/*
 * The table.  Rows are written in place, in room for the most there can
 * be (two per range: a gap's STOP, the range; and the last), the buckets
 * and rules after the rows there are: no copy, and no page of the
 * allocation touched but those used.
 */
static struct unwtab_hdr *layout(struct compiler *c)
{
	struct unwtab_hdr *h;
	struct unwtab_row *rows;
	struct run *runs;
	size_t k, n, nruns, rows_off = sizeof(*h), rules_off, size;
	size_t buckets_off, nbuckets;
	uint32_t lo, hi = 0;

	runs = sort_ranges(c, &nruns);
	for (k = 0; k < nruns; k++)
		if (runs[k].end > hi)
			hi = runs[k].end;
	lo = nruns ? c->ranges[runs[0].i].start : 0;
	nbuckets = ((hi - lo) >> BUCKET_SHIFT) + 1;
	size = rows_off + (2 * c->nranges + 1) * sizeof(*rows) +
	       nbuckets * sizeof(uint32_t) + c->nrules * sizeof(*c->rules);
	h = xmalloc(size);
	rows = (struct unwtab_row *)((char *)h + rows_off);
	n = lay_rows(c, runs, nruns, rows);
	free(runs);

	/* the buckets span the rows laid, which the ranges' bounds need
	 * not be (ranges the target's CFI made overlap or end before they
	 * start): the table then failed its own check */
	nbuckets = ((rows[n - 1].pc - rows[0].pc) >> BUCKET_SHIFT) + 1;
	buckets_off = rows_off + n * sizeof(*rows);
	rules_off = buckets_off + nbuckets * sizeof(uint32_t);
	if (rules_off + c->nrules * sizeof(*c->rules) > size) {
		h = xrealloc(h, rules_off + c->nrules * sizeof(*c->rules));
		rows = (struct unwtab_row *)((char *)h + rows_off);
	}
	size = rules_off + c->nrules * sizeof(*c->rules);
	*h = (struct unwtab_hdr){
		.magic = UNWTAB_MAGIC, .version = UNWTAB_VERSION,
		.nrules = (uint16_t)c->nrules, .nrows = (uint32_t)n,
		.rows_off = (uint32_t)rows_off, .rules_off = (uint32_t)rules_off,
		.size = (uint32_t)size, .lo = rows[0].pc, .hi = rows[n - 1].pc,
		.buckets_off = (uint32_t)buckets_off,
		.nbuckets = (uint32_t)nbuckets, .bucket_shift = BUCKET_SHIFT,
	};
	fill_buckets(h, rows, n);
	memcpy((char *)h + rules_off, c->rules, c->nrules * sizeof(*c->rules));
	return xrealloc(h, size);
}

/*
 * The CFI section: .eh_frame, else .debug_frame (its Dwarf in *DW, for
 * the caller to end; none left on failure).  And the sections libdw
 * reads for .eh_frame (the first one so named, with the last
 * .eh_frame_hdr before it): the interpreter runs only if they are ours.
 */
static int find_cfi(struct compiler *c, Dwarf **dw)
{
	Elf_Scn *scn = NULL, *debug = NULL, *eh = NULL;
	Elf_Scn *libdw_eh = NULL, *libdw_hdr = NULL;
	size_t shstrndx;
	GElf_Shdr sh, found;
	const char *name;

	if (elf_getshdrstrndx(c->elf, &shstrndx) < 0)
		return error("%s: not an ELF file: %s", c->path, elf_errmsg(-1));
	while ((scn = elf_nextscn(c->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(c->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!libdw_eh && !strcmp(name, ".eh_frame_hdr"))
			libdw_hdr = scn;
		else if (!libdw_eh && !strcmp(name, ".eh_frame"))
			libdw_eh = scn;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		if (!strcmp(name, ".eh_frame"))
			eh = scn;
		else if (!strcmp(name, ".debug_frame"))
			debug = scn;
	}
	c->eh = eh != NULL;
	c->fast = eh && eh == libdw_eh && !c->slow;
	c->hdr_scn = libdw_hdr;
	scn = eh ? eh : debug;
	if (!scn)
		return 0;
	gelf_getshdr(scn, &found);
	c->sec_addr = found.sh_addr;
	c->data = elf_getdata(scn, NULL);
	if (eh) {
		c->cfi = dwarf_getcfi_elf(c->elf);
	} else {
		c->st.debug_frame = 1;
		*dw = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
		c->cfi = *dw ? dwarf_getcfi(*dw) : NULL;
	}
	if (!c->data || !c->cfi) {
		error("%s: cannot read its CFI: %s", c->path, dwarf_errmsg(-1));
		if (c->cfi && eh)
			dwarf_cfi_end(c->cfi);	/* no .eh_frame data: not kept */
		if (*dw)
			dwarf_end(*dw);	/* a .debug_frame's, with no CFI */
		*dw = NULL;
		c->cfi = NULL;
		return -1;
	}
	return 0;
}

static int compile_elf(struct compiler *c)
{
	const char *id = elf_getident(c->elf, NULL);
	Dwarf *dw = NULL;
	int rc;

	if (!id || id[EI_DATA] != ELFDATA2LSB)
		return error("%s: not a little-endian ELF file", c->path);
	c->addr_size = id[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	if (find_cfi(c, &dw) < 0)
		return -1;
	if (c->fast)
		fast_plan(c);
	/*
	 * Room for the ranges there will be (libc: 25,000 for 153 KB of
	 * CFI), allocated untouched: grown by doubling, and zeroed, the
	 * array cost page faults for twice its size.
	 */
	if (c->data) {
		c->aranges = c->data->d_size / 4 + 16;
		c->ranges = xmalloc(c->aranges * sizeof(*c->ranges));
	}
	rc = c->cfi ? compile_cfi(c) : 0;
	if (c->cfi && c->eh)
		dwarf_cfi_end(c->cfi);
	if (dw)
		dwarf_end(dw);
	return rc;
}

static int compile_path(const char *path, struct unwtab_hdr **tab,
			struct unwtab_stats *stats, bool slow)
{
	struct compiler c = { .path = path, .hash_size = 1024, .slow = slow };
	struct unwtab_rule stop = { .kind = UNWTAB_STOP };
	int fd, rc;

	fd = open_untrusted(path);
	if (fd < 0)
		return error("cannot open %s: %s", path,
			     errno == EINVAL ? "not a regular file" : strerror(errno));
	elf_version(EV_CURRENT);
	c.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!c.elf || elf_kind(c.elf) != ELF_K_ELF) {
		elf_end(c.elf);
		close(fd);
		return error("%s: not an ELF file", path);
	}
	c.rule_hash = xcalloc(c.hash_size, sizeof(*c.rule_hash));
	intern_rule(&c, &stop);		/* rule 0 is STOP */
	rc = compile_elf(&c);
	if (rc == 0) {
		*tab = layout(&c);
		if (stats)
			*stats = c.st;
	}
	elf_end(c.elf);
	close(fd);
	free(c.cies);
	free(c.ranges);
	free(c.rules);
	free(c.rule_hash);
	free(c.pend);
	return rc;
}

int unwtab_compile_file(const char *path, struct unwtab_hdr **tab,
			struct unwtab_stats *stats)
{
	return compile_path(path, tab, stats, false);
}

int unwtab_compile_slow(const char *path, struct unwtab_hdr **tab,
			struct unwtab_stats *stats)
{
	return compile_path(path, tab, stats, true);
}

/* The buckets of a table whose header and rows are checked: 0 or -1. */
static int check_buckets(const struct unwtab_hdr *h)
{
	const struct unwtab_row *rows = unwtab_rows(h);
	const uint32_t *buckets = unwtab_buckets(h);
	uint64_t start;
	uint32_t b, i;

	if (h->bucket_shift > 31 ||
	    h->nbuckets != ((h->hi - h->lo) >> h->bucket_shift) + 1 ||
	    h->buckets_off % 4 ||
	    h->buckets_off < h->rows_off + (uint64_t)h->nrows * sizeof(*rows) ||
	    h->buckets_off + (uint64_t)h->nbuckets * 4 > h->rules_off)
		return error("unwind table: bucket count or offset wrong");
	for (b = 0; b < h->nbuckets; b++) {
		start = h->lo + ((uint64_t)b << h->bucket_shift);
		i = buckets[b];
		if (i >= h->nrows || rows[i].pc > start ||
		    (i + 1 < h->nrows && rows[i + 1].pc <= start))
			return error("unwind table: bucket %u does not start at the row covering %#lx",
				     b, (unsigned long)start);
	}
	return 0;
}

int unwtab_check(const void *tab, size_t size)
{
	const struct unwtab_hdr *h = tab;
	const struct unwtab_row *rows;
	const struct unwtab_rule *rules;
	uint32_t i;

	if (size < sizeof(*h) || h->magic != UNWTAB_MAGIC ||
	    h->version != UNWTAB_VERSION)
		return error("unwind table: bad header (magic or version)");
	if (h->size > size || h->nrows == 0 || h->nrules == 0 ||
	    h->rows_off % 8 || h->rules_off % 4 ||
	    h->rows_off < sizeof(*h) ||
	    h->rows_off + (uint64_t)h->nrows * sizeof(*rows) > h->rules_off ||
	    h->rules_off + (uint64_t)h->nrules * sizeof(*rules) > h->size)
		return error("unwind table: counts and offsets do not fit its %u bytes (%zu given)",
			     h->size, size);
	rows = unwtab_rows(h);
	rules = unwtab_rules(h);
	for (i = 0; i < h->nrules; i++)
		if (rules[i].kind > UNWTAB_SIGNAL)
			return error("unwind table: rule %u has kind %u", i,
				     rules[i].kind);
	for (i = 0; i < h->nrows; i++) {
		if (rows[i].rule >= h->nrules || rows[i].reserved ||
		    (i && rows[i].pc <= rows[i - 1].pc))
			return error("unwind table: row %u (pc %#x) out of order or bad rule",
				     i, rows[i].pc);
	}
	if (rules[rows[h->nrows - 1].rule].kind != UNWTAB_STOP ||
	    h->lo != rows[0].pc || h->hi != rows[h->nrows - 1].pc)
		return error("unwind table: does not end with a STOP row at hi");
	return check_buckets(h);
}
