/* Loses 33 bytes (in lose) and 100 (in main), keeps only an interior pointer to 50 bytes
 * (possibly lost) and a pointer to 64 bytes (still reachable). */
#include <stdlib.h>

static void *reach;
static char *inner;

static void *lose(size_t n)
{
	return malloc(n);
}

int main(void)
{
	lose(33);
	malloc(100);
	inner = (char *)malloc(50) + 8;
	reach = malloc(64);
	return 0;
}
