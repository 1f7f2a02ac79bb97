/*
 * h_leader_exit: main calls pthread_exit and the process lives on in its
 * workers.  The leader is a zombie from then on: ptleak must read memory
 * and maps through the live threads, and report when the last one exits.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static void *work(void *arg)
{
	int i;

	for (i = 0; i < 1000; i++)
		free(malloc(10 + i % 100));
	usleep(100000);
	return malloc(33); /* @worker_leak */
}

int main(void)
{
	pthread_attr_t attr;
	pthread_t t;
	int i;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (i = 0; i < 3; i++)
		pthread_create(&t, &attr, work, NULL); /* @create */
	pthread_exit(NULL);
}
