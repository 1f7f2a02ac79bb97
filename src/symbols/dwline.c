/* dwline.c - decode .debug_line into rows, nothing else of DWARF. */
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/debug.h"
#include "base/diskcache.h"
#include "symbols/dwline.h"
#include "base/util.h"

/* One unit's line program and what decoding it needs. */
struct unit {
	const uint8_t *prog, *end;
	unsigned min_len, opcode_base;
	int line_base, line_range;
	uint8_t std_len[256];
	size_t file_base, nfiles;	/* its files in d->names */
};

/* A sequence: where its opcodes start and the addresses its rows cover.
 * Rows are not kept (libc has ~300,000): a lookup decodes again the few
 * sequences covering the address. */
struct seq {
	uint64_t lo, hi;
	const uint8_t *from;
	size_t unit;
};

struct dwline {
	int fd;
	Elf *elf;			/* owns the (inflated) section data */
	struct dc_map map;		/* or the disk cache's copy does */
	const uint8_t *line_str;
	size_t line_str_len;
	struct unit *units;
	size_t nunits, aunits;
	struct seq *seqs;
	size_t nseqs, aseqs;
	const char **names;
	size_t nnames, anames;
};

/* The row a lookup keeps: the last one at or below the address. */
struct best {
	uint64_t want;
	int found;
	uint64_t addr;
	const char *file;
	uint64_t line;
	int end;
};

/* A bounded reader over [p, end). */
struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_n(struct rd *r, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (!r->bad && r->p < r->end) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;		/* unsigned: shifts into bit 63 are defined */
	unsigned shift = 0;

	while (!r->bad && r->p < r->end) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~0ull << shift;
			return (int64_t)v;
		}
	}
	r->bad = 1;
	return 0;
}

static const char *rd_str(struct rd *r)
{
	const uint8_t *s = r->p;

	while (r->p < r->end && *r->p)
		r->p++;
	if (r->p >= r->end) {
		r->bad = 1;
		return NULL;
	}
	r->p++;
	return (const char *)s;
}

static const char *str_at(const uint8_t *sec, size_t len, uint64_t off)
{
	if (!sec || off >= len || !memchr(sec + off, 0, len - off))
		return NULL;
	return (const char *)sec + off;
}

/* One attribute of a DWARF 5 directory or file entry: its string, if
 * FORM gives one, else NULL; -1 for a form this reader cannot skip. */
static int read_form(struct dwline *d, struct rd *r, uint64_t form, int off8,
		     const char **str)
{
	*str = NULL;
	switch (form) {
	case DW_FORM_string:
		*str = rd_str(r);
		return 0;
	case DW_FORM_line_strp:
		*str = str_at(d->line_str, d->line_str_len, rd_n(r, off8 ? 8 : 4));
		return 0;
	case DW_FORM_strp:
		rd_n(r, off8 ? 8 : 4);	/* .debug_str is not read: no name */
		return 0;
	case DW_FORM_udata:
		rd_uleb(r);
		return 0;
	case DW_FORM_data1: rd_n(r, 1); return 0;
	case DW_FORM_data2: rd_n(r, 2); return 0;
	case DW_FORM_data4: rd_n(r, 4); return 0;
	case DW_FORM_data8: rd_n(r, 8); return 0;
	case DW_FORM_data16: rd_n(r, 8); rd_n(r, 8); return 0;
	case DW_FORM_block: {
		uint64_t n = rd_uleb(r);

		if ((uint64_t)(r->end - r->p) < n)
			r->bad = 1;
		else
			r->p += n;
		return 0;
	}
	}
	return -1;
}

