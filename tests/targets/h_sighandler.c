/*
 * h_sighandler - allocator calls from a signal handler interleaved with
 * allocator calls in main.
 *
 * A 1 ms ITIMER_REAL fires SIGALRM, whose handler does one malloc(200) +
 * free pair; main meanwhile does malloc(40) + free pairs until it has done
 * at least 20000 of them and the handler has run at least 20 times.  Both
 * are counted in volatile counters and printed at the end:
 *     h_sighandler: main N handler M
 * Not async-signal-safe in general, but safe here with glibc: the handler
 * and main use different tcache bins, and both bins are primed before the
 * timer starts, so neither ever takes an arena lock the other could hold.
 *
 * Heap totals: allocs = N + M + 2 (the two priming mallocs) + 1 (stdout
 * buffer) + 1 (the leak), frees = N + M + 2; one known block of 64 bytes
 * leaks from a marked line, plus the 4096-byte stdout buffer.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define MAIN_SIZE 40
#define HANDLER_SIZE 200

static volatile unsigned long main_count;
static volatile unsigned long handler_count;

static void on_alarm(int sig)
{
	char *p = malloc(HANDLER_SIZE); /* @handler_malloc */

	if (p) {
		p[0] = (char)sig;
		free(p);
		handler_count++;
	}
}

int main(void)
{
	struct itimerval it, off;
	struct sigaction sa;
	char *leak;
	time_t start;

	/* prime both tcache bins before the timer starts */
	free(malloc(MAIN_SIZE));
	free(malloc(HANDLER_SIZE));

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = 1000;
	it.it_value.tv_usec = 1000;
	setitimer(ITIMER_REAL, &it, NULL);

	start = time(NULL);
	while (main_count < 20000 || handler_count < 20) {
		char *p = malloc(MAIN_SIZE); /* @main_malloc */
		p[0] = 1;
		free(p);
		main_count++;
		if ((main_count & 1023) == 0 && time(NULL) - start > 40)
			break;	/* SIGALRM lost: give up, exit 1 below */
	}

	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);

	leak = malloc(64); /* @sig_leak */
	memset(leak, 'x', 64);
	leak = NULL;
	printf("h_sighandler: main %lu handler %lu\n", main_count, handler_count); /* @stdout_buf */
	return handler_count >= 20 ? 0 : 1;
}
