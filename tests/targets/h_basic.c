/*
 * h_basic - leaks from several functions with distinct sizes, plus plenty of
 * properly freed work.  Uses write(2) rather than stdio so that no
 * libc-internal allocation (the stdout buffer) appears in the report: every
 * record's stack is the allocator plus this file's functions only, which
 * lets the integration test check the text report line for line.
 *
 * Lines whose numbers the tests check carry a marker comment; run.py finds
 * them by grepping for the marker.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
	struct node *next;
	int value;
};

/* 1000 bytes, malloc, definitely lost. */
static void leak_big(void)
{
	char *p = malloc(1000); /* @big */
	memset(p, 'b', 1000);
}

/* 30 * 10 = 300 bytes, calloc. */
static void leak_table(void)
{
	int *t = calloc(30, 10); /* @table */
	t[0] = 1;
}

/* A buffer grown with realloc 50 -> 100 -> 150 -> 200: four reallocs, three
 * frees, and the last 200-byte block leaks from the realloc line. */
static char *grow_buffer(void)
{
	char *buf = NULL;
	size_t n;

	for (n = 50; n <= 200; n += 50) {
		buf = realloc(buf, n); /* @grow */
		memset(buf, 'g', n);
	}
	return buf;
}

/* Called twice from the same line of main: one record of 2 x 64 bytes. */
static void leak_twice(void)
{
	void *p = malloc(64); /* @twice */
	memset(p, 't', 64);
}

/* A deeper stack: main -> level1 -> level2 -> level3 -> malloc(24). */
static void level3(void)
{
	void *p = malloc(24); /* @level3 */
	memset(p, '3', 24);
}

static void level2(void)
{
	level3(); /* @level2 */
}

static void level1(void)
{
	level2(); /* @level1 */
}

/* Freed work: 1000 malloc/free pairs of sizes 1..128 and a 100-node list. */
static unsigned long do_work(void)
{
	struct node *head = NULL, *n;
	unsigned long sum = 0;
	int i;

	for (i = 0; i < 1000; i++) {
		unsigned char *p = malloc(i % 128 + 1);
		p[0] = (unsigned char)i;
		sum += p[0];
		free(p);
	}
	for (i = 0; i < 100; i++) {
		n = malloc(sizeof(*n));
		n->value = i;
		n->next = head;
		head = n;
	}
	while (head) {
		n = head->next;
		sum += head->value;
		free(head);
		head = n;
	}
	return sum;
}

int main(void)
{
	static const char msg[] = "h_basic: done\n";
	char *buf;
	int i;

	if (do_work() != 124716 + 4950)
		abort();
	leak_big(); /* @call_big */
	leak_table(); /* @call_table */
	buf = grow_buffer(); /* @call_grow */
	if (buf[199] != 'g')
		abort();
	buf = NULL;
	for (i = 0; i < 2; i++)
		leak_twice(); /* @call_twice */
	level1(); /* @call_level1 */
	free(NULL);
	if (write(1, msg, sizeof(msg) - 1) != (ssize_t)(sizeof(msg) - 1))
		return 2;
	return 0;
}
