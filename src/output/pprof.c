/*
 * pprof.c - the report as a gzip'd pprof profile (pprof.h).
 *
 * profile.proto is written by hand (varints and length-delimited fields
 * into a growing buffer: no protobuf library), then deflated by zlib in
 * gzip framing.  Strings, functions, locations and mappings are interned
 * in small open-addressing maps, so each is written once however many
 * stacks share it.
 */
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/outfile.h"
#include "output/pprof.h"
#include "tables/stacks.h"
#include "base/util.h"

/* ---- protobuf ---- */

struct pbuf {
	uint8_t *p;
	size_t len, alloc;
};

static void pb_bytes(struct pbuf *b, const void *s, size_t n)
{
	grow_array((void **)&b->p, &b->alloc, b->len + n, 1);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void pb_varint(struct pbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_bytes(b, tmp, n);
}

/* field FIELD, varint V (nothing for 0: proto3's default) */
static void pb_uint(struct pbuf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, v);
}

/* field FIELD, length-delimited: the bytes of SUB */
static void pb_sub(struct pbuf *b, unsigned field, const struct pbuf *sub)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, sub->len);
	pb_bytes(b, sub->p, sub->len);
}

static void pb_string(struct pbuf *b, unsigned field, const char *s)
{
	struct pbuf sub = { (uint8_t *)s, strlen(s), 0 };

	pb_sub(b, field, &sub);
}

/* ---- interning ---- */

/* u64 key -> index (1-based) */
struct imap {
	uint64_t *keys;
	uint32_t *vals;		/* 0: empty */
	size_t cap, n;
};

static uint32_t *imap_slot(struct imap *m, uint64_t key)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct imap old = *m;

		m->cap = m->cap ? m->cap * 2 : 256;
		m->keys = xcalloc(m->cap, sizeof(*m->keys));
		m->vals = xcalloc(m->cap, sizeof(*m->vals));
		for (i = 0; i < old.cap; i++)
			if (old.vals[i])
				*imap_slot(m, old.keys[i]) = old.vals[i];
		free(old.keys);
		free(old.vals);
	}
	for (i = hash64(key) & (m->cap - 1); m->vals[i] && m->keys[i] != key;
	     i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key;
	return &m->vals[i];
}

static void imap_free(struct imap *m)
{
	free(m->keys);
	free(m->vals);
}

struct prof {
	const struct report_input *in;
	Dwfl *dwfl;
	struct pbuf out;	/* the Profile message */
	char **strs;		/* the string table, [0] = "" */
	size_t nstrs, astrs;
	struct imap str_ids;	/* hash of a string -> index + 1 (chained
				 * by probing on a mismatch) */
	struct imap funcs;	/* (name, file) string ids -> function id */
	struct imap locs;	/* pc -> location id */
	struct imap maps;	/* module start -> mapping id */
	uint32_t nfuncs, nlocs, nmaps;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ULL;
	return h;
}

/* S's index in the string table */
static int64_t str_id(struct prof *pf, const char *s)
{
	uint64_t h;
	uint32_t *v;

	if (!s || !*s)
		return 0;
	h = hash_str(s);
	/* a colliding hash moves to the next key: keys are hashes + k */
	for (;; h++) {
		v = imap_slot(&pf->str_ids, h);
		if (!*v) {
			grow_array((void **)&pf->strs, &pf->astrs, pf->nstrs + 1,
				   sizeof(*pf->strs));
			pf->strs[pf->nstrs] = xstrdup(s);
			*v = (uint32_t)++pf->nstrs;
			pf->str_ids.n++;
			return (int64_t)pf->nstrs - 1;
		}
		if (!strcmp(pf->strs[*v - 1], s))
			return (int64_t)*v - 1;
	}
}

/* ---- the profile's parts ---- */

static void value_type(struct prof *pf, unsigned field, const char *type,
		       const char *unit)
{
	struct pbuf vt = { 0 };

	pb_uint(&vt, 1, (uint64_t)str_id(pf, type));
	pb_uint(&vt, 2, (uint64_t)str_id(pf, unit));
	pb_sub(&pf->out, field, &vt);
	free(vt.p);
}

