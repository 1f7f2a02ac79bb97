/*
 * sc_liba.so - dlopen'ed by h_stackcache, then sc_libb.so at the same
 * place: the same function name, another frame layout.
 */
#include <stdlib.h>

void *sc_lib_alloc(size_t n)
{
	return malloc(n); /* @sca_alloc */
}
