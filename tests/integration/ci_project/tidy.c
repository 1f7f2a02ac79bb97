/* Frees what it allocates. */
#include <stdlib.h>

int main(void)
{
	char *p = malloc(100);

	p = realloc(p, 300);
	free(p);
	return 0;
}
