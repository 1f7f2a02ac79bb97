/*
 * h_exit_deep - leaks, then calls exit(3) from five nested calls deep.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *saved;
static char *volatile saved2;

static void depth5(int n)
{
	char *p = malloc(500); /* @deep_leak */
	memset(p, '5', 500);
	printf("h_exit_deep: exiting at depth %d\n", n);
	exit(3); /* @exit */
}

static void depth4(int n) { depth5(n + 1); } /* @d4 */
static void depth3(int n) { depth4(n + 1); } /* @d3 */
static void depth2(int n) { depth3(n + 1); } /* @d2 */
static void depth1(int n) { depth2(n + 1); } /* @d1 */

int main(void)
{
	int i;

	for (i = 0; i < 20; i++)
		free(malloc(10 * i + 1));
	saved = strdup("kept in a global"); /* @strdup */
	saved2 = malloc(250); /* @main_leak */
	saved2 = NULL;
	printf("h_exit_deep: going 5 calls deep\n"); /* @stdout_buf */
	depth1(1); /* @call_depth1 */
	return 0;
}
