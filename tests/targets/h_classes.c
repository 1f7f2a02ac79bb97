/*
 * h_classes: one block or structure per leak class, to compare ptleak's
 * classification with valgrind memcheck's.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
	struct node *next;
	char pad[24];
};

static void *held_by_global;		/* still reachable */
static __thread void *held_by_tls;	/* still reachable (main's TLS) */
static char *interior;			/* possibly lost: points inside */
static void **chain;			/* still reachable, and what it holds */

static void lose_list(void)
{
	struct node *head = NULL;
	int i;

	for (i = 0; i < 3; i++) {
		struct node *n = malloc(sizeof(*n)); /* @list_node */

		memset(n->pad, i, sizeof(n->pad));
		n->next = head;
		head = n;
	}
}

static void scrub_stack(void)
{
	volatile char buf[8192];
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = 0;
}

int main(void)
{
	lose_list(); /* @call_list */
	held_by_global = malloc(100); /* @global */
	held_by_tls = malloc(200); /* @tls */
	interior = (char *)malloc(300) + 16; /* @interior */
	chain = malloc(2 * sizeof(void *)); /* @chain */
	chain[0] = malloc(50); /* @chained */
	chain[1] = NULL;
	scrub_stack();
	_exit(0);
}