/* The file table of a DWARF 5 header: names appended to d->names. */
static int v5_files(struct dwline *d, struct rd *r, int off8)
{
	uint64_t fmt[2][16], count, i;
	unsigned nfmt, k, pass;

	for (pass = 0; pass < 2; pass++) {	/* directories, then files */
		nfmt = (unsigned)rd_n(r, 1);
		if (nfmt > 8)
			return -1;
		for (k = 0; k < nfmt; k++) {
			fmt[0][2 * k] = rd_uleb(r);
			fmt[0][2 * k + 1] = rd_uleb(r);
		}
		count = rd_uleb(r);
		for (i = 0; i < count && !r->bad; i++) {
			const char *path = NULL, *s;

			for (k = 0; k < nfmt; k++) {
				if (read_form(d, r, fmt[0][2 * k + 1], off8, &s))
					return -1;
				if (fmt[0][2 * k] == DW_LNCT_path)
					path = s;
			}
			if (pass == 1) {
				grow_array((void **)&d->names, &d->anames,
					   d->nnames + 1, sizeof(*d->names));
				d->names[d->nnames++] = path;
			}
		}
	}
	return r->bad ? -1 : 0;
}

/* The file table of a DWARF 2-4 header (index 0 is "no file"). */
static int v4_files(struct dwline *d, struct rd *r)
{
	grow_array((void **)&d->names, &d->anames, d->nnames + 1,
		   sizeof(*d->names));
	d->names[d->nnames++] = NULL;
	while (!r->bad && r->p < r->end && *r->p)	/* directories */
		rd_str(r);
	rd_n(r, 1);
	while (!r->bad && r->p < r->end && *r->p) {
		const char *name = rd_str(r);

		rd_uleb(r);
		rd_uleb(r);
		rd_uleb(r);
		grow_array((void **)&d->names, &d->anames, d->nnames + 1,
			   sizeof(*d->names));
		d->names[d->nnames++] = name;
	}
	rd_n(r, 1);
	return r->bad ? -1 : 0;
}

struct state {
	uint64_t addr, file, line;
};

static void row(const struct dwline *d, const struct unit *u,
		const struct state *st, int end, struct best *b, uint64_t *lo,
		uint64_t *hi)
{
	if (st->addr < *lo)
		*lo = st->addr;
	if (st->addr > *hi)
		*hi = st->addr;
	if (!b || st->addr > b->want || (b->found && st->addr < b->addr))
		return;
	b->found = 1;
	b->addr = st->addr;
	b->file = st->file < u->nfiles ? d->names[u->file_base + st->file] : NULL;
	b->line = st->line;
	b->end = end;
}

/*
 * Run U's opcodes from P to the end of that sequence; rows go to B (if
 * not NULL), the range of their addresses to *LO, *HI.  Returns where the
 * next sequence starts, or NULL at the end of the program or on an error
 * (the unfinished sequence is ignored).
 */
static const uint8_t *run_seq(const struct dwline *d, const struct unit *u,
			      const uint8_t *p, struct best *b, uint64_t *lo,
			      uint64_t *hi)
{
	struct rd r = { p, u->end, 0 };
	struct state st = { 0, 1, 1 };
	unsigned k;

	*lo = UINT64_MAX;
	*hi = 0;
	while (!r.bad && r.p < r.end) {
		unsigned op = (unsigned)rd_n(&r, 1);

		if (op >= u->opcode_base) {
			unsigned adj = op - u->opcode_base;

			st.addr += (uint64_t)(adj / u->line_range) * u->min_len;
			st.line += (uint64_t)((int64_t)u->line_base +
					      (int64_t)(adj % u->line_range));
			row(d, u, &st, 0, b, lo, hi);
			continue;
		}
		switch (op) {
		case 0: {
			uint64_t n = rd_uleb(&r);
			const uint8_t *next = r.p + n;
			unsigned sub;

			if (!n || n > (uint64_t)(r.end - r.p))
				return NULL;
			sub = (unsigned)rd_n(&r, 1);
			if (sub == DW_LNE_end_sequence) {
				row(d, u, &st, 1, b, lo, hi);
				return next;
			}
			if (sub == DW_LNE_set_address)
				st.addr = rd_n(&r, (unsigned)(n - 1 > 8 ? 8 : n - 1));
			r.p = next;
			break;
		}
		case DW_LNS_copy:
			row(d, u, &st, 0, b, lo, hi);
			break;
		case DW_LNS_advance_pc:
			st.addr += rd_uleb(&r) * u->min_len;
			break;
		case DW_LNS_advance_line:
			st.line += (uint64_t)rd_sleb(&r);
			break;
		case DW_LNS_set_file:
			st.file = rd_uleb(&r);
			break;
		case DW_LNS_const_add_pc:
			st.addr += (uint64_t)((255 - u->opcode_base) / u->line_range) *
				   u->min_len;
			break;
		case DW_LNS_fixed_advance_pc:
			st.addr += rd_n(&r, 2);
			break;
		default:		/* operands we do not need */
			for (k = 0; k < u->std_len[op]; k++)
				rd_uleb(&r);
		}
	}
	return NULL;
}

