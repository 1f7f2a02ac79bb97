/* test_ring.c - the recorder's ring: producers (ring.h) against the consumer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "recorder/ring.h"
#include "ringtest.h"

/* The words of record SEQ of producer ID: a checkable pattern. */
static uint64_t pattern(unsigned id, uint64_t seq, unsigned i)
{
	return (seq * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)id << 56) ^ i;
}

static unsigned nwords_of(uint64_t seq)
{
	return 1 + seq % 5;
}

static void produce_seq(struct ring *r, unsigned id, uint64_t seq)
{
	uint64_t w[8];
	unsigned i, n = nwords_of(seq);

	w[0] = seq;
	for (i = 1; i < n; i++)
		w[i] = pattern(id, seq, i);
	if (ring_produce(r, id, 0, w, n) != 0)
		abort();	/* producer threads: no cmocka assert there */
}

/* Consumer side check: per producer (type) order and every word. */
struct check {
	uint64_t next[8];	/* expected seq per producer id */
	uint64_t total;
	int bad;
};

static int check_rec(void *ctx, const struct ring_rec *rec)
{
	struct check *c = ctx;
	uint64_t seq = rec->w[0];
	unsigned i;

	if (rec->type >= 8 || seq != c->next[rec->type] ||
	    rec->nwords != nwords_of(seq))
		c->bad++;
	for (i = 1; i < rec->nwords && !c->bad; i++)
		if (rec->w[i] != pattern(rec->type, seq, i))
			c->bad++;
	c->next[rec->type % 8] = seq + 1;
	c->total++;
	return 0;
}

struct producer {
	pthread_t th;
	struct ring *r;
	unsigned id;
	uint64_t n;
};

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	uint64_t s;

	for (s = 0; s < p->n; s++)
		produce_seq(p->r, p->id, s);
	return NULL;
}

static void start_producers(struct producer *p, unsigned n, struct ring *r,
			    uint64_t each)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		p[i].r = r;
		p[i].id = i + 1;
		p[i].n = each;
		assert_int_equal(pthread_create(&p[i].th, NULL, producer_main, &p[i]), 0);
	}
}

/* Join the producers: every record of each arrived, intact, in order. */
static void join_producers(struct producer *p, unsigned n, const struct check *c)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		pthread_join(p[i].th, NULL);
		assert_int_equal(c->next[i + 1], p[i].n);
	}
	assert_int_equal(c->bad, 0);
}

/* 4 producers x 10^6 records through a 1 MiB ring, consumed as they come. */
static void test_four_producers(void **state)
{
	enum { NPROD = 4, EACH = 1000000 };
	struct ring *r = ring_new(20);
	struct ring_reader *rd = ring_reader_new(r, ring_mem_size(20));
	struct producer p[NPROD];
	struct check c = { { 0 }, 0, 0 };
	int n;

	start_producers(p, NPROD, r, EACH);
	while (c.total < (uint64_t)NPROD * EACH) {
		n = ring_consume(rd, check_rec, &c, 4096);
		assert_true(n >= 0);
		if (!n)
			sched_yield();
	}
	join_producers(p, NPROD, &c);
	assert_int_equal(c.total, (uint64_t)NPROD * EACH);
	assert_int_equal(ring_consume(rd, check_rec, &c, 1), 0);
	assert_int_equal(r->lost, 0);
	assert_int_equal(r->dropped, 0);
	assert_ring_clean(r);
	ring_reader_delete(rd);
	ring_free(r);
}

struct wrap_check {
	uint64_t expect_pos, seq;
	unsigned straddles;
	int bad;
};

