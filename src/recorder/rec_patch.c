/*
 * rec_patch.c - patching an allocator or descriptor function's entry so that its calls
 * go through the hooks (docs/recorder.md piece 4), and restoring it.
 *
 * With every thread of the target stopped: the trampoline and the
 * relocated prologue are written into a code page first, the function's
 * range is published to the hooks (nesting rule), and only then the jump
 * at the entry, in one write.  A thread stopped inside the bytes to
 * displace would resume in the middle of the jump: that function is not
 * patched (the caller plants a breakpoint instead).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/memio.h"
#include "rec_priv.h"
#include "recorder/recblob.h"
#include "base/util.h"

/* Bytes of a function's body read for the branch check, at most. */
#define BODY_MAX	(64u << 10)

unsigned rec_npatched(const struct recorder *R)
{
	return R ? R->nfns : 0;
}

static struct rec_fn *find_fn(struct recorder *R, uint64_t addr)
{
	unsigned i;

	for (i = 0; i < R->nfns; i++)
		if (R->fns[i].addr == addr)
			return &R->fns[i];
	return NULL;
}

int rec_patch(struct recorder *R, pid_t tid, const char *name, uint64_t addr,
	      uint64_t size, unsigned obj, unsigned kind, unsigned tag,
	      const uint64_t *pcs, unsigned npcs, int *held_sig, char *why,
	      size_t len)
{
	/* the trampoline, then the relocated prologue: one write */
	uint8_t code[ARCH_TRAMP_LEN + ARCH_RELOC_MAX];
	uint8_t jump[ARCH_PATCH_MAX_LEN];
	struct code_page *pg;
	struct rec_fn f;
	uint8_t *body;
	size_t blen;
	unsigned i;
	int n;

	if (!R->area) {
		snprintf(why, len, "the recorder is not in the process");
		return -1;
	}
	if (find_fn(R, addr))
		return 1;
	if (!REC_FN_IS_FD(kind) && R->nranges == REC_MAX_RANGES) {
		snprintf(why, len, "more than %d functions patched", REC_MAX_RANGES);
		return -1;
	}
	memset(&f, 0, sizeof(f));
	f.name = name;
	f.addr = addr;
	f.size = size;
	f.fn = REC_FN_TAGGED(kind, obj, tag);
	blen = size && size < BODY_MAX ? size : BODY_MAX;
	body = xmalloc(blen);
	/* a body shorter than the symbol says: what could be read */
	if (mem_read_all(R->pid, addr, body, blen)) {
		ssize_t got = mem_read(R->pid, addr, body, blen);

		blen = got > 0 ? (size_t)got : 0;
	}
	n = arch_patch_plan(&f.p, body, blen, addr, why, len);
	free(body);
	if (n < 0)
		return -1;
	for (i = 0; i < npcs; i++)
		if (pcs[i] > f.p.at && pcs[i] < f.p.at + f.p.len) {
			snprintf(why, len, "a thread is stopped inside its first "
				 "instructions");
			return -1;
		}
	pg = rec_code_page(R, tid, addr, addr + (size ? size : 1), held_sig,
			   why, len);
	if (!pg)
		return -1;
	f.tramp = rec_code_alloc(pg, sizeof(code));
	if (!f.tramp) {
		snprintf(why, len, "ptleak's code page is full");
		return -1;
	}
	f.reloc = f.tramp + ARCH_TRAMP_LEN;
	n = arch_relocate(&f.p, f.reloc, code + ARCH_TRAMP_LEN, why, len);
	if (n < 0)
		return -1;
	f.reloc_len = (unsigned)n;
	if (arch_trampoline_build(f.tramp, f.fn, f.reloc,
				  pg->addr + RECBLOB_OFF_rec_stub, code, why, len) ||
	    arch_patch_jump(&f.p, f.tramp, jump, why, len))
		return -1;
	if (rec_code_write(R, f.tramp, code, ARCH_TRAMP_LEN + f.reloc_len)) {
		snprintf(why, len, "cannot write its trampoline");
		return -1;
	}
	/* the nesting rule knows an allocator's body before a call can
	 * enter it (a descriptor function's calls are not nested: closedir
	 * calls free) */
	if (!REC_FN_IS_FD(kind)) {
		i = R->nranges++;
		rec_near_add(R, addr, addr + (size ? size : f.p.len));
		R->conf->range[i].lo = addr;
		R->conf->range[i].hi = addr + (size ? size : f.p.len);
		R->conf->range[i].obj = obj;
		__atomic_store_n(&R->conf->nranges, R->nranges, __ATOMIC_RELEASE);
	}
	if (rec_code_write(R, f.p.at, jump, f.p.len)) {
		snprintf(why, len, "cannot write its entry");
		return -1;
	}
	if (R->nfns == R->afns) {
		R->afns = R->afns ? 2 * R->afns : 16;
		R->fns = xrealloc(R->fns, R->afns * sizeof(*R->fns));
	}
	R->fns[R->nfns++] = f;
	return 0;
}

