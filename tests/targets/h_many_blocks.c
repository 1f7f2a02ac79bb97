/*
 * h_many_blocks N [wait]: N live blocks of 32..80 bytes (a fixed
 * pseudo-random sequence of sizes), for ptleak's own memory per live
 * block (cases_memory.py).  Their addresses are kept in one array (a
 * block, held by a global), except: block i with i % 16 == 0 is dropped
 * and nothing points to it (definitely lost); i % 16 == 1 is dropped,
 * pointed to by block i - 1 only (indirectly lost).  With N a multiple
 * of 16: N/16 definitely lost, N/16 indirectly lost, 7N/8 + 1 still
 * reachable (the array too).  "wait": prints "ready", then reads a line
 * before it exits (ptleak -p meanwhile).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void **volatile h_many_kept;	/* the root */

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;
	uint64_t x = 88172645463325252ull;
	void **kept = malloc((size_t)(n > 0 ? n : 1) * sizeof(*kept));
	char line[16];

	if (!kept || n < 2)
		return 1;
	for (i = 0; i < n; i++) {
		size_t size;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size = 32 + (size_t)(x % 49);
		kept[i] = malloc(size);
		if (!kept[i])
			return 1;
		memset(kept[i], 0, size);
		if (i % 16 == 1) {
			*(void **)kept[i - 1] = kept[i];
			kept[i - 1] = kept[i] = NULL;
		}
	}
	if (n % 16 == 1)
		kept[n - 1] = NULL;
	h_many_kept = kept;
	if (argc > 2 && !strcmp(argv[2], "wait")) {
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 2;
	}
	return 0;
}
