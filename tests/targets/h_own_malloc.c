/*
 * h_own_malloc: the executable defines malloc, calloc, realloc and free
 * (a bump allocator), so the dynamic linker binds every allocation to it,
 * libc's own ones included.  Built at -O2 (per function), their first
 * instructions are rip-relative: ptleak must run them out of line, from a
 * scratch page mapped within reach of the executable's data.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* no-tree-loop-distribute-patterns: else gcc turns malloc+memset into a
 * call to calloc, which is this calloc */
#define OPT __attribute__((optimize("O2", "omit-frame-pointer", \
				      "no-tree-loop-distribute-patterns"), noinline))

static char arena[1 << 20] __attribute__((aligned(4096)));
static size_t top;
static unsigned long nfree;

OPT void *malloc(size_t n)
{
	size_t at = (top + 15) & ~(size_t)15;

	if (n > sizeof(arena) - 16 || at + n + 16 > sizeof(arena))
		return NULL;
	top = at + n + 16;
	memcpy(arena + at, &n, sizeof(n));
	return arena + at + 16;
}

OPT void free(void *p)
{
	nfree += p != NULL;
}

OPT void *calloc(size_t n, size_t size)
{
	volatile char *p = malloc(n * size);
	size_t i;

	for (i = 0; p && i < n * size; i++)
		p[i] = 0;
	return (void *)p;
}

OPT void *realloc(void *old, size_t n)
{
	void *p = malloc(n);
	size_t was;

	if (p && old) {
		memcpy(&was, (char *)old - 16, sizeof(was));
		memcpy(p, old, was < n ? was : n);
		free(old);
	}
	return p;
}

/* the realloc'd block stays reachable through it: in .data, a page of its
 * own apart from the arena's (page-aligned, in .bss), because a mapping
 * that holds blocks is heap to the scan, not a root (docs/design.md) */
static char *kept __attribute__((section(".data")));

static void *keep(size_t n)
{
	return malloc(n); /* @own_leak */
}

int main(void)
{
	int i;

	for (i = 0; i < 100; i++)
		free(malloc(32));
	keep(40); /* @own_keep1 */
	keep(40); /* @own_keep2 */
	kept = calloc(3, 10); /* @own_calloc */
	kept = realloc(kept, 50); /* @own_realloc */
	printf("frees %lu\n", nfree); /* @own_printf */
	return 0;
}
