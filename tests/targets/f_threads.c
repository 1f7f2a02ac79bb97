/*
 * f_threads DIR [N]: 4 threads open and close /dev/null and pipes
 * concurrently, N rounds each (default 2000); halfway, thread i creates
 * DIR/leak<i> and keeps it.  The kept descriptors' numbers go to
 * DIR/fds ("i fd" lines), not to stdout, which stays the same run to
 * run.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NTHREADS 4

static const char *dir;
static int rounds = 2000;
static int kept[NTHREADS];

static int leak(int i)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/leak%d", dir, i);
	return open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600); /* @thread_leak */
}

static void *worker(void *arg)
{
	int i = (int)(long)arg, k, fd, p[2];

	for (k = 0; k < rounds; k++) {
		if (k == rounds / 2)
			kept[i] = leak(i); /* @call_leak */
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			close(fd);
		if (!pipe(p)) {
			close(p[0]);
			close(p[1]);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	char path[512];
	FILE *f;
	int i;

	if (argc < 2)
		return 2;
	dir = argv[1];
	if (argc > 2)
		rounds = atoi(argv[2]);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)i);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	snprintf(path, sizeof(path), "%s/fds", dir);
	f = fopen(path, "w");
	if (!f)
		return 1;
	for (i = 0; i < NTHREADS; i++)
		fprintf(f, "%d %d\n", i, kept[i]);
	fclose(f);
	printf("%d threads done\n", NTHREADS);
	return 0;
}
