/*
 * test_ring_amend.c - open records (ring.h: ring_commit_open, ring_amend)
 * against the consumer: an amendment before the record is taken arrives
 * with it, one after fails and leaves nothing behind, one being written
 * is a hole; and a producer amending half its records while a consumer
 * thread takes them as they come: each amendment arrives exactly once,
 * with its record or in the record the producer made instead.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include "recorder/ring.h"
#include "ringtest.h"

/* An open record of type TYPE: N words W then the amendment's, 0.  Its
 * position, its header into *HDR. */
static uint64_t produce_open(struct ring *r, unsigned type, const uint64_t *w,
			     unsigned n, uint64_t *hdr)
{
	struct ring_res res;
	unsigned i;

	if (ring_reserve(r, type, 0, n + 1, &res) < 0)
		abort();	/* producer threads too: no cmocka there */
	for (i = 0; i < n; i++)
		ring_put(r, &res, i, w[i]);
	ring_commit_open(r, &res);
	*hdr = RING_HDR_WITH(res.hdr, RING_OPEN);
	return res.pos;
}

struct got {
	unsigned n;
	struct ring_rec rec[4];
	uint64_t w[4][8];
};

static int keep(void *ctx, const struct ring_rec *rec)
{
	struct got *g = ctx;
	unsigned i = g->n++ % 4;

	g->rec[i] = *rec;
	memcpy(g->w[i], rec->w, 8 * (rec->nwords < 8 ? rec->nwords : 8));
	g->rec[i].w = g->w[i];
	return 0;
}

/* RD's one record now, an open one of two words, into G's slot I:
 * amended if AMENDED (its last word LAST, else 0).  The ring all zero
 * after. */
static void take_one_open(struct ring *r, struct ring_reader *rd,
			  struct got *g, unsigned i, unsigned amended,
			  uint64_t last)
{
	assert_int_equal(ring_consume(rd, keep, g, 10), 1);
	assert_int_equal(g->rec[i].open, 1);
	assert_int_equal(g->rec[i].amended, amended);
	assert_int_equal(g->w[i][2], last);
	assert_ring_clean(r);
}

/*
 * Amended before it is taken: the record arrives open and amended, its
 * last word the amendment's; a second amendment fails.  Taken first: the
 * amendment fails, nothing written.  A committed record next to them is
 * neither.  The ring all zero after.
 */
static void test_amend_or_not(void **state)
{
	struct ring *r = ring_new(10);
	struct ring_reader *rd = ring_reader_new(r, ring_mem_size(10));
	uint64_t w[3] = { 11, 12, 13 }, hdr, pos;
	struct got g = { 0 };

	(void)state;
	pos = produce_open(r, 5, w, 3, &hdr);
	assert_int_equal(RING_HDR_LEN(hdr), 40);
	assert_int_equal(ring_amend(r, pos, hdr, 0x1234), 0);
	assert_int_equal(ring_amend(r, pos, hdr, 0x5678), -1);
	assert_int_equal(ring_produce(r, 6, 0, w, 2), 0);
	assert_int_equal(ring_consume(rd, keep, &g, 10), 2);
	assert_int_equal(g.rec[0].type, 5);
	assert_int_equal(g.rec[0].nwords, 4);
	assert_int_equal(g.rec[0].open, 1);
	assert_int_equal(g.rec[0].amended, 1);
	assert_int_equal(g.w[0][0], 11);
	assert_int_equal(g.w[0][2], 13);
	assert_int_equal(g.w[0][3], 0x1234);
	assert_int_equal(g.rec[1].type, 6);
	assert_int_equal(g.rec[1].open, 0);
	assert_int_equal(g.rec[1].amended, 0);
	assert_ring_clean(r);

	pos = produce_open(r, 7, w, 2, &hdr);
	take_one_open(r, rd, &g, 2, 0, 0);
	assert_int_equal(g.rec[2].type, 7);
	assert_int_equal(ring_amend(r, pos, hdr, 0x9abc), -1);
	assert_ring_clean(r);
	/* the header given is not the one there: nothing written */
	pos = produce_open(r, 7, w, 2, &hdr);
	assert_int_equal(ring_amend(r, pos, RING_HDR_WITH(hdr, RING_COMMITTED), 1), -1);
	take_one_open(r, rd, &g, 3, 0, 0);
	ring_reader_delete(rd);
	ring_free(r);
}

/*
 * An amendment being written (its producer stopped between its CAS and
 * its last store) is a hole: the consumer waits there and takes the
 * record once it is AMENDED; ring_skip gives the amendment up, not the
 * record (its allocation is live until the free it stood for runs); one
 * cancelled leaves the record open.
 */
