/*
 * h_storm - a program under a storm of signals, driven through stdin.
 *
 *   h_storm alrm     SIGALRM every 100 us (ITIMER_REAL), counted
 *   h_storm chld     a thread forks children that exit at once, without
 *                    pause: SIGCHLD all the time, counted, reaped
 *   h_storm alloc N M   SIGALRM every 100 us whose handler does a
 *                    malloc(32) + free pair, M times (then the timer is
 *                    stopped); main does N malloc(16) + free pairs, waits
 *                    for the M-th signal, prints "main N handler M" and
 *                    exits 0 (no commands).  Heap totals: N + M + 2
 *                    allocations (2 prime the tcache), as many frees
 * Commands (alrm, chld), one per line, answered on stdout:
 *   ping   "pong" once at least one more signal came
 *   leak   leak_one() loses 128 bytes: "leaked"
 *   quit   "bye", exit 0
 * Every system call of main is restarted (SA_RESTART).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEAK_SIZE 128

static volatile unsigned long nsig, max_sig;
void *volatile sink;

__attribute__((noinline)) static void leak_one(void)
{
	sink = malloc(LEAK_SIZE);	/* @leak */
	sink = NULL;
}

/* Zero the dead stack below and the scratch registers: the allocator
 * left copies of the leaked pointer there, which a scan would take for
 * references (and a signal frame would copy them up the stack). */
__attribute__((noinline)) static void scrub(void)
{
	volatile char buf[16384];

	memset((char *)buf, 0, sizeof(buf));
	__asm__ volatile("xor %%eax,%%eax; xor %%ecx,%%ecx; xor %%edx,%%edx;"
			 "xor %%esi,%%esi; xor %%edi,%%edi; xor %%r8d,%%r8d;"
			 "xor %%r9d,%%r9d; xor %%r10d,%%r10d; xor %%r11d,%%r11d"
			 ::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9",
			 "r10", "r11", "memory");
	/* vector registers too: a signal frame saves them on the stack */
	__asm__ volatile("pxor %%xmm0,%%xmm0; pxor %%xmm1,%%xmm1;"
			 "pxor %%xmm2,%%xmm2; pxor %%xmm3,%%xmm3;"
			 "pxor %%xmm4,%%xmm4; pxor %%xmm5,%%xmm5;"
			 "pxor %%xmm6,%%xmm6; pxor %%xmm7,%%xmm7"
			 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
			 "xmm6", "xmm7");
}

static void on_alrm(int sig)
{
	nsig++;
}

static void on_alrm_alloc(int sig)
{
	static const struct itimerval off;
	void *p;

	if (nsig == max_sig)
		return;
	p = malloc(32);
	sink = p;
	free(p);
	if (++nsig == max_sig)
		setitimer(ITIMER_REAL, &off, NULL);
}

static void on_chld(int sig)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		nsig++;
}

static void *spawner(void *arg)
{
	for (;;) {
		pid_t c = fork();

		if (c == 0)
			_exit(0);
		if (c < 0)
			usleep(1000);
		usleep(200);
	}
	return NULL;
}

static void catch(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigaction(sig, &sa, NULL);
}

static void timer_100us(void)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } };

	setitimer(ITIMER_REAL, &it, NULL);
}

static int alloc_mode(long n, long m)
{
	sigset_t alrm, none;
	long i;

	/* both tcache bins primed: neither main nor the handler ever takes
	 * an arena lock the other could hold (as in h_sighandler) */
	free(malloc(16));
	free(malloc(32));
	max_sig = (unsigned long)m;
	catch(SIGALRM, on_alrm_alloc);
	timer_100us();
	for (i = 0; i < n; i++) {
		void *p = malloc(16);

		sink = p;
		free(p);
	}
	sigemptyset(&alrm);
	sigemptyset(&none);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_BLOCK, &alrm, NULL);
	while (nsig < max_sig)
		sigsuspend(&none);
	printf("main %ld handler %lu\n", i, nsig);
	return 0;
}

int main(int argc, char **argv)
{
	char cmd[64];
	pthread_t th;

	if (argc > 1 && !strcmp(argv[1], "alloc"))
		return alloc_mode(argc > 2 ? atol(argv[2]) : 10000,
				  argc > 3 ? atol(argv[3]) : 1000);
	if (argc > 1 && !strcmp(argv[1], "chld")) {
		catch(SIGCHLD, on_chld);
		pthread_create(&th, NULL, spawner, NULL);
	} else {
		catch(SIGALRM, on_alrm);
		timer_100us();
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	while (fgets(cmd, sizeof(cmd), stdin)) {
		if (!strcmp(cmd, "ping\n")) {
			unsigned long n = nsig;

			while (nsig == n)
				usleep(100);
			printf("pong\n");
		} else if (!strcmp(cmd, "leak\n")) {
			sigset_t all, old;

			/* no signal frame while the pointer is around */
			sigfillset(&all);
			sigprocmask(SIG_BLOCK, &all, &old);
			leak_one();
			scrub();
			sigprocmask(SIG_SETMASK, &old, NULL);
			printf("leaked\n");
		} else if (!strcmp(cmd, "quit\n")) {
			break;
		}
	}
	printf("bye\n");
	return 0;
}