int rec_nest_range(struct recorder *R, uint64_t addr, uint64_t size,
		   unsigned obj)
{
	unsigned i;

	if (!R || !R->area || !size)
		return 0;
	i = R->nranges;
	if (i == REC_MAX_RANGES)
		return -1;
	R->nranges++;
	rec_near_add(R, addr, addr + size);
	R->conf->range[i].lo = addr;
	R->conf->range[i].hi = addr + size;
	R->conf->range[i].obj = obj;
	__atomic_store_n(&R->conf->nranges, R->nranges, __ATOMIC_RELEASE);
	return 0;
}

int rec_ra_nested(const struct recorder *R, uint64_t ra)
{
	unsigned i;

	if (!R || !R->area)
		return 0;
	if (rec_pc_in_code(R, ra))
		return 1;
	for (i = 0; i < R->nfns; i++)
		if (!REC_FN_IS_FD(REC_FN_KIND(R->fns[i].fn)) &&
		    ra >= R->fns[i].addr && ra < R->fns[i].addr + R->fns[i].size)
			return 1;
	return 0;
}

int rec_obj_text(struct recorder *R, unsigned obj, uint64_t lo, uint64_t hi)
{
	if (!R || !R->area || obj >= REC_MAX_OBJS)
		return -1;
	R->conf->obj_text[obj].lo = lo;
	__atomic_store_n(&R->conf->obj_text[obj].hi, hi, __ATOMIC_RELEASE);
	return 0;
}

int rec_unpatch(struct recorder *R, pid_t pid)
{
	int fd, ret = 0;
	unsigned i;

	if (!R || !R->nfns)
		return 0;
	fd = pid == R->pid ? R->memfd : mem_open(pid);
	if (fd < 0)
		return -1;
	for (i = 0; i < R->nfns; i++) {
		const struct rec_fn *f = &R->fns[i];

		if (mem_poke(fd, f->p.at, f->p.orig, f->p.len))
			ret = error("cannot restore the entry of %s in process %d: %s",
				    f->name, (int)pid, strerror(errno));
	}
	if (fd != R->memfd)
		close(fd);
	return ret;
}

/* Where the relocated copy of the first K instructions of F ends, from
 * its start (the jump back is the same length for every K: subtracted). */
static int reloc_prefix(const struct rec_fn *f, unsigned k)
{
	uint8_t buf[ARCH_RELOC_MAX];
	struct arch_patch q = f->p, z = f->p;
	char err[128];
	unsigned i;
	int a, b;

	q.ninsns = k;
	q.len = 0;
	for (i = 0; i < k; i++)
		q.len += f->p.insn_len[i];
	z.ninsns = 0;
	z.len = 0;
	a = arch_relocate(&q, f->reloc, buf, err, sizeof(err));
	b = arch_relocate(&z, f->reloc, buf, err, sizeof(err));
	return a < 0 || b < 0 ? -1 : a - b;
}

uint64_t rec_fixup_pc(const struct recorder *R, uint64_t pc)
{
	unsigned i, k;

	for (i = 0; R && i < R->nfns; i++) {
		const struct rec_fn *f = &R->fns[i];
		uint64_t off = 0;

		if (pc < f->reloc || pc >= f->reloc + f->reloc_len)
			continue;
		/* the relocated instructions keep their order: the start
		 * of the k-th one maps to the k-th original's */
		for (k = 0; k <= f->p.ninsns; k++) {
			int at = reloc_prefix(f, k);

			if (at < 0)
				break;
			if (pc == f->reloc + (uint64_t)at)
				return f->p.at + off;
			if (k < f->p.ninsns)
				off += f->p.insn_len[k];
		}
		/* inside the jump back (not an instruction boundary) */
		return pc;
	}
	return pc;
}