static int wrap_rec(void *ctx, const struct ring_rec *rec)
{
	struct wrap_check *c = ctx;
	unsigned i, n = (unsigned)(c->seq % 13);

	if (rec->pos != c->expect_pos || rec->nwords != n || rec->type != 7 ||
	    rec->npcs != (unsigned)(c->seq % 1000))
		c->bad++;
	for (i = 0; i < rec->nwords; i++)
		if (rec->w[i] != pattern(7, c->seq, i))
			c->bad++;
	if ((rec->pos & 255) + 8 * (n + 1) > 256)
		c->straddles++;
	c->expect_pos += 8 * (n + 1);
	c->seq++;
	return 0;
}

/* A 256-byte ring, records of 0 to 12 words, one or two in flight:
 * positions go round many times at every offset. */
static void test_wrap_varied(void **state)
{
	struct ring *r = ring_new(8);
	struct ring_reader *rd = ring_reader_new(r, ring_mem_size(8));
	struct wrap_check c = { 0, 0, 0, 0 };
	uint64_t w[12], seq = 0;
	unsigned i, k, burst;

	for (k = 0; k < 3000; k++) {
		burst = 1 + k % 2;
		for (; burst; burst--, seq++) {
			for (i = 0; i < seq % 13; i++)
				w[i] = pattern(7, seq, i);
			assert_int_equal(ring_produce(r, 7, seq % 1000, w, seq % 13), 0);
		}
		assert_true(ring_consume(rd, wrap_rec, &c, 1000) > 0);
	}
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.seq, seq);
	assert_int_equal(ring_tail(rd), c.expect_pos);
	assert_int_equal(c.straddles, 843);	/* records cut by the wrap */
	assert_int_equal(r->sleeps, 0);
	assert_ring_clean(r);
	ring_reader_delete(rd);
	ring_free(r);
}

/* Bytes the records 0..N-1 of one producer take. */
static uint64_t bytes_of(uint64_t n)
{
	uint64_t s, b = 0;

	for (s = 0; s < n; s++)
		b += 8 * (1 + nwords_of(s));
	return b;
}

/* A 128-byte ring (four records) and a consumer that takes one record
 * only once a producer sleeps: every record still arrives, none lost. */
static void test_full_ring(void **state)
{
	enum { NPROD = 2, EACH = 5000 };
	struct ring *r = ring_new(7);
	struct ring_reader *rd = ring_reader_new(r, ring_mem_size(7));
	struct producer p[NPROD];
	struct check c = { { 0 }, 0, 0 };
	uint64_t all = NPROD * bytes_of(EACH), seen = 0;

	start_producers(p, NPROD, r, EACH);
	while (c.total < NPROD * EACH) {
		/* one record each time a producer went to sleep, until every
		 * record is reserved */
		if (__atomic_load_n(&r->sleeps, __ATOMIC_SEQ_CST) == seen &&
		    __atomic_load_n(&r->head, __ATOMIC_SEQ_CST) < all) {
			sched_yield();
			continue;
		}
		seen = __atomic_load_n(&r->sleeps, __ATOMIC_SEQ_CST);
		assert_true(ring_consume(rd, check_rec, &c, 1) >= 0);
	}
	join_producers(p, NPROD, &c);
	assert_int_equal(r->lost, 0);
	assert_true(r->sleeps > 0);
	assert_int_equal(r->enabled, 1);
	assert_ring_clean(r);
	ring_reader_delete(rd);
	ring_free(r);
}

static struct ring *sig_ring;
static volatile sig_atomic_t handler_runs;

static void produce_in_handler(int sig)
{
	uint64_t w[2] = { (uint64_t)handler_runs, 0xabcdef };

	if (ring_produce(sig_ring, 9, 0, w, 2) == 0)
		handler_runs++;
}

struct sig_count {
	uint64_t main, handler;
	int bad;
};

static int count_sig_rec(void *ctx, const struct ring_rec *rec)
{
	struct sig_count *c = ctx;

	if (rec->type == 9) {
		if (rec->w[0] != c->handler++ || rec->w[1] != 0xabcdef)
			c->bad++;
	} else if (rec->type == 1) {
		if (rec->w[0] != c->main++)
			c->bad++;
	} else {
		c->bad++;
	}
	return 0;
}

