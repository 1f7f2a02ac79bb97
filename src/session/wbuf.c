/*
 * wbuf.c - the memory writes of one stop, buffered and written at once;
 * stepping a thread over a breakpoint (its displaced instruction emulated
 * into the registers and the buffer, or run out of line).
 */
#include <string.h>

#include "arch/arch.h"
#include "target/memio.h"
#include "session.h"
#include "base/util.h"

static int wb_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct wbuf *wb = ctx;

	return mem_read_all(wb->pid, addr, buf, len);
}

int wb_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct wbuf *wb = ctx;

	if (wb->n == ARRAY_SIZE(wb->w) || len > sizeof(wb->w[0].data))
		return -1;
	wb->w[wb->n].addr = addr;
	wb->w[wb->n].len = (uint8_t)len;
	memcpy(wb->w[wb->n].data, buf, len);
	wb->n++;
	return 0;
}

/* Write what was buffered: one process_vm_writev when the writes are
 * contiguous (push + return hijack: [sp-8, sp+8)), else one each. */
int wb_flush(struct wbuf *wb)
{
	uint8_t buf[sizeof(wb->w)];
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned i, total = 0;
	int ret = 0;

	if (!wb->n)
		return 0;
	for (i = 0; i < wb->n; i++) {
		if (wb->w[i].addr < lo)
			lo = wb->w[i].addr;
		if (wb->w[i].addr + wb->w[i].len > hi)
			hi = wb->w[i].addr + wb->w[i].len;
		total += wb->w[i].len;
	}
	if (hi - lo == total && total <= sizeof(buf)) {
		for (i = 0; i < wb->n; i++)
			memcpy(buf + (wb->w[i].addr - lo), wb->w[i].data, wb->w[i].len);
		ret = mem_write(wb->pid, lo, buf, total);
	} else {
		for (i = 0; i < wb->n; i++)
			ret |= mem_write(wb->pid, wb->w[i].addr, wb->w[i].data,
					 wb->w[i].len);
	}
	wb->n = 0;
	return ret;
}

/*
 * Execute BP's displaced instruction for a thread stopped on it: emulate
 * it into R (memory writes buffered in WB), or send the thread to its
 * out-of-line slot.
 */
int wb_step_over(const struct bp *bp, struct arch_regs *r, struct wbuf *wb)
{
	struct arch_mem mem = { wb_read, wb_write, wb };

	if (bp->xol) {
		arch_set_pc(r, bp->xol);
		return 0;
	}
	arch_set_pc(r, bp->addr);
	return bp->insn.ops->emulate(&bp->insn, r, &mem);
}