/* The mapping of the object holding PC (0: none known) */
static uint64_t mapping_id(struct prof *pf, uint64_t pc)
{
	Dwfl_Module *mod = pf->dwfl ? dwfl_addrmodule(pf->dwfl, pc) : NULL;
	const unsigned char *bits;
	const char *name, *file = NULL;
	Dwarf_Addr start, end, vaddr;
	struct pbuf m = { 0 };
	char hex[2 * 64 + 1];
	uint32_t *v;
	int n, i;

	if (!mod)
		return 0;
	name = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, &file, NULL);
	v = imap_slot(&pf->maps, start);
	if (*v)
		return *v;
	pf->maps.n++;
	*v = ++pf->nmaps;
	hex[0] = '\0';
	dwfl_module_getelf(mod, &vaddr);	/* the build id is read with it */
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	for (i = 0; i < n && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	pb_uint(&m, 1, *v);
	pb_uint(&m, 2, start);
	pb_uint(&m, 3, end);
	pb_uint(&m, 5, (uint64_t)str_id(pf, file ? file : name));
	pb_uint(&m, 6, (uint64_t)str_id(pf, hex));
	pb_uint(&m, 7, 1);	/* has_functions */
	pb_uint(&m, 8, 1);	/* has_filenames */
	pb_uint(&m, 9, 1);	/* has_line_numbers */
	pb_sub(&pf->out, 3, &m);
	free(m.p);
	return *v;
}

static uint64_t function_id(struct prof *pf, const struct frame_info *fi)
{
	int64_t name = str_id(pf, fi->function);
	int64_t sys = str_id(pf, fi->symbol ? fi->symbol : fi->function);
	int64_t file = str_id(pf, fi->file);
	struct pbuf f = { 0 };
	uint32_t *v = imap_slot(&pf->funcs, (uint64_t)name << 32 | (uint64_t)file);

	if (*v)
		return *v;
	pf->funcs.n++;
	*v = ++pf->nfuncs;
	pb_uint(&f, 1, *v);
	pb_uint(&f, 2, (uint64_t)name);
	pb_uint(&f, 3, (uint64_t)sys);
	pb_uint(&f, 4, (uint64_t)file);
	pb_sub(&pf->out, 5, &f);
	free(f.p);
	return *v;
}

/* The location of frame I (PC) of a stack */
static uint64_t location_id(struct prof *pf, uint64_t pc, unsigned i)
{
	uint32_t *v = imap_slot(&pf->locs, pc);
	struct pbuf loc = { 0 }, line = { 0 };
	struct frame_info fi;

	if (*v)
		return *v;
	pf->locs.n++;
	*v = ++pf->nlocs;
	memset(&fi, 0, sizeof(fi));
	pf->in->namer(pf->in->namer_ctx, pc, i != 0, &fi);
	pb_uint(&loc, 1, *v);
	pb_uint(&loc, 2, mapping_id(pf, pc));
	pb_uint(&loc, 3, pc);
	/* no function known: no line, pprof shows the address */
	if (fi.function) {
		pb_uint(&line, 1, function_id(pf, &fi));
		pb_uint(&line, 2, fi.line > 0 ? (uint64_t)fi.line : 0);
		pb_sub(&loc, 4, &line);
	}
	pb_sub(&pf->out, 4, &loc);
	free(loc.p);
	free(line.p);
	return *v;
}

struct inuse {
	uint64_t *objects, *space;
	size_t n;
	uint64_t before_objects, before_space;	/* the census's blocks */
};

static int add_inuse(const struct heap_block *b, void *ctx)
{
	struct inuse *u = ctx;

	if (b->before) {
		u->before_objects++;
		u->before_space += b->size;
	} else if (b->stack < u->n) {
		u->objects[b->stack]++;
		u->space[b->stack] += b->size;
	}
	return 0;
}

static int lowest_module(Dwfl_Module *mod, void **arg, const char *name,
			 Dwarf_Addr start, void *ctx)
{
	uint64_t *lowest = ctx;

	if (start < *lowest)
		*lowest = start;
	return DWARF_CB_OK;
}

/* Mapping 1 is the executable, as pprof expects ("File:"): the object
 * mapped lowest (a PIE at 0x55..., a fixed one at 0x400000). */
static void main_mapping(struct prof *pf)
{
	uint64_t lowest = UINT64_MAX;

	if (!pf->dwfl)
		return;
	dwfl_getmodules(pf->dwfl, lowest_module, &lowest, 0);
	if (lowest != UINT64_MAX)
		mapping_id(pf, lowest);
}

/* The blocks made before an attach (the census's): one sample whose one
 * location is the function [before attach], no address, no mapping. */
static void before_sample(struct prof *pf, uint64_t objects, uint64_t space)
{
	struct pbuf s = { 0 }, loc = { 0 }, line = { 0 }, locs = { 0 }, vals = { 0 };
	struct frame_info fi;

	memset(&fi, 0, sizeof(fi));
	fi.function = REPORT_BEFORE_FRAME;
	pb_uint(&loc, 1, ++pf->nlocs);
	pb_uint(&line, 1, function_id(pf, &fi));
	pb_sub(&loc, 4, &line);
	pb_sub(&pf->out, 4, &loc);
	pb_varint(&locs, pf->nlocs);
	pb_varint(&vals, 0);	/* allocated before: no call seen */
	pb_varint(&vals, 0);
	pb_varint(&vals, objects);
	pb_varint(&vals, space);
	pb_sub(&s, 1, &locs);
	pb_sub(&s, 2, &vals);
	pb_sub(&pf->out, 2, &s);
	free(s.p);
	free(loc.p);
	free(line.p);
	free(locs.p);
	free(vals.p);
}