/* The handler runs between the main thread's reservation and its commit:
 * both records arrive, the interrupted one first (it reserved first). */
static void test_signal_inside_production(void **state)
{
	struct ring *r = ring_new(12);
	struct ring_reader *rd = ring_reader_new(r, ring_mem_size(12));
	struct sigaction sa = { .sa_handler = produce_in_handler };
	struct sig_count c = { 0, 0, 0 };
	struct ring_res res = { 0, 0, 0 };

	sig_ring = r;
	handler_runs = 0;
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(ring_reserve(r, 1, 0, 1, &res), 0);
	raise(SIGALRM);
	assert_int_equal(handler_runs, 1);
	/* the main record, still WRITING, holds the handler's back */
	assert_int_equal(ring_consume(rd, count_sig_rec, &c, 10), 0);
	ring_put(r, &res, 0, 0);
	ring_commit(r, &res);
	assert_int_equal(ring_consume(rd, count_sig_rec, &c, 10), 2);
	assert_int_equal(c.main, 1);
	assert_int_equal(c.handler, 1);
	assert_int_equal(c.bad, 0);
	assert_ring_clean(r);
	signal(SIGALRM, SIG_DFL);
	ring_reader_delete(rd);
	ring_free(r);
}

struct sig_consumer {
	struct ring_reader *rd;
	struct sig_count c;
	volatile int stop;
};

static void *sig_consumer_main(void *arg)
{
	struct sig_consumer *sc = arg;

	for (;;) {
		int stop = sc->stop;

		if (ring_consume(sc->rd, count_sig_rec, &sc->c, 4096) == 0) {
			if (stop)
				break;
			sched_yield();
		}
	}
	return NULL;
}

/* A 50 us SIGALRM timer whose handler produces while the thread produces
 * in a loop: every record of both arrives, in order for each. */
static void test_signal_timer(void **state)
{
	struct ring *r = ring_new(16);
	struct sig_consumer sc = { ring_reader_new(r, ring_mem_size(16)), { 0, 0, 0 }, 0 };
	struct sigaction sa = { .sa_handler = produce_in_handler };
	struct itimerval it = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
	sigset_t alrm, old;
	pthread_t th;
	uint64_t n = 0, w;

	sig_ring = r;
	handler_runs = 0;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	/* the consumer thread never takes the signal */
	pthread_sigmask(SIG_BLOCK, &alrm, &old);
	assert_int_equal(pthread_create(&th, NULL, sig_consumer_main, &sc), 0);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	while (handler_runs < 300 || n < 100000) {
		w = n;
		assert_int_equal(ring_produce(r, 1, 0, &w, 1), 0);
		n++;
	}
	pthread_sigmask(SIG_BLOCK, &alrm, &old);
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);	/* discards one still pending */
	signal(SIGALRM, SIG_DFL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	sc.stop = 1;
	pthread_join(th, NULL);
	assert_int_equal(sc.c.bad, 0);
	assert_int_equal(sc.c.main, n);
	assert_int_equal(sc.c.handler, (uint64_t)handler_runs);
	assert_int_equal(r->lost, 0);
	assert_ring_clean(r);
	ring_reader_delete(sc.rd);
	ring_free(r);
}

static int count_rec(void *ctx, const struct ring_rec *rec)
{
	(*(unsigned *)ctx)++;
	return 0;
}

/* A record reserved and never committed (its producer left the hook by
 * longjmp): the consumer gives it up and the next one arrives. */
