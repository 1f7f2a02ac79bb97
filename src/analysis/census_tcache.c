/*
 * census_tcache.c - glibc's per-thread caches for the census (census.h):
 * the tcache TLS variable found from libc's TPOFF GOT slots (or near the
 * thread pointer), each thread's tcache_perthread_struct validated, its
 * chunks free (they look in use), the struct allocator metadata.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis/census.h"
#include "arch/arch.h"
#include "base/util.h"
#include "census_priv.h"

/* tcache_perthread_struct { uint16_t counts[64]; void *entries[64]; } */
#define TC_BINS		64
#define TC_STRUCT	(TC_BINS * 2 + TC_BINS * 8)
#define TC_CHUNK	(TC_STRUCT + 16)

/* relocations read from libc at most (its own: ~1,500) */
#define RELA_MAX	(1u << 18)

#define rd census_rd
#define bad census_bad
#define find_chunk census_find_chunk

/* The TLS offsets of libc's initial-exec variables: its TPOFF GOT slots,
 * as the dynamic linker filled them.  Into OFFS (at most MAX); how many. */
static unsigned tpoff_slots(const struct census_input *in, int64_t *offs,
			    unsigned max)
{
	const struct census_map *lib = NULL;
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	Elf64_Rela r[256];
	unsigned n = 0, i;
	uint64_t budget = RELA_MAX;
	size_t k;
	int fd = -1;

	for (k = 0; k < in->nmaps && !lib; k++)
		if (in->maps[k].offset == 0 && in->maps[k].inode &&
		    census_libc_path(in->maps[k].path))
			lib = &in->maps[k];
	/* the path the target mapped: a FIFO in its place must not hold
	 * ptleak */
	if (lib)
		fd = open_untrusted(lib->path);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(sh) || eh.e_shnum > 4096)
		goto out;
	for (i = 0; i < eh.e_shnum && n < max && budget; i++) {
		uint64_t j, nr;

		if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + (uint64_t)i * sizeof(sh))) !=
		    sizeof(sh) || sh.sh_type != SHT_RELA || sh.sh_entsize != sizeof(r[0]))
			continue;
		/* every section's entries count against one budget */
		nr = sh.sh_size / sizeof(r[0]);
		if (nr > budget)
			nr = budget;
		budget -= nr;
		for (j = 0; j < nr && n < max; ) {
			size_t want = nr - j < ARRAY_SIZE(r) ? nr - j : ARRAY_SIZE(r), e;
			ssize_t got = pread(fd, r, want * sizeof(r[0]),
					    (off_t)(sh.sh_offset + j * sizeof(r[0])));

			if (got < (ssize_t)sizeof(r[0]))
				break;
			for (e = 0; e < (size_t)got / sizeof(r[0]) && n < max; e++) {
				uint64_t v;

				if (ELF64_R_TYPE(r[e].r_info) != ARCH_RELOC_TPOFF ||
				    rd(in, lib->start + r[e].r_offset, &v, 8))
					continue;
				if ((int64_t)v < 0 && (int64_t)v > -(1 << 24) && !(v & 7))
					offs[n++] = (int64_t)v;
			}
			j += (size_t)got / sizeof(r[0]);
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return n;
}

/* V (a thread's tcache variable) points to a tcache_perthread_struct: a
 * chunk of its size in use, counts and entries agreeing.  1 yes, 0 (V 0:
 * none), -1 no. */
static int tcache_at(struct walk *w, uint64_t v, uint16_t *counts, uint64_t *entries)
{
	struct chunk *ch;
	uint8_t buf[TC_STRUCT];
	unsigned i;

	if (!v)
		return 0;
	ch = (v & 15) ? NULL : find_chunk(w, v - 16);
	/* tcache_init's _int_malloc: 0x290, or 16 more when what was left
	 * of the chunk it split was too small to be one */
	if (!ch || ch->state != USED || ch->size < TC_CHUNK ||
	    ch->size > TC_CHUNK + 16 ||
	    rd(w->in, v, buf, sizeof(buf)))
		return -1;
	memcpy(counts, buf, TC_BINS * 2);
	memcpy(entries, buf + TC_BINS * 2, TC_BINS * 8);
	for (i = 0; i < TC_BINS; i++)
		if (!entries[i] != !counts[i] || (entries[i] & 15))
			return -1;
	return 1;
}

