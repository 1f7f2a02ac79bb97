/*
 * ring.h - the recorder's multi-producer byte ring (docs/recorder.md,
 * piece 3): the layout shared between a target's threads (producers, the
 * hooks) and ptleak (the one consumer), the producer as static inline code
 * compiled both freestanding into the hook blob and into ptleak's tests,
 * and the consumer's API (src/ring.c).
 *
 * Shared layout: struct ring (256 bytes, offsets fixed below, every field
 * a fixed-size type) followed at RING_DATA_OFF by 2^size_log2 data bytes.
 * All-zero data means free: a fresh zeroed mapping is an empty ring once
 * ring_init() wrote the header.
 *
 * A record is an 8-byte header word then NWORDS 64-bit words, contiguous
 * modulo the size (positions and lengths are multiples of 8, so a word
 * never straddles the wrap).  Header word: bits 0-31 len (bytes, header
 * included), 32-39 state, 40-47 type, 48-63 npcs (for the stacks later;
 * free for the caller today).  The ring checks len only: whoever decodes
 * a record written by the target checks npcs against nwords.
 *
 * Producer: pos = fetch_add(head, len); wait while pos + len - tail > size
 * (spin, then FUTEX_WAIT on wake_seq); header := WRITING (a plain store);
 * body; header := COMMITTED (a release store).  No locked instruction but
 * the fetch_add: a lock drains the store buffer, and the record's stores
 * missing in the cache (its line last written by the consumer) then cost
 * their whole latency (the two header CASes this replaced were a fifth of
 * a hook's time).  A reserved record whose header is not COMMITTED is a
 * hole: the consumer stops there until the record is committed or it
 * decides (ring_skip) the record will never be.  ring_skip() is only safe
 * when no thread can be between its reservation and its commit (ptleak
 * checks by stopping and unwinding the threads; at exit, by every thread
 * being gone): a producer still writing would write into freed space,
 * and its commit would publish a record over the skipped one.
 *
 * An open record (ring_commit_open) is a committed one whose last word
 * its producer may still set, once, while the consumer has not taken it:
 * ring_amend_begin() CASes the header OPEN -> AMENDING, ring_amend_end()
 * stores the word, then the header AMENDED (release), or
 * ring_amend_cancel() puts OPEN back; the consumer takes an OPEN record
 * by CASing its header to 0 first.  Whichever CAS comes first wins: an
 * amendment that lost wrote nothing, and its producer records what it
 * meant another way.  AMENDING is a hole to the consumer (it waits;
 * ring_skip gives the amendment up, the record OPEN again).  One locked instruction on
 * either side, on a line each has just written (what an amendment saves
 * is a record: a reservation and its lines).
 *
 * Consumer: reads the header at tail (acquire); COMMITTED: copies the
 * record out, zeroes its bytes, tail += len; once per batch publishes
 * tail (seq_cst) and wakes the waiters.  It bumps heartbeat whenever it runs: a producer that
 * waits on a full ring for stale_ns without seeing heartbeat move decides
 * the consumer is gone, sets enabled = 0 and drops its record (lost);
 * from then on every producer passes through (dropped).  One that sees
 * the heartbeat but not the tail move for stale_ns drops its record
 * (lost) and leaves its reservation as a hole: the consumer is blocked at
 * a hole, which may be its own thread's reservation interrupted by the
 * signal handler now producing (waiting longer would deadlock).
 */
#ifndef PTLEAK_RING_H
#define PTLEAK_RING_H

#include <stddef.h>
#include <stdint.h>

#include "ring_arch.h"

#define RING_MAGIC	0x676e6972u	/* "ring" */
#define RING_VERSION	1u
#define RING_DATA_OFF	256u		/* data bytes after the header */
#define RING_MIN_LOG2	6		/* 64 bytes */
#define RING_MAX_LOG2	30
/* Longest record: header + RING_MAX_WORDS words, 4 KiB. */
#define RING_MAX_WORDS	511u
#define RING_MAX_LEN	(8u * (RING_MAX_WORDS + 1))
/* How far head may run ahead of a full ring: producers waiting for room,
 * one reservation each (16,384 threads of the longest record).  More is a
 * header the target wrote over. */
