/*
 * ring.c - the consumer of the recorder's ring (ring.h).
 *
 * The ring lives in memory the target writes: the reader keeps its own
 * size, mask and tail and checks every header it reads, so a scribbling
 * target can make it stop (ring_why() says at what) but never read or
 * write outside the mapping nor make it loop longer than the ring holds;
 * a record is copied into the reader's fixed buffer before the callback
 * sees it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "recorder/ring.h"
#include "base/util.h"

struct ring_reader {
	struct ring *r;
	uint64_t size, mask;
	unsigned log2;
	uint64_t tail;
	int broken;			/* a corrupt header was seen */
	char why[128];			/* what was corrupt */
	uint64_t buf[RING_MAX_WORDS];
};

size_t ring_mem_size(unsigned size_log2)
{
	return RING_DATA_OFF + ((size_t)1 << size_log2);
}

int ring_init(void *mem, unsigned size_log2)
{
	struct ring *r = mem;

	if (size_log2 < RING_MIN_LOG2 || size_log2 > RING_MAX_LOG2)
		return error("ring size 2^%u out of range (2^%d to 2^%d)",
			     size_log2, RING_MIN_LOG2, RING_MAX_LOG2);
	r->magic = RING_MAGIC;
	r->version = RING_VERSION;
	r->size_log2 = size_log2;
	r->stale_ns = RING_STALE_NS;
	__atomic_store_n(&r->enabled, 1, __ATOMIC_RELEASE);
	return 0;
}

struct ring_reader *ring_reader_new(void *mem, size_t mem_len)
{
	struct ring *r = mem;
	struct ring_reader *rd;
	unsigned log2;

	if (mem_len < RING_DATA_OFF || r->magic != RING_MAGIC ||
	    r->version != RING_VERSION) {
		error("no ring of version %u in the recorder's area (bad magic or version)",
		      RING_VERSION);
		return NULL;
	}
	log2 = r->size_log2;
	if (log2 < RING_MIN_LOG2 || log2 > RING_MAX_LOG2 ||
	    ring_mem_size(log2) > mem_len) {
		error("ring of 2^%u bytes does not fit its %zu-byte area", log2, mem_len);
		return NULL;
	}
	rd = xcalloc(1, sizeof(*rd));
	rd->r = r;
	rd->log2 = log2;
	rd->size = (uint64_t)1 << log2;
	rd->mask = rd->size - 1;
	rd->tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	return rd;
}

void ring_reader_delete(struct ring_reader *rd)
{
	free(rd);
}

uint64_t ring_tail(const struct ring_reader *rd)
{
	return rd->tail;
}

static uint64_t *word(struct ring_reader *rd, uint64_t pos)
{
	return (uint64_t *)((char *)rd->r + RING_DATA_OFF + (pos & rd->mask));
}

static int corrupt(struct ring_reader *rd, const char *fmt, uint64_t v)
{
	rd->broken = 1;
	snprintf(rd->why, sizeof(rd->why), fmt, v, rd->tail);
	return -1;
}

static int bad_header(struct ring_reader *rd, uint64_t h)
{
	return corrupt(rd, "record header %#" PRIx64 " at byte %" PRIu64, h);
}

/*
 * The shared header still makes sense: what ring_init() wrote unchanged,
 * the tail ours (only the consumer writes it), head within what the
 * producers can have reserved.  0, or -1 (broken) if not.
 */
static int header_sane(struct ring_reader *rd)
{
	struct ring *r = rd->r;
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
	uint32_t enabled = __atomic_load_n(&r->enabled, __ATOMIC_RELAXED);

	if (r->magic != RING_MAGIC || r->version != RING_VERSION)
		return corrupt(rd, "magic and version %#" PRIx64 " (tail %" PRIu64 ")",
			       (uint64_t)r->version << 32 | r->magic);
	if (r->size_log2 != rd->log2)
		return corrupt(rd, "size 2^%" PRIu64 " (tail %" PRIu64 ")",
			       (uint64_t)r->size_log2);
	if (enabled > 1)
		return corrupt(rd, "enabled %" PRIu64 " (tail %" PRIu64 ")",
			       (uint64_t)enabled);
	if (tail != rd->tail)
		return corrupt(rd, "tail %" PRIu64 ", ours %" PRIu64, tail);
	if (!ring_head_ok(rd, head))
		return corrupt(rd, "head %" PRIu64 " (tail %" PRIu64 ")", head);
	return 0;
}

int ring_head_ok(const struct ring_reader *rd, uint64_t head)
{
	return head - rd->tail <= rd->size + RING_HEAD_SLACK;
}

const char *ring_why(const struct ring_reader *rd)
{
	return rd->broken ? rd->why : NULL;
}

static int valid_len(const struct ring_reader *rd, uint32_t len)
{
	return len >= 8 && len % 8 == 0 && len <= RING_MAX_LEN && len <= rd->size;
}

/* Zero LEN bytes at tail (header last); the new tail is ours until
 * publish(). */
static void release(struct ring_reader *rd, uint32_t len)
{
	uint32_t i;

	for (i = 8; i < len; i += 8)
		__atomic_store_n(word(rd, rd->tail + i), 0, __ATOMIC_RELAXED);
	__atomic_store_n(word(rd, rd->tail), 0, __ATOMIC_RELAXED);
	rd->tail += len;
}

/* The tail the producers see: once per batch, not per record (a
 * seq_cst store on the line the producers read costs more than the
 * rest of a small record's consumption). */
