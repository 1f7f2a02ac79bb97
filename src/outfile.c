/* outfile.c - the report files (outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "util.h"

/* Links followed at most (the kernel's own limit). */
#define MAX_LINKS 40

/*
 * PATH with its symbolic links followed, as far as they lead: the file a
 * write through PATH would reach, which need not exist yet.  Malloc'd;
 * NULL (errno) for a loop.
 */
static char *follow_links(const char *path)
{
	char *p = xstrdup(path);
	int i;

	for (i = 0; i < MAX_LINKS; i++) {
		char target[PATH_MAX], *slash, *next;
		ssize_t n = readlink(p, target, sizeof(target) - 1);

		if (n < 0)
			return p;	/* not a link (or gone): this is it */
		target[n] = '\0';
		slash = strrchr(p, '/');
		if (target[0] == '/' || !slash) {
			next = xstrdup(target);
		} else if (asprintf(&next, "%.*s/%s", (int)(slash - p), p,
				    target) < 0) {
			die("out of memory");
		}
		free(p);
		p = next;
	}
	free(p);
	errno = ELOOP;
	return NULL;
}

/* Is PATH (followed) written in place: a device, a FIFO, a pipe
 * (/dev/fd/N of a shell's >(...)), not a regular file or nothing yet? */
static int in_place(const char *path)
{
	struct stat st;

	return !stat(path, &st) && !S_ISREG(st.st_mode);
}

int outfile_check_name(const char *path)
{
	struct stat st;
	size_t len = strlen(path);

	if (!len)
		return error("cannot write '': empty file name");
	if (path[len - 1] == '/')
		return error("cannot write %s: a file name is needed, not a "
			     "directory", path);
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return error("cannot write %s: %s", path, strerror(EISDIR));
	return 0;
}

int outfile_check(const char *path)
{
	struct outfile of;
	int fd;

	if (outfile_check_name(path))
		return -1;
	/* in place: permission is enough (a FIFO's reader may come later) */
	if (in_place(path))
		return access(path, W_OK) ? error("cannot write %s: %s", path,
						   strerror(errno)) : 0;
	memset(&of, 0, sizeof(of));
	of.dest = follow_links(path);
	if (!of.dest)
		return error("cannot write %s: %s", path, strerror(errno));
	if (asprintf(&of.tmp, "%s.tmp", of.dest) < 0)
		die("out of memory");
	fd = open(of.tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		close(fd);
		unlink(of.tmp);
	} else {
		error("cannot write %s: %s", path, strerror(errno));
	}
	free(of.tmp);
	free(of.dest);
	return fd >= 0 ? 0 : -1;
}

/*
 * PATH opened in place: without blocking (a FIFO nobody reads would hold
 * the report, and the target with it, forever), then writes block as
 * usual.  A stream, or NULL (message).
 */
static FILE *open_in_place(const char *path)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	FILE *f;

	if (fd < 0) {
		if (errno == ENXIO)
			error("cannot write %s: no process reads it", path);
		else
			error("cannot write %s: %s", path, strerror(errno));
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "w");
	if (!f) {
		error("cannot write %s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

int outfile_open(struct outfile *of, const char *path)
{
	memset(of, 0, sizeof(*of));
	of->path = path;
	if (in_place(path)) {
		of->f = open_in_place(path);
		return of->f ? 0 : -1;
	}
	of->dest = follow_links(path);
	if (!of->dest)
		return error("cannot write %s: %s", path, strerror(errno));
	if (asprintf(&of->tmp, "%s.tmp", of->dest) < 0)
		die("out of memory");
	of->f = fopen(of->tmp, "we");
	if (!of->f) {
		error("cannot write %s: %s", path, strerror(errno));
		free(of->tmp);
		free(of->dest);
		return -1;
	}
	return 0;
}

int outfile_commit(struct outfile *of)
{
	int err = 0;

	errno = 0;
	if (fflush(of->f) || ferror(of->f))
		err = errno ? errno : EIO;
	if (fclose(of->f) && !err)
		err = errno ? errno : EIO;
	if (of->tmp && !err && rename(of->tmp, of->dest))
		err = errno;
	if (err && of->tmp)
		unlink(of->tmp);
	free(of->tmp);
	free(of->dest);
	of->f = NULL;
	if (err)
		return error("cannot write %s: %s", of->path, strerror(err));
	return 0;
}

/*
 * -f's file names: every "%p" of NAME is PID, as valgrind's --log-file;
 * without one, CHILD (not the first process) appends ".PID", so that no
 * two processes write one file.  (The valgrind option's %q{VAR} is
 * another helper's.)
 */
char *outfile_pid_name(const char *name, pid_t pid, int child)
{
	char num[16], *out, *o;
	const char *p;
	size_t n = 0;
	int subst = 0;

	snprintf(num, sizeof(num), "%d", (int)pid);
	for (p = name; *p; p++)
		if (p[0] == '%' && p[1] == 'p')
			subst++;
	out = o = xmalloc(strlen(name) + (subst + 1) * (strlen(num) + 1) + 1);
	for (p = name; *p; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n = strlen(num);
			memcpy(o, num, n);
			o += n;
			p++;
			continue;
		}
		*o++ = *p;
	}
	*o = '\0';
	if (!subst && child)
		sprintf(o, ".%s", num);
	return out;
}
