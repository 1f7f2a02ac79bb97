/*
 * suppress.c - suppressions files (suppress.h): LSan-style lines here,
 * valgrind's blocks handed to vgsupp.c, line by line.
 *
 * A file is read line by line: trailing whitespace (and a CR) and, as
 * LSan does, leading blanks are stripped; blank lines and lines starting with '#' are skipped, every
 * other line must be "leak:GLOB" or "fd:GLOB" with a non-empty GLOB.
 * Matching is fnmatch(3) with no flags against each named part of a
 * frame: function, source file, module path and module basename.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/suppress.h"
#include "base/util.h"
#include "analysis/vgsupp.h"

/* A file's format: not known before its first line that says. */
enum format { FMT_UNKNOWN, FMT_LSAN, FMT_VALGRIND };

static int parse_line(struct suppressions *s, enum format *fmt,
		      struct vgparse *vg, char *text, const char *path,
		      int lineno)
{
	size_t len = strlen(text);
	enum supp_kind kind;
	const char *glob;
	struct supp_pattern *p;

	while (len && isspace((unsigned char)text[len - 1]))
		text[--len] = '\0';
	while (*text == ' ' || *text == '\t')	/* as LSan */
		text++, len--;
	if (*fmt == FMT_UNKNOWN && len && text[0] != '#')
		*fmt = vgsupp_is_start(text) ? FMT_VALGRIND : FMT_LSAN;
	if (*fmt == FMT_VALGRIND)
		return vgsupp_line(vg, s, text, path, lineno);
	if (!len || text[0] == '#')
		return 0;
	if (!strncmp(text, "leak:", 5)) {
		kind = SUPP_LEAK;
		glob = text + 5;
	} else if (!strncmp(text, "fd:", 3)) {
		kind = SUPP_FD;
		glob = text + 3;
	} else if (!strncmp(text, "type:", 5)) {
		kind = SUPP_TYPE;
		glob = text + 5;
	} else {
		glob = NULL;
	}
	if (!glob || !*glob)
		return error("%s:%d: expected leak:GLOB, fd:GLOB or type:GLOB, got '%s'",
			     path, lineno, text);
	grow_array((void **)&s->p, &s->alloc, (size_t)s->n + 1, sizeof(*s->p));
	p = &s->p[s->n++];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->glob = xstrdup(glob);
	p->line = lineno;
	return 0;
}

/*
 * The next line of F into BUF (SUPP_MAX_LINE + 1 bytes, NUL-terminated,
 * without its newline), adding its bytes to *TOTAL: 1, 0 at the end of
 * the file, or -1 (message) for a line too long, a NUL byte, more than
 * SUPP_MAX_FILE bytes in all: /dev/zero or a binary file must not be
 * read whole.
 */
static int read_line(FILE *f, char *buf, size_t *total, const char *path,
		     int lineno)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF) {
		if (++*total > SUPP_MAX_FILE)
			return error("%s: more than %d MiB: not a suppressions file",
				     path, SUPP_MAX_FILE >> 20);
		if (c == '\n')
			break;
		if (!c)
			return error("%s:%d: a NUL byte: not a suppressions file",
				     path, lineno);
		if (n == SUPP_MAX_LINE)
			return error("%s:%d: line longer than %d bytes", path,
				     lineno, SUPP_MAX_LINE);
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	return c == EOF && !n ? 0 : 1;
}

/* Load PATH into S: 0, or -1 (message). */
static int load_into(struct suppressions *s, const char *path)
{
	enum format fmt = FMT_UNKNOWN;
	struct vgparse vg;
	size_t total = 0;
	char *buf;
	int lineno = 0, err, got;
	unsigned first = s->n, i;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return error("cannot read %s: %s", path, strerror(errno));
	memset(&vg, 0, sizeof(vg));
	buf = xmalloc(SUPP_MAX_LINE + 1);
	errno = 0;
	while ((got = read_line(f, buf, &total, path, ++lineno)) > 0) {
		if (parse_line(s, &fmt, &vg, buf, path, lineno))
			break;
		errno = 0;
	}
	err = ferror(f) ? (errno ? errno : EIO) : 0;
	free(buf);
	fclose(f);
	if (!got && !err && vgsupp_end(&vg, path, lineno - 1))
		got = -1;
	vgsupp_free(vg.cur);
	for (i = first; i < s->n; i++)
		s->p[i].file = xstrdup(path);
	if (got)
		return -1;
	if (err)
		return error("cannot read %s: %s", path, strerror(err));
	return 0;
}

struct suppressions *supp_load_all(const char *const *paths)
{
	struct suppressions *s = xcalloc(1, sizeof(*s));

	for (; *paths; paths++) {
		if (load_into(s, *paths)) {
			supp_free(s);
			return NULL;
		}
	}
	return s;
}

struct suppressions *supp_load(const char *path)
{
	const char *const paths[] = { path, NULL };

	return supp_load_all(paths);
}

void supp_free(struct suppressions *s)
{
	unsigned i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->p[i].glob);
		free(s->p[i].file);
		vgsupp_free(s->p[i].vg);
	}
	free(s->p);
	free(s);
}

static int glob_match(const char *glob, const char *name)
{
	return name && *name && !fnmatch(glob, name, 0);
}

static int frame_match(const char *glob, const struct frame_info *fi)
{
	const char *base;

	if (glob_match(glob, fi->function) || glob_match(glob, fi->file))
		return 1;
	if (!fi->module)
		return 0;
	if (glob_match(glob, fi->module))
		return 1;
	base = strrchr(fi->module, '/');
	return base && glob_match(glob, base + 1);
}

/* Does pattern P of kind KIND match the leak of class CLS or the
 * descriptor at FRAMES[0..N-1]? */
static int pattern_match(const struct supp_pattern *p, enum supp_kind kind,
			 int cls, const struct frame_info *frames, unsigned n)
{
	unsigned k;

	if (p->kind != kind)
		return 0;
	if (p->vg)
		return kind == SUPP_LEAK && vgsupp_match(p->vg, cls, frames, n);
	for (k = 0; k < n; k++)
		if (frame_match(p->glob, &frames[k]))
			return 1;
	return 0;
}

int supp_match(const struct suppressions *s, enum supp_kind kind,
	       const struct frame_info *frames, unsigned n)
{
	unsigned i;

	for (i = 0; s && i < s->n; i++)
		if (!s->p[i].vg && pattern_match(&s->p[i], kind, -1, frames, n))
			return (int)i;
	return -1;
}

int supp_match_leak(const struct suppressions *s, int cls,
		    const struct frame_info *frames, unsigned n)
{
	unsigned i;

	for (i = 0; s && i < s->n; i++)
		if (pattern_match(&s->p[i], SUPP_LEAK, cls, frames, n))
			return (int)i;
	return -1;
}

int supp_match_type(const struct suppressions *s, const char *type)
{
	unsigned i;

	for (i = 0; s && type && i < s->n; i++)
		if (s->p[i].kind == SUPP_TYPE && !s->p[i].vg &&
		    glob_match(s->p[i].glob, type))
			return (int)i;
	return -1;
}
