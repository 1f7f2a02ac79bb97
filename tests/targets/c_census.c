/*
 * c_census: a heap built before ptleak attaches (the census cases).
 *
 * At start: a table of NSLOTS slots, each pointing to a 48-byte node; a
 * 100-byte block dropped (a leak before the attach); an mmapped 1 MiB
 * block kept and an mmapped 2 MiB one dropped; ten 24-byte blocks freed
 * (7 into the tcache, 3 into a fastbin); a thread with its own arena
 * that drops a 72-byte block, keeps 200 64-byte blocks and frees 100
 * others.  Then "ready" on stdout, and commands on stdin, one per line:
 *   replace   100 nodes replaced (the new node stored in the table, the
 *             old one freed) and one 40-byte block dropped: "replaced"
 *   quit      exit 0
 * It never uses stdio's heap buffers after start (setvbuf to static
 * buffers) so that its own blocks are all the program's.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSLOTS 1000
#define NKEEP 200

static void **table;
static void *big;
static void *kept[NKEEP];
static int ready_pipe[2], quit_pipe[2];
static char outbuf[256], inbuf[256];
static unsigned next_slot;

/* Not inlined: no copy of the pointer stays in main's frame. */
__attribute__((noinline)) static void drop(size_t n)
{
	volatile char *p = malloc(n);	/* @drop */

	p[0] = 1;
}

/* No stale copy of a dropped pointer below the stack pointer. */
__attribute__((noinline)) static void scrub(void)
{
	volatile char pad[2048];

	memset((char *)pad, 0, sizeof(pad));
}

__attribute__((noinline)) static void replace_nodes(void)
{
	unsigned i;

	for (i = 0; i < 100; i++) {
		unsigned k = next_slot++ % NSLOTS;
		void *n = malloc(48);	/* @replace */

		memset(n, 0, 48);
		free(table[k]);
		table[k] = n;
	}
	drop(40);
	scrub();
}

static void *worker(void *arg)
{
	void *tmp[100];
	char c;
	int i;

	(void)arg;
	drop(72);	/* first: the calls after it leave no copy in registers */
	for (i = 0; i < NKEEP; i++) {
		kept[i] = malloc(64);
		if (i < 100)
			tmp[i] = malloc(64);
	}
	for (i = 0; i < 100; i++)
		free(tmp[i]);
	scrub();
	if (write(ready_pipe[1], "r", 1) != 1)
		return NULL;
	(void)!read(quit_pipe[0], &c, 1);
	return NULL;
}

__attribute__((noinline)) static void build(void)
{
	void *t[10];
	int i;

	table = malloc(NSLOTS * sizeof(*table));
	for (i = 0; i < NSLOTS; i++) {
		table[i] = malloc(48);
		memset(table[i], 0, 48);
	}
	drop(100);
	big = malloc(1 << 20);
	drop(2 << 20);
	for (i = 0; i < 10; i++)
		t[i] = malloc(24);
	for (i = 0; i < 10; i++)
		free(t[i]);
	scrub();
}

int main(void)
{
	pthread_t th;
	char line[64];
	char c;

	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	setvbuf(stdin, inbuf, _IOLBF, sizeof(inbuf));
	build();
	if (pipe(ready_pipe) || pipe(quit_pipe) ||
	    pthread_create(&th, NULL, worker, NULL) ||
	    read(ready_pipe[0], &c, 1) != 1)
		return 2;
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "replace\n")) {
			replace_nodes();
			printf("replaced\n");
		} else if (!strcmp(line, "quit\n")) {
			break;
		}
	}
	if (write(quit_pipe[1], "q", 1) != 1)
		return 2;
	pthread_join(th, NULL);
	return 0;
}
