/*
 * c_heap_cycle MODE: a program whose own heap lists form a cycle before
 * ptleak attaches (the census must end, not walk it for ever).
 *
 * At start: 20 blocks of 100 bytes kept (@keep), ten 24-byte blocks
 * freed (7 into the tcache, 3 into a fastbin), then MODE's corruption:
 *   tcache    the tcache's first 24-byte entry linked to itself (its
 *             count says 7)
 *   fastbin   the 32-byte fastbin's first chunk linked to itself
 * then "ready" on stdout, and commands on stdin (read(2), stdout a
 * static buffer: no heap use by stdio), one per line:
 *   go        a 200-byte block dropped (@drop), one of 300 bytes kept
 *             (@after): "done"
 *   quit      _exit(0) (no exit handlers: nothing touches the broken
 *             list)
 * Nothing asks for 24 bytes again, nor for 1 KiB or more (which would
 * consolidate the fastbins): the program itself never meets the cycle.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *kept[20], *after;
static char outbuf[256];

__attribute__((noinline)) static void drop(size_t n)
{
	volatile char *p = malloc(n);	/* @drop */

	p[0] = 1;
}

static int line(char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len && read(0, buf + n, 1) == 1)
		if (buf[n++] == '\n')
			break;
	buf[n] = '\0';
	return (int)n;
}

int main(int argc, char **argv)
{
	void *t[10];
	char cmd[32];
	uintptr_t e;
	int i;

	if (argc < 2)
		return 2;
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	for (i = 0; i < 20; i++)
		kept[i] = malloc(100);	/* @keep */
	for (i = 0; i < 10; i++)
		t[i] = malloc(24);
	for (i = 0; i < 10; i++)
		free(t[i]);
	/* safe-linked: the word stored is (address >> 12) ^ next */
	if (!strcmp(argv[1], "tcache")) {
		e = (uintptr_t)t[6];		/* the tcache's head */
		*(uintptr_t *)e = (e >> 12) ^ e;
	} else if (!strcmp(argv[1], "fastbin")) {
		e = (uintptr_t)t[9];		/* the fastbin's head */
		*(uintptr_t *)e = (e >> 12) ^ (e - 16);
	} else {
		return 2;
	}
	printf("ready\n");
	while (line(cmd, sizeof(cmd)) > 0) {
		if (!strcmp(cmd, "go\n")) {
			drop(200);
			after = malloc(300);	/* @after */
			printf("done\n");
		} else if (!strcmp(cmd, "quit\n")) {
			_exit(0);
		}
	}
	_exit(0);
}
