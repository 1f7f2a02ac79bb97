/*
 * r_handoff [N [M]] - N threads (default 4) each make M (default 20000)
 * blocks of 1..1024 bytes and put them in one queue (first in, first
 * out, a mutex, 64 slots); each takes the oldest block out whenever the
 * queue holds more than 8 and frees it: many blocks are freed by another
 * thread than the one that made them, and glibc hands a freed chunk to
 * the freeing thread's next malloc of its size, so addresses go from
 * thread to thread (the recorder's lanes must order those calls by their
 * times).  Each
 * thread leaks one block of 200 + its index bytes; main frees what the
 * queue holds at the end.  Threads get a 256 KiB stack: glibc keeps every
 * stack (and its 272-byte DTV) cached after the join, whatever
 * RLIMIT_STACK is (as h_threads).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64

static long iterations = 20000;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *queue[SLOTS];
static unsigned first, queued;	/* the oldest, and how many */

static size_t size_of(long i, int t)
{
	return 1 + (size_t)((i * 53 + t * 211) % 1024);
}

static void handoff_leak(int index)
{
	char *p = malloc(200 + index); /* @handoff_leak */
	memset(p, 'h', 200 + index);
}

/* The stack below the caller zeroed: no copy of a leaked pointer stays in
 * a dead frame (the thread's stack is scanned from its exit's sp, which
 * may lie below them: the leak would be reachable). */
static void __attribute__((noinline)) scrub(void)
{
	volatile char pad[4096];

	memset((char *)pad, 0, sizeof(pad));
}

static void *worker(void *v)
{
	int index = (int)(long)v;
	void *out;
	long i;

	for (i = 0; i < iterations; i++) {
		size_t n = size_of(i, index);
		unsigned char *p = malloc(n);

		p[0] = (unsigned char)n;
		out = NULL;
		pthread_mutex_lock(&lock);
		if (queued < SLOTS)
			queue[(first + queued++) % SLOTS] = p;
		else
			out = p;	/* full (cannot be: 8 + N per thread) */
		if (queued > 8 && !out) {
			out = queue[first];
			queue[first] = NULL;	/* no stale copy: a root */
			first = (first + 1) % SLOTS;
			queued--;
		}
		pthread_mutex_unlock(&lock);
		free(out);
	}
	handoff_leak(index); /* @call_handoff_leak */
	scrub();
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t tids[16];
	pthread_attr_t attr;
	int t;

	if (argc > 2)
		iterations = atol(argv[2]);
	if (nthreads < 1 || nthreads > 16 || iterations < 0) {
		fprintf(stderr, "usage: r_handoff [1..16 [M]]\n");
		return 2;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (t = 0; t < nthreads; t++)
		if (pthread_create(&tids[t], &attr, worker, (void *)(long)t) != 0) { /* @pthread_create */
			perror("pthread_create");
			return 1;
		}
	for (t = 0; t < nthreads; t++)
		pthread_join(tids[t], NULL);
	while (queued) {
		free(queue[first]);
		queue[first] = NULL;
		first = (first + 1) % SLOTS;
		queued--;
	}
	printf("r_handoff: done\n"); /* @stdout_buf */
	return 0;
}
