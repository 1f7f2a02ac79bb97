/*
 * r_forkhold - a forked child that lives on while its parent is traced.
 *
 * main keeps malloc(55) and forks.  The child does 1,000 malloc(24) +
 * free pairs, says "child PID" and waits for a line on stdin, then does
 * 1,000 more pairs, checking each block, and _exits 0 (1 if a block was
 * wrong).  The parent waits for it, does 10 malloc(8) + free pairs and
 * exits with the child's status.  Output by write(2) only.
 *
 * The parent's numbers, from the source: 11 allocs, 10 frees, 135 bytes;
 * 55 bytes in 1 block in use; peak 55 + 8.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile kept;

static int pairs(int n)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		unsigned char *p = malloc(24);

		memset(p, i & 0xff, 24);
		bad |= p[23] != (i & 0xff);
		free(p);
	}
	return bad;
}

int main(void)
{
	char buf[64];
	int st, i, n;
	pid_t pid;

	kept = malloc(55);	/* @keep */
	pid = fork();
	if (pid == 0) {
		int bad = pairs(1000);

		n = snprintf(buf, sizeof(buf), "child %d\n", (int)getpid());
		if (write(1, buf, n) != n || read(0, buf, sizeof(buf)) <= 0)
			_exit(2);
		bad |= pairs(1000);
		_exit(bad);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 3;
	for (i = 0; i < 10; i++)
		free(malloc(8));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 4;
}
