/*
 * static_basic - statically linked (the Makefile links static_* with
 * -static): malloc lives in the executable itself.  A few leaks from
 * marked lines and some freed work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *leak_static(size_t n)
{
	void *p = malloc(n); /* @static_leak */
	memset(p, 'S', n);
	return p;
}

int main(void)
{
	char *buf = NULL;
	int i;

	for (i = 0; i < 100; i++) {
		void *p = malloc(i + 1);
		memset(p, 0, i + 1);
		free(p);
	}
	for (i = 1; i <= 3; i++)
		buf = realloc(buf, 100 * i); /* @static_realloc */
	leak_static(777); /* @call_static_leak */
	buf = calloc(5, 11); /* @static_calloc */
	printf("static_basic: done\n"); /* @stdout_buf */
	return 0;
}
