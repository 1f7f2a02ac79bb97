/*
 * t_timeline.c - memory over time (cases_timeline.py): main leaks 6
 * blocks of 1,000 bytes 60 ms apart, then 3 named threads allocate and
 * free known amounts.  Worker I (0..2): 10 mallocs of 100 (I+1) bytes,
 * 5 of them freed, one grown by realloc to 1,000 (I+1): 11 allocs, 6
 * frees, 2,000 (I+1) bytes allocated, 1,400 (I+1) in use.
 *
 * With "wait": says "ready" and waits for a line on stdin first (ptleak
 * -p attaches meanwhile), and for another line before exiting.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *kept[8];

static void *worker(void *arg)
{
	long i = (long)arg, k;
	char name[16];
	void *p[10];

	snprintf(name, sizeof(name), "tl-worker%ld", i);
	pthread_setname_np(pthread_self(), name);
	for (k = 0; k < 10; k++)
		p[k] = malloc(100 * (size_t)(i + 1));	/* @worker_malloc */
	for (k = 0; k < 10; k += 2)
		free(p[k]);
	p[1] = realloc(p[1], 1000 * (size_t)(i + 1));	/* @worker_realloc */
	kept[i] = p[1];
	return NULL;
}

static __attribute__((noinline)) void *leak_main(void)
{
	void *p = malloc(1000);	/* @main_malloc */

	memset(p, 1, 1000);
	return p;
}

static void wait_line(void)
{
	char buf[64];

	if (!fgets(buf, sizeof(buf), stdin))
		exit(2);
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "wait");
	pthread_t t[3];
	long i;
	void *q;

	if (wait) {
		printf("ready\n");
		fflush(stdout);
		wait_line();
	}
	for (i = 0; i < 6; i++) {
		kept[7] = leak_main();
		usleep(60000);
	}
	for (i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	q = calloc(5, 20);
	free(q);
	printf("done\n");
	fflush(stdout);
	if (wait)
		wait_line();
	return 0;
}