#define RING_HEAD_SLACK	(16384ull * RING_MAX_LEN)

enum ring_state {
	RING_FREE,		/* all-zero header: nothing written yet */
	RING_WRITING,		/* reserved, body being written */
	RING_COMMITTED,		/* complete, the consumer may take it */
	RING_SKIP,		/* given up by the consumer (ring_skip) */
	RING_OPEN,		/* committed, its last word still open to
				 * one amendment by its producer */
	RING_AMENDING,		/* the amendment being written */
	RING_AMENDED,		/* committed and amended: its last word set */
};

#define RING_HDR(len, state, type, npcs) \
	((uint64_t)(len) | (uint64_t)(state) << 32 | \
	 (uint64_t)((type) & 0xff) << 40 | (uint64_t)((npcs) & 0xffff) << 48)
#define RING_HDR_LEN(h)		((uint32_t)(h))
#define RING_HDR_STATE(h)	((unsigned)((h) >> 32) & 0xff)
#define RING_HDR_TYPE(h)	((unsigned)((h) >> 40) & 0xff)
#define RING_HDR_NPCS(h)	((unsigned)((h) >> 48))
/* Replace a header's state. */
#define RING_HDR_WITH(h, state) \
	(((h) & ~(0xffull << 32)) | (uint64_t)(state) << 32)

/* How far past its reservation a producer asks for the ring's line to
 * write (ring_reserve_w): the consumer zeroed it, so it is in the
 * consumer's cache, and a store to it waits for the line to come back;
 * asked for early, sqlite3's CPU under the recorder went from 1.33x to
 * 1.24x (60 rounds; docs/history.md). */
#define RING_PREFETCH	256u

/* Spins before a full ring's producer sleeps, and each sleep's bound. */
#define RING_SPINS	128
#define RING_SLEEP_NS	100000000ull	/* 100 ms */
/* default stale_ns: 3 s (1 s gave records up on a loaded machine, where
 * the consumer can be stopped or starved that long; a SIGKILLed ptleak's
 * target is blocked that long once its ring is full) */
#define RING_STALE_NS	3000000000ull

/* The shared header.  Offsets are part of the format (RING_VERSION). */
struct ring {
	/* 0x00: written by ring_init, read by every producer */
	uint32_t magic;
	uint32_t version;
	uint32_t size_log2;
	uint32_t enabled;	/* 1: record; 0: pass through (either side) */
	uint64_t stale_ns;	/* consumer gone after this long with no heartbeat */
	uint8_t pad0[40];
	/* 0x40: the producers' reservation counter, alone on its line */
	uint64_t head;
	uint8_t pad1[56];
	/* 0x80: the consumer's */
	uint64_t tail;
	uint32_t heartbeat;	/* bumped by every ring_consume() */
	uint32_t wake_seq;	/* futex word: bumped when waiters are woken */
	uint8_t pad2[48];
	/* 0xc0: producers' slow paths and counters */
	uint32_t waiters;	/* producers sleeping on wake_seq */
	uint32_t pad3;
	uint64_t lost;		/* reserved records never delivered */
	uint64_t dropped;	/* records not produced: enabled == 0 */
	uint64_t sleeps;	/* futex waits of producers on a full ring */
	uint8_t pad4[32];
};

_Static_assert(offsetof(struct ring, head) == 0x40, "ring layout");
_Static_assert(offsetof(struct ring, tail) == 0x80, "ring layout");
_Static_assert(offsetof(struct ring, waiters) == 0xc0, "ring layout");
_Static_assert(sizeof(struct ring) == RING_DATA_OFF, "ring layout");

/* A reservation, from ring_reserve() to ring_commit(). */
struct ring_res {
	uint64_t pos;
	uint64_t hdr;		/* the WRITING header */
	uint64_t mask;		/* the ring's size less 1 (read once) */
};

/* Word POS (mod the ring's size, MASK + 1) of ring R. */
static inline uint64_t *ring_word_m(struct ring *r, uint64_t pos, uint64_t mask)
{
	return (uint64_t *)((char *)r + RING_DATA_OFF + (pos & mask));
}

