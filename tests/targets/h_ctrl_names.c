/*
 * h_ctrl_names - names with terminal control characters, as a hostile or
 * careless program may have: a function whose symbol is "leak\x1b[2Jesc"
 * (an asm label), a source file name "esc\x1b[31m.c" (#line) and an open
 * file whose name (argv[1]) holds an escape too.  Leaks 42 bytes and the
 * descriptor.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

void *leak_esc(void) __asm__("\"leak\x1b[2Jesc\"");

int main(int argc, char **argv)
{
	if (argc < 2 || open(argv[1], O_RDONLY | O_CREAT, 0600) < 0) { /* @open */
		perror("open");
		return 2;
	}
	leak_esc(); /* @call */
	return 0;
}

#line 1000 "esc\x1b[31m.c" /* @hash_line */
void *leak_esc(void)
{
	return malloc(42); /* @esc_malloc */
}
