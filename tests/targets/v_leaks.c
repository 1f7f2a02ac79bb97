/*
 * v_leaks - one block of each of valgrind's leak kinds, and churn (blocks
 * allocated and freed), for the valgrind drop-in tests (cases_vgcompat.py):
 *   definitely lost  100 bytes (lose), 32 + 32 indirect (make_list)
 *   indirectly lost  32 bytes (make_list's second node)
 *   possibly lost    50 bytes (only a pointer into it is kept)
 *   still reachable  64 bytes (calloc, kept in a global)
 *   freed            10 x 100 bytes (churn)
 * and one descriptor left open.  No stdio: no buffer of libc's in use.
 */
#include <fcntl.h>
#include <stdlib.h>

struct node {
	struct node *next;
	char pad[24];
};

static void *keep_reach;
static char *keep_inner;

static void make_list(void)
{
	struct node *a = malloc(sizeof(*a));	/* @list_head */

	a->next = malloc(sizeof(*a));	/* @list_next */
	a->next->next = NULL;
}

static void *lose(size_t n)
{
	return malloc(n);	/* @lose */
}

static void churn(void)
{
	int i;

	for (i = 0; i < 10; i++)
		free(malloc(100));	/* @churn */
}

int main(void)
{
	make_list();	/* @call_list */
	lose(100);	/* @call_lose */
	keep_reach = calloc(1, 64);	/* @reach */
	keep_inner = (char *)malloc(50) + 10;	/* @inner */
	churn();	/* @call_churn */
	open("/dev/null", O_RDONLY);	/* @fd */
	return 0;
}