static inline uint64_t *ring_word(struct ring *r, uint64_t pos)
{
	return ring_word_m(r, pos, ((uint64_t)1 << r->size_log2) - 1);
}

/* 1 if [.., END) is free in ring R of SIZE bytes (its size_log2's, read
 * once by the caller). */
static inline int ring_has_room(struct ring *r, uint64_t end, uint64_t size,
				int order)
{
	return end - __atomic_load_n(&r->tail, order) <= size;
}

/* A shared word that must keep moving: stale once it stood still for
 * longer than STALE nanoseconds. */
struct ring_watch {
	uint64_t v, since;
};

static inline int ring_stale(struct ring_watch *w, uint64_t v, uint64_t now,
			     uint64_t stale)
{
	if (v != w->v) {
		w->v = v;
		w->since = now;
		return 0;
	}
	return now - w->since > stale;
}

/*
 * Sleep until [.., END) is free.  0, or -1 to give the record up: the
 * ring was disabled, or the heartbeat stood still for stale_ns (the
 * consumer is gone: we disable the ring), or the tail did (the consumer
 * is alive but blocked at a hole, maybe this very thread's reservation
 * that a signal handler interrupted: the record is lost, the ring stays).
 */
static inline int ring_wait(struct ring *r, uint64_t end)
{
	struct ring_watch hb, tl;
	uint64_t now, size = (uint64_t)1 << r->size_log2;
	uint32_t seq;
	int i, ret = 0;

	for (i = 0; i < RING_SPINS; i++) {
		ring_arch_pause();
		if (ring_has_room(r, end, size, __ATOMIC_ACQUIRE))
			return 0;
	}
	hb.since = tl.since = ring_arch_now_ns();
	hb.v = __atomic_load_n(&r->heartbeat, __ATOMIC_RELAXED);
	tl.v = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
	/* seq_cst with the consumer's tail store and waiters load: either
	 * we see its tail or it sees us waiting and bumps wake_seq. */
	__atomic_fetch_add(&r->waiters, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		seq = __atomic_load_n(&r->wake_seq, __ATOMIC_ACQUIRE);
		if (ring_has_room(r, end, size, __ATOMIC_SEQ_CST))
			break;
		ret = -1;
		if (!__atomic_load_n(&r->enabled, __ATOMIC_RELAXED))
			break;
		__atomic_fetch_add(&r->sleeps, 1, __ATOMIC_RELAXED);
		ring_arch_futex_wait(&r->wake_seq, seq, RING_SLEEP_NS);
		now = ring_arch_now_ns();
		if (ring_stale(&hb, __atomic_load_n(&r->heartbeat, __ATOMIC_RELAXED),
			       now, r->stale_ns)) {
			__atomic_store_n(&r->enabled, 0, __ATOMIC_RELAXED);
			break;
		}
		if (ring_stale(&tl, __atomic_load_n(&r->tail, __ATOMIC_RELAXED),
			       now, r->stale_ns))
			break;
		ret = 0;
	}
	__atomic_fetch_sub(&r->waiters, 1, __ATOMIC_SEQ_CST);
	return ret;
}

/*
 * Reserve a record of NWORDS words after its header.  0 and *RES, or -1
 * if nothing is to be written: the ring is disabled (counted in dropped),
 * NWORDS > RING_MAX_WORDS or the record is longer than the ring
 * (dropped), or the wait gave up (lost).  ALONE: the calling thread is
 * the ring's only producer (its signal handlers aside): head moves
 * without a locked instruction, which would wait for the thread's
 * earlier stores to reach the cache (a fifth of a record's cost).
 * WAITED (unless NULL) := 1 if it had to wait (ring_wait: the hooks'
 * deepest stack, rechook.h's scrub classes).
 */
static inline int ring_reserve_w(struct ring *r, unsigned type,
				 unsigned npcs, unsigned nwords,
				 struct ring_res *res, int alone, int *waited)
{
	uint64_t len = 8 * ((uint64_t)nwords + 1), pos;
	uint64_t size = (uint64_t)1 << r->size_log2;

