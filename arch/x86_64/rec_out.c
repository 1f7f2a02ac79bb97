/*
 * rec_out.c - taking a stopped thread out of the recorder's code at
 * detach, x86-64 (arch_patch.h: arch_rec_take_out).
 *
 * The thread's registers are set to what they would be without the
 * recorder: at the patched function's entry if the original has not run
 * yet (its arguments, %r10/%r11 and callee-saved registers from the
 * stub's frame), or back in the caller with the original's results if it
 * has.  Every place of stub.S is one of the cases below (its labels,
 * recblob_offsets.h); a pc in the hooks' C code is taken out through the
 * stub frame its call came from (the return address into the stub just
 * above the hook's frames says which call).
 */
#include <stddef.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/arch_patch.h"
#include "recorder/recblob.h"
#include "recorder/rechook.h"

#define OFF(n)	RECBLOB_OFF_rec_stub_##n

struct out {
	const struct arch_rec_ops *ops;
	void *ctx;
	uint64_t page;
	int bad;
};

static uint64_t rd(struct out *o, uint64_t addr)
{
	uint64_t v = 0;

	if (o->ops->read(o->ctx, addr, &v))
		o->bad = 1;
	return v;
}

static uint64_t at(const struct out *o, unsigned off)
{
	return o->page + off;
}

/* The caller's callee-saved registers, kept by the stub frame at C. */
static void callee_saved(struct out *o, struct user_regs_struct *u, uint64_t c)
{
	u->rbx = rd(o, c + REC_CALL_RBX);
	u->r12 = rd(o, c + REC_CALL_R12);
	u->r13 = rd(o, c + REC_CALL_R13);
	u->r14 = rd(o, c + REC_CALL_R14);
	u->r15 = rd(o, c + REC_CALL_R15);
	u->rbp = rd(o, c + REC_CALL_SIZE);	/* pushed right above it */
}

/* The original not run yet: the state at the patched entry. */
static void before(struct out *o, struct arch_regs *r, uint64_t c)
{
	struct user_regs_struct *u = &r->r;
	uint64_t entry = o->ops->fn_entry(o->ctx, rd(o, c + REC_CALL_FN));

	u->rdi = rd(o, c + REC_CALL_ARGS + 0);
	u->rsi = rd(o, c + REC_CALL_ARGS + 8);
	u->rdx = rd(o, c + REC_CALL_ARGS + 16);
	u->rcx = rd(o, c + REC_CALL_ARGS + 24);
	u->r8 = rd(o, c + REC_CALL_ARGS + 32);
	u->r9 = rd(o, c + REC_CALL_ARGS + 40);
	u->r10 = rd(o, c + REC_CALL_IN_R10);
	u->r11 = rd(o, c + REC_CALL_IN_R11);
	callee_saved(o, u, c);
	u->rsp = c + REC_CALL_SIZE + 8;
	u->rip = entry;
	if (!entry)
		o->bad = 1;
}

/* The original returned (its results in the frame): back in the caller. */
static void after(struct out *o, struct arch_regs *r, uint64_t c)
{
	struct user_regs_struct *u = &r->r;

	u->rax = rd(o, c + REC_CALL_RET);
	u->rdx = rd(o, c + REC_CALL_RET2);
	u->rcx = rd(o, c + REC_CALL_RCX);
	u->rsi = rd(o, c + REC_CALL_RSI);
	u->rdi = rd(o, c + REC_CALL_RDI);
	u->r8 = rd(o, c + REC_CALL_R8);
	u->r9 = rd(o, c + REC_CALL_R9);
	u->r10 = rd(o, c + REC_CALL_R10);
	u->r11 = rd(o, c + REC_CALL_R11);
	callee_saved(o, u, c);
	u->rip = rd(o, c + REC_CALL_SIZE + 8);
	u->rsp = c + REC_CALL_SIZE + 16;
}

/* In the stub before hook_enter ran: the live registers are the entry's
 * but those the prologue changed; ENTRY_SP: the sp at the entry. */
static void prologue(struct out *o, struct arch_regs *r, uint64_t entry_sp,
		     uint64_t caller_fp, int rdi_in_frame)
{
	struct user_regs_struct *u = &r->r;
	uint64_t c = entry_sp - 8 - REC_CALL_SIZE;
	uint64_t entry = o->ops->fn_entry(o->ctx, u->r10);

	if (rdi_in_frame)
		u->rdi = rd(o, c + REC_CALL_ARGS);
	u->r10 = rd(o, entry_sp - 24);
	u->r11 = rd(o, entry_sp - 16);
	u->rbp = caller_fp;
	u->rsp = entry_sp;
	u->rip = entry;
	if (!entry)
		o->bad = 1;
}

/* A pc in the hooks' code: the stub frame of its call, from the return
 * address into the stub right above the hook's frames (4 KiB at most). */
