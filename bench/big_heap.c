/*
 * big_heap N [HOLD_S [MIN MAX]]: a heap of N live blocks of MIN..MAX
 * bytes (default 32..80, sizes a fixed pseudo-random sequence), for the
 * report and pause figures of issue 26 (bench/big_heap.py).
 *
 * Every block's address is kept in one array (a block itself, held by a
 * global), except:
 *  - i % 16 == 0: dropped from the array, nothing points to it:
 *    definitely lost;
 *  - i % 16 == 1: dropped, pointed to only by block i - 1 (lost):
 *    indirectly lost;
 *  - the rest: still reachable.
 * So with N a multiple of 16: N/16 definitely lost, N/16 indirectly lost,
 * 7N/8 + 1 still reachable (the array too).
 *
 * A heartbeat thread wakes every 1 ms and keeps the longest gap between
 * two wake-ups (a stall: the process was held, by ptleak's census or
 * report) from the moment the heap is built; SIGUSR2 makes it print
 * "big_heap: stall N.N ms" (and start again from 0), as does the end.
 * "big_heap: ready" (stdout) says the heap is built; then the process
 * waits HOLD_S seconds (default 0), or until SIGTERM, and exits 0.
 * The thread allocates nothing: its output is write(2).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void **volatile big_heap_kept;	/* the root (not optimised away) */
static void **kept;
static volatile sig_atomic_t want_print, stop;
static volatile int building = 1;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void say(const char *what, double v)
{
	char buf[96];
	int n = snprintf(buf, sizeof(buf), "big_heap: %s %.1f ms\n", what, v);

	if (write(1, buf, (size_t)n) < 0)
		_exit(2);
}

static void *heartbeat(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	double last = now_ms(), worst = 0;

	(void)arg;
	while (!stop) {
		double t;

		nanosleep(&ms, NULL);
		t = now_ms();
		if (!building && t - last > worst)
			worst = t - last;
		last = t;
		if (want_print) {
			want_print = 0;
			say("stall", worst);
			worst = 0;
		}
	}
	say("stall", worst);
	return NULL;
}

static void on_usr2(int sig)
{
	(void)sig;
	want_print = 1;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	double hold = argc > 2 ? atof(argv[2]) : 0;
	long lo = argc > 3 ? atol(argv[3]) : 32, hi = argc > 4 ? atol(argv[4]) : 80;
	uint64_t x = 88172645463325252ull;
	struct sigaction sa;
	pthread_t th;
	double t0, end;
	long i;

	if (n < 1 || lo < 8 || hi < lo)
		return 64;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	if (pthread_create(&th, NULL, heartbeat, NULL))
		return 1;
	t0 = now_ms();
	kept = malloc((size_t)n * sizeof(*kept));
	if (!kept)
		return 1;
	for (i = 0; i < n; i++) {
		size_t size;
		void **b;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size = (size_t)(lo + (long)(x % (uint64_t)(hi - lo + 1)));
		b = malloc(size);
		if (!b)
			return 1;
		memset(b, 0, size);
		kept[i] = b;
		if (i % 16 == 1) {
			/* block i - 1 (dropped) points to it */
			*(void **)kept[i - 1] = b;
			kept[i - 1] = NULL;
			kept[i] = NULL;
		}
	}
	if (n % 16 == 1)
		kept[n - 1] = NULL;	/* i % 16 == 0 last: dropped too */
	big_heap_kept = kept;
	building = 0;
	printf("big_heap: ready, %ld blocks in %.0f ms\n", n, now_ms() - t0);
	fflush(stdout);
	end = now_ms() + hold * 1e3;
	while (!stop && now_ms() < end) {
		struct timespec ms = { 0, 10000000 };

		nanosleep(&ms, NULL);
	}
	stop = 1;
	pthread_join(th, NULL);
	return 0;
}
