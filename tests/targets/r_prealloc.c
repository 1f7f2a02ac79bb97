/*
 * r_prealloc - a small leaky program for allocators other than glibc's
 * (LD_PRELOAD of jemalloc, tcmalloc or mimalloc): every allocator
 * function once, a malloc/free loop, exact leaks.  No stdio (its buffer
 * would come from the preloaded allocator, or not, depending on it):
 * output by write(2).
 *
 * From the source: 1,000 malloc/free pairs of 1..1,000 bytes (500,500);
 * leaked: malloc(100) x 3 (one stack), calloc(10, 20), malloc(10)
 * realloc'd to 300, posix_memalign(64, 512), aligned_alloc(256, 1024)
 * freed, memalign(128, 96) leaked, valloc(4096) freed.
 *   allocs 1,000 + 3 + 1 + 2 + 1 + 1 + 1 + 1 = 1,010
 *   frees  1,000 + 1 (realloc's old block) + 1 + 1 = 1,003
 *   bytes  500,500 + 300 + 200 + 10 + 300 + 512 + 1,024 + 96 + 4,096
 *          = 507,038
 *   in use 300 + 200 + 300 + 512 + 96 = 1,408 bytes in 7 blocks
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile keep[8];

__attribute__((noinline)) static void *leak100(void)
{
	return malloc(100);	/* @leak100 */
}

int main(void)
{
	void *p;
	int i;

	for (i = 1; i <= 1000; i++) {
		char *q = malloc(i);	/* @loop */
		q[0] = 1;
		free(q);
	}
	for (i = 0; i < 3; i++)
		leak100();	/* @call_leak100 */
	p = calloc(10, 20);	/* @calloc */
	p = malloc(10);	/* @malloc10 */
	p = realloc(p, 300);	/* @realloc */
	if (posix_memalign(&p, 64, 512))	/* @posix_memalign */
		return 1;
	p = aligned_alloc(256, 1024);	/* @aligned_alloc */
	free(p);
	p = memalign(128, 96);	/* @memalign */
	p = valloc(4096);	/* @valloc */
	free(p);
	p = NULL;
	free(NULL);
	write(1, "r_prealloc: done\n", 17);
	return 0;
}