/* The header of one unit, [R->p, R->end): a new d->units entry and its
 * sequences in d->seqs. */
static int decode_unit(struct dwline *d, struct rd *r, int off8)
{
	unsigned version = (unsigned)rd_n(r, 2), k;
	struct unit u;
	uint64_t hdr_len;
	const uint8_t *p;

	memset(&u, 0, sizeof(u));
	if (version < 2 || version > 5)
		return -1;
	if (version >= 5)
		rd_n(r, 2);		/* address size, segment selector size */
	hdr_len = rd_n(r, off8 ? 8 : 4);
	if (r->bad || hdr_len > (uint64_t)(r->end - r->p))
		return -1;
	u.prog = r->p + hdr_len;
	u.end = r->end;
	u.min_len = (unsigned)rd_n(r, 1);
	if (version >= 4)
		rd_n(r, 1);		/* max ops per instruction (VLIW) */
	rd_n(r, 1);			/* default_is_stmt */
	u.line_base = (int8_t)rd_n(r, 1);
	u.line_range = (int)rd_n(r, 1);
	u.opcode_base = (unsigned)rd_n(r, 1);
	if (r->bad || !u.line_range || !u.opcode_base)
		return -1;
	for (k = 1; k < u.opcode_base; k++)
		u.std_len[k] = (uint8_t)rd_n(r, 1);
	u.file_base = d->nnames;
	if ((version >= 5 ? v5_files(d, r, off8) : v4_files(d, r)))
		return -1;
	u.nfiles = d->nnames - u.file_base;
	grow_array((void **)&d->units, &d->aunits, d->nunits + 1,
		   sizeof(*d->units));
	d->units[d->nunits++] = u;

	for (p = u.prog; p && p < u.end;) {
		uint64_t lo, hi;
		const uint8_t *next = run_seq(d, &u, p, NULL, &lo, &hi);
		struct seq *q;

		if (!next)
			break;
		if (lo < hi) {
			grow_array((void **)&d->seqs, &d->aseqs, d->nseqs + 1,
				   sizeof(*d->seqs));
			q = &d->seqs[d->nseqs++];
			q->lo = lo;
			q->hi = hi;
			q->from = p;
			q->unit = d->nunits - 1;
		}
		p = next;
	}
	return 0;
}

static Elf_Scn *section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

int dwline_info_compressed(Elf *elf)
{
	Elf_Scn *scn = section(elf, ".debug_info");
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED);
}

/* The (inflated) data of section NAME, owned by ELF; NULL if absent.
 * *INFLATED: it was compressed. */
static const uint8_t *section_data(Elf *elf, const char *name, size_t *len,
				   int *inflated)
{
	Elf_Scn *scn = section(elf, name);
	GElf_Shdr sh;
	Elf_Data *data;

	*len = 0;
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
		return NULL;
	if (sh.sh_flags & SHF_COMPRESSED) {
		if (elf_compress(scn, 0, 0) < 0)
			return NULL;
		*inflated = 1;
	}
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return NULL;
	*len = data->d_size;
	return data->d_buf;
}

