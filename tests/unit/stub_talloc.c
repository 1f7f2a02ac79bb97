/*
 * stub_talloc.c - a tiny thread-safe allocator for test_hooks_stub: size
 * classes of 16 << k bytes with free lists under one spinlock, carved
 * from a static arena.  Built -O2 -falign-functions=4096 apart from the
 * test (Makefile): its prologues are real compiled code, and the test
 * can make these pages writable while no other code in them runs.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stub_talloc.h"

#define NCLASS	12
#define HDR	16
#define ARENA	(32u << 20)

struct blk {
	struct blk *next;
};

static char arena[ARENA] __attribute__((aligned(64)));
static size_t bump;
static struct blk *freel[NCLASS];
static int lock;
/* T_SIGSAFE blocks: an atomic bump, never reused, so that a signal
 * handler may allocate while its thread holds the lock */
static char sigarena[16u << 20] __attribute__((aligned(16)));
static size_t sigbump;

jmp_buf *t_jmp;

static void take(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void give(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

static unsigned class_of(size_t n)
{
	unsigned k = 0;

	while (k < NCLASS && ((size_t)16 << k) < n)
		k++;
	return k;
}

static size_t block_size(void *p)
{
	return (size_t)16 << *(uint64_t *)((char *)p - HDR);
}

__attribute__((noinline, noclone)) void *t_malloc(size_t n)
{
	unsigned k;
	char *p;

	if (n == T_LONGJMP)
		longjmp(*t_jmp, 1);
	if (n == T_RAISE)
		raise(SIGALRM);
	if (n == T_SIGSAFE) {
		k = (unsigned)__atomic_fetch_add(&sigbump, 16, __ATOMIC_RELAXED);
		return k < sizeof(sigarena) ? sigarena + k : NULL;
	}
	k = class_of(n);
	if (k == NCLASS)
		return NULL;
	take();
	p = (char *)freel[k];
	if (p)
		freel[k] = ((struct blk *)p)->next;
	else if (bump + HDR + ((size_t)16 << k) <= ARENA) {
		p = arena + bump + HDR;
		bump += HDR + ((size_t)16 << k);
		*(uint64_t *)(p - HDR) = k;
	}
	give();
	return p;
}

__attribute__((noinline, noclone)) void t_free(void *p)
{
	unsigned k;

	if (!p || (p >= (void *)sigarena && p < (void *)(sigarena + sizeof(sigarena))))
		return;
	k = (unsigned)*(uint64_t *)((char *)p - HDR);
	take();
	((struct blk *)p)->next = freel[k];
	freel[k] = p;
	give();
}

void *t_calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = t_malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *t_realloc(void *p, size_t n)
{
	size_t old;
	void *q;

	if (!p)
		return t_malloc(n);
	if (!n) {
		t_free(p);
		return NULL;
	}
	if (n == T_RAISE)
		raise(SIGALRM);
	q = t_malloc(n);
	if (q) {
		old = block_size(p);
		memcpy(q, p, old < n ? old : n);
		t_free(p);
	}
	return q;
}

void *t_reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return t_realloc(p, n * size);
}

void *t_malloc_tail(size_t n)
{
	return t_malloc(n);
}

int t_posix_memalign(void **memptr, size_t align, size_t n)
{
	if (align > 16)
		return 22;	/* EINVAL: our blocks are 16-aligned only */
	*memptr = t_malloc(n);
	return *memptr ? 0 : 12;
}

/* Its entry's stack alignment as the return value: %rbp = entry %rsp - 8
 * once pushed, so 0 when the caller (the stub) kept sp % 16 == 8. */
void *t_align(size_t n)
{
	return (void *)((uintptr_t)__builtin_frame_address(0) & 15);
}
