/*
 * r_alrm_threads - 4 threads in a malloc/free loop under a SIGALRM every
 * 100 us whose handler allocates.
 *
 *   r_alrm_threads [M [H]]   (default M = 5000, H = 1000)
 *
 * Each of 4 threads does M malloc(16) + free pairs, then sleeps (SIGALRM
 * unblocked) until the handler has run H times.  The handler runs in
 * whichever thread the signal interrupts (main blocks SIGALRM): it does a
 * malloc(32), frees it, except every 100th which it loses; at the H-th run
 * it stops the timer.  Prints "threads 4 x M handler H lost H/100".
 *
 * Not async-signal-safe in general, but safe with glibc here (as in
 * h_sighandler): each thread primes its tcache bins of 16 and 32 bytes
 * with SIGALRM blocked, so the loop never takes an arena lock, and blocks
 * SIGALRM again before it returns (tcache teardown takes one).
 *
 * From the source: allocs 4M + H + 8 (priming) + 4 (pthread_create's
 * DTVs, 272 bytes, kept) + 1 (stdout buffer); frees 4M + H - H/100 + 8;
 * bytes 16 x 4M + 32 x H + 4 x 48 + 4 x 272 + 4096; in use H/100 x 32 +
 * 1,088 + 4,096 bytes in H/100 + 5 blocks.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define NTHREADS 4

static long m_pairs = 5000;
static unsigned long h_max = 1000;
static unsigned long tickets, nsig;	/* atomic */

/* Handlers run in several threads at once (SIGALRM is blocked only in
 * the thread it interrupted): the first H tickets allocate. */
static void on_alrm(int sig)
{
	unsigned long n = __atomic_add_fetch(&tickets, 1, __ATOMIC_SEQ_CST);
	char *p;

	if (n > h_max)
		return;
	p = malloc(32);	/* @alrm_malloc */
	p[0] = (char)sig;
	if (n % 100)
		free(p);
	if (n == h_max) {
		struct itimerval off;

		memset(&off, 0, sizeof(off));
		setitimer(ITIMER_REAL, &off, NULL);
	}
	__atomic_add_fetch(&nsig, 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	sigset_t alrm;
	long i;

	(void)arg;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	free(malloc(16));	/* SIGALRM blocked (inherited from main) */
	free(malloc(32));
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	for (i = 0; i < m_pairs; i++) {
		char *q = malloc(16);	/* @loop_malloc */
		q[0] = 1;
		free(q);
	}
	while (__atomic_load_n(&nsig, __ATOMIC_SEQ_CST) < h_max)
		nanosleep(&ms, NULL);	/* EINTR at each signal */
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	struct sigaction sa;
	struct itimerval it;
	sigset_t alrm;
	int i;

	if (argc > 1)
		m_pairs = atol(argv[1]);
	if (argc > 2)
		h_max = strtoul(argv[2], NULL, 10);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alrm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = 100;
	it.it_value.tv_usec = 100;
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);	/* @create */
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("threads %d x %ld handler %lu lost %lu\n", NTHREADS, m_pairs,	/* @printf */
	       nsig, nsig / 100);
	return 0;
}
