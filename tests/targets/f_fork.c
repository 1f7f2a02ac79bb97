/*
 * f_fork: children do not touch the parent's table.  The parent opens
 * /dev/null (fd 3) and /dev/zero (fd 4); a forked child closes both,
 * opens and leaks others and _exits; a posix_spawn child closes fd 3
 * and dup2s fd 4 onto 0 (file actions run in the child); a vfork child
 * closes 3 and execs /bin/true.  Then the parent closes 4 and opens
 * /dev/full (fd 4 again).  Left in the parent: 3 (open), 4 (open,
 * /dev/full).
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
	int a, b, status;
	pid_t pid;
	posix_spawn_file_actions_t fa;
	char *argv[] = { "true", NULL };

	a = open("/dev/null", O_RDONLY); /* @parent_null */
	b = open("/dev/zero", O_RDONLY);
	pid = fork();
	if (pid == 0) {
		close(a);
		close(b);
		open("/dev/zero", O_RDONLY);
		open("/dev/zero", O_RDONLY);
		_exit(0);
	}
	waitpid(pid, &status, 0);

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclose(&fa, a);
	posix_spawn_file_actions_adddup2(&fa, b, 0);
	if (!posix_spawn(&pid, "/bin/true", &fa, NULL, argv, environ))
		waitpid(pid, &status, 0);
	posix_spawn_file_actions_destroy(&fa);

	pid = vfork();
	if (pid == 0) {
		close(a);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);

	close(b);
	open("/dev/full", O_RDONLY); /* @parent_full */
	printf("parent done\n");
	return 0;
}
