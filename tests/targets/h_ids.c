/*
 * h_ids - prints its real and effective user and group ids:
 *     "uid R euid E gid G egid F"
 * (a set-user-ID copy shows what privilege it runs with).
 */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("uid %d euid %d gid %d egid %d\n", (int)getuid(), (int)geteuid(),
	       (int)getgid(), (int)getegid());
	return 0;
}
