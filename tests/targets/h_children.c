/*
 * h_children - the target starts children every way libc offers:
 * system(), posix_spawn(), fork() (the child allocates, frees and leaks,
 * then _exit(0)s) and vfork()+execl().  The parent checks every child's
 * status, prints the results and leaks two known blocks; the child's leak
 * is not the parent's.  Its stdout must be the same with and without
 * ptleak: the parent flushes stdout before each child so that the order of
 * lines is fixed.  Exit status 0 only if every child succeeded.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *describe(int status)
{
	static char buf[64];

	if (status == -1)
		snprintf(buf, sizeof(buf), "failed");
	else if (WIFEXITED(status))
		snprintf(buf, sizeof(buf), "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, sizeof(buf), "status %#x", status);
	return buf;
}

static int wait_for(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* In the forked child: allocator calls that would hit any breakpoint left
 * in its memory, and a leak that belongs to the child alone. */
static int child_work(void)
{
	unsigned long sum = 0;
	char *leak;
	int i;

	for (i = 0; i < 1000; i++) {
		char *p = malloc(i + 1);
		p[i] = 1;
		sum += p[i];
		free(p);
	}
	leak = malloc(999);
	memset(leak, 'c', 999);
	printf("fork child: sum %lu\n", sum);
	fflush(stdout);
	return sum == 1000 ? 0 : 1;
}

int main(void)
{
	char *echo_argv[] = {"echo", "from-posix-spawn", NULL};
	char *leak1, *leak2;
	int status, failures = 0;
	pid_t pid;

	leak1 = malloc(111); /* @parent_leak1 */
	memset(leak1, 'p', 111);
	printf("h_children: start\n"); /* @stdout_buf */
	fflush(stdout);

	status = system("echo from-system");
	printf("system: %s\n", describe(status));
	fflush(stdout);
	failures += status != 0;

	if (posix_spawn(&pid, "/bin/echo", NULL, NULL, echo_argv, environ) != 0)
		status = -1;
	else
		status = wait_for(pid);
	printf("posix_spawn: %s\n", describe(status));
	fflush(stdout);
	failures += status != 0;

	pid = fork();
	if (pid == 0)
		_exit(child_work());
	status = pid < 0 ? -1 : wait_for(pid);
	printf("fork: %s\n", describe(status));
	fflush(stdout);
	failures += status != 0;

	pid = vfork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	status = pid < 0 ? -1 : wait_for(pid);
	printf("vfork: %s\n", describe(status));
	failures += status != 0;

	leak2 = calloc(6, 37); /* @parent_leak2 */
	leak2[0] = 1;
	printf("h_children: %d failures\n", failures);
	leak1 = leak2 = NULL;
	return failures != 0;
}