	if (!__atomic_load_n(&r->enabled, __ATOMIC_RELAXED) ||
	    nwords > RING_MAX_WORDS || len > size) {
		__atomic_fetch_add(&r->dropped, 1, __ATOMIC_RELAXED);
		return -1;
	}
	pos = alone ? ring_arch_local_add(&r->head, len) :
	      __atomic_fetch_add(&r->head, len, __ATOMIC_RELAXED);
	if (!ring_has_room(r, pos + len, size, __ATOMIC_ACQUIRE)) {
		if (waited)
			*waited = 1;
		if (ring_wait(r, pos + len) < 0)
			goto lost;
	}
	res->pos = pos;
	res->hdr = RING_HDR(len, RING_WRITING, type, npcs);
	res->mask = size - 1;
	/* the tail's acquire above orders this after the consumer's zeroing */
	__atomic_store_n(ring_word_m(r, pos, res->mask), res->hdr, __ATOMIC_RELAXED);
	ring_arch_prefetch_w(ring_word_m(r, pos + RING_PREFETCH, res->mask));
	return 0;
lost:
	/* after the reservation (the consumer checks lost against head) */
	__atomic_fetch_add(&r->lost, 1, __ATOMIC_RELEASE);
	return -1;
}

/* ring_reserve_w() without telling whether it waited */
static inline int ring_reserve_as(struct ring *r, unsigned type,
				  unsigned npcs, unsigned nwords,
				  struct ring_res *res, int alone)
{
	return ring_reserve_w(r, type, npcs, nwords, res, alone, NULL);
}

static inline int ring_reserve(struct ring *r, unsigned type, unsigned npcs,
			       unsigned nwords, struct ring_res *res)
{
	return ring_reserve_as(r, type, npcs, nwords, res, 0);
}

/* Word I (0 = first after the header) of a reserved record := V. */
static inline void ring_put(struct ring *r, const struct ring_res *res,
			    unsigned i, uint64_t v)
{
	__atomic_store_n(ring_word_m(r, res->pos + 8 * ((uint64_t)i + 1), res->mask),
			 v, __ATOMIC_RELAXED);
}

/* Publish a reserved record (its body's stores before the header's). */
static inline void ring_commit(struct ring *r, const struct ring_res *res)
{
	__atomic_store_n(ring_word_m(r, res->pos, res->mask),
			 RING_HDR_WITH(res->hdr, RING_COMMITTED), __ATOMIC_RELEASE);
}

/* Publish a reserved record as open: its last word (0 until then) may
 * be set by ring_amend() until the consumer takes it. */
static inline void ring_commit_open(struct ring *r, const struct ring_res *res)
{
	__atomic_store_n(ring_word_m(r, res->pos, res->mask),
			 RING_HDR_WITH(res->hdr, RING_OPEN), __ATOMIC_RELEASE);
}

/*
 * The open record at POS whose header is HDR (its OPEN value) taken for
 * an amendment, if the consumer has not taken it: 0, the header AMENDING
 * (the consumer waits there) until ring_amend_end() or
 * ring_amend_cancel(); -1 if not (taken, amended already, or HDR is not
 * the header there): nothing written.  Only by the record's producer,
 * which may check what it must between the two (a signal handler of its
 * thread may have produced meanwhile).
 */
static inline int ring_amend_begin(struct ring *r, uint64_t pos, uint64_t hdr)
{
	return __atomic_compare_exchange_n(ring_word(r, pos), &hdr,
					   RING_HDR_WITH(hdr, RING_AMENDING), 0,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED) ? 0 : -1;
}

/* ring_amend_begin()'s record: its last word := V, AMENDED (release). */
static inline void ring_amend_end(struct ring *r, uint64_t pos, uint64_t hdr,
				  uint64_t v)
{
	__atomic_store_n(ring_word(r, pos + RING_HDR_LEN(hdr) - 8), v,
			 __ATOMIC_RELAXED);
	__atomic_store_n(ring_word(r, pos), RING_HDR_WITH(hdr, RING_AMENDED),
			 __ATOMIC_RELEASE);
}

/* ring_amend_begin()'s record OPEN again, not amended. */
static inline void ring_amend_cancel(struct ring *r, uint64_t pos, uint64_t hdr)
{
	__atomic_store_n(ring_word(r, pos), hdr, __ATOMIC_RELEASE);
}

