/* outfile.c - the report files (outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/outfile.h"
#include "base/util.h"

/* Links followed at most (the kernel's own limit). */
#define MAX_LINKS 40

static pid_t name_pid;	/* outfile_set_pid */

/* Append N bytes of S to the malloc'd *BUF of *LEN bytes (NUL kept). */
static void append(char **buf, size_t *len, const char *s, size_t n)
{
	*buf = xrealloc(*buf, *len + n + 1);
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
}

char *outfile_expand(const char *tmpl, pid_t pid)
{
	char *out = xstrdup(""), num[24], *hold = NULL;
	size_t len = 0;
	const char *p = tmpl;

	while (*p) {
		const char *pct = strchr(p, '%'), *end, *val;
		char var[256];

		if (!pct) {
			append(&out, &len, p, strlen(p));
			break;
		}
		append(&out, &len, p, (size_t)(pct - p));
		p = pct + 2;
		if (pct[1] == '%') {
			append(&out, &len, "%", 1);
		} else if (pct[1] == 'p') {
			snprintf(num, sizeof(num), "%d", (int)pid);
			append(&out, &len, num, strlen(num));
		} else if (pct[1] == 'q' && pct[2] == '{' &&
			   (end = strchr(pct + 3, '}')) && end > pct + 3 &&
			   (size_t)(end - pct - 3) < sizeof(var)) {
			memcpy(var, pct + 3, (size_t)(end - pct - 3));
			var[end - pct - 3] = '\0';
			val = getenv(var);
			if (!val) {
				error("%s: %%q{%s}: environment variable %s is not set",
				      text_safe(tmpl, &hold), var, var);
				goto fail;
			}
			append(&out, &len, val, strlen(val));
			p = end + 1;
		} else {
			error("%s: '%%' must be followed by p, q{VAR} or %%",
			      text_safe(tmpl, &hold));
			goto fail;
		}
	}
	return out;
fail:
	free(hold);
	free(out);
	return NULL;
}

void outfile_set_pid(pid_t pid)
{
	name_pid = pid;
}

int outfile_has_pid(const char *name)
{
	const char *p;

	for (p = name; (p = strchr(p, '%')); p += 2) {
		if (p[1] == 'p')
			return 1;
		if (!p[1])
			break;
	}
	return 0;
}

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

/* outfile_check of PATH, named SHOWN in messages */
static int check_expanded(const char *path, const char *shown)
{
	struct outfile of;
	int fd;

	if (outfile_check_name(path))
		return -1;
	/* in place: permission is enough (a FIFO's reader may come later) */
	if (in_place(path))
		return access(path, W_OK) ? error("cannot write %s: %s", shown,
						   strerror(errno)) : 0;
	memset(&of, 0, sizeof(of));
	of.dest = follow_links(path);
	if (!of.dest)
		return error("cannot write %s: %s", shown, strerror(errno));
	if (asprintf(&of.tmp, "%s.tmp", of.dest) < 0)
		die("out of memory");
	fd = open(of.tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		close(fd);
		unlink(of.tmp);
	} else {
		error("cannot write %s: %s", shown, strerror(errno));
	}
	free(of.tmp);
	free(of.dest);
	return fd >= 0 ? 0 : -1;
}

int outfile_check(const char *name)
{
	char *path = outfile_expand(name, name_pid);
	/* the pid not known yet: the name as given, not "...0" */
	int ret = path ? check_expanded(path, name_pid ? path : name) : -1;

	free(path);
	return ret;
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

int outfile_open(struct outfile *of, const char *name)
{
	char *path = outfile_expand(name, name_pid);

	memset(of, 0, sizeof(*of));
	if (!path)
		return -1;
	of->path = path;
	if (in_place(path)) {
		of->f = open_in_place(path);
		if (!of->f) {
			free(path);
			of->path = NULL;
		}
		return of->f ? 0 : -1;
	}
	of->dest = follow_links(path);
	if (!of->dest) {
		error("cannot write %s: %s", path, strerror(errno));
		free(path);
		of->path = NULL;
		return -1;
	}
	if (asprintf(&of->tmp, "%s.tmp", of->dest) < 0)
		die("out of memory");
	of->f = fopen(of->tmp, "we");
	if (!of->f) {
		error("cannot write %s: %s", path, strerror(errno));
		free(of->tmp);
		free(of->dest);
		free(path);
		of->path = NULL;
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
		error("cannot write %s: %s", of->path, strerror(err));
	free(of->path);
	of->path = NULL;
	return err ? -1 : 0;
}

/*
 * -f's file names: every "%p" of NAME is PID, as valgrind's --log-file;
 * without one, CHILD (not the first process) appends ".PID", so that no
 * two processes write one file.  (The valgrind option's %q{VAR} is
 * another helper's.)
 */
char *outfile_pid_name(const char *name, pid_t pid, int child)
{
	char *x, *out;

	util_silent++;
	x = outfile_expand(name, pid);
	util_silent--;
	if (!x)			/* checked before the run: cannot be */
		x = xstrdup(name);
	if (!child || outfile_has_pid(name))
		return x;
	out = xmalloc(strlen(x) + 16);
	sprintf(out, "%s.%d", x, (int)pid);
	free(x);
	return out;
}
