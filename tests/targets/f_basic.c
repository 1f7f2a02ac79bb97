/*
 * f_basic: descriptor leaks of the common kinds.  Ten open/close pairs
 * of /dev/null of which the sixth is kept (fd 3); a pipe whose read end
 * is closed and write end kept (fd 5); a socket (fd 4, the pipe's read
 * end number, freed); a FILE from fopen (fd 6) and one fclose'd (7); a
 * directory from opendir closed with closedir (7).  The heap's only
 * leak is the leaked FILE (472 bytes).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static int keep_null(void)
{
	int i, fd, kept = -1;

	for (i = 0; i < 10; i++) {
		fd = open("/dev/null", O_RDONLY); /* @open_leak */
		if (i == 5)
			kept = fd;
		else
			close(fd);
	}
	return kept;
}

static int leak_pipe_end(void)
{
	int p[2];

	if (pipe(p)) /* @pipe */
		return -1;
	close(p[0]);
	return p[1];
}

static int leak_socket(void)
{
	return socket(AF_UNIX, SOCK_STREAM, 0); /* @socket */
}

static FILE *leak_file(const char *path)
{
	return fopen(path, "r"); /* @fopen */
}

int main(void)
{
	FILE *f;
	DIR *d;

	keep_null(); /* @call_keep_null */
	leak_pipe_end(); /* @call_pipe */
	leak_socket(); /* @call_socket */
	leak_file("/etc/hostname"); /* @call_fopen */
	f = fopen("/etc/passwd", "re");
	if (f)
		fclose(f);
	d = opendir("/");
	if (d)
		closedir(d);
	return 0;
}