static void test_skip_writing(void **state)
{
	struct ring *r = ring_new(10);
	struct ring_reader *rd = ring_reader_new(r, ring_mem_size(10));
	uint64_t w[2] = { 5, 6 };
	struct ring_res res = { 0, 0, 0 };
	unsigned got = 0;

	assert_int_equal(ring_skip(rd), 0);		/* empty: no hole */
	assert_int_equal(ring_reserve(r, 3, 0, 3, &res), 0);
	ring_put(r, &res, 0, 1);
	assert_int_equal(ring_produce(r, 4, 0, w, 2), 0);
	assert_int_equal(ring_consume(rd, count_rec, &got, 10), 0);
	assert_int_equal(ring_skip(rd), 32);
	assert_int_equal(ring_skip(rd), 0);		/* committed next */
	assert_int_equal(ring_consume(rd, count_rec, &got, 10), 1);
	assert_int_equal(got, 1);
	assert_int_equal(r->lost, 0);
	assert_int_equal(ring_consume(rd, count_rec, &got, 10), 0);
	assert_ring_clean(r);
	ring_reader_delete(rd);
	ring_free(r);
}

/* A reservation whose header was never written (its producer left right
 * after the fetch_add): skipped word by word up to the next record. */
static void test_skip_unwritten(void **state)
{
	struct ring *r = ring_new(10);
	struct ring_reader *rd = ring_reader_new(r, ring_mem_size(10));
	uint64_t w = 77;
	unsigned got = 0;

	__atomic_fetch_add(&r->head, 24, __ATOMIC_RELAXED);
	assert_int_equal(ring_produce(r, 4, 0, &w, 1), 0);
	assert_int_equal(ring_consume(rd, count_rec, &got, 10), 0);
	assert_int_equal(ring_skip(rd), 8);
	assert_int_equal(ring_skip(rd), 8);
	assert_int_equal(ring_skip(rd), 8);
	assert_int_equal(ring_skip(rd), 0);
	assert_int_equal(ring_consume(rd, count_rec, &got, 10), 1);
	assert_int_equal(got, 1);
	assert_int_equal(ring_tail(rd), 40);
	assert_ring_clean(r);
	ring_reader_delete(rd);
	ring_free(r);
}

/* Nobody consumes and the heartbeat stands still: the producer waiting
 * on the full ring gives up after stale_ns and disables the ring. */
static void test_heartbeat_stale(void **state)
{
	struct ring *r = ring_new(7);
	uint64_t w[3] = { 1, 2, 3 };
	int i;

	r->stale_ns = 50000000;		/* 50 ms */
	for (i = 0; i < 4; i++)
		assert_int_equal(ring_produce(r, 1, 0, w, 3), 0);
	assert_int_equal(ring_produce(r, 1, 0, w, 3), -1);
	assert_int_equal(r->enabled, 0);
	assert_int_equal(r->lost, 1);
	assert_true(r->sleeps >= 1);
	assert_int_equal(r->dropped, 0);
	assert_int_equal(ring_produce(r, 1, 0, w, 3), -1);
	assert_int_equal(r->dropped, 1);
	assert_int_equal(r->lost, 1);
	assert_int_equal(r->head, 5 * 32);
	ring_free(r);
}

