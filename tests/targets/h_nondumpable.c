/*
 * h_nondumpable - makes itself non-dumpable (prctl(PR_SET_DUMPABLE, 0))
 * first thing, as a setuid program is: a tracer without CAP_SYS_PTRACE
 * can no longer read its memory.  Then it leaks 100 bytes in 10 calls;
 * with an argument ("idle") it makes no call at all, and exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

int main(int argc, char **argv)
{
	void *volatile keep;
	int i;

	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) { /* @nodump */
		perror("prctl");
		return 2;
	}
	if (argc > 1)
		return 0;	/* no allocator call after the prctl */
	for (i = 0; i < 10; i++)
		keep = malloc(10); /* @leak10 */
	printf("h_nondumpable: done\n");
	return 0;
}
