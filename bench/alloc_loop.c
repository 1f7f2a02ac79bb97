/*
 * alloc_loop [THREADS [INTERVAL_MS]] - a busy allocation loop that reports
 * its own throughput, for bench/side_by_side's attach measurement.
 *
 * THREADS (default 1) threads each do malloc+free pairs of four sizes as
 * fast as they can, touching every block.  Every INTERVAL_MS (default 500)
 * the main thread prints one line "pairs/s R" on stdout, flushed: the pairs
 * of all threads over that interval divided by its measured length (a
 * tracer that stops the process lengthens the interval, not the rate).
 * Runs until killed; SIGINT or SIGTERM end it with status 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Keep the compiler from pairing up and deleting a malloc and its free. */
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

/* One counter per thread, each on its own cache line. */
struct counter {
	unsigned long n;
	char pad[64 - sizeof(unsigned long)];
};

static struct counter counters[64];
static volatile sig_atomic_t done;

static void *worker(void *v)
{
	struct counter *c = v;
	static const size_t sizes[4] = { 24, 200, 1500, 5000 };
	unsigned long i;

	for (i = 0;; i++) {
		size_t sz = sizes[i & 3];
		unsigned char *p = malloc(sz);

		KEEP(p);
		p[0] = (unsigned char)i;
		p[sz - 1] = 1;
		free(p);
		/* single writer: a relaxed store is enough for the reader */
		__atomic_store_n(&c->n, i + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long total(int n)
{
	unsigned long sum = 0;
	int t;

	for (t = 0; t < n; t++)
		sum += __atomic_load_n(&counters[t].n, __ATOMIC_RELAXED);
	return sum;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	long ms = argc > 2 ? atol(argv[2]) : 500;
	struct timespec interval;
	unsigned long last;
	pthread_t tid;
	double t0;
	int t;

	if (n < 1 || n > 64 || ms < 10) {
		fprintf(stderr, "usage: alloc_loop [THREADS 1..64 [INTERVAL_MS >= 10]]\n");
		return 64;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (t = 0; t < n; t++) {
		if (pthread_create(&tid, NULL, worker, &counters[t])) {
			perror("pthread_create");
			return 1;
		}
	}
	interval.tv_sec = ms / 1000;
	interval.tv_nsec = ms % 1000 * 1000000L;
	last = total(n);
	t0 = now();
	while (!done) {
		unsigned long cur;
		double t1;

		nanosleep(&interval, NULL);
		cur = total(n);
		t1 = now();
		printf("pairs/s %.0f\n", (cur - last) / (t1 - t0));
		fflush(stdout);
		last = cur;
		t0 = t1;
	}
	return 0;
}