struct beater {
	struct ring_reader *rd;
	unsigned got, want;
	long every_ns;		/* between two records taken */
	volatile int stop;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A live consumer: beats every 2 ms, takes one record once EVERY_NS
 * passed since the last, until it has WANT (or until told to stop). */
static void *beater_main(void *arg)
{
	struct beater *b = arg;
	struct timespec ts = { 0, 2000000 };
	uint64_t last = mono_ns();

	while (b->got < b->want && !b->stop) {
		ring_heartbeat(b->rd);
		nanosleep(&ts, NULL);
		if (mono_ns() - last >= (uint64_t)b->every_ns) {
			last = mono_ns();
			if (ring_consume(b->rd, count_rec, &b->got, 1) < 0)
				abort();	/* no cmocka assert off the test's thread */
		}
	}
	return NULL;
}

/* A consumer alive but slow: one record every 250 ms into a full ring.
 * The producer waits 1 s in all, over stale_ns, and records everything:
 * the tail moves. */
static void test_heartbeat_alive(void **state)
{
	struct ring *r = ring_new(7);
	struct beater b = { ring_reader_new(r, ring_mem_size(7)), 0, 8, 250000000, 0 };
	uint64_t w[3] = { 1, 2, 3 };
	pthread_t th;
	int i;

	r->stale_ns = 1000000000;
	for (i = 0; i < 4; i++)
		assert_int_equal(ring_produce(r, 1, 0, w, 3), 0);
	assert_int_equal(pthread_create(&th, NULL, beater_main, &b), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(ring_produce(r, 1, 0, w, 3), 0);
	pthread_join(th, NULL);
	assert_int_equal(b.got, 8);
	assert_int_equal(r->enabled, 1);
	assert_int_equal(r->lost, 0);
	assert_true(r->sleeps > 0);
	assert_ring_clean(r);
	ring_reader_delete(b.rd);
	ring_free(r);
}

/* The consumer beats but is blocked at the thread's own reservation (as
 * when a signal handler produces inside its thread's production into a
 * full ring): the waiting producer gives its record up after stale_ns
 * (lost, the ring stays enabled); the interrupted record then commits,
 * and the given-up reservation is a hole the consumer skips. */
static void test_blocked_at_own_hole(void **state)
{
	struct ring *r = ring_new(7);
	struct beater b = { ring_reader_new(r, ring_mem_size(7)), 0, ~0u, 1, 0 };
	uint64_t w[3] = { 1, 2, 3 };
	struct ring_res res = { 0, 0, 0 };
	pthread_t th;
	int i;

	r->stale_ns = 300000000;
	assert_int_equal(pthread_create(&th, NULL, beater_main, &b), 0);
	assert_int_equal(ring_reserve(r, 1, 0, 3, &res), 0);
	for (i = 0; i < 3; i++)		/* "the handler" */
		assert_int_equal(ring_produce(r, 2, 0, w, 3), 0);
	assert_int_equal(ring_produce(r, 2, 0, w, 3), -1);
	assert_int_equal(r->lost, 1);
	assert_int_equal(r->enabled, 1);
	assert_int_equal(b.got, 0);
	ring_commit(r, &res);
	while (__atomic_load_n(&b.got, __ATOMIC_RELAXED) < 4)
		sched_yield();
	b.stop = 1;
	pthread_join(th, NULL);
	assert_int_equal(b.got, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(ring_skip(b.rd), 8);
	assert_int_equal(ring_skip(b.rd), 0);
	assert_int_equal(r->head, 5 * 32);
	assert_ring_clean(r);
	ring_reader_delete(b.rd);
	ring_free(r);
}

/* The target scribbled on the ring: the consumer stops with an error. */
static void test_corrupt(void **state)
{
	struct ring *r = ring_new(8);
	struct ring_reader *rd = ring_reader_new(r, ring_mem_size(8));
	unsigned got = 0;

	assert_null(ring_reader_new(r, ring_mem_size(8) - 1));
	*ring_word(r, 0) = RING_HDR(12, RING_COMMITTED, 1, 0);
	assert_int_equal(ring_consume(rd, count_rec, &got, 10), -1);
	assert_string_equal(ring_why(rd), "record header 0x1020000000c at byte 0");
	*ring_word(r, 0) = RING_HDR(16, RING_COMMITTED, 1, 0);
	assert_int_equal(ring_consume(rd, count_rec, &got, 10), -1);
	assert_int_equal(ring_skip(rd), -1);
	assert_int_equal(got, 0);
	ring_reader_delete(rd);
	r->magic = 0;
	assert_null(ring_reader_new(r, ring_mem_size(8)));
	ring_free(r);
}

/*
 * The target wrote over the shared header: every field the consumer
 * checks stops it, with what it found; a sane header, none.  The words
 * a producer can write there legitimately (enabled 0, head up to size
 * plus RING_HEAD_SLACK ahead) do not.
 */
static void expect_scribbled(size_t off, uint64_t v, int size, const char *why)
{
	struct ring *r = ring_new(8);
	struct ring_reader *rd = ring_reader_new(r, ring_mem_size(8));
	uint64_t w[2] = { 1, 2 };
	unsigned got = 0;

	assert_non_null(rd);
	assert_null(ring_why(rd));
	assert_int_equal(ring_produce(r, 1, 0, w, 2), 0);
	memcpy((char *)r + off, &v, size);
	assert_int_equal(ring_consume(rd, count_rec, &got, 10), why ? -1 : 1);
	if (why) {
		assert_string_equal(ring_why(rd), why);
		assert_int_equal(ring_skip(rd), -1);
		assert_int_equal(ring_consume(rd, count_rec, &got, 10), -1);
	} else {
		assert_null(ring_why(rd));
	}
	ring_reader_delete(rd);
	munmap(r, ring_mem_size(8));	/* not by its size_log2 */
}

static void test_header_scribbled(void **state)
{
	expect_scribbled(offsetof(struct ring, magic), 0x41414141, 4,
			 "magic and version 0x141414141 (tail 0)");
	expect_scribbled(offsetof(struct ring, version), 2, 4,
			 "magic and version 0x2676e6972 (tail 0)");
	expect_scribbled(offsetof(struct ring, size_log2), 30, 4, "size 2^30 (tail 0)");
	expect_scribbled(offsetof(struct ring, enabled), 7, 4, "enabled 7 (tail 0)");
	expect_scribbled(offsetof(struct ring, tail), 24, 8, "tail 24, ours 0");
	expect_scribbled(offsetof(struct ring, head), 256 + RING_HEAD_SLACK + 1, 8,
			 "head 67109121 (tail 0)");
	expect_scribbled(offsetof(struct ring, head), ~0ull, 8,
			 "head 18446744073709551615 (tail 0)");
	/* what producers may write */
	expect_scribbled(offsetof(struct ring, enabled), 0, 4, NULL);
	expect_scribbled(offsetof(struct ring, head), 256 + RING_HEAD_SLACK, 8, NULL);
	expect_scribbled(offsetof(struct ring, lost), ~0ull, 8, NULL);
}

/* Disabled, or too long: nothing reserved, counted in dropped. */
static void test_dropped(void **state)
{
	struct ring *r = ring_new(16), *tiny = ring_new(7);
	uint64_t w[RING_MAX_WORDS + 1] = { 0 };

	assert_int_equal(ring_produce(tiny, 1, 0, w, 16), -1);	/* 136 > 128 */
	assert_int_equal(ring_produce(tiny, 1, 0, w, 15), 0);
	assert_int_equal(tiny->dropped, 1);
	assert_int_equal(tiny->head, 128);
	ring_free(tiny);
	assert_int_equal(ring_produce(r, 1, 0, w, RING_MAX_WORDS + 1), -1);
	assert_int_equal(ring_produce(r, 1, 0, w, RING_MAX_WORDS), 0);
	r->enabled = 0;
	assert_int_equal(ring_produce(r, 1, 0, w, 1), -1);
	assert_int_equal(r->dropped, 2);
	assert_int_equal(r->head, RING_MAX_LEN);
	assert_int_equal(ring_init(r, 5), -1);
	ring_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_four_producers),
		cmocka_unit_test(test_wrap_varied),
		cmocka_unit_test(test_full_ring),
		cmocka_unit_test(test_signal_inside_production),
		cmocka_unit_test(test_signal_timer),
		cmocka_unit_test(test_skip_writing),
		cmocka_unit_test(test_skip_unwritten),
		cmocka_unit_test(test_heartbeat_stale),
		cmocka_unit_test(test_heartbeat_alive),
		cmocka_unit_test(test_blocked_at_own_hole),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_header_scribbled),
		cmocka_unit_test(test_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
