/*
 * startup - a small program for ptleak's start-up cost: 10 allocations,
 * 5 of them leaked from 5 call sites (a 5-record report), no output.
 * "startup strdup" makes the fifth leak through strdup, so that a printed
 * frame is in libc and needs a line from libc's debug information.
 */
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) void *leak_a(void) { return malloc(16); }
static __attribute__((noinline)) void *leak_b(void) { return malloc(32); }
static __attribute__((noinline)) void *leak_c(void) { return calloc(4, 16); }
static __attribute__((noinline)) void *leak_d(void) { return realloc(NULL, 128); }

static __attribute__((noinline)) void *leak_e(int in_libc)
{
	return in_libc ? strdup("in libc") : malloc(8);
}

/* written and overwritten: -O2 would drop allocations whose result is
 * unused, and the leaks must stay unreachable */
static void *volatile sink;

int main(int argc, char **argv)
{
	int i;

	for (i = 0; i < 5; i++) {
		sink = malloc(100 + i);
		free(sink);
	}
	sink = leak_a();
	sink = leak_b();
	sink = leak_c();
	sink = leak_d();
	sink = leak_e(argc > 1 && !strcmp(argv[1], "strdup"));
	sink = NULL;
	return 0;
}
