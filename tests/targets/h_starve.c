/*
 * h_starve: a thread makes 50 malloc/free pairs and one leak while four
 * threads created after it call malloc/free without pause; when it is
 * done it stops them.  Under the breakpoint engine every call stops.  A
 * tracer handling the first stop waitpid(-1) returns (its own child, the
 * leader, first, then the other tracees newest first) never handles the
 * first thread's stops while a worker has one to report, which is always:
 * the program never ends.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int done;
static int running;
static void *keep;

static void *busy(void *arg)
{
	(void)arg;
	free(malloc(32));
	__atomic_fetch_add(&running, 1, __ATOMIC_SEQ_CST);
	while (!done)
		free(malloc(32));
	return NULL;
}

static void *first(void *arg)
{
	int i;

	(void)arg;
	while (__atomic_load_n(&running, __ATOMIC_SEQ_CST) < 4)
		;	/* every worker calls malloc without pause now */
	for (i = 0; i < 50; i++)
		free(malloc(100));
	keep = malloc(77);	/* @LEAK */
	keep = NULL;
	done = 1;
	return NULL;
}

int main(void)
{
	pthread_t f, t[4];
	int i;

	pthread_create(&f, NULL, first, NULL);	/* @create_first */
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, busy, NULL);	/* @create_busy */
	pthread_join(f, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("done %p\n", keep);	/* @stdout_buf */
	return 0;
}
