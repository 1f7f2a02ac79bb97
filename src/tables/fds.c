/*
 * fds.c - the table of open file descriptors (fds.h).
 *
 * The open descriptors' records in an array sorted by fd, one per open
 * descriptor (a number is the target's: one near fs.nr_open costs no
 * more than 3).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tables/fds.h"
#include "base/util.h"

struct fdtable {
	struct fd_rec *v;	/* the open ones, sorted by fd */
	size_t n;
	size_t alloc;
};

enum fd_type fd_type_of(const char *target)
{
	if (!target || !*target)
		return FD_TYPE_OTHER;
	if (!strncmp(target, "pipe:[", 6))
		return FD_TYPE_PIPE;
	if (!strncmp(target, "socket:[", 8))
		return FD_TYPE_SOCKET;
	if (!strncmp(target, "anon_inode:", 11))
		return FD_TYPE_ANON;
	if (target[0] == '/')
		return FD_TYPE_FILE;
	return FD_TYPE_OTHER;
}

const char *fd_type_name(enum fd_type t)
{
	switch (t) {
	case FD_TYPE_FILE:
		return "file";
	case FD_TYPE_PIPE:
		return "pipe";
	case FD_TYPE_SOCKET:
		return "socket";
	case FD_TYPE_ANON:
		return "anon";
	case FD_TYPE_OTHER:
	default:
		return "other";
	}
}

/* ---- /proc ---- */

int fds_proc_one(pid_t pid, int fd, struct fd_now *out)
{
	char path[64], buf[PATH_MAX + 1];
	struct stat st;
	ssize_t len;

	memset(out, 0, sizeof(*out));
	out->fd = fd;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	len = readlink(path, buf, sizeof(buf) - 1);
	if (len < 0)
		return -1;
	buf[len] = '\0';
	out->target = xstrdup(buf);
	if (!stat(path, &st)) {
		out->dev = st.st_dev;
		out->ino = st.st_ino;
	}
	return 0;
}

static int cmp_now(const void *a, const void *b)
{
	const struct fd_now *x = a, *y = b;

	return (x->fd > y->fd) - (x->fd < y->fd);
}

void fd_list_free(struct fd_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].target);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int fds_proc_read(pid_t pid, struct fd_list *l)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].target);
	l->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end ||
		    fd < 0 || fd > INT_MAX)
			continue;
		grow_array((void **)&l->v, &l->alloc, l->n + 1, sizeof(*l->v));
		/* gone since readdir: not open any more */
		if (!fds_proc_one(pid, (int)fd, &l->v[l->n]))
			l->n++;
	}
	closedir(d);
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_now);
	return 0;
}

/* ---- the table ---- */

struct fdtable *fds_new(void)
{
	return xcalloc(1, sizeof(struct fdtable));
}

static void clear_slot(struct fd_rec *r)
{
	free(r->target);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

static void clear_all(struct fdtable *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		clear_slot(&t->v[i]);
	t->n = 0;
}

void fds_delete(struct fdtable *t)
{
	if (!t)
		return;
	clear_all(t);
	free(t->v);
	free(t);
}

/* The index of the first record whose fd is not below FD. */
static size_t lower(const struct fdtable *t, int fd)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].fd < fd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The record of FD (>= 0): its own, or a new closed one in its place. */
static struct fd_rec *slot(struct fdtable *t, int fd)
{
	size_t i = lower(t, fd);

	if (i < t->n && t->v[i].fd == fd)
		return &t->v[i];
	grow_array((void **)&t->v, &t->alloc, t->n + 1, sizeof(*t->v));
	memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
	t->n++;
	memset(&t->v[i], 0, sizeof(t->v[i]));
	t->v[i].fd = -1;
	return &t->v[i];
}

/* Drop the records [I, J). */
static void drop(struct fdtable *t, size_t i, size_t j)
{
	size_t k;

	for (k = i; k < j; k++)
		clear_slot(&t->v[k]);
	memmove(&t->v[i], &t->v[j], (t->n - j) * sizeof(*t->v));
	t->n -= j - i;
}

static void set_now(struct fd_rec *r, const struct fd_now *now,
		    enum fd_origin origin)
{
	clear_slot(r);
	r->fd = now->fd;
	r->origin = (uint8_t)origin;
	r->target = now->target ? xstrdup(now->target) : NULL;
	r->type = (uint8_t)fd_type_of(now->target);
	r->dev = now->dev;
	r->ino = now->ino;
}

