/*
 * h_server: a busy multi-threaded program for attach/detach tests.
 *
 * Four workers allocate, fill, check and free blocks without pause (a
 * corrupted block or a wrong realloc is counted as an error); a leaker
 * calls leak_one() every 2 ms, which loses 128 bytes; a spawner creates
 * and joins short-lived threads all the time.  No handler for SIGUSR1.
 *
 * Commands on stdin, one per line, answered on stdout:
 *   ping      "pong OPS ERRORS"   (OPS: blocks checked so far)
 *   block     a thread calls valloc(BLOCK_SIZE), which this program
 *             defines and which waits inside for "unblock": "blocked"
 *             once it waits; "unblocked ok" when valloc returned
 *   sig       a thread gets SIGUSR2 whose handler waits for "unsig":
 *             "in handler"; "handler ok" when the handler returned
 *   spawn     a thread starts running /bin/true with posix_spawn (a vfork
 *             child in the program's memory) again and again: "spawning"
 *             once the first one exited 0
 *   leak      calls leak_one() here: "leaked"
 *   freeold   frees one of OLD blocks malloc'd at start (before any attach
 *             can have happened): "freed old N" (N left), "no old" when
 *             none is left
 *   open      opens /dev/null and keeps it: "opened FD"
 *   quit      stops everything: "bye ERRORS", exit status 0 if no error
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NWORK 4
#define RING 64
#define BLOCK_SIZE 12345
#define LEAK_SIZE 128
#define OLD 64

extern void *__libc_valloc(size_t n);

static volatile int quit;
static volatile long ops[NWORK];
static volatile long errors;
static int block_pipe[2], sig_pipe[2];
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *fmt, long a, long b)
{
	pthread_mutex_lock(&out_lock);
	printf(fmt, a, b);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static void wait_byte(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

/* The program's own valloc: glibc's, except that a BLOCK_SIZE request
 * waits for "unblock" first (a thread blocked inside an allocator). */
void *valloc(size_t n)
{
	if (n == BLOCK_SIZE) {
		say("blocked\n", 0, 0);
		wait_byte(block_pipe[0]);
	}
	return __libc_valloc(n);
}

static unsigned char pattern(long seed, size_t i)
{
	return (unsigned char)(seed * 31 + i * 7 + 1);
}

static void fill(unsigned char *p, size_t n, long seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pattern(seed, i);
}

static int check(const unsigned char *p, size_t n, long seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pattern(seed, i))
			return -1;
	return 0;
}

static void *worker(void *arg)
{
	long id = (long)(intptr_t)arg, k = 0;
	struct { unsigned char *p; size_t n; long seed; } ring[RING];
	unsigned int seed = (unsigned int)id * 7919u + 1;

	memset(ring, 0, sizeof(ring));
	while (!quit) {
		int i = (int)(k % RING);
		size_t n = 1 + rand_r(&seed) % 300;

		if (ring[i].p) {
			if (check(ring[i].p, ring[i].n, ring[i].seed))
				__sync_fetch_and_add(&errors, 1);
			if (k % 3 == 0) {
				/* realloc keeps the contents */
				unsigned char *q = realloc(ring[i].p, n);

				if (!q || check(q, n < ring[i].n ? n : ring[i].n,
						ring[i].seed))
					__sync_fetch_and_add(&errors, 1);
				free(q);
			} else {
				free(ring[i].p);
			}
			ring[i].p = NULL;
			ops[id]++;
		}
		ring[i].p = k % 5 == 0 ? calloc(1, n) : malloc(n);
		if (!ring[i].p) {
			__sync_fetch_and_add(&errors, 1);
			continue;
		}
		ring[i].n = n;
		ring[i].seed = k;
		fill(ring[i].p, n, k);
		k++;
	}
	for (k = 0; k < RING; k++)
		free(ring[k].p);
	return NULL;
}

static void leak_one(void)
{
	char *volatile p = malloc(LEAK_SIZE); /* @leak */

	memset(p, 0x5a, LEAK_SIZE);
	p = NULL;	/* no stale copy in this dead frame */
}

static void *leaker(void *arg)
{
	while (!quit) {
		leak_one();
		usleep(2000);
	}
	return NULL;
}

static void *short_lived(void *arg)
{
	free(malloc(64));
	return NULL;
}