/*
 * The inflated sections and their index on disk (diskcache.h):
 * inflating libc's .debug_line (500 KB compressed) took ~7 ms of every
 * report naming a libc frame, indexing its sequences ~6 ms more.  The
 * data: struct lines_hdr, the two sections' bytes, then the units, the
 * sequences and the file names as offsets (struct disk_unit, disk_seq,
 * a word a name), each checked when read back as the sections are.
 */
const struct dc_kind dwline_cache_kind = {
	.magic = "ptleak line table cache 2\n",
	.suffix = ".dwl",
	.format = 1,
	.max = 256u << 20,
	/* libc's is 2.2 MB: at most ~70 MB of them */
	.files = 32,
	.keep = 24,
};

struct lines_hdr {
	uint64_t line_len, line_str_len, nunits, nseqs, nnames;
};

struct disk_unit {
	uint64_t prog, end;		/* offsets in .debug_line */
	uint32_t min_len, opcode_base;
	int32_t line_base, line_range;
	uint64_t file_base, nfiles;
	uint8_t std_len[256];
};

struct disk_seq {
	uint64_t lo, hi, from, unit;
};

/* A name's word: 0 none, else 1 + its offset in .debug_line, with bit
 * 63 set in .debug_line_str. */
#define NAME_IN_STR	(1ull << 63)

static uint64_t name_word(const struct dwline *d, const uint8_t *line,
			  size_t len, const char *name)
{
	const uint8_t *n = (const uint8_t *)name;

	if (!n)
		return 0;
	if (n >= line && n < line + len)
		return 1 + (uint64_t)(n - line);
	return (1 + (uint64_t)(n - d->line_str)) | NAME_IN_STR;
}

/* D's index, read from LINE's LEN bytes, into the cache after them:
 * the file's data made in one piece. */
static void lines_keep(const struct dwline *d, const struct dc_key *key,
		       const uint8_t *line, size_t len)
{
	struct lines_hdr h = { len, d->line_str ? d->line_str_len : 0,
			       d->nunits, d->nseqs, d->nnames };
	size_t size = sizeof(h) + len + h.line_str_len +
		      d->nunits * sizeof(struct disk_unit) +
		      d->nseqs * sizeof(struct disk_seq) + d->nnames * 8, i;
	uint8_t *buf = xmalloc(size), *p = buf;

	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memcpy(p, line, len);
	p += len;
	if (h.line_str_len)
		memcpy(p, d->line_str, h.line_str_len);
	p += h.line_str_len;
	for (i = 0; i < d->nunits; i++, p += sizeof(struct disk_unit)) {
		const struct unit *x = &d->units[i];
		struct disk_unit u;

		memset(&u, 0, sizeof(u));
		u.prog = (uint64_t)(x->prog - line);
		u.end = (uint64_t)(x->end - line);
		u.min_len = x->min_len;
		u.opcode_base = x->opcode_base;
		u.line_base = x->line_base;
		u.line_range = x->line_range;
		u.file_base = x->file_base;
		u.nfiles = x->nfiles;
		memcpy(u.std_len, x->std_len, sizeof(u.std_len));
		memcpy(p, &u, sizeof(u));
	}
	for (i = 0; i < d->nseqs; i++, p += sizeof(struct disk_seq)) {
		struct disk_seq q = { d->seqs[i].lo, d->seqs[i].hi,
				      (uint64_t)(d->seqs[i].from - line),
				      d->seqs[i].unit };

		memcpy(p, &q, sizeof(q));
	}
	for (i = 0; i < d->nnames; i++, p += 8) {
		uint64_t w = name_word(d, line, len, d->names[i]);

		memcpy(p, &w, 8);
	}
	dc_write(&dwline_cache_kind, key, buf, size);
	free(buf);
}

/* A name from its word, NULL if it is none or not a string of its
 * section; *BAD if the word is nonsense. */