static void in_hook(struct out *o, struct arch_regs *r)
{
	uint64_t sp = r->r.rsp, a, v;

	for (a = sp; a < sp + 4096 && !o->bad; a += 8) {
		v = rd(o, a);
		if (v != at(o, OFF(after_enter)) && v != at(o, OFF(after_leave)))
			continue;
		/* a live frame: its return address where the stub found it,
		 * a function id ptleak patched (a stale word is not) */
		if (rd(o, a + 8 + REC_CALL_RA) != rd(o, a + 8 + REC_CALL_SIZE + 8) ||
		    !o->ops->fn_entry(o->ctx, rd(o, a + 8 + REC_CALL_FN)))
			continue;
		if (v == at(o, OFF(after_enter)))
			before(o, r, a + 8);
		else
			after(o, r, a + 8);
		return;
	}
	o->bad = 1;
}

int arch_rec_take_out(struct arch_regs *r, const struct arch_rec_ops *ops,
		      void *ctx)
{
	struct user_regs_struct *u = &r->r;
	struct out o = { ops, ctx, 0, 0 };
	uint64_t pc = u->rip, tramp, entry, off;

	entry = ops->tramp_entry(ctx, pc, &tramp);
	if (entry) {
		/* the trampoline: %r11 then %r10 saved below the return
		 * address (bytes 0 and 5), then replaced (10 and 17) */
		off = pc - tramp;
		if (off >= 10)
			u->r11 = rd(&o, u->rsp - 16);
		if (off >= 17)
			u->r10 = rd(&o, u->rsp - 24);
		u->rip = entry;
		return o.bad ? -1 : 1;
	}
	o.page = ops->page_of(ctx, pc);
	if (!o.page)
		return 0;
	if (pc < at(&o, RECBLOB_OFF_rec_stub) || pc >= at(&o, OFF(end)))
		in_hook(&o, r);
	else if (pc == at(&o, RECBLOB_OFF_rec_stub))
		prologue(&o, r, u->rsp, u->rbp, 0);
	else if (pc < at(&o, OFF(framed)))
		prologue(&o, r, u->rsp + 8, rd(&o, u->rsp), 0);
	else if (pc <= at(&o, OFF(call_enter)))
		prologue(&o, r, u->rbp + 8, rd(&o, u->rbp),
			 pc == at(&o, OFF(call_enter)));
	else if (pc <= at(&o, OFF(call_orig)))
		before(&o, r, u->rsp);
	else if (pc <= at(&o, OFF(call_leave))) {
		/* the original returned: its results are still live */
		uint64_t fp = u->rbp;

		if (pc == at(&o, OFF(call_leave)))
			u->rdi = rd(&o, u->rsp + REC_CALL_RDI);
		u->rbp = rd(&o, fp);
		u->rip = rd(&o, fp + 8);
		u->rsp = fp + 16;
	} else if (pc <= at(&o, OFF(leave))) {
		uint64_t c = u->rsp, fp = u->rbp;

		/* in the scrub and the frame's zeroing: the caller's %xmm0 is
		 * in the frame */
		if (pc >= at(&o, OFF(xmm_saved)) && pc < at(&o, OFF(xmm_back))) {
			r->xmm0[0] = rd(&o, c + REC_CALL_ARGS);
			r->xmm0[1] = rd(&o, c + REC_CALL_ARGS + 8);
			r->xmm0_set = 1;
		}
		if (pc < at(&o, OFF(regs_back))) {
			/* the registers still in the frame */
			after(&o, r, c);
		} else {
			/* the registers back (the frame being zeroed):
			 * leave; ret */
			u->rbp = rd(&o, fp);
			u->rip = rd(&o, fp + 8);
			u->rsp = fp + 16;
		}
	} else if (pc >= at(&o, OFF(no_leave)) && pc <= at(&o, OFF(nl_leave))) {
		/* a call without hook_leave: the registers live but %rax and
		 * %xmm0 while the frame keeps them; then leave; ret */
		uint64_t c = u->rsp, fp = u->rbp;

		if (pc >= at(&o, OFF(nl_rax_saved)) && pc < at(&o, OFF(nl_rax_back)))
			u->rax = rd(&o, c + REC_CALL_RET);
		if (pc >= at(&o, OFF(nl_xmm_saved)) && pc < at(&o, OFF(nl_xmm_back))) {
			r->xmm0[0] = rd(&o, c + REC_CALL_ARGS);
			r->xmm0[1] = rd(&o, c + REC_CALL_ARGS + 8);
			r->xmm0_set = 1;
		}
		u->rbp = rd(&o, fp);
		u->rip = rd(&o, fp + 8);
		u->rsp = fp + 16;
	} else {
		/* at a ret */
		u->rip = rd(&o, u->rsp);
		u->rsp += 8;
	}
	/* not back into a system call the hooks made (ring_wait's futex) */
	u->orig_rax = ~0ULL;
	return o.bad ? -1 : 1;
}
