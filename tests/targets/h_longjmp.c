/*
 * h_longjmp: an allocator call that never returns.  The executable's own
 * malloc leaves by longjmp when asked for 13 bytes, so the return address
 * ptleak hijacked is never used; the next malloc, called from the same
 * frame, has the very same return slot and must still be recorded.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static char arena[1 << 20] __attribute__((aligned(16)));
static size_t top;
static jmp_buf env;
static int jumping;

void *malloc(size_t n)
{
	size_t at = (top + 15) & ~(size_t)15;

	if (n == 13 && jumping)
		longjmp(env, 1);
	if (at + n + 16 > sizeof(arena))
		return NULL;
	top = at + n + 16;
	memcpy(arena + at, &n, sizeof(n));
	return arena + at + 16;
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t n, size_t size)
{
	char *p = malloc(n * size);
	size_t i;

	for (i = 0; p && i < n * size; i++)
		p[i] = 0;
	return p;
}

void *realloc(void *old, size_t n)
{
	char *p = malloc(n);
	size_t was;

	if (p && old) {
		memcpy(&was, (char *)old - 16, sizeof(was));
		memcpy(p, old, was < n ? was : n);
	}
	return p;
}

int main(void)
{
	volatile int jumps = 0;
	void *p = NULL;
	int i;

	for (i = 0; i < 10; i++) {
		jumping = 1;
		if (!setjmp(env))
			p = malloc(13);
		else
			jumps++;
		jumping = 0;
		p = malloc(24); /* @after_jump */
	}
	(void)p;
	printf("jumps %d\n", jumps); /* @jmp_printf */
	return 0;
}