static void test_amending_is_hole(void **state)
{
	struct ring *r = ring_new(10);
	struct ring_reader *rd = ring_reader_new(r, ring_mem_size(10));
	uint64_t w[2] = { 21, 22 }, hdr, pos;
	struct got g = { 0 };

	(void)state;
	pos = produce_open(r, 5, w, 2, &hdr);
	assert_int_equal(ring_amend_begin(r, pos, hdr), 0);
	assert_int_equal(ring_consume(rd, keep, &g, 10), 0);
	ring_amend_end(r, pos, hdr, 99);
	take_one_open(r, rd, &g, 0, 1, 99);

	/* given up: the record taken without its amendment */
	pos = produce_open(r, 5, w, 2, &hdr);
	assert_int_equal(ring_amend_begin(r, pos, hdr), 0);
	assert_int_equal(ring_produce(r, 6, 0, w, 1), 0);
	assert_int_equal(ring_consume(rd, keep, &g, 10), 0);
	assert_int_equal(ring_skip(rd), 32);
	assert_int_equal(ring_skip(rd), 0);
	assert_int_equal(ring_consume(rd, keep, &g, 10), 2);
	assert_int_equal(g.rec[1].type, 5);
	assert_int_equal(g.rec[1].open, 1);
	assert_int_equal(g.rec[1].amended, 0);
	assert_int_equal(g.w[1][0], 21);
	assert_int_equal(g.w[1][2], 0);
	assert_int_equal(g.rec[2].type, 6);
	assert_ring_clean(r);

	/* begun and cancelled (its producer's check failed): OPEN again,
	 * a hole meanwhile, then amended after all */
	pos = produce_open(r, 5, w, 2, &hdr);
	assert_int_equal(ring_amend_begin(r, pos, hdr), 0);
	assert_int_equal(ring_amend_begin(r, pos, hdr), -1);
	assert_int_equal(ring_consume(rd, keep, &g, 10), 0);
	ring_amend_cancel(r, pos, hdr);
	assert_int_equal(ring_amend(r, pos, hdr, 7), 0);
	take_one_open(r, rd, &g, 3, 1, 7);
	ring_reader_delete(rd);
	ring_free(r);
}

/*
 * A producer making open records of 1-4 words, amending every other one
 * with its sequence number a few hundred spins later; an amendment that
 * fails (the consumer took the record meanwhile) is sent as a record of
 * its own, as the hooks send a free.  The consumer thread sees every
 * amendment exactly once, in the producer's order, and the ring ends
 * all zero.
 */
enum { STRESS_N = 400000, T_OPEN = 1, T_LATE = 2 };

struct stress {
	struct ring *r;
	struct ring_reader *rd;
	int done;
	uint64_t amended, late, plain, next, bad;
	uint64_t failed, forced;	/* the producer's counts */
};

static void *stress_producer(void *arg)
{
	struct stress *s = arg;
	uint64_t seq, w[4], hdr, pos;
	volatile unsigned spin;
	unsigned i, n;

	for (seq = 0; seq < STRESS_N; seq++) {
		n = 1 + seq % 4;
		w[0] = seq;
		for (i = 1; i < n; i++)
			w[i] = seq * 31 + i;
		pos = produce_open(s->r, T_OPEN, w, n, &hdr);
		if (seq % 2)
			continue;
		for (spin = 0; spin < (seq * 7919) % 512; spin++)
			;
		/* one in 1,024 waits until the record is taken: that way
		 * happens whatever the scheduler does */
		if (seq % 2048 == 0) {
			s->forced++;
			while (__atomic_load_n(ring_word(s->r, pos), __ATOMIC_ACQUIRE) == hdr)
				sched_yield();
		}
		if (ring_amend(s->r, pos, hdr, seq | 1ull << 63) == 0)
			continue;
		s->failed++;
		w[0] = seq | 1ull << 63;
		if (ring_produce(s->r, T_LATE, 0, w, 1) < 0)
			abort();
	}
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int stress_rec(void *ctx, const struct ring_rec *rec)
{
	struct stress *s = ctx;
	uint64_t seq = rec->w[0], last = rec->w[rec->nwords - 1];
	unsigned i;

	if (rec->type == T_LATE) {
		/* the amendment of the record before, which was not */
		if (rec->nwords != 1 || (seq & ~(1ull << 63)) != s->next - 1 ||
		    !(seq >> 63))
			s->bad++;
		s->late++;
		return 0;
	}
	if (rec->type != T_OPEN || !rec->open || seq != s->next ||
	    rec->nwords != 2 + seq % 4)
		s->bad++;
	for (i = 1; i + 1 < rec->nwords; i++)
		if (rec->w[i] != seq * 31 + i)
			s->bad++;
	if (rec->amended) {
		if (seq % 2 || last != (seq | 1ull << 63))
			s->bad++;
		s->amended++;
	} else {
		if (last)
			s->bad++;
		s->plain++;
	}
	s->next = seq + 1;
	return 0;
}

static void test_amend_race(void **state)
{
	struct stress s = { 0 };
	pthread_t th;

	(void)state;
	s.r = ring_new(16);
	s.rd = ring_reader_new(s.r, ring_mem_size(16));
	assert_int_equal(pthread_create(&th, NULL, stress_producer, &s), 0);
	while (!__atomic_load_n(&s.done, __ATOMIC_ACQUIRE)) {
		int got = ring_consume(s.rd, stress_rec, &s, 64);

		if (got < 0)
			fail_msg("consumer: %s", ring_why(s.rd));
		if (!got)
			sched_yield();
	}
	pthread_join(th, NULL);
	while (ring_consume(s.rd, stress_rec, &s, 64) > 0)
		;
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.next, STRESS_N);
	assert_int_equal(s.amended + s.late, STRESS_N / 2);
	assert_int_equal(s.late, s.failed);
	assert_int_equal(s.amended + s.plain, STRESS_N);
	/* both ways happened, the late ones not only where forced */
	assert_true(s.amended > 0);
	assert_true(s.late >= s.forced);
	assert_int_equal(s.forced, STRESS_N / 2048 + (STRESS_N % 2048 != 0));
	print_message("amended %llu, taken first %llu (%llu of them made to)\n",
		      (unsigned long long)s.amended, (unsigned long long)s.late,
		      (unsigned long long)s.forced);
	assert_ring_clean(s.r);
	ring_reader_delete(s.rd);
	ring_free(s.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_amend_or_not),
		cmocka_unit_test(test_amending_is_hole),
		cmocka_unit_test(test_amend_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
