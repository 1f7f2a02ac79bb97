/*
 * h_threads [N [M]] - N threads (default 8) each do M (default 10000)
 * malloc/free pairs of varying sizes and leak exactly one block of
 * 100 + thread index bytes from thread_leak().  main joins them all.
 *
 * Threads get a 256 KiB stack so that glibc keeps every thread's stack
 * (and its 272-byte DTV) cached after the join instead of freeing some of
 * them: the numbers stay the same whatever RLIMIT_STACK is.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long iterations = 10000;

struct arg {
	int index;
	unsigned long sum;
};

/* Size of the I-th allocation of thread T: 1 .. 1024 bytes. */
static size_t size_of(long i, int t)
{
	return 1 + (size_t)((i * 37 + t * 101) % 1024);
}

static void thread_leak(int index)
{
	char *p = malloc(100 + index); /* @thread_leak */
	memset(p, 'l', 100 + index);
}

static void *worker(void *v)
{
	struct arg *a = v;
	long i;

	for (i = 0; i < iterations; i++) {
		size_t n = size_of(i, a->index);
		unsigned char *p = malloc(n);
		p[0] = (unsigned char)n;
		p[n - 1] = 1;
		a->sum += p[0] + p[n - 1];
		free(p);
	}
	thread_leak(a->index); /* @call_thread_leak */
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 8;
	pthread_t tids[256];
	struct arg args[256];
	pthread_attr_t attr;
	unsigned long total = 0, expect = 0;
	int t;
	long i;

	if (argc > 2)
		iterations = atol(argv[2]);
	if (nthreads < 1 || nthreads > 256 || iterations < 0) {
		fprintf(stderr, "usage: h_threads [1..256 [M]]\n");
		return 2;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (t = 0; t < nthreads; t++) {
		args[t].index = t;
		args[t].sum = 0;
		if (pthread_create(&tids[t], &attr, worker, &args[t]) != 0) { /* @pthread_create */
			perror("pthread_create");
			return 1;
		}
	}
	for (t = 0; t < nthreads; t++) {
		pthread_join(tids[t], NULL);
		total += args[t].sum;
		for (i = 0; i < iterations; i++)
			expect += (unsigned char)size_of(i, t) + 1;
	}
	pthread_attr_destroy(&attr);
	if (total != expect) {
		fprintf(stderr, "h_threads: checksum %lu != %lu\n", total, expect);
		return 1;
	}
	printf("h_threads: %d threads x %ld ok\n", nthreads, iterations); /* @stdout_buf */
	return 0;
}