static const char *name_of(const struct dwline *d, const uint8_t *line,
			   size_t len, uint64_t w, int *bad)
{
	const uint8_t *sec = w & NAME_IN_STR ? d->line_str : line;
	size_t sl = w & NAME_IN_STR ? d->line_str_len : len;
	uint64_t off = (w & ~NAME_IN_STR) - 1;
	const char *s;

	if (!w)
		return NULL;
	s = str_at(sec, sl, off);
	if (!s)
		*bad = 1;
	return s;
}

/* KEY's sections and index from the disk cache into D: 0 with D's map,
 * *LINE and *LEN, or -1 (D as it was). */
static int lines_cached(struct dwline *d, const struct dc_key *key,
			const uint8_t **line, size_t *len)
{
	const size_t su = sizeof(struct disk_unit), sq = sizeof(struct disk_seq);
	const uint8_t *p;
	struct lines_hdr h;
	uint64_t rest, i;
	int bad = 0;

	if (dc_map(&dwline_cache_kind, key, &d->map))
		return -1;
	rest = d->map.size;
	if (rest < sizeof(h))
		goto bad;
	memcpy(&h, d->map.data, sizeof(h));
	rest -= sizeof(h);
	/* every count within the file before a product is taken */
	if (!h.line_len || h.line_len > rest || h.line_str_len > rest - h.line_len)
		goto bad;
	rest -= h.line_len + h.line_str_len;
	if (h.nunits > rest / su || h.nseqs > rest / sq || h.nnames > rest / 8 ||
	    rest != h.nunits * su + h.nseqs * sq + h.nnames * 8)
		goto bad;
	p = (const uint8_t *)d->map.data + sizeof(h);
	*line = p;
	*len = h.line_len;
	d->line_str = h.line_str_len ? p + h.line_len : NULL;
	d->line_str_len = h.line_str_len;
	p += h.line_len + h.line_str_len;
	/* entries copied out (the map's words may be unaligned) */
	d->units = xcalloc(h.nunits ? h.nunits : 1, sizeof(*d->units));
	d->seqs = xcalloc(h.nseqs ? h.nseqs : 1, sizeof(*d->seqs));
	d->names = xcalloc(h.nnames ? h.nnames : 1, sizeof(*d->names));
	d->aunits = d->nunits = h.nunits;
	d->aseqs = d->nseqs = h.nseqs;
	d->anames = d->nnames = h.nnames;
	for (i = 0; i < h.nunits; i++) {
		struct disk_unit x;
		struct unit *y = &d->units[i];

		memcpy(&x, p + i * sizeof(x), sizeof(x));
		/* the DWARF's ranges: a line_base int8, a line_range uint8 */
		if (x.prog > x.end || x.end > h.line_len || x.line_range < 1 ||
		    x.line_range > 255 || x.line_base < -128 || x.line_base > 127 ||
		    !x.opcode_base || x.opcode_base > 256 ||
		    x.file_base > h.nnames || x.nfiles > h.nnames - x.file_base)
			goto bad_arrays;
		y->prog = *line + x.prog;
		y->end = *line + x.end;
		y->min_len = x.min_len;
		y->opcode_base = x.opcode_base;
		y->line_base = x.line_base;
		y->line_range = x.line_range;
		y->file_base = x.file_base;
		y->nfiles = x.nfiles;
		memcpy(y->std_len, x.std_len, sizeof(y->std_len));
	}
	p += h.nunits * su;
	for (i = 0; i < h.nseqs; i++) {
		struct disk_seq x;

		memcpy(&x, p + i * sizeof(x), sizeof(x));
		if (x.unit >= h.nunits || x.from < (uint64_t)(d->units[x.unit].prog - *line) ||
		    x.from > (uint64_t)(d->units[x.unit].end - *line))
			goto bad_arrays;
		d->seqs[i].lo = x.lo;
		d->seqs[i].hi = x.hi;
		d->seqs[i].from = *line + x.from;
		d->seqs[i].unit = x.unit;
	}
	p += h.nseqs * sq;
	for (i = 0; i < h.nnames && !bad; i++) {
		uint64_t w;

		memcpy(&w, p + i * sizeof(w), sizeof(w));
		d->names[i] = name_of(d, *line, h.line_len, w, &bad);
	}
	if (bad)
		goto bad_arrays;
	return 0;
bad_arrays:
	free(d->units);
	free(d->seqs);
	free(d->names);
	d->units = NULL, d->seqs = NULL, d->names = NULL;
	d->aunits = d->nunits = d->aseqs = d->nseqs = d->anames = d->nnames = 0;
bad:
	d->line_str = NULL;
	d->line_str_len = 0;
	dc_unmap(&d->map, 0);
	return -1;
}

