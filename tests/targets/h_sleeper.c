/*
 * h_sleeper - leaks, then sleeps in nanosleep.
 *
 *   h_sleeper SECONDS    leaks 3 blocks of 100 bytes (leak_one), prints
 *                        "ready PID", sleeps SECONDS (sleep: nanosleep),
 *                        prints "done" and exits 0.
 * With SIGTERM's default action it dies of SIGTERM when sent one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NLEAK 3
#define LEAK_SIZE 100

void *volatile sink;

__attribute__((noinline)) static void leak_one(void)
{
	sink = malloc(LEAK_SIZE);	/* @leak */
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 30;

	for (i = 0; i < NLEAK; i++)
		leak_one();
	sink = NULL;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sleep(n);
	printf("done\n");
	return 0;
}
