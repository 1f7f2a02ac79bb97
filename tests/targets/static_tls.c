/*
 * static_tls - statically linked: the main thread's TLS and descriptor
 * live at the start of [heap] (sbrk'd by __libc_setup_tls before malloc's
 * arena).  A thread-local variable holds the only pointer to a block:
 * still reachable, as in the same source linked dynamically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread char *held_by_tls;

int main(void)
{
	char *lost;

	held_by_tls = malloc(10); /* @tls_block */
	memset(held_by_tls, 1, 10);
	lost = calloc(3, 7); /* @tls_lost */
	lost[0] = 1;
	lost = NULL;
	printf("static_tls: done\n"); /* @stdout_buf */
	return 0;
}
