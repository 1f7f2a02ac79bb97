/*
 * v_clean - frees every block it allocates (malloc, calloc, realloc, a
 * list): valgrind's "All heap blocks were freed -- no leaks are
 * possible", for the valgrind text's comparison (cases_vgtext.py).  No
 * stdio: no buffer of libc's in use.
 */
#include <stdlib.h>

struct node {
	struct node *next;
	char pad[40];
};

int main(void)
{
	struct node *head = NULL, *n;
	char *p;
	int i;

	for (i = 0; i < 20; i++) {
		n = malloc(sizeof(*n));	/* @clean_node */
		n->next = head;
		head = n;
	}
	p = calloc(3, 100);	/* @clean_calloc */
	p = realloc(p, 1000);	/* @clean_realloc */
	free(p);
	while (head) {
		n = head->next;
		free(head);
		head = n;
	}
	return 0;
}
