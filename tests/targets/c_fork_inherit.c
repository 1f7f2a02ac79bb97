/*
 * c_fork_inherit: a child inherits its parent's heap (-f).  The parent
 * keeps a 222-byte block, drops a 333-byte one, keeps a 555-byte one and
 * forks; the child frees the 555-byte block, drops 44 bytes and exits;
 * the parent waits for it and frees the 222-byte block.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep, *kept2;

__attribute__((noinline)) static void drop(size_t n)
{
	volatile char *p = malloc(n);	/* @drop */

	p[0] = 1;
}

__attribute__((noinline)) static void scrub(void)
{
	volatile char pad[2048];

	memset((char *)pad, 0, sizeof(pad));
}

int main(void)
{
	pid_t pid;
	int st;

	keep = malloc(222);	/* @keep */
	drop(333);	/* @drop333 */
	kept2 = malloc(555);	/* @keep2 */
	scrub();
	pid = fork();
	if (pid == 0) {
		free(kept2);
		kept2 = NULL;
		drop(44);
		scrub();
		exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 2;
	free(keep);
	keep = NULL;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}