static void publish(struct ring_reader *rd)
{
	/* seq_cst: pairs with the waiters count in ring_wait() */
	__atomic_store_n(&rd->r->tail, rd->tail, __ATOMIC_SEQ_CST);
}

static void wake_waiters(struct ring_reader *rd)
{
	struct ring *r = rd->r;

	if (!__atomic_load_n(&r->waiters, __ATOMIC_SEQ_CST))
		return;
	__atomic_fetch_add(&r->wake_seq, 1, __ATOMIC_SEQ_CST);
	ring_arch_futex_wake(&r->wake_seq);
}

void ring_heartbeat(struct ring_reader *rd)
{
	__atomic_fetch_add(&rd->r->heartbeat, 1, __ATOMIC_RELAXED);
}

/*
 * *H, the header at tail, not COMMITTED: 1 if it is a record to take
 * now, *H its header: an AMENDED one, or an OPEN one claimed (its header
 * CASed to 0: a later ring_amend fails); 0 if not (a hole: nothing, or
 * a record being written or amended).  The claim's CAS failing leaves
 * *H what its producer made of it meanwhile: AMENDING or AMENDED is
 * decided again, anything else (not a producer's doing) taken as is for
 * the caller's checks.
 */
static int take_open(struct ring_reader *rd, uint64_t *h)
{
	if (RING_HDR_STATE(*h) == RING_OPEN &&
	    __atomic_compare_exchange_n(word(rd, rd->tail), h, 0, 0,
					__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
		return 1;
	return RING_HDR_STATE(*h) == RING_AMENDED;
}

int ring_consume(struct ring_reader *rd, ring_fn fn, void *ctx, unsigned max)
{
	struct ring_rec rec;
	uint64_t h;
	uint32_t len, i;
	int n = 0, stop = 0;

	if (rd->broken || header_sane(rd))
		return -1;
	ring_heartbeat(rd);
	while ((unsigned)n < max && !stop) {
		h = __atomic_load_n(word(rd, rd->tail), __ATOMIC_ACQUIRE);
		if (RING_HDR_STATE(h) != RING_COMMITTED && !take_open(rd, &h))
			break;
		len = RING_HDR_LEN(h);
		if (!valid_len(rd, len)) {
			n = bad_header(rd, h);
			break;
		}
		rec.open = RING_HDR_STATE(h) != RING_COMMITTED;
		rec.amended = RING_HDR_STATE(h) == RING_AMENDED;
		rec.pos = rd->tail;
		rec.type = RING_HDR_TYPE(h);
		rec.npcs = RING_HDR_NPCS(h);
		rec.nwords = len / 8 - 1;
		if ((rd->tail & rd->mask) + len <= rd->size) {
			/* not round the end: the words in a row, each read
			 * and zeroed (word() for each was a third of the
			 * consumer's instructions; memcpy and memset, rep
			 * movs and stos, slow to start for a few words) */
			uint64_t *p = word(rd, rd->tail) + 1;

			for (i = 0; i < rec.nwords; i++) {
				rd->buf[i] = __atomic_load_n(p + i, __ATOMIC_RELAXED);
				__atomic_store_n(p + i, 0, __ATOMIC_RELAXED);
			}
			__atomic_store_n(p - 1, 0, __ATOMIC_RELAXED);
			rd->tail += len;
		} else {
			for (i = 0; i < rec.nwords; i++)
				rd->buf[i] = __atomic_load_n(word(rd, rd->tail + 8 * (i + 1)),
							     __ATOMIC_RELAXED);
			release(rd, len);
		}
		rec.w = rd->buf;
		n++;
		stop = fn(ctx, &rec);
	}
	if (n) {
		publish(rd);
		wake_waiters(rd);
	}
	return n;
}

int ring_skip(struct ring_reader *rd)
{
	uint64_t *w, h, head;
	uint32_t len;

	if (rd->broken || header_sane(rd))
		return -1;
	w = word(rd, rd->tail);
	h = __atomic_load_n(w, __ATOMIC_ACQUIRE);
	switch (RING_HDR_STATE(h)) {
	case RING_COMMITTED:
	case RING_OPEN:
	case RING_AMENDED:
		return 0;
	case RING_AMENDING:
	case RING_WRITING:
		len = RING_HDR_LEN(h);
		if (!valid_len(rd, len))
			return bad_header(rd, h);
		if (RING_HDR_STATE(h) == RING_WRITING)
			break;
		/* the allocation stays, its free's amendment is given up
		 * (the block is live until that free runs) */
		return __atomic_compare_exchange_n(w, &h, RING_HDR_WITH(h, RING_OPEN), 0,
						   __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE) ?
		       (int)len : 0;
	case RING_FREE:
		if (h)
			return bad_header(rd, h);
		head = __atomic_load_n(&rd->r->head, __ATOMIC_ACQUIRE);
		if (head == rd->tail)
			return 0;	/* nothing reserved */
		len = 8;
		break;
	default:
		return bad_header(rd, h);
	}
	/* No producer is inside this reservation (ring.h: the caller's
	 * promise); a header committed since is still taken, not skipped. */
	if (!__atomic_compare_exchange_n(w, &h, RING_HDR(len, RING_SKIP, 0, 0), 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
		return 0;
	release(rd, len);
	publish(rd);
	wake_waiters(rd);
	return (int)len;
}
