/*
 * heapprobe.c - the breakpoint probes of the allocator (and of the
 * descriptor functions, fdprobe.h): at an entry the call is recorded and its
 * return hijacked through the trampoline; at the return the result goes to
 * the heap table (heap.h) or the fd table.  A call made from within the call
 * in progress (realloc calling malloc) is part of it.  Another heap engine
 * (docs/recorder.md) would feed heap.h beside this one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "breakpoints/fdprobe.h"
#include "target/guard.h"
#include "target/memio.h"
#include "recorder/recorder.h"
#include "session.h"
#include "tables/stacks.h"
#include "base/util.h"

static struct pending *push_pending(struct task *t)
{
	grow_array((void **)&t->pend, &t->apend, t->npend + 1, sizeof(*t->pend));
	return &t->pend[t->npend++];
}

/* Stack slot SLOT holds the trampoline instead of REAL (0: no longer):
 * the recorder's walks go through it, the guardian puts it back if
 * ptleak dies. */
static void hijacked(struct proc *P, uint64_t slot, uint64_t real)
{
	rec_hijack(P->rec, slot, real);
	guard_ret(P->bps.guard, slot, P->bps.trampoline, real);
}

/* Forget the call in progress on top of T's stack: longjmp or an
 * exception left it.  A realloc's old block goes back (its fate is not
 * known). */
void heapprobe_drop(struct proc *P, struct task *t)
{
	struct pending *q = &t->pend[--t->npend];

	hijacked(P, q->slot, 0);
	if (q->held_live)
		heap_realloc_end(P->heap, q->arg[0], 1, &q->held, 1, NULL);
}

/*
 * An allocator call made by the allocator call in progress on this thread
 * (realloc calling malloc inside libc) is part of it.  Either it returns
 * into the outer function, or the outer function tail-called it: then its
 * return slot is the outer call's, still holding the trampoline.  Or a
 * function the outer one tail-called made it (mimalloc's realloc jumps to
 * mi_heap_realloc, which calls free): its slot is then less than a signal
 * frame below the outer one's, so no handler can have run in between (a
 * handler interrupting the outer call makes calls of its own).  Calls in
 * progress whose slots the stack has moved past (longjmp) are dropped
 * first, as uretprobes do.
 */
static int is_nested(struct proc *P, struct task *t, const struct bp *bp,
		     uint64_t slot, uint64_t ret)
{
	const struct pending *outer;
	size_t i;

	while (t->npend) {
		const struct pending *top = &t->pend[t->npend - 1];
		uint64_t v;

		/* an outer call, deeper in the same stack */
		if (top->slot > slot)
			break;
		/* the same slot, still hijacked: a tail call from it */
		if (top->slot == slot && ret == P->bps.trampoline)
			break;
		/* a call on another stack (a handler on a sigaltstack above
		 * it interrupted it): its slot still holds the trampoline */
		if (top->slot < slot &&
		    !mem_read_all(t->tid, top->slot, &v, sizeof(v)) &&
		    v == P->bps.trampoline)
			break;
		heapprobe_drop(P, t);
	}
	/* the innermost call in progress of the same family (an allocation
	 * inside fopen is an allocation) */
	for (i = t->npend; i > 0 && t->pend[i - 1].bp->kind != bp->kind; i--)
		;
	if (!i)
		return 0;
	outer = &t->pend[i - 1];
	if (bp->kind == BP_FD)
		return fdprobe_nested(P->fdp, bp, outer->bp, outer->slot, slot, ret);
	return slot == outer->slot ||
	       (ret >= outer->bp->addr && ret < outer->bp->end) ||
	       (slot < outer->slot && outer->slot - slot < ARCH_SIGFRAME_MIN);
}