/* The open record at POS (header HDR) amended with V at once: 0, or -1
 * as ring_amend_begin(). */
static inline int ring_amend(struct ring *r, uint64_t pos, uint64_t hdr,
			     uint64_t v)
{
	if (ring_amend_begin(r, pos, hdr) < 0)
		return -1;
	ring_amend_end(r, pos, hdr, v);
	return 0;
}

/* One whole record of NWORDS words W.  0 or -1 as above. */
static inline int ring_produce(struct ring *r, unsigned type, unsigned npcs,
			       const uint64_t *w, unsigned nwords)
{
	struct ring_res res;
	unsigned i;

	if (ring_reserve(r, type, npcs, nwords, &res) < 0)
		return -1;
	for (i = 0; i < nwords; i++)
		ring_put(r, &res, i, w[i]);
	ring_commit(r, &res);
	return 0;
}

/* ---- the consumer (ptleak; src/ring.c) ---- */

/* Bytes of a mapping holding a ring of 2^SIZE_LOG2 data bytes. */
size_t ring_mem_size(unsigned size_log2);

/* Lay out an empty, enabled ring in MEM (ring_mem_size(SIZE_LOG2) bytes,
 * zeroed).  0, or -1 if SIZE_LOG2 is out of range. */
int ring_init(void *mem, unsigned size_log2);

/* A record as the consumer hands it out: W is valid during the call.
 * OPEN: it was committed open (ring_commit_open), its last word the
 * amendment's: 0 unless AMENDED. */
struct ring_rec {
	uint64_t pos;
	unsigned type;
	unsigned npcs;
	unsigned nwords;
	unsigned open, amended;
	const uint64_t *w;
};

typedef int (*ring_fn)(void *ctx, const struct ring_rec *rec);

struct ring_reader;

/* The consumer of the ring in MEM (MEM_LEN bytes mapped).  It trusts
 * nothing the target can write beyond what ring_init() checked now: its
 * size and tail are its own copies, and every call first checks that the
 * shared header still makes sense (magic, version, size as they were,
 * enabled 0 or 1, the shared tail its own, head at most the ring's size
 * plus RING_HEAD_SLACK ahead).  NULL with an error() if MEM does not
 * hold a ring of this version fitting in MEM_LEN. */
struct ring_reader *ring_reader_new(void *mem, size_t mem_len);
void ring_reader_delete(struct ring_reader *rd);

/*
 * Take up to MAX committed records in order, calling FN for each after
 * its bytes are freed; stops at the first hole, or early when FN returns
 * non-zero.  Bumps heartbeat; wakes sleeping producers if any record was
 * taken.  Returns the number of records taken, or -1 for a shared header
 * that makes no sense or a record header whose length does not (nothing
 * printed: ring_why() says what), after which the ring is not read again.
 * A record's npcs and type are the producer's: the caller checks them.
 */
int ring_consume(struct ring_reader *rd, ring_fn fn, void *ctx, unsigned max);

/*
 * Give up the hole at tail: a WRITING record (all its bytes), or one
 * 8-byte word of a reservation whose header was never written (a hole
 * of N words takes N calls; head - tail bounds them), or the amendment
 * of an AMENDING record (OPEN again: it is taken without it; its length
 * returned).  Returns the bytes skipped; 0 if there is no hole at tail
 * (a committed record, or nothing reserved); -1 for a corrupt header
 * (ring_why()).  Only when no producer can be inside that reservation.
 */
int ring_skip(struct ring_reader *rd);

/* What made the reader stop ("tail 5, ours 0"), or NULL if it did not. */
const char *ring_why(const struct ring_reader *rd);
/* HEAD (a value of the ring's head) is one the producers can have
 * reserved: past the consumer's tail by at most the ring and
 * RING_HEAD_SLACK.  1 or 0. */
int ring_head_ok(const struct ring_reader *rd, uint64_t head);

/* Bump the heartbeat alone (a consumer alive but not consuming). */
void ring_heartbeat(struct ring_reader *rd);

/* The consumer's position (bytes taken since ring_init). */
uint64_t ring_tail(const struct ring_reader *rd);

#endif
