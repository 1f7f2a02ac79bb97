/*
 * g_growth: memory that grows while referenced, beside memory that does
 * not (growth.h, SPEC "Growth").
 *
 *   g_growth SECONDS THREADS MODE RATEFILE
 *
 * THREADS workers (0: the main thread alone) each, every 10 ms for
 * SECONDS:
 *   - append a 640-byte entry to their list, never trimmed (grow_list);
 *     MODE "stop": only during the first 2 s;
 *   - allocate 100 short-lived blocks and free them (churn);
 *   - replace one block of a pool of 500 (pool_replace).
 * MODE "progress": as "grow", and every round the first worker prints
 * "at NS BYTES" (CLOCK_MONOTONIC, bytes appended so far by every worker),
 * for a test that attaches in the middle.
 * The lists stay referenced to the end (still reachable).  The program's
 * own rate of growth, the bytes appended over the time between the first
 * and the last append (of all workers together), and the bytes appended
 * go to RATEFILE ("RATE BYTES", then the time of every append, ns of
 * CLOCK_MONOTONIC, one a line; "-": nowhere), so that stdout is the same
 * under ptleak and without.
 * "ready" is printed once every worker has started.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ENTRY 640
#define POOL 500
#define CHURN 100
#define MAXW 16

struct entry {
	struct entry *next;
	char data[ENTRY - sizeof(struct entry *)];
};

static struct entry *lists[MAXW + 1];
static double seconds;
static int stop_mode, progress;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t first_ns, last_ns, appended;
/* every append's time, for RATEFILE */
#define TIMES_MAX 100000
static uint64_t times[TIMES_MAX];
static unsigned ntimes;

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void grow_list(int w)
{
	struct entry *e = malloc(sizeof(*e));	/* @list */
	uint64_t t = now();

	memset(e->data, w, sizeof(e->data));
	e->next = lists[w];
	lists[w] = e;
	pthread_mutex_lock(&lock);
	if (!first_ns)
		first_ns = t;
	last_ns = t;
	appended += sizeof(*e);
	if (ntimes < TIMES_MAX)
		times[ntimes++] = t;
	pthread_mutex_unlock(&lock);
}

static void churn(void)
{
	void *p[CHURN];
	int i;

	for (i = 0; i < CHURN; i++)
		p[i] = malloc(32 + i);	/* @churn */
	for (i = 0; i < CHURN; i++)
		free(p[i]);
}

static void pool_replace(void **pool, int k)
{
	free(pool[k]);
	pool[k] = malloc(96);	/* @pool */
}

static void *work(void *arg)
{
	int w = (int)(intptr_t)arg, k = 0;
	void **pool = malloc(POOL * sizeof(*pool));
	uint64_t start = now(), t;
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	for (k = 0; k < POOL; k++)
		pool[k] = malloc(96);	/* @pool_init */
	k = 0;
	while ((t = now()) - start < (uint64_t)(seconds * 1e9)) {
		if (!stop_mode || t - start < 2000000000ull)
			grow_list(w);
		churn();
		pool_replace(pool, k);
		k = (k + 1) % POOL;
		if (progress && (w == 0 || w == MAXW)) {
			pthread_mutex_lock(&lock);
			printf("at %llu %llu\n", (unsigned long long)now(),
			       (unsigned long long)appended);
			pthread_mutex_unlock(&lock);
			fflush(stdout);
		}
		nanosleep(&tick, NULL);
	}
	for (k = 0; k < POOL; k++)
		free(pool[k]);
	free(pool);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAXW];
	int n, i;
	FILE *f;

	if (argc != 5)
		return 2;
	seconds = atof(argv[1]);
	n = atoi(argv[2]);
	stop_mode = !strcmp(argv[3], "stop");
	progress = !strcmp(argv[3], "progress");
	if (n < 0 || n > MAXW)
		return 2;
	printf("ready\n");
	fflush(stdout);
	if (!n) {
		work((void *)(intptr_t)MAXW);
	} else {
		for (i = 0; i < n; i++)
			pthread_create(&th[i], NULL, work, (void *)(intptr_t)i);
		for (i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	}
	if (strcmp(argv[4], "-")) {
		f = fopen(argv[4], "w");
		if (!f)
			return 3;
		fprintf(f, "%.1f %llu\n", last_ns > first_ns ?
			(double)appended / ((double)(last_ns - first_ns) / 1e9) : 0.0,
			(unsigned long long)appended);
		for (i = 0; i < (int)ntimes; i++)
			fprintf(f, "%llu\n", (unsigned long long)times[i]);
		fclose(f);
	}
	printf("done\n");
	return 0;
}
