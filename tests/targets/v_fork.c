/*
 * v_fork - forks a child that loses 55 bytes and _exits; the parent waits
 * for it and loses 33.  Nothing is allocated before the fork, so the
 * child's heap is its own under valgrind too (which follows every fork
 * and reports the child in the same log).  Dead stack frames are scrubbed
 * before the end: no stale pointer keeps a lost block.  No stdio.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void lose(size_t n)
{
	volatile char *p = malloc(n);	/* @fork_lose */

	p[0] = 1;
}

__attribute__((noinline)) static void scrub(void)
{
	volatile char junk[8192];

	memset((char *)junk, 0, sizeof(junk));
}

int main(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		lose(55);	/* @fork_child */
		scrub();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	lose(33);	/* @fork_parent */
	scrub();
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
