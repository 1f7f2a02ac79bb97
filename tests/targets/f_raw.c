/*
 * f_raw: a descriptor made by a raw system call (no libc function ptleak
 * traces): reported as opened by "unknown" with its target.  And one
 * opened with open() then closed by a raw close: dropped at the report.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	int fd;

	syscall(SYS_openat, AT_FDCWD, "/dev/zero", O_RDONLY); /* @raw */
	fd = open("/dev/null", O_RDONLY);
	syscall(SYS_close, fd);
	return 0;
}
