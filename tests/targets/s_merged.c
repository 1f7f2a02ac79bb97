/*
 * s_merged - the program's own anonymous mapping merged by the kernel with
 * a glibc mmapped chunk (CPython's arenas next to a large malloc block):
 * the only pointer to a 100-byte block is in the program's own mapping,
 * which must be a root though the merged mapping holds a heap block.
 * valgrind: still reachable.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define OWN (64 * 1024)

static void **own;

int main(void)
{
	char *big = malloc(300000); /* @merged_big */
	void **p;

	memset(big, 1, 300000);
	/* right below the chunk's mapping, where the kernel merges the two
	 * (a hint: valgrind's malloc puts the block elsewhere) */
	p = mmap((char *)((uintptr_t)(big - 16) & ~4095ul) - OWN, OWN,
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	p[100] = malloc(100); /* @merged_small */
	memset(p[100], 2, 100);
	/* remember the mapping only as a number nobody reads as a pointer */
	own = (void **)((uintptr_t)p ^ 0x5a5a5a5a00000000ull);
	p = NULL;
	printf("s_merged: %d\n", big[0]); /* @stdout_buf */
	big = NULL;
	return 0;
}