/* Which of OFFS is glibc's tcache: valid for every thread, set in the
 * most; else the one set in the most, the first thread where it is not
 * valid into *BAD_TID and *BAD_V. */
static int64_t tcache_offset(struct walk *w, const int64_t *offs, unsigned n,
			     int32_t *bad_tid, uint64_t *bad_v)
{
	uint16_t counts[TC_BINS];
	uint64_t entries[TC_BINS];
	int64_t best = 0, best_bad = 0;
	unsigned i, best_score = 0, bad_score = 0;
	size_t t;

	for (i = 0; i < n; i++) {
		unsigned score = 0, nbad = 0;
		int32_t tid = 0;
		uint64_t bv = 0;

		for (t = 0; t < w->in->nthreads; t++) {
			uint64_t v;
			int r;

			if (rd(w->in, w->in->threads[t].tp + (uint64_t)offs[i], &v, 8))
				v = ~0ull;
			r = v == ~0ull ? -1 : tcache_at(w, v, counts, entries);
			if (r < 0 && !nbad++) {
				tid = w->in->threads[t].tid;
				bv = v;
			}
			score += r > 0;
		}
		if (!nbad && score > best_score) {
			best = offs[i];
			best_score = score;
		} else if (nbad && nbad < score && score > bad_score) {
			best_bad = offs[i];
			bad_score = score;
			*bad_tid = tid;
			*bad_v = bv;
		}
	}
	if (!best && best_bad)
		return -best_bad;	/* (negated: a TLS offset is negative) */
	return best;
}

/* Every thread's tcache: its chunks free, its struct allocator's. */
int census_tcaches(struct walk *w)
{
	int64_t offs[256];
	unsigned n = tpoff_slots(w->in, offs, 256), i;
	size_t t, steps = 0;
	int tc_chunks = 0;
	int32_t bad_tid = 0;
	uint64_t bad_v = 0;

	if (!n)		/* no relocations (a static executable): near the TP */
		for (n = 0; n < 256; n++)
			offs[n] = -8 * (int64_t)(n + 1);
	w->c->tcache_tpoff = tcache_offset(w, offs, n, &bad_tid, &bad_v);
	if (w->c->tcache_tpoff > 0)
		return bad(w, "glibc's tcache of thread %d is not one (%#llx, at "
			   "TLS offset %lld)", (int)bad_tid,
			   (unsigned long long)bad_v, -(long long)w->c->tcache_tpoff);
	if (!w->c->tcache_tpoff) {
		for (t = 0; t < w->n; t++)
			tc_chunks += (w->ch[t].size == TC_CHUNK ||
				      w->ch[t].size == TC_CHUNK + 16) &&
				     w->ch[t].state == USED;
		return tc_chunks && w->in->nthreads ?
			bad(w, "glibc's tcache was not found in the threads' TLS") : 0;
	}
	for (t = 0; t < w->in->nthreads; t++) {
		uint16_t counts[TC_BINS];
		uint64_t entries[TC_BINS], v;

		if (rd(w->in, w->in->threads[t].tp + (uint64_t)w->c->tcache_tpoff, &v, 8) ||
		    tcache_at(w, v, counts, entries) <= 0)
			continue;
		find_chunk(w, v - 16)->state = META;
		w->c->ntcaches++;
		for (i = 0; i < TC_BINS; i++) {
			uint64_t e = entries[i];
			unsigned k;

			for (k = 0; k < counts[i]; k++) {
				struct chunk *ch = (e & 15) ? NULL : find_chunk(w, e - 16);
				uint64_t next;

				if (!ch || ch->state != USED || ++steps > w->n ||
				    rd(w->in, e, &next, 8))
					return bad(w, "glibc's tcache of thread %d is "
						   "corrupt at %#llx", (int)w->in->threads[t].tid,
						   (unsigned long long)e);
				ch->state = CACHED;
				e = (e >> 12) ^ next;
			}
			if (e)
				return bad(w, "glibc's tcache of thread %d holds more "
					   "chunks than it counts", (int)w->in->threads[t].tid);
		}
	}
	return 0;
}
