/*
 * fd_churn - descriptor calls in bulk, for the recorder's descriptor
 * hooks.
 *
 *   fd_churn loop N    N rounds of open/close, fopen/fclose, pipe/close
 *                      and opendir/closedir, then one descriptor of each
 *                      kept (leaked) at the marked lines; exits 0
 *   fd_churn serve T   T threads make open/close and malloc/free pairs
 *                      without pause; on stdin "count" answers "count N"
 *                      (rounds so far, growing), "quit" exits 0
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int round_trip(void)
{
	int fd = open("/dev/null", O_RDONLY);
	FILE *f = fopen("/dev/null", "r");
	DIR *d = opendir("/");
	int p[2];

	if (fd < 0 || !f || !d || pipe(p))
		return -1;
	close(fd);
	fclose(f);
	closedir(d);
	close(p[0]);
	close(p[1]);
	return 0;
}

static void keep(void)
{
	int p[2];

	if (open("/dev/null", O_RDONLY) < 0)	/* @keep_open */
		exit(1);
	if (!fopen("/dev/null", "r"))		/* @keep_fopen */
		exit(1);
	if (!opendir("/"))			/* @keep_opendir */
		exit(1);
	if (pipe(p))				/* @keep_pipe */
		exit(1);
}

static unsigned long rounds[64];

static void *churn(void *arg)
{
	unsigned long *n = arg;

	for (;;) {
		int fd = open("/dev/null", O_RDONLY);
		char *volatile q = malloc(64);

		if (fd < 0 || !q)
			exit(3);
		close(fd);
		free(q);
		__atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int serve(int nthreads)
{
	pthread_t t;
	char line[64];
	int i;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (i = 0; i < nthreads && i < 64; i++)
		if (pthread_create(&t, NULL, churn, &rounds[i]))
			return 1;
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "count\n")) {
			unsigned long sum = 0;

			for (i = 0; i < 64; i++)
				sum += __atomic_load_n(&rounds[i], __ATOMIC_RELAXED);
			printf("count %lu\n", sum);
		} else if (!strcmp(line, "quit\n")) {
			exit(0);
		}
	}
	return 2;
}

int main(int argc, char **argv)
{
	long i, n;

	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(atoi(argv[2]));
	if (argc != 3 || strcmp(argv[1], "loop"))
		return 2;
	n = atol(argv[2]);
	for (i = 0; i < n; i++)
		if (round_trip())
			return 1;
	keep();		/* @call_keep */
	return 0;
}
