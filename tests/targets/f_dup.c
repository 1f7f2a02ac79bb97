/*
 * f_dup: dup, dup2 onto an open descriptor, fcntl F_DUPFD.  No heap
 * allocation at all, so --error-exitcode sees descriptors only.
 *   fd 3 = open /dev/null, fd 4 = open /dev/zero
 *   dup2(3, 4): fd 4 now /dev/null, made by dup2 (its /dev/zero closed)
 *   dup(4) = fd 5 (/dev/null), then close(3)
 *   fcntl(5, F_DUPFD, 10) = fd 10, then close(5)
 *   dup2(4, 4) changes nothing
 * Left: 4 (dup2), 10 (fcntl).
 */
#include <fcntl.h>
#include <unistd.h>

int main(void)
{
	int a, b, c;

	a = open("/dev/null", O_RDONLY);
	b = open("/dev/zero", O_RDONLY);
	dup2(a, b); /* @dup2 */
	c = dup(b); /* @dup */
	close(a);
	fcntl(c, F_DUPFD, 10); /* @fcntl */
	close(c);
	dup2(b, b);
	return 0;
}
