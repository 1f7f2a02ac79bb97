/*
 * hooks.c - the code ptleak copies into a target (the hook blob).
 *
 * Compiled freestanding and linked by blob.ld into one flat image with no
 * relocation (mkblob.py checks): every datum is reached through rec_ctx,
 * the image's first word, which whoever maps the image fills before any
 * entry runs; the code loads it rip-relatively.  It points to the
 * struct rec_conf (rechook.h); the data area (docs/recorder.md, piece 2)
 * will hold it.
 *
 * Entry points are the global symbols named rec_*: mkblob.py gives each
 * one's offset in the image (recblob.h).  Nothing else may be named rec_*.
 * hook_enter and hook_leave are called by the stub (stub.S) only.
 */
#include "rechook.h"
#include "rec_arch.h"
#include "ring.h"

/* Written by the mapper, read by the hooks: never by the hooks. */
struct rec_conf *rec_ctx __attribute__((section(".rec_ctx"), used));

/* The hooks' records: at most this many words before the stack. */
#define MAX_WORDS	7

void hook_enter(struct rec_call *c);
void hook_leave(struct rec_call *c);

static struct rec_conf *ctx(void)
{
	return __atomic_load_n(&rec_ctx, __ATOMIC_RELAXED);
}

/*
 * One record of type TYPE with the words A0, A1, A2.  0, or -1 if it was
 * not recorded (no context yet, ring disabled or lost: counted there).
 */
int rec_record(uint64_t type, uint64_t a0, uint64_t a1, uint64_t a2)
{
	uint64_t w[3] = { a0, a1, a2 };
	struct rec_conf *cf = ctx();

	if (!cf || !cf->ring)
		return -1;
	return ring_produce(cf->ring, (unsigned)type, 0, w, 3);
}

/* The nesting rule (rechook.h): 1 if the call is inside another one. */
static int nested(const struct rec_conf *cf, const struct rec_call *c)
{
	uint64_t ra = c->ra, i, n = cf->nranges;

	if (ra >= cf->stub_lo && ra < cf->stub_hi)
		return 1;
	if (n > REC_MAX_RANGES)
		n = REC_MAX_RANGES;
	for (i = 0; i < n; i++)
		if (ra >= cf->range[i].lo && ra < cf->range[i].hi &&
		    cf->range[i].obj == REC_FN_OBJ(c->fn))
			return 1;
	return 0;
}

static uint64_t tid(const struct rec_conf *cf)
{
	if (!cf->tid_off)
		return 0;
	return (uint64_t)*(const volatile int32_t *)(rec_arch_tcb() + cf->tid_off);
}

/* The record TYPE of call C: fn, tid, the N words W, the stack. */
static void emit(const struct rec_conf *cf, unsigned type,
		 const struct rec_call *c, const uint64_t *w, unsigned n)
{
	struct ring_res res;
	unsigned i;

	if (ring_reserve(cf->ring, type, 1, n + 3, &res) < 0)
		return;
	ring_put(cf->ring, &res, 0, c->fn);
	ring_put(cf->ring, &res, 1, tid(cf));
	for (i = 0; i < n; i++)
		ring_put(cf->ring, &res, i + 2, w[i]);
	ring_put(cf->ring, &res, n + 2, c->ra);
	ring_commit(cf->ring, &res);
}

/* Before the original runs: decide whether the call is recorded; free
 * and realloc's begin are recorded now (before another thread can be
 * handed the block). */
void hook_enter(struct rec_call *c)
{
	const struct rec_conf *cf = ctx();
	unsigned kind = REC_FN_KIND(c->fn);

	c->record = 0;
	if (!cf || !cf->ring || nested(cf, c))
		return;
	c->record = 1;
	if (kind == REC_FN_FREE)
		emit(cf, REC_FREE, c, c->arg, 1);
	else if (kind == REC_FN_REALLOC)
		emit(cf, REC_REALLOC_BEGIN, c, c->arg, 1);
}

/* After the original returned: the allocations. */
void hook_leave(struct rec_call *c)
{
	const struct rec_conf *cf = ctx();
	uint64_t w[MAX_WORDS];

	if (!c->record || !cf || !cf->ring)
		return;
	switch (REC_FN_KIND(c->fn)) {
	case REC_FN_MALLOC:
		w[0] = c->ret, w[1] = c->arg[0], w[2] = 0;
		emit(cf, REC_ALLOC, c, w, 3);
		break;
	case REC_FN_CALLOC:
	case REC_FN_MEMALIGN:
		w[0] = c->ret, w[1] = c->arg[0], w[2] = c->arg[1];
		emit(cf, REC_ALLOC, c, w, 3);
		break;
	case REC_FN_REALLOC:
		w[0] = c->arg[0], w[1] = c->arg[1], w[2] = c->ret;
		emit(cf, REC_REALLOC_END, c, w, 3);
		break;
	case REC_FN_POSIX_MEMALIGN:
		w[0] = c->arg[0], w[1] = c->arg[1], w[2] = c->arg[2];
		w[3] = (uint32_t)c->ret;
		w[4] = w[3] || !w[0] ? 0 : *(const volatile uint64_t *)w[0];
		emit(cf, REC_MEMALIGN, c, w, 5);
		break;
	}
}
