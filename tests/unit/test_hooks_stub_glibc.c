/*
 * test_hooks_stub_glibc.c - glibc's own malloc, free, calloc and realloc
 * patched in the test process (patch_self.h) for a loop, then unpatched,
 * then the records checked: the nesting rule on the real allocator
 * (realloc(NULL, n) calls malloc inside libc) and exact counts.  Nothing
 * between the patch and the unpatch may use cmocka (it allocates).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dlfcn.h>

#include "patch_self.h"

#define N	10000
#define RING_LOG2	24

static struct fn fns[] = {
	{ .addr = (void *)malloc, .name = "malloc", .kind = REC_FN_MALLOC },
	{ .addr = (void *)free, .name = "free", .kind = REC_FN_FREE },
	{ .addr = (void *)calloc, .name = "calloc", .kind = REC_FN_CALLOC },
	{ .addr = (void *)realloc, .name = "realloc", .kind = REC_FN_REALLOC },
};
#define NFNS (sizeof(fns) / sizeof(fns[0]))

/* called through pointers: no call may be optimised away */
static void *(*volatile v_malloc)(size_t) = malloc;
static void *(*volatile v_calloc)(size_t, size_t) = calloc;
static void *(*volatile v_realloc)(void *, size_t) = realloc;
static void (*volatile v_free)(void *) = free;

static void glibc_loop(void)
{
	size_t i, s;
	void *p;

	for (i = 0; i < N; i++) {
		s = 16 + i % 200;
		p = v_realloc(v_malloc(s), 2 * s + 1);
		v_free(p);
	}
	v_free(v_realloc(NULL, 40));	/* malloc inside: not recorded */
	v_free(v_calloc(5, 8));
	__asm__ volatile("" ::: "memory");	/* not a tail call: ra here */
}

struct tally {
	uint64_t lo, hi, other, bad, n[REC_MEMALIGN + 1];
	uint64_t last, null_begin;
};

static int tally(void *ctx, const struct ring_rec *rec)
{
	struct tally *t = ctx;
	const uint64_t *w = rec->w;
	/* free and realloc's begin carry no stack; the others the caller's
	 * return address alone (no unwind tables here) */
	unsigned stack = rec->type != REC_FREE && rec->type != REC_REALLOC_BEGIN;
	uint64_t ra = w[rec->nwords - 1];

	if (w[0] >> 32 != (uint64_t)gettid() || rec->npcs != stack ||
	    (stack && (ra <= t->lo || ra > t->hi))) {
		t->other++;
		return 0;
	}
	if (rec->type > REC_MEMALIGN || rec->type < REC_ALLOC)
		t->bad++;
	else
		t->n[rec->type]++;
	/* each record's first value chains to the one before */
	if (rec->type == REC_ALLOC || rec->type == REC_REALLOC_END)
		t->last = w[rec->type == REC_ALLOC ? 2 : 5];
	else if (rec->type == REC_REALLOC_BEGIN && !w[2])
		t->null_begin++;
	else if (w[2] != t->last)
		t->bad++;
	return 0;
}

static void test_glibc(void **state)
{
	struct ring *r = mmap(NULL, ring_mem_size(RING_LOG2),
			      PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	struct rec_conf conf = { .ring = r };
	struct ring_reader *rd;
	struct tally t = { 0 };
	uint64_t value = 0;
	unsigned i, bad = 0;
	uint8_t *code;
	Dl_info info;

	assert_true(r != MAP_FAILED);
	assert_int_equal(ring_init(r, RING_LOG2), 0);
	rd = ring_reader_new(r, ring_mem_size(RING_LOG2));
	assert_non_null(rd);
	conf.tid_off = find_tid_off();
	assert_true(dladdr((void *)malloc, &info));
	for (i = 0; i < NFNS; i++) {
		fns[i].size = elf_func(info.dli_fname, SHT_DYNSYM, fns[i].name,
				       &value);
		assert_int_equal((uint64_t)info.dli_fbase + value,
				 (uint64_t)fns[i].addr);
	}
	t.hi = elf_func("/proc/self/exe", SHT_SYMTAB, "glibc_loop", &value);
	t.lo = (uint64_t)glibc_loop;
	t.hi += t.lo;

	/* no cmocka assertion (nor anything that allocates) from here ... */
	bad |= patch_self(&conf, fns, NFNS, &code);
	glibc_loop();
	bad |= unpatch_self(fns, NFNS);
	/* ... to here */
	assert_int_equal(bad, 0);
	for (i = 0; i < NFNS; i++)
		assert_memory_equal((void *)fns[i].p.at, fns[i].saved,
				    fns[i].p.len);
	assert_int_equal(fns[0].p.len, 7);	/* glibc 2.36: as test_patch */
	assert_int_equal(fns[1].p.len, 9);
	while (ring_consume(rd, tally, &t, 4096) > 0)
		;
	assert_int_equal(t.bad, 0);
	assert_int_equal(t.other, 0);
	assert_int_equal(t.null_begin, 1);
	assert_int_equal(t.n[REC_ALLOC], N + 1);
	assert_int_equal(t.n[REC_REALLOC_BEGIN], N + 1);
	assert_int_equal(t.n[REC_REALLOC_END], N + 1);
	assert_int_equal(t.n[REC_FREE], N + 2);
	assert_int_equal(r->lost + r->dropped, 0);
	assert_int_equal(r->head, ring_tail(rd));
	ring_reader_delete(rd);
	munmap(code, PATCH_CODE_LEN);
	munmap(r, ring_mem_size(RING_LOG2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glibc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
