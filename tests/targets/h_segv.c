/*
 * h_segv - leaks three blocks, then dies of SIGSEGV by writing through a
 * NULL pointer.  The leak report must still be made (exit status 139).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int *volatile nowhere;

static void *leak(size_t n)
{
	void *p = malloc(n); /* @segv_leak */
	memset(p, 's', n);
	return p;
}

static void crash(void)
{
	*nowhere = 42; /* @crash */
}

int main(void)
{
	void *keep;
	int i;

	for (i = 0; i < 50; i++)
		free(malloc(100 + i));
	leak(300); /* @call_leak300 */
	leak(200); /* @call_leak200 */
	keep = calloc(4, 25); /* @segv_calloc */
	printf("h_segv: about to crash\n"); /* @stdout_buf */
	fflush(stdout);
	crash(); /* @call_crash */
	free(keep);
	return 0;
}
