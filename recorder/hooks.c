/*
 * hooks.c - the code ptleak copies into a target (the hook blob).
 *
 * Compiled freestanding and linked by blob.ld into one flat image with no
 * relocation (mkblob.py checks): every datum is reached through rec_ctx,
 * the image's first word, which whoever maps the image fills before any
 * entry runs; the code loads it rip-relatively.  Today it points to the
 * ring; the data area (docs/recorder.md, piece 2) will take its place.
 *
 * Entry points are the global functions named rec_*: mkblob.py gives each
 * one's offset in the image (recblob.h).  Nothing else may be named rec_*.
 */
#include "ring.h"

/* Written by the mapper, read by the hooks: never by the hooks. */
struct ring *rec_ctx __attribute__((section(".rec_ctx"), used));

static struct ring *ctx(void)
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
	struct ring *r = ctx();

	if (!r)
		return -1;
	return ring_produce(r, (unsigned)type, 0, w, 3);
}
