/* test_recblob.c - the hook blob run as a target runs it: copied into a
 * fresh r-x mapping, context word set, entries called through offsets. */
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
#include <unistd.h>

#include "recorder/recblob.h"
#include "recorder/rechook.h"
#include "recorder/ring.h"
#include "recorder/unwtab.h"
#include "recorder/unwtab_walk.h"

/* Copy the image into a new mapping, store a context whose ring is R
 * (none if NULL), make it r-x. */
static unsigned char *map_blob(struct ring *r)
{
	static struct rec_conf conf;
	void *ctx = r ? &conf : NULL;

	size_t len = (rec_blob_size + 4095) & ~(size_t)4095;
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	conf.ring = r;
	memcpy(p, rec_blob, rec_blob_size);
	memcpy(p + RECBLOB_OFF_rec_ctx, &ctx, sizeof(ctx));
	assert_int_equal(mprotect(p, len, PROT_READ | PROT_EXEC), 0);
	return p;
}

static void unmap_blob(unsigned char *p)
{
	munmap(p, (rec_blob_size + 4095) & ~(size_t)4095);
}

static rec_record_fn entry(unsigned char *p)
{
	return (rec_record_fn)(void *)(p + RECBLOB_OFF_rec_record);
}

static void test_layout(void **state)
{
	assert_int_equal(rec_blob_size, RECBLOB_SIZE);
	assert_int_equal(RECBLOB_OFF_rec_ctx, 0);
	assert_true(RECBLOB_OFF_rec_record >= 8);
	assert_true(RECBLOB_OFF_rec_record < rec_blob_size);
	/* the context word ships empty */
	assert_int_equal(*(const uint64_t *)rec_blob, 0);
}

/* No context yet: the entry does nothing and says so. */
static void test_no_context(void **state)
{
	unsigned char *p = map_blob(NULL);

	assert_int_equal(entry(p)(1, 2, 3, 4), -1);
	unmap_blob(p);
}

struct caller {
	pthread_t th;
	rec_record_fn fn;
	unsigned id;
};

#define EACH 200000

static void *caller_main(void *arg)
{
	struct caller *c = arg;
	uint64_t s;

	for (s = 0; s < EACH; s++)
		if (c->fn(c->id, s, s * 3 + c->id, ~s) != 0)
			abort();
	return NULL;
}

struct tally {
	uint64_t next[5];
	uint64_t total;
	int bad;
};

static int tally_rec(void *ctx, const struct ring_rec *rec)
{
	struct tally *t = ctx;
	uint64_t s = rec->w[0];

	if (rec->type < 1 || rec->type > 4 || rec->nwords != 3 || rec->npcs ||
	    s != t->next[rec->type] || rec->w[1] != s * 3 + rec->type ||
	    rec->w[2] != ~s)
		t->bad++;
	else
		t->next[rec->type]++;
	t->total++;
	return 0;
}

/* Four threads call rec_record, two of them through a second copy of the
 * image at another address: every record arrives, in order per thread. */
static void test_four_threads(void **state)
{
	struct ring *r = mmap(NULL, ring_mem_size(16), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct ring_reader *rd;
	unsigned char *a, *b;
	struct caller c[4];
	struct tally t = { { 0 }, 0, 0 };
	unsigned i;

	assert_true(r != MAP_FAILED);
	assert_int_equal(ring_init(r, 16), 0);
	rd = ring_reader_new(r, ring_mem_size(16));
	a = map_blob(r);
	b = map_blob(r);
	assert_true(a != b);
	for (i = 0; i < 4; i++) {
		c[i].fn = entry(i % 2 ? b : a);
		c[i].id = i + 1;
		assert_int_equal(pthread_create(&c[i].th, NULL, caller_main, &c[i]), 0);
	}
	while (t.total < 4 * EACH) {
		int n = ring_consume(rd, tally_rec, &t, 4096);

		assert_true(n >= 0);
		if (!n)
			sched_yield();
	}
	for (i = 0; i < 4; i++)
		pthread_join(c[i].th, NULL);
	assert_int_equal(t.bad, 0);
	for (i = 1; i <= 4; i++)
		assert_int_equal(t.next[i], EACH);
	assert_int_equal(ring_consume(rd, tally_rec, &t, 1), 0);
	assert_int_equal(r->head, 4 * EACH * 32);
	assert_int_equal(r->lost + r->dropped, 0);
	ring_reader_delete(rd);
	unmap_blob(a);
	unmap_blob(b);
	munmap(r, ring_mem_size(16));
}

/* The rule of image offset OFF in the blob's own table. */
static const struct unwtab_rule *blob_rule(uint64_t off)
{
	return unwtab_find_rule((const struct unwtab_hdr *)rec_blob_unwtab, off);
}

static void want_rule(uint64_t off, unsigned kind, int cfa, int fp)
{
	const struct unwtab_rule *r = blob_rule(off);

	assert_non_null(r);
	assert_int_equal(r->kind, kind);
	assert_int_equal(r->cfa_off, cfa);
	assert_int_equal(r->fp_off, fp);
	assert_int_equal(r->ra_off, -8);
}

/*
 * The image's own unwind table: every byte of code from the first
 * (offset 16, after the context word) to the end of rec_stub, its last
 * function, has a rule (no STOP, no INVALID); rec_stub's are its CFI's:
 * entry CFA = sp + 8, after push %rbp sp + 16 (rbp saved at CFA - 16),
 * after mov %rsp, %rbp CFA = rbp + 16, at its ret (after leave) sp + 8
 * with rbp restored.
 */
static void test_unwtab(void **state)
{
	const struct unwtab_hdr *t = (const struct unwtab_hdr *)rec_blob_unwtab;
	uint64_t off, stub = RECBLOB_OFF_rec_stub;
	const struct unwtab_rule *r;

	assert_int_equal(unwtab_check(rec_blob_unwtab, rec_blob_unwtab_size), 0);
	assert_int_equal(t->lo, 16);
	assert_true(t->hi > stub && t->hi <= rec_blob_size);
	for (off = 16; off < t->hi; off++) {
		r = blob_rule(off);
		assert_non_null(r);
		assert_true(r->kind == UNWTAB_CFA_SP || r->kind == UNWTAB_CFA_FP);
	}
	assert_null(blob_rule(t->hi));	/* past its end: no caller */
	want_rule(stub, UNWTAB_CFA_SP, 8, 0);
	want_rule(stub + 1, UNWTAB_CFA_SP, 16, -16);	/* push %rbp */
	want_rule(stub + 4, UNWTAB_CFA_FP, 16, -16);	/* mov %rsp, %rbp */
	want_rule(t->hi - 2, UNWTAB_CFA_FP, 16, -16);	/* leave */
	want_rule(t->hi - 1, UNWTAB_CFA_SP, 8, 0);	/* ret */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_no_context),
		cmocka_unit_test(test_four_threads),
		cmocka_unit_test(test_unwtab),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
