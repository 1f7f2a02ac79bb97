/*
 * h_storm - a program under a storm of signals, driven through stdin.
 *
 *   h_storm alrm     SIGALRM every 100 us (ITIMER_REAL), counted
 *   h_storm chld     a thread forks children that exit at once, without
 *                    pause: SIGCHLD all the time, counted, reaped
 *   h_storm alloc N  SIGALRM every 100 us whose handler does a
 *                    malloc(32) + free pair; main does N malloc(16) +
 *                    free pairs, then prints "main N handler M" and
 *                    exits 0 (no commands)
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

static volatile unsigned long nsig;
void *volatile sink;

__attribute__((noinline)) static void leak_one(void)
{
	sink = malloc(LEAK_SIZE);	/* @leak */
	sink = NULL;
}

static void on_alrm(int sig)
{
	nsig++;
}

static void on_alrm_alloc(int sig)
{
	void *p = malloc(32);

	sink = p;
	free(p);
	nsig++;
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

static int alloc_mode(long n)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	long i;

	catch(SIGALRM, on_alrm_alloc);
	timer_100us();
	for (i = 0; i < n; i++) {
		void *p = malloc(16);

		sink = p;
		free(p);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("main %ld handler %s\n", i, nsig ? "some" : "none");
	return 0;
}

int main(int argc, char **argv)
{
	char cmd[64];
	pthread_t th;

	if (argc > 1 && !strcmp(argv[1], "alloc"))
		return alloc_mode(argc > 2 ? atol(argv[2]) : 10000);
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
			leak_one();
			printf("leaked\n");
		} else if (!strcmp(cmd, "quit\n")) {
			break;
		}
	}
	printf("bye\n");
	return 0;
}
