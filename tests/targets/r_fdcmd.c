/*
 * r_fdcmd - descriptor and allocator calls on command, for ptleak killed
 * while attached: "go" opens and closes a descriptor (open, fopen), makes
 * a malloc/free pair and answers "done N"; "quit" exits 0.  Between
 * commands it waits in read(), which ptleak does not probe.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char line[64];
	int n = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "go\n")) {
			int fd = open("/dev/null", O_RDONLY);
			FILE *f = fopen("/dev/null", "r");
			char *volatile p = malloc(100);

			if (fd < 0 || !f || !p)
				return 1;
			close(fd);
			fclose(f);
			free(p);
			printf("done %d\n", ++n);
		} else if (!strcmp(line, "quit\n")) {
			return 0;
		}
	}
	return 2;
}
