/*
 * scan_fake.h - a fake address space for the scan's unit tests
 * (test_scan.c, test_scan_par.c): one array standing for [base, base +
 * size), with an optional unreadable hole, read through fake_read (which
 * counts its reads).
 */
#ifndef PTLEAK_TEST_SCAN_FAKE_H
#define PTLEAK_TEST_SCAN_FAKE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct fake {
	uint64_t base;
	size_t size;
	uint8_t *mem;
	uint64_t bad_lo, bad_hi;	/* [bad_lo, bad_hi) unreadable */
	long nreads;
	size_t max_read;
};

static inline long fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;
	size_t n;

	f->nreads++;
	if (len > f->max_read)
		f->max_read = len;
	if (addr < f->base || addr >= f->base + f->size)
		return -1;
	if (addr >= f->bad_lo && addr < f->bad_hi)
		return -1;
	n = len;
	if (addr + n > f->base + f->size)
		n = (size_t)(f->base + f->size - addr);
	if (f->bad_lo > addr && addr + n > f->bad_lo)
		n = (size_t)(f->bad_lo - addr);
	memcpy(buf, f->mem + (addr - f->base), n);
	return (long)n;
}

static inline struct fake *fake_new(uint64_t base, size_t size)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->base = base;
	f->size = size;
	f->mem = calloc(1, size);
	assert_non_null(f->mem);
	return f;
}

static inline void fake_free(struct fake *f)
{
	free(f->mem);
	free(f);
}

/* Store word V at ADDR (any alignment). */
static inline void put(struct fake *f, uint64_t addr, uint64_t v)
{
	assert_true(addr >= f->base && addr + 8 <= f->base + f->size);
	memcpy(f->mem + (addr - f->base), &v, 8);
}

#endif
