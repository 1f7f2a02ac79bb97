/*
 * f_exec: descriptors across an exec of itself.  First image: fd 3
 * /dev/null with O_CLOEXEC, fd 4 /dev/zero without, fd 5 a FILE opened
 * "re" (close-on-exec), fd 6 a pipe end marked FD_CLOEXEC with fcntl
 * (7, its other end, closed).  exec: 3, 5 and 6 close; 4 survives.  The
 * new image ("again") opens /dev/urandom: fd 3.
 * Report at exit: 3 (open, stack in the new image), 4 (open, before an
 * exec: no stack).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int p[2];

	if (argc > 1 && !strcmp(argv[1], "again")) {
		open("/dev/urandom", O_RDONLY); /* @after_exec */
		return 0;
	}
	open("/dev/null", O_RDONLY | O_CLOEXEC);
	open("/dev/zero", O_RDONLY); /* @survivor */
	fopen("/etc/hostname", "re");
	if (pipe(p))
		return 1;
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	close(p[1]);
	execl("/proc/self/exe", argv[0], "again", (char *)NULL);
	return 1;
}