/* One sample per stack with an allocation */
static void samples(struct prof *pf)
{
	size_t n, id;
	const struct heap_stack_total *tot = heap_stack_totals(pf->in->heap, &n);
	struct inuse u = { xcalloc(n + 1, 8), xcalloc(n + 1, 8), n, 0, 0 };

	heap_foreach(pf->in->heap, add_inuse, &u);
	for (id = 1; id < n; id++) {
		struct pbuf s = { 0 }, locs = { 0 }, vals = { 0 };
		const uint64_t *pcs = NULL;
		unsigned k, depth;

		if (!tot[id].allocs)
			continue;
		depth = stacks_get(pf->in->stacks, (uint32_t)id, &pcs);
		if (depth > pf->in->depth)
			depth = pf->in->depth;
		for (k = 0; k < depth; k++)
			pb_varint(&locs, location_id(pf, pcs[k], k));
		pb_varint(&vals, tot[id].allocs);
		pb_varint(&vals, tot[id].bytes);
		pb_varint(&vals, u.objects[id]);
		pb_varint(&vals, u.space[id]);
		if (locs.len)
			pb_sub(&s, 1, &locs);	/* packed */
		pb_sub(&s, 2, &vals);
		pb_sub(&pf->out, 2, &s);
		free(s.p);
		free(locs.p);
		free(vals.p);
	}
	if (u.before_objects)
		before_sample(pf, u.before_objects, u.before_space);
	free(u.objects);
	free(u.space);
}

/* BUF gzip'd onto F: 0, or -1 (message) */
static int gzip_to(FILE *f, const struct pbuf *buf, const char *path)
{
	uint8_t out[65536];
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return error("cannot write %s: zlib: %s", path,
			     z.msg ? z.msg : "deflateInit2 failed");
	z.next_in = buf->p;
	z.avail_in = (uInt)buf->len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		ret = deflate(&z, Z_FINISH);
		fwrite(out, 1, sizeof(out) - z.avail_out, f);
	} while (ret == Z_OK || ret == Z_BUF_ERROR);
	deflateEnd(&z);
	if (ret != Z_STREAM_END)
		return error("cannot write %s: zlib: deflate failed (%d)", path, ret);
	return 0;
}

int pprof_write(const char *path, const struct report_input *in,
		struct symbolizer *sym)
{
	struct prof pf;
	struct pbuf strs = { 0 };
	struct outfile of;
	size_t i;
	int ret;

	memset(&pf, 0, sizeof(pf));
	pf.in = in;
	pf.dwfl = sym ? sym_dwfl(sym) : NULL;
	/* string 0 is "" (str_id never looks it up) */
	grow_array((void **)&pf.strs, &pf.astrs, 1, sizeof(*pf.strs));
	pf.strs[pf.nstrs++] = xstrdup("");
	value_type(&pf, 1, "alloc_objects", "count");
	value_type(&pf, 1, "alloc_space", "bytes");
	value_type(&pf, 1, "inuse_objects", "count");
	value_type(&pf, 1, "inuse_space", "bytes");
	main_mapping(&pf);
	samples(&pf);
	pb_uint(&pf.out, 9, (uint64_t)in->wall * 1000000000ull);	/* time_nanos */
	pb_uint(&pf.out, 10, in->elapsed_ns);				/* duration_nanos */
	value_type(&pf, 11, "space", "bytes");				/* period_type */
	pb_uint(&pf.out, 12, 1);					/* period */
	pb_uint(&pf.out, 14, (uint64_t)str_id(&pf, "inuse_space"));	/* default */
	/* the string table last: every string is known */
	for (i = 0; i < pf.nstrs; i++)
		pb_string(&strs, 6, pf.strs[i]);
	pb_bytes(&pf.out, strs.p, strs.len);

	ret = outfile_open(&of, path);
	if (!ret) {
		ret = gzip_to(of.f, &pf.out, path);
		if (outfile_commit(&of))
			ret = -1;
	}
	for (i = 0; i < pf.nstrs; i++)
		free(pf.strs[i]);
	free(pf.strs);
	free(strs.p);
	free(pf.out.p);
	imap_free(&pf.str_ids);
	imap_free(&pf.funcs);
	imap_free(&pf.locs);
	imap_free(&pf.maps);
	return ret;
}
