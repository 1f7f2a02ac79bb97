/*
 * r_fifo_swap - a program whose mapped library is replaced by a FIFO:
 * ptleak must never open it (an open of a FIFO blocks until a writer
 * comes: a hang).
 *
 *   r_fifo_swap DIR launch   copies r_dlib.so (beside this executable)
 *                            to DIR/r_dlib.so, dlopens it, keeps the 77
 *                            bytes r_dlib_work() returns (lost at exit,
 *                            with the library's 64-byte constructor
 *                            block), then renames a FIFO over
 *                            DIR/r_dlib.so and exits 0
 *   r_fifo_swap DIR attach   the same, then says "ready", and at the
 *                            first line on stdin calls r_dlib_work()
 *                            again (its 77 bytes lost too: @again),
 *                            says "done" and exits 0
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void *volatile keep;

static int copy(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);

	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -1;
	close(in);
	return close(out);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], lib[PATH_MAX], dst[PATH_MAX], fifo[PATH_MAX], line[16];
	void *(*work)(void);
	ssize_t n;
	void *h;

	if (argc < 3)
		return 2;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return 3;
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(lib, sizeof(lib), "%s/r_dlib.so", self);
	snprintf(dst, sizeof(dst), "%s/r_dlib.so", argv[1]);
	snprintf(fifo, sizeof(fifo), "%s/fifo", argv[1]);
	if (copy(lib, dst))
		return 4;
	h = dlopen(dst, RTLD_NOW);
	if (!h)
		return 5;
	work = (void *(*)(void))dlsym(h, "r_dlib_work");
	if (!work)
		return 6;
	keep = work();	/* @keep */
	if (mkfifo(fifo, 0600) || rename(fifo, dst))
		return 7;
	if (!strcmp(argv[2], "attach")) {
		printf("ready\n");
		fflush(stdout);
		/* read(2): stdin's buffer would be malloc'ed at the first
		 * fgets, before or after the attach */
		if (read(0, line, sizeof(line)) <= 0)
			return 8;
		keep = work();	/* @again */
		printf("done\n");
		fflush(stdout);
	}
	keep = NULL;
	return 0;
}