void heapprobe_lost(struct session *S, const struct bp *bp, int err,
		    const char *fmt, ...)
{
	char msg[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cov_lost(&S->proc->cov, bp->kind == BP_FD ? COV_FDS : COV_HEAP, err, "%s", msg);
}

void heapprobe_entry(struct session *S, struct task *t,
		     const struct bp *bp, struct arch_regs *r,
		     struct wbuf *wb)
{
	struct proc *P = S->proc;
	uint64_t slot = arch_entry_ret_slot(r), ret = 0;
	uint64_t pcs[MAX_DEPTH];
	struct ret_fix fixes[16];
	unsigned nfix = 0, n, i;
	struct pending *p;

	/* realloc calling malloc inside libc counts once: skip calls made
	 * from within the allocator call in progress */
	if (t->npend) {
		if (mem_read_all(t->tid, slot, &ret, sizeof(ret))) {
			heapprobe_lost(S, bp, errno, "cannot read the return "
				       "address of %s in thread %d", bp->name,
				       (int)t->tid);
			return;
		}
		if (is_nested(P, t, bp, slot, ret))
			return;
	}
	/* called by an allocator function the recorder patched: its
	 * record covers this call */
	if (bp->kind == BP_ALLOC && rec_injected(P->rec) &&
	    !mem_read_all(t->tid, slot, &ret, sizeof(ret)) &&
	    rec_ra_nested(P->rec, ret))
		return;
	if (bp->kind == BP_FD && !fdprobe_entry(P->fdp, t->tid, bp, r))
		return;		/* done at entry (a close), or nothing to see */
	if (bp->kind == BP_ALLOC && bp->fn == AF_FREE) {
		if (debug_events)
			fprintf(stderr, "ptleak-debug: %d free(%#llx)\n", (int)t->tid,
				(unsigned long long)arch_arg(r, 0));
		if (arch_arg(r, 0))
			heap_free_by(P->heap, arch_arg(r, 0), t->tid, now_ns());
		return;
	}
	for (i = t->npend; i > 0 && nfix < ARRAY_SIZE(fixes); i--) {
		fixes[nfix].slot = t->pend[i - 1].slot;
		fixes[nfix].real = t->pend[i - 1].real;
		nfix++;
	}
	n = unwind_stack(P->unw, t->tid, r, fixes, nfix, pcs, S->o->depth);
	/* the return address: from the stack snapshot just taken */
	if (!t->npend && unwind_snapshot_read(P->unw, slot, &ret) &&
	    mem_read_all(t->tid, slot, &ret, sizeof(ret))) {
		heapprobe_lost(S, bp, errno, "cannot read the return address "
			       "of %s in thread %d", bp->name, (int)t->tid);
		return;
	}
	p = push_pending(t);
	memset(p, 0, sizeof(*p));
	p->slot = slot;
	p->real = ret;
	p->bp = bp;
	p->arg[0] = arch_arg(r, 0);
	p->arg[1] = arch_arg(r, 1);
	p->arg[2] = arch_arg(r, 2);
	p->arg[3] = arch_arg(r, 3);
	p->stack = stacks_intern(P->stacks, pcs, n);
	p->time = now_ns();
	if (bp->kind == BP_ALLOC &&
	    (bp->fn == AF_REALLOC || bp->fn == AF_REALLOCARRAY))
		p->held_live = heap_realloc_begin(P->heap, p->arg[0], &p->held);
	wb_write(wb, slot, &P->bps.trampoline, sizeof(P->bps.trampoline));
	hijacked(P, slot, ret);
}

static uint64_t requested_size(const struct pending *p, int *overflow)
{
	uint64_t a = p->arg[0], b = p->arg[1], c = p->arg[2];
	unsigned __int128 m;

	*overflow = 0;
	switch (p->bp->fn) {
	case AF_MALLOC:
	case AF_VALLOC:
	case AF_PVALLOC:
		return a;
	case AF_CALLOC:
		m = (unsigned __int128)a * b;
		*overflow = m >> 64 != 0;
		return (uint64_t)m;
	case AF_REALLOC:
	case AF_ALIGNED_ALLOC:
	case AF_MEMALIGN:
		return b;
	case AF_REALLOCARRAY:
		m = (unsigned __int128)b * c;
		*overflow = m >> 64 != 0;
		return (uint64_t)m;
	case AF_POSIX_MEMALIGN:
		return c;
	}
	return 0;
}

int heapprobe_return(struct session *S, struct task *t, struct arch_regs *r)
{
	struct proc *P = S->proc;
	uint64_t sp = arch_sp(r), result = arch_retval(r), size;
	struct heap_block b;
	struct pending p;
	size_t k;
	int overflow;

	/* the returning call's slot is just below sp; calls made after it
	 * that never returned were left by longjmp or an exception */
	for (k = t->npend; k > 0 && t->pend[k - 1].slot != sp - 8; k--)
		;
	if (!k)
		return error("thread %d returned to ptleak's trampoline with no "
			     "call in progress at sp %#llx", (int)t->tid,
			     (unsigned long long)sp);
	while (t->npend > k)
		heapprobe_drop(P, t);
	p = t->pend[--t->npend];
	hijacked(P, p.slot, 0);
	arch_set_pc(r, p.real);
	if (p.bp->kind == BP_FD) {
		fdprobe_return(P->fdp, t->tid, p.bp, p.arg, result, p.stack, p.time);
		return 0;
	}

	size = requested_size(&p, &overflow);
	if (debug_events)
		fprintf(stderr, "ptleak-debug: %d %s(%#llx, %#llx, %#llx) = %#llx\n",
			(int)t->tid, p.bp->name, (unsigned long long)p.arg[0],
			(unsigned long long)p.arg[1], (unsigned long long)p.arg[2],
			(unsigned long long)result);
	memset(&b, 0, sizeof(b));
	b.size = size;
	b.time_ns = p.time;
	b.stack = p.stack;
	b.tid = t->tid;
	b.fn = (uint8_t)p.bp->fn;

	switch (p.bp->fn) {
	case AF_REALLOC:
	case AF_REALLOCARRAY:
		b.addr = result;
		heap_realloc_end(P->heap, p.arg[0], p.held_live, &p.held,
				 overflow ? 1 : size, &b);
		break;
	case AF_POSIX_MEMALIGN:
		if (result != 0 || mem_read_all(t->tid, p.arg[0], &b.addr, 8) ||
		    !b.addr)
			break;
		heap_alloc(P->heap, &b);
		break;
	default:
		b.addr = result;
		if (result)
			heap_alloc(P->heap, &b);
	}
	return 0;
}
