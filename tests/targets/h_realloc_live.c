/*
 * h_realloc_live: a live report while a thread is inside realloc.
 *
 * The program defines realloc itself (glibc's __libc_realloc does the
 * work); asked for 4242 bytes, it prints "inside" and waits (up to 20 s)
 * for the file argv[1] to exist before going on.  main makes a 64-byte
 * holder (pointed to by the global g) whose first word points to a
 * 100-byte child, and a thread calls realloc(g, 4242): while it waits,
 * the holder is still allocated (realloc has not freed it) and holds the
 * child.  A report made then must count both, reachable; after realloc
 * returns, the holder's 4242-byte successor holds the child.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_realloc(void *p, size_t n);

struct node {
	struct node *child;
	char pad[56];
};

static struct node *volatile g;
static const char *go;

void *realloc(void *p, size_t n)
{
	int i;

	if (n == 4242) {
		printf("inside\n");
		fflush(stdout);
		for (i = 0; i < 2000 && access(go, F_OK); i++)
			usleep(10000);
	}
	return __libc_realloc(p, n);
}

static void *grow(void *arg)
{
	(void)arg;
	g = realloc(g, 4242); /* @grow */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2)
		return 2;
	go = argv[1];
	printf("ready\n");	/* stdout's buffer made before the thread */
	fflush(stdout);
	g = malloc(sizeof(struct node)); /* @holder */
	g->child = malloc(100); /* @child */
	if (pthread_create(&t, NULL, grow, NULL))
		return 3;
	pthread_join(t, NULL);
	printf("grown %d\n", g->child != NULL);
	return 0;
}
