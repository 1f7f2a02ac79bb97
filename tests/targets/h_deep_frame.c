/*
 * h_deep_frame: the same function allocates from two call paths, its
 * frame holding a 100 KB array, so the return addresses of its callers lie
 * more than 64 KiB above the stack pointer at malloc's entry (beyond the
 * unwinder's stack snapshot).  Each path must keep its own stack: x1's
 * block under x1, x2's under x2 (a cache of stack pages that outlived the
 * first unwind gave x2's block x1's stack).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) void *g(size_t n)
{
	volatile char big[100 * 1024];
	void *p;

	memset((char *)big, 1, sizeof(big));
	p = malloc(n); /* @g_malloc */
	return big[n] ? p : NULL;
}

static __attribute__((noinline)) void *x1(void)
{
	return g(19); /* @x1_call */
}

static __attribute__((noinline)) void *x2(void)
{
	return g(19); /* @x2_call */
}

int main(void)
{
	void *a = x1(); /* @main_x1 */
	void *b = x2(); /* @main_x2 */

	printf("%d\n", a != NULL && b != NULL); /* @stdout_buf */
	return 0;
}
