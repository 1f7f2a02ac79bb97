/*
 * h_clone_vm: clone(CLONE_VM | SIGCHLD) is reported to the tracer as a
 * fork, yet the child shares the target's memory: removing "its"
 * breakpoints would remove the target's.  The malloc after it must still
 * be seen.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char stack[65536] __attribute__((aligned(16)));

static int child(void *arg)
{
	free(malloc(10));
	return arg != NULL;
}

int main(void)
{
	void *a = malloc(1001); /* @before */
	pid_t pid = clone(child, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);
	void *b;
	int st = 0;

	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 1;
	b = malloc(2002); /* @after */
	printf("%d %d\n", a != NULL, b != NULL); /* @printf */
	return 0;
}
