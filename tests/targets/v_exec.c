/*
 * v_exec - loses 77 bytes, then execs itself with "again", which loses
 * 11: valgrind (--trace-children=yes) reports the image that exits, not
 * the one an exec left (cases_vgtext.py).  Each image writes a line to
 * stderr (which comes after the banner of its image).  No stdio.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *lose(size_t n)
{
	return malloc(n);	/* @exec_lose */
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "again")) {
		if (write(2, "v_exec: again\n", 14) != 14)
			return 2;
		lose(11);	/* @exec_again */
		return 0;
	}
	if (write(2, "v_exec: first\n", 14) != 14)
		return 2;
	lose(77);	/* @exec_first */
	execl(argv[0], argv[0], "again", (char *)NULL);
	return 1;
}
