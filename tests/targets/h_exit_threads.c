/*
 * h_exit_threads: main calls exit(5) while three threads are blocked.
 * The threads killed by exit_group never stop at PTRACE_EVENT_EXIT on
 * Linux 6.x: the report must be made at main's exit stop, with the
 * memory intact and every frame named.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t ready;

static void *blocked(void *arg)
{
	char *p = malloc(50); /* @thread_leak */

	memset(p, 1, 50);
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return arg;
}

int main(void)
{
	pthread_attr_t attr;
	pthread_t t;
	char *p;
	int i;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_barrier_init(&ready, NULL, 4);
	for (i = 0; i < 3; i++)
		pthread_create(&t, &attr, blocked, NULL); /* @create */
	pthread_barrier_wait(&ready);
	p = malloc(77); /* @main_leak */
	memset(p, 2, 77);
	exit(5); /* @exit */
}
