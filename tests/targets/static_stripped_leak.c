/*
 * static_stripped_leak - linked -static -s (the Makefile does so for
 * static_stripped_*): no symbol names malloc or open, so ptleak cannot
 * see the heap nor the descriptor calls, and must say so.  Leaks 300
 * bytes and a descriptor.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	void *volatile p = malloc(300);

	(void)p;
	if (open("/dev/null", O_RDONLY) < 0)
		return 2;
	printf("static_stripped_leak: done\n");
	return 0;
}