static void *spawner(void *arg)
{
	while (!quit) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_lived, NULL)) {
			__sync_fetch_and_add(&errors, 1);
			continue;
		}
		pthread_join(t, NULL);
	}
	return NULL;
}

extern char **environ;

static void *process_spawner(void *arg)
{
	char *argv[] = { "true", NULL };
	int said = 0;

	while (!quit) {
		pid_t pid;
		int st;

		if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) ||
		    waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			__sync_fetch_and_add(&errors, 1);
			continue;
		}
		if (!said++)
			say("spawning\n", 0, 0);
	}
	return NULL;
}

static void *blocker(void *arg)
{
	void *p = valloc(BLOCK_SIZE);

	if (!p || ((uintptr_t)p & 4095)) {
		__sync_fetch_and_add(&errors, 1);
		say("unblocked bad\n", 0, 0);
	} else {
		memset(p, 1, BLOCK_SIZE);
		free(p);
		say("unblocked ok\n", 0, 0);
	}
	return NULL;
}

static void on_usr2(int sig)
{
	/* printf is not async-signal-safe; the main thread is parked in
	 * read() meanwhile, and say() takes the lock */
	say("in handler\n", 0, 0);
	wait_byte(sig_pipe[0]);
	free(malloc(32));
	say("handler ok\n", 0, 0);
}

static void *sig_target(void *arg)
{
	sigset_t none;

	sigemptyset(&none);
	while (!quit)
		sigsuspend(&none);
	return NULL;
}

int main(void)
{
	pthread_t work[NWORK], leak, spawn, blk, sigt, pspawn;
	char line[64];
	int nblk = 0, npspawn = 0;
	void *old[OLD];
	long i, nold = 0;
	struct sigaction sa;

	if (pipe(block_pipe) || pipe(sig_pipe))
		return 2;
	for (i = 0; i < OLD; i++)
		if (!(old[i] = malloc(24)))
			return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	for (i = 0; i < NWORK; i++)
		pthread_create(&work[i], NULL, worker, (void *)(intptr_t)i);
	pthread_create(&leak, NULL, leaker, NULL);
	pthread_create(&spawn, NULL, spawner, NULL);
	pthread_create(&sigt, NULL, sig_target, NULL);

	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "ping\n")) {
			long total = 0;

			for (i = 0; i < NWORK; i++)
				total += ops[i];
			say("pong %ld %ld\n", total, errors);
		} else if (!strcmp(line, "block\n")) {
			if (nblk)
				pthread_join(blk, NULL);
			pthread_create(&blk, NULL, blocker, NULL);
			nblk = 1;
		} else if (!strcmp(line, "unblock\n")) {
			if (write(block_pipe[1], "u", 1) != 1)
				errors++;
		} else if (!strcmp(line, "sig\n")) {
			pthread_kill(sigt, SIGUSR2);
		} else if (!strcmp(line, "unsig\n")) {
			if (write(sig_pipe[1], "u", 1) != 1)
				errors++;
		} else if (!strcmp(line, "freeold\n")) {
			if (nold < OLD) {
				free(old[nold++]);
				say("freed old %ld\n", OLD - nold, 0);
			} else {
				say("no old\n", 0, 0);
			}
		} else if (!strcmp(line, "leak\n")) {
			leak_one();
			say("leaked\n", 0, 0);
		} else if (!strcmp(line, "open\n")) {
			int fd = open("/dev/null", O_RDONLY); /* @open */

			say("opened %ld\n", fd, 0);
		} else if (!strcmp(line, "spawn\n")) {
			if (!npspawn++)
				pthread_create(&pspawn, NULL, process_spawner, NULL);
		} else if (!strcmp(line, "quit\n")) {
			break;
		}
	}
	while (nold < OLD)
		free(old[nold++]);
	quit = 1;
	pthread_kill(sigt, SIGUSR2);
	if (write(sig_pipe[1], "q", 1) != 1)
		errors++;
	for (i = 0; i < NWORK; i++)
		pthread_join(work[i], NULL);
	pthread_join(leak, NULL);
	pthread_join(spawn, NULL);
	pthread_join(sigt, NULL);
	if (nblk)
		pthread_join(blk, NULL);
	if (npspawn)
		pthread_join(pspawn, NULL);
	say("bye %ld\n", errors, 0);
	return errors ? 1 : 0;
}
