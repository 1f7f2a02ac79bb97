/*
 * r_snapshared: a MAP_SHARED | MAP_ANONYMOUS region (1 MiB) beside the
 * heap, for live reports from snapshots (cases_snapshot.py): a clone does
 * not copy a shared mapping, so ptleak takes the snapshot only if the
 * region holds no pointer into a live block.
 *
 * usage: r_snapshared clean|ptr
 * At start the region is filled with words that point nowhere (0x5a
 * bytes, small counters), then "ready" on stdout; commands on stdin, one
 * per line:
 *   make   a 100-byte block dropped (definitely lost: @drop) and a
 *          200-byte one (@kept) kept: in a global (clean) or only in the
 *          region's first word (ptr: reachable only through it); "made"
 *   quit   exit 0
 * No stdio: every block is the program's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define REGION (1u << 20)

static uint64_t *region;
static void *kept;
static int ptr_mode;

/* Not inlined: no copy of the pointer stays in main's frame. */
__attribute__((noinline)) static void drop(size_t n)
{
	volatile char *p = malloc(n);	/* @drop */

	p[0] = 1;
}

/* No stale copy of a pointer below the stack pointer. */
__attribute__((noinline)) static void scrub(void)
{
	volatile char pad[2048];

	memset((char *)pad, 0, sizeof(pad));
}

__attribute__((noinline)) static void make(void)
{
	drop(100);
	if (ptr_mode)
		region[0] = (uint64_t)(uintptr_t)malloc(200);	/* @kept */
	else
		kept = malloc(200);	/* @kept */
	scrub();	/* (its memset leaves no copy in rax) */
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(2);
}

int main(int argc, char **argv)
{
	char line[64];
	size_t i, n = 0;

	if (argc != 2 || (strcmp(argv[1], "clean") && strcmp(argv[1], "ptr")))
		return 2;
	ptr_mode = !strcmp(argv[1], "ptr");
	region = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return 2;
	memset(region, 0x5a, REGION);
	for (i = 0; i < REGION / 8; i += 64)
		region[i] = i;
	say("ready\n");
	for (;;) {
		ssize_t got = read(0, line + n, 1);

		if (got <= 0)
			return 2;
		if (line[n] != '\n' && n + 1 < sizeof(line)) {
			n++;
			continue;
		}
		line[n] = 0;
		n = 0;
		if (!strcmp(line, "make")) {
			make();
			say("made\n");
		} else if (!strcmp(line, "quit")) {
			return 0;
		}
	}
}
