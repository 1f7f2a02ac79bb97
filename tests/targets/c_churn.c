/*
 * c_churn [big]: 4 threads allocate and free as fast as they can, each
 * block's size 16k + 8 (its usable size is its size), and count their
 * live blocks and bytes; the census cases attach while they run.  With
 * "big", blocks of 1,512 bytes, and before each of their calls one of
 * 5,000 and one of 1,512 made and freed at once, all past the tcache
 * (the arena's lock, merges with the top chunk): a thread is inside
 * malloc or free nearly all its time.  Its arena holds chunks of 1,520
 * and 5,008 bytes only, so one of 1,520 is never cut from a bigger one
 * with less than a chunk's minimum left: its usable size stays its
 * size.
 *
 * "ready" once they run.  Commands on stdin, one per line:
 *   pause   the threads stop between two calls: "paused BLOCKS BYTES",
 *           every live block of the program counted (the threads' DTVs,
 *           which pthread_create calloc'd, in usable size)
 *   go      they run again: "going"
 *   quit    exit 0
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHREADS 4
#define NSLOTS 512

static void *slots[NTHREADS][NSLOTS];
static size_t sizes[NTHREADS][NSLOTS];
static pthread_t th[NTHREADS];
static volatile int pause_req, quit_req;
static int big;
static int parked;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static char outbuf[256], inbuf[256];

static void *churn(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg, seed = id * 7919 + 1;

	while (!quit_req) {
		unsigned k = (seed = seed * 1103515245 + 12345) >> 8;
		unsigned s = k % NSLOTS;

		if (pause_req) {
			pthread_mutex_lock(&lock);
			parked++;
			pthread_cond_broadcast(&cond);
			while (pause_req && !quit_req)
				pthread_cond_wait(&cond, &lock);
			parked--;
			pthread_mutex_unlock(&lock);
			continue;
		}
		if (big) {
			/* and a block freed at once, as a server's request
			 * buffer: inside the allocator still longer */
			char *t = malloc(5000), *u = malloc(1512);

			t[0] = u[0] = (char)k;
			__asm__ volatile("" : : "r"(t), "r"(u) : "memory");
			free(t);
			free(u);
		}
		if (slots[id][s]) {
			free(slots[id][s]);
			slots[id][s] = NULL;
		} else {
			/* fastbin sizes: never split from a bigger free
			 * chunk, so a block's usable size is its size
			 * (big: one chunk size, header) */
			size_t n = big ? 1512 : 24 + 16 * ((k >> 9) % 7);

			slots[id][s] = malloc(n);
			sizes[id][s] = n;
		}
	}
	return NULL;
}

static void count(void)
{
	unsigned long blocks = 0, bytes = 0;
	unsigned i, s;

	for (i = 0; i < NTHREADS; i++) {
		uint64_t *tcb = (uint64_t *)th[i];

		/* pthread_create's DTV (dtv + 1 is kept in the TCB) */
		blocks++;
		bytes += malloc_usable_size((void *)(uintptr_t)(tcb[1] - 16));
		for (s = 0; s < NSLOTS; s++)
			if (slots[i][s]) {
				blocks++;
				bytes += sizes[i][s];
			}
	}
	printf("paused %lu %lu\n", blocks, bytes);
}

int main(int argc, char **argv)
{
	char line[64];
	unsigned i;

	big = argc > 1 && !strcmp(argv[1], "big");
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	setvbuf(stdin, inbuf, _IOLBF, sizeof(inbuf));
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, churn, (void *)(uintptr_t)i))
			return 2;
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "pause\n")) {
			pthread_mutex_lock(&lock);
			pause_req = 1;
			while (parked < NTHREADS)
				pthread_cond_wait(&cond, &lock);
			pthread_mutex_unlock(&lock);
			count();
		} else if (!strcmp(line, "go\n")) {
			pthread_mutex_lock(&lock);
			pause_req = 0;
			pthread_cond_broadcast(&cond);
			pthread_mutex_unlock(&lock);
			printf("going\n");
		} else if (!strcmp(line, "quit\n")) {
			break;
		}
	}
	pthread_mutex_lock(&lock);
	quit_req = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	return 0;
}