/* Index the units of LINE's LEN bytes into D. */
static void index_units(struct dwline *d, const uint8_t *line, size_t len)
{
	struct rd all;

	all.p = line;
	all.end = line + len;
	all.bad = 0;
	while (!all.bad && all.p < all.end) {
		uint64_t ulen = rd_n(&all, 4);
		int off8 = ulen == 0xffffffffu;
		struct rd unit;

		if (off8)
			ulen = rd_n(&all, 8);
		if (all.bad || ulen > (uint64_t)(all.end - all.p))
			break;
		unit.p = all.p;
		unit.end = all.p + ulen;
		unit.bad = 0;
		decode_unit(d, &unit, off8);	/* a bad unit: its rows only */
		all.p += ulen;
	}
}

/* PATH's sections and index into D: from the cache, else read (and
 * inflated), indexed, then kept in the cache; 0 or -1. */
static int lines_read(struct dwline *d, const char *path)
{
	struct dc_key key;
	int keyed = !dc_key_of(path, &key), inflated = 0;
	const uint8_t *line;
	size_t len;

	if (keyed && !lines_cached(d, &key, &line, &len)) {
		if (debug_stats)
			fprintf(stderr, "ptleak-debug: line table of %s: from "
				"the cache\n", path);
		return 0;
	}
	d->fd = open_untrusted(path);
	elf_version(EV_CURRENT);	/* libelf's start, whoever calls first */
	d->elf = d->fd >= 0 ? elf_begin(d->fd, ELF_C_READ_MMAP, NULL) : NULL;
	line = d->elf ? section_data(d->elf, ".debug_line", &len, &inflated) : NULL;
	if (!line)
		return -1;
	d->line_str = section_data(d->elf, ".debug_line_str", &d->line_str_len,
				   &inflated);
	index_units(d, line, len);
	if (keyed && inflated)
		lines_keep(d, &key, line, len);
	if (debug_stats)
		fprintf(stderr, "ptleak-debug: line table of %s: %s\n", path,
			inflated ? "inflated and indexed" : "indexed");
	return 0;
}

struct dwline *dwline_open(const char *path)
{
	struct dwline *d = xcalloc(1, sizeof(*d));

	d->fd = -1;
	d->map.fd = -1;
	if (lines_read(d, path)) {
		dwline_close(d);
		return NULL;
	}
	return d;
}

int dwline_cached(const struct dwline *d)
{
	return d->map.base != NULL;
}

void dwline_close(struct dwline *d)
{
	if (!d)
		return;
	if (d->elf)
		elf_end(d->elf);
	if (d->fd >= 0)
		close(d->fd);
	dc_unmap(&d->map, 1);	/* used: renewed */
	free(d->units);
	free(d->seqs);
	free(d->names);
	free(d);
}

int dwline_find(const struct dwline *d, uint64_t addr, const char **file,
		int *line)
{
	struct best b;
	size_t i;

	memset(&b, 0, sizeof(b));
	b.want = addr;
	for (i = 0; i < d->nseqs; i++) {
		const struct seq *q = &d->seqs[i];
		uint64_t lo, hi;

		if (addr >= q->lo && addr < q->hi)
			run_seq(d, &d->units[q->unit], q->from, &b, &lo, &hi);
	}
	if (!b.found || b.end || !b.line || !b.file)
		return -1;
	*file = b.file;
	*line = b.line < INT32_MAX ? (int)b.line : 0;
	return 0;
}
