/*
 * malloc_heavy N M D - N threads (default 1) each do M (default 100000)
 * malloc+free pairs, spread over four call sites with four sizes, and
 * touch every block; the loop runs D (default 0) frames deeper than the
 * thread's start (D = 12: malloc's stacks are 16 frames, ptleak's default
 * --depth).  Prints one checksum line; exits 0.
 *
 * Exactly N*M of the program's own malloc and free calls; everything else
 * is the C runtime's fixed cost (stdio buffer, one DTV per thread, ...),
 * which depends on N but not on M: bench/run measures it with M = 0.
 *
 * Threads get a 256 KiB stack so that glibc's stack cache (40 MiB) keeps
 * every thread's stack and DTV after the join instead of freeing some,
 * and they start together from a barrier so that all N really run (and
 * stop under a tracer) at the same time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long iterations = 100000;
static pthread_barrier_t start;

struct arg {
	int index;
	unsigned long sum;
};

/* Keep the compiler from pairing up and deleting a malloc and its free. */
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static __attribute__((noinline)) unsigned long site_small(long i)
{
	unsigned char *p = malloc(24);
	unsigned long s;

	KEEP(p);
	memset(p, (int)i, 24);
	s = p[0] + p[23];
	free(p);
	return s;
}

static __attribute__((noinline)) unsigned long site_medium(long i)
{
	unsigned char *p = malloc(200);
	unsigned long s;

	KEEP(p);
	memset(p, (int)i, 200);
	s = p[0] + p[199];
	free(p);
	return s;
}

static __attribute__((noinline)) unsigned long site_large(long i)
{
	unsigned char *p = malloc(1500);
	unsigned long s;

	KEEP(p);
	p[0] = (unsigned char)i;
	p[749] = 1;
	p[1499] = 2;
	s = p[0] + p[749] + p[1499];
	free(p);
	return s;
}

static __attribute__((noinline)) unsigned long site_page(long i)
{
	unsigned char *p = malloc(5000);
	unsigned long s;

	KEEP(p);
	p[0] = (unsigned char)i;
	p[4096] = 3;
	p[4999] = 4;
	s = p[0] + p[4096] + p[4999];
	free(p);
	return s;
}

static int depth;	/* frames nested above the loop (16-frame stacks) */

static __attribute__((noinline)) void loop(struct arg *a, int d)
{
	long i;

	if (d > 0) {
		loop(a, d - 1);
		KEEP(a);	/* not a tail call: the frame stays */
		return;
	}
	for (i = 0; i < iterations; i++) {
		switch ((i + a->index) & 3) {
		case 0: a->sum += site_small(i); break;
		case 1: a->sum += site_medium(i); break;
		case 2: a->sum += site_large(i); break;
		default: a->sum += site_page(i); break;
		}
	}
}

static void *worker(void *v)
{
	struct arg *a = v;

	pthread_barrier_wait(&start);
	loop(a, depth);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_attr_t attr;
	pthread_t tid[256];
	struct arg args[256];
	unsigned long sum = 0;
	int t;

	if (argc > 2)
		iterations = atol(argv[2]);
	if (argc > 3)
		depth = atoi(argv[3]);
	if (n < 1 || n > 256 || iterations < 0 || depth < 0 || depth > 1000) {
		fprintf(stderr, "usage: malloc_heavy [THREADS 1..256 [PAIRS_PER_THREAD "
			"[DEPTH]]]\n");
		return 64;
	}
	pthread_barrier_init(&start, NULL, (unsigned)n);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (t = 0; t < n; t++) {
		args[t].index = t;
		args[t].sum = 0;
		if (pthread_create(&tid[t], &attr, worker, &args[t])) {
			perror("pthread_create");
			return 1;
		}
	}
	for (t = 0; t < n; t++) {
		pthread_join(tid[t], NULL);
		sum += args[t].sum;
	}
	pthread_attr_destroy(&attr);
	pthread_barrier_destroy(&start);
	printf("malloc_heavy %d x %ld: checksum %lu\n", n, iterations, sum);
	return 0;
}
