/*
 * scan_heap N SIZE: N blocks of SIZE bytes (default 10^6 x 1 KiB = 1 GiB).
 * Even blocks form a list held by a global (still reachable, scanned);
 * odd blocks hold a pointer to the next odd one and are dropped (one
 * definitely lost head, the rest indirectly lost).  ptleak's scan at exit
 * reads all of it: bench/run prints its time and rate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void **kept;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 1024;
	void **prev_even = NULL, **prev_odd = NULL;
	long i;

	for (i = 0; i < n; i++) {
		void **b = malloc(size);

		if (!b)
			return 1;
		memset(b, 0, size);
		if (i % 2 == 0) {
			b[0] = prev_even;
			prev_even = b;
		} else {
			b[0] = prev_odd;
			prev_odd = b;
		}
	}
	kept = prev_even;
	prev_odd = NULL;
	printf("%ld blocks\n", n);
	return 0;
}
