/*
 * ringtest.h - what test_ring and test_ring_amend share: a ring in an
 * anonymous shared mapping, and the check that a ring whose records were
 * all consumed is all zero again (ring.h: zero means free).
 */
#ifndef RINGTEST_H
#define RINGTEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/mman.h>

#include "recorder/ring.h"

static inline struct ring *ring_new(unsigned log2)
{
	void *m = mmap(NULL, ring_mem_size(log2), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(m != MAP_FAILED);
	assert_int_equal(ring_init(m, log2), 0);
	return m;
}

static inline void ring_free(struct ring *r)
{
	munmap(r, ring_mem_size(r->size_log2));
}

/* Every data byte is zero again (all consumed). */
static inline void assert_ring_clean(struct ring *r)
{
	const unsigned char *d = (const unsigned char *)r + RING_DATA_OFF;
	size_t i, size = (size_t)1 << r->size_log2;

	for (i = 0; i < size; i++)
		if (d[i])
			fail_msg("data byte %zu is %#x after everything was consumed", i, d[i]);
	assert_true(r->head == r->tail);
}

#endif
