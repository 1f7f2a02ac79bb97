/*
 * r_dlib.so - a library dlopen'd by r_procs: its constructor allocates
 * 64 bytes that its destructor frees; r_dlib_work() does 50 malloc(10) +
 * free pairs and returns a block of 77 bytes, which the caller keeps.
 */
#include <stdlib.h>

static char *ctor_block;

__attribute__((constructor)) static void r_dlib_init(void)
{
	ctor_block = malloc(64);	/* @dlib_ctor */
}

__attribute__((destructor)) static void r_dlib_fini(void)
{
	free(ctor_block);
}

void *r_dlib_work(void)
{
	int i;

	for (i = 0; i < 50; i++) {
		char *p = malloc(10);	/* @dlib_loop */
		p[0] = 1;
		free(p);
	}
	return malloc(77);	/* @dlib_keep */
}