void fds_inherit(struct fdtable *t, const struct fd_now *now, size_t n)
{
	size_t i;

	clear_all(t);
	for (i = 0; i < n; i++)
		if (now[i].fd >= 0)
			set_now(slot(t, now[i].fd), &now[i], FD_INHERITED);
}

int fds_max(void)
{
	static int max;
	char buf[32];
	long v = 0;
	FILE *f;

	if (max)
		return max;
	f = fopen("/proc/sys/fs/nr_open", "re");
	if (f && fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	if (f)
		fclose(f);
	max = v > 0 && v <= INT_MAX ? (int)v : 1 << 20;
	return max;
}

void fds_open(struct fdtable *t, const struct fd_rec *r)
{
	struct fd_rec *s;

	/* the number comes from the target (a hook's record, a function's
	 * return value): none the kernel could have given sizes the table */
	if (r->fd < 0 || r->fd >= fds_max())
		return;
	s = slot(t, r->fd);
	clear_slot(s);
	*s = *r;
	s->target = r->target ? xstrdup(r->target) : NULL;
}

int fds_close(struct fdtable *t, int fd)
{
	size_t i = fd < 0 ? t->n : lower(t, fd);

	if (i >= t->n || t->v[i].fd != fd)
		return 0;
	drop(t, i, i + 1);
	return 1;
}

void fds_close_range(struct fdtable *t, unsigned lo, unsigned hi)
{
	size_t i, j;

	if (lo > INT_MAX)
		return;
	i = lower(t, (int)lo);
	for (j = i; j < t->n && (unsigned)t->v[j].fd <= hi; j++)
		;
	drop(t, i, j);
}

static int same_identity(const struct fd_rec *r, const struct fd_now *now)
{
	if (!(r->dev | r->ino) || !(now->dev | now->ino))
		return 1;	/* cannot tell */
	return r->dev == now->dev && r->ino == now->ino;
}

void fds_sync(struct fdtable *t, const struct fd_now *now, size_t n)
{
	struct fd_rec *v = NULL;
	size_t i = 0, k = 0, m = 0, alloc = 0;

	/* both sorted by fd: merged into a new table */
	while (i < t->n || k < n) {
		struct fd_rec *r = i < t->n ? &t->v[i] : NULL;

		if (k < n && (now[k].fd < 0 || (m && now[k].fd == v[m - 1].fd))) {
			k++;		/* (not a descriptor, or twice) */
			continue;
		}
		if (r && (k >= n || r->fd < now[k].fd)) {
			clear_slot(r);		/* not open any more */
			i++;
			continue;
		}
		grow_array((void **)&v, &alloc, m + 1, sizeof(*v));
		if (r && r->fd == now[k].fd) {
			v[m] = *r;
			i++;
			if (!same_identity(&v[m], &now[k])) {
				set_now(&v[m], &now[k], FD_UNKNOWN);
			} else {
				free(v[m].target);
				v[m].target = now[k].target ? xstrdup(now[k].target) : NULL;
				v[m].type = (uint8_t)fd_type_of(v[m].target);
			}
		} else {
			memset(&v[m], 0, sizeof(v[m]));
			v[m].fd = -1;
			set_now(&v[m], &now[k], FD_UNKNOWN);
		}
		m++;
		k++;
	}
	free(t->v);
	t->v = v;
	t->n = m;
	t->alloc = alloc;
}

void fds_exec(struct fdtable *t, const struct fd_now *now, size_t n)
{
	size_t i;

	fds_sync(t, now, n);
	for (i = 0; i < t->n; i++) {
		struct fd_rec *r = &t->v[i];

		if (r->origin == FD_TRACED) {
			r->before_exec = 1;
			r->stack = 0;
		}
	}
}

const struct fd_rec *fds_get(const struct fdtable *t, int fd)
{
	size_t i = fd < 0 ? t->n : lower(t, fd);

	return i < t->n && t->v[i].fd == fd ? &t->v[i] : NULL;
}

int fds_limit(const struct fdtable *t)
{
	return t->n ? t->v[t->n - 1].fd + 1 : 0;
}

void fds_count(const struct fdtable *t, uint64_t *open, uint64_t *inherited)
{
	size_t i;

	*open = t->n;
	*inherited = 0;
	for (i = 0; i < t->n; i++)
		*inherited += t->v[i].origin == FD_INHERITED;
}
