/*
 * h_daemon: the parent exits right after fork(), as daemon(3) does; the
 * child, untraced, creates the file argv[1] 0.3 s later.  ptleak must
 * release the child before it exits itself (PTRACE_O_EXITKILL would kill
 * a child still traced), and report the parent's leak.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *p = malloc(64); /* @parent_leak */
	FILE *f;

	if (argc < 2)
		return 2;
	memset(p, 1, 64);
	if (fork() > 0)
		_exit(0);
	free(malloc(100));
	usleep(300000);
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fclose(f);
	return 0;
}
