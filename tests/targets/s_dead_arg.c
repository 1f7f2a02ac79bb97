/*
 * s_dead_arg: a joined thread's descriptor stays in glibc's stack cache
 * with the argument it was given.  That 32-byte argument block is freed;
 * the next malloc(32) gets the same address and is leaked: the stale
 * pointer in the dead thread's descriptor must not make it reachable.
 * valgrind: 32 bytes definitely lost (it never reuses the address).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *worker(void *arg)
{
	memset(arg, 1, 32);
	return NULL;
}

int main(void)
{
	void *arg = malloc(32), *leak; /* @dead_arg */
	pthread_t t;
	int reused;

	pthread_create(&t, NULL, worker, arg); /* @dead_create */
	pthread_join(t, NULL);
	free(arg);
	leak = malloc(32); /* @dead_leak */
	memset(leak, 2, 32);
	reused = leak == arg;
	leak = NULL;
	printf("reused %d\n", reused); /* @stdout_buf */
	return 0;
}
