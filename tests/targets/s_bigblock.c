/*
 * s_bigblock MIB: two blocks of MIB MiB (default 3072), touched on one
 * page each; the first is kept in a global (still reachable), the second
 * dropped (definitely lost).  The scan must not read them into ptleak
 * whole nor fault their untouched pages in.
 */
#include <stdio.h>
#include <stdlib.h>

static char *kept;

int main(int argc, char **argv)
{
	size_t size = (size_t)(argc > 1 ? atol(argv[1]) : 3072) << 20;
	char *lost;

	kept = malloc(size); /* @big_kept */
	lost = malloc(size); /* @big_lost */
	if (!kept || !lost)
		return 1;
	kept[size / 2] = 1;
	lost[size / 2] = 2;
	lost = NULL;
	return kept[0];
}
