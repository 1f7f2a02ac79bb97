/*
 * sc_libb.so - dlopen'ed by h_stackcache after sc_liba.so was closed:
 * sc_lib_alloc allocates one frame deeper.
 */
#include <stdlib.h>

static __attribute__((noinline)) void *inner(size_t n)
{
	volatile char pad[96];

	pad[0] = 1;
	return malloc(n + (size_t)pad[0] - 1); /* @scb_inner */
}

void *sc_lib_alloc(size_t n)
{
	return inner(n); /* @scb_alloc */
}
