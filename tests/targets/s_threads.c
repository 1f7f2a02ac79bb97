/*
 * s_threads N: N threads (default 1000, default 8 MiB stacks) alive and
 * blocked when main calls exit(0).  Each keeps a 40-byte block in a
 * local of its stack.  The scan reads all those stacks: untouched pages
 * must not be faulted in (they were: 8 MB of RSS per thread).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t ready;

static void *blocked(void *arg)
{
	char *volatile p = malloc(40); /* @thread_block */

	memset(p, 1, 40);
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, i;
	pthread_t t;

	pthread_barrier_init(&ready, NULL, n + 1);
	for (i = 0; i < n; i++)
		if (pthread_create(&t, NULL, blocked, NULL)) { /* @create */
			perror("pthread_create");
			return 1;
		}
	pthread_barrier_wait(&ready);
	exit(0);
}
