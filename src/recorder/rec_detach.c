/*
 * rec_detach.c - leaving a target with nothing of the recorder in it
 * (docs/design.md, "Detach"): every stopped thread is taken out of the
 * recorder's code (arch_rec_take_out), and a stub that called the
 * original allocator (a thread blocked in it, or stopped there) gets its
 * return address replaced by a `leave; ret` of the program's own code,
 * which does what the stub would have done on the way out once the hooks
 * are gone: pop the stub's frame and return to the caller with the
 * original's results.  Then nothing can reach the code pages any more.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/arch_patch.h"
#include "target/memio.h"
#include "rec_priv.h"
#include "recorder/recblob.h"
#include "base/util.h"

struct view {
	const struct recorder *R;
	pid_t tid;
};

static int v_read(void *ctx, uint64_t addr, uint64_t *v)
{
	const struct view *w = ctx;

	return mem_read_all(w->tid, addr, v, sizeof(*v));
}

static uint64_t v_page_of(void *ctx, uint64_t pc)
{
	const struct view *w = ctx;
	unsigned i;

	for (i = 0; i < w->R->npages; i++)
		if (pc >= w->R->pages[i].addr &&
		    pc < w->R->pages[i].addr + CODE_PAGE_SIZE)
			return w->R->pages[i].addr;
	return 0;
}

static uint64_t v_fn_entry(void *ctx, uint64_t fn)
{
	const struct view *w = ctx;
	unsigned i;

	for (i = 0; i < w->R->nfns; i++)
		if (w->R->fns[i].fn == (uint32_t)fn)
			return w->R->fns[i].p.at;
	return 0;
}

static uint64_t v_tramp_entry(void *ctx, uint64_t pc, uint64_t *tramp)
{
	const struct view *w = ctx;
	unsigned i;

	for (i = 0; i < w->R->nfns; i++)
		if (pc >= w->R->fns[i].tramp &&
		    pc < w->R->fns[i].tramp + ARCH_TRAMP_LEN) {
			*tramp = w->R->fns[i].tramp;
			return w->R->fns[i].p.at;
		}
	return 0;
}

static const struct arch_rec_ops ops = {
	v_read, v_page_of, v_fn_entry, v_tramp_entry,
};

int rec_take_out(const struct recorder *R, pid_t tid, struct arch_regs *r)
{
	struct view w = { R, tid };
	uint64_t pc = arch_pc(r), fixed;

	if (!R || !R->npages)
		return 0;
	fixed = rec_fixup_pc(R, pc);
	if (fixed != pc) {
		arch_set_pc(r, fixed);
		return 1;
	}
	return arch_rec_take_out(r, &ops, &w);
}

/* A `leave; ret` in the code of the first patched object, or 0. */
static uint64_t find_gadget(struct recorder *R)
{
	static uint8_t buf[65536];
	uint64_t a, s, e, at = 0;

	if (R->gadget || !R->nfns)
		return R->gadget;
	/* the code mapping of the first patched function */
	if (rec_mapping_of(R->pid, R->fns[0].addr, &s, &e))
		return 0;
	for (a = s; a < e && !at; a += sizeof(buf) - 1) {
		ssize_t got = mem_read(R->pid, a, buf, sizeof(buf));
		size_t i;

		for (i = 0; got > 1 && i + 1 < (size_t)got; i++)
			if (buf[i] == 0xc9 && buf[i + 1] == 0xc3) {
				at = a + i;
				break;
			}
		if (got < (ssize_t)sizeof(buf))
			break;
	}
	R->gadget = at;
	return at;
}

int rec_unwind_stubs(struct recorder *R, pid_t tid, uint64_t sp)
{
	static uint64_t buf[8192];
	struct view w = { R, tid };
	uint64_t a = sp, end = sp + (8ull << 20), gadget;
	unsigned i, n = 0;
	ssize_t got;
	size_t k;

	if (!R || !R->npages)
		return 0;
	gadget = find_gadget(R);
	while (a < end) {
		got = mem_read(tid, a, buf, sizeof(buf));
		if (got < 8)
			break;
		for (k = 0; k < (size_t)got / 8; k++) {
			uint64_t c = a + 8 * k + 8, ra, ra2, fn;

			for (i = 0; i < R->npages; i++)
				if (buf[k] == R->pages[i].addr + RECBLOB_OFF_rec_stub_after_orig)
					break;
			if (i == R->npages)
				continue;
			/* a live stub frame above it (not a stale word) */
			if (v_read(&w, c + REC_CALL_RA, &ra) ||
			    v_read(&w, c + REC_CALL_SIZE + 8, &ra2) || ra != ra2 ||
			    v_read(&w, c + REC_CALL_FN, &fn) || !v_fn_entry(&w, fn))
				continue;
			if (!gadget || mem_write(tid, c - 8, &gadget, 8))
				return -1;
			n++;
		}
		a += (uint64_t)got;
		if ((size_t)got < sizeof(buf))
			break;
	}
	return (int)n;
}

void rec_unlink_code(struct recorder *R)
{
	uint64_t zero = 0;
	unsigned i;

	/* the hooks see no context: they pass straight through */
	for (i = 0; R && i < R->npages; i++)
		rec_code_write(R, R->pages[i].addr + RECBLOB_OFF_rec_ctx, &zero, 8);
}
