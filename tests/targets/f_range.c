/*
 * f_range: close_range and closefrom.  fds 3..12 open /dev/null;
 * close_range(4, 6, 0) closes 4, 5, 6; close_range(7, 8,
 * CLOSE_RANGE_CLOEXEC) only marks 7 and 8; close_range(9, 3, 0) fails
 * (EINVAL) and closes nothing; closefrom(10) closes 10, 11, 12.
 * Left: 3, 7, 8, 9.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <linux/close_range.h>

int main(void)
{
	int i;

	for (i = 0; i < 10; i++)
		open("/dev/null", O_RDONLY); /* @open */
	close_range(4, 6, 0);
	close_range(7, 8, CLOSE_RANGE_CLOEXEC);
	close_range(9, 3, 0);
	closefrom(10);
	return 0;
}
