/*
 * h_report_signal: leaks 100 bytes, prints "ready", then waits (up to 20 s)
 * for the file argv[1] to exist, leaks 50 bytes more and exits.  The test
 * sends SIGUSR1 to ptleak in between: a report of the 100 bytes is made
 * while the target runs, and the final report at exit has both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep(size_t n)
{
	void *p = malloc(n); /* @keep */

	memset(p, 7, n);
	return p;
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2)
		return 2;
	keep(100); /* @first */
	printf("ready\n");
	fflush(stdout);
	for (i = 0; i < 2000 && access(argv[1], F_OK); i++)
		usleep(10000);
	keep(50); /* @second */
	return 0;
}
