/*
 * events_log.c - --events FILE (events_log.h): heap events to CSV rows,
 * formatted by hand into a big buffer (a recorder drain hands over
 * millions of events a second), callers named once at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/events_log.h"
#include "output/outfile.h"
#include "base/util.h"

#define HEADER "ms,tid,event,size,address,old_address,caller\n"
#define ROW_MAX 160		/* a row without its caller's name */

struct evlog {
	char *path;
	int fd;
	int rewrite;		/* a regular file: callers named at the end */
	int failed;		/* a write failed: said once, nothing more */
	int finished;
	struct heap *h;
	const struct stacks *stacks;
	uint64_t start_ns;
	uint64_t rows;
	size_t len;
	char buf[EVLOG_BUF];
};

struct evlog *evlog_open(const char *path)
{
	struct evlog *l;
	struct stat st;
	int fd;

	if (outfile_check_name(path))
		return NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		error("cannot write %s: %s", path, strerror(errno));
		return NULL;
	}
	l = xcalloc(1, sizeof(*l));
	l->path = xstrdup(path);
	l->fd = fd;
	l->rewrite = !fstat(fd, &st) && S_ISREG(st.st_mode);
	memcpy(l->buf, HEADER, strlen(HEADER));
	l->len = strlen(HEADER);
	return l;
}

static void flush_buf(struct evlog *l)
{
	size_t off = 0;
	ssize_t n;

	while (off < l->len && !l->failed) {
		n = write(l->fd, l->buf + off, l->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			l->failed = 1;
			warning("cannot write %s: %s: no more events logged", l->path,
				strerror(n < 0 ? errno : EIO));
			break;
		}
		off += (size_t)n;
	}
	l->len = 0;
}

static char *put_dec(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	int n = 0;

	*p++ = '0';
	*p++ = 'x';
	do
		tmp[n++] = digits[v & 15];
	while ((v >>= 4));
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* The caller of STACK: its first frame outside the allocator (frame 0
 * is the allocator's entry), 0 if none. */
static uint64_t caller_of(const struct evlog *l, uint32_t stack)
{
	const uint64_t *pcs;

	return stack && stacks_get(l->stacks, stack, &pcs) > 1 ? pcs[1] : 0;
}

static void on_event(void *ctx, const struct heap_event *e)
{
	struct evlog *l = ctx;
	uint64_t caller;
	char *p;

	if (l->failed)
		return;
	if (l->len + ROW_MAX > sizeof(l->buf))
		flush_buf(l);
	p = l->buf + l->len;
	p = put_dec(p, e->time_ns > l->start_ns ? (e->time_ns - l->start_ns) / 1000000 : 0);
	*p++ = ',';
	p = put_dec(p, (uint64_t)(e->tid > 0 ? e->tid : 0));
	*p++ = ',';
	p = put_str(p, e->type == HEV_ALLOC || e->type == HEV_REALLOC ?
		    alloc_fn_name((enum alloc_fn)e->fn) :
		    e->type == HEV_CENSUS ? "census" : "free");
	*p++ = ',';
	if (e->type != HEV_UNKNOWN_FREE)
		p = put_dec(p, e->size);
	*p++ = ',';
	p = put_hex(p, e->addr);
	*p++ = ',';
	if (e->type == HEV_REALLOC && e->old)
		p = put_hex(p, e->old);
	*p++ = ',';
	if ((caller = caller_of(l, e->stack))) {
		if (l->rewrite)
			*p++ = '@';
		p = put_hex(p, caller);
	}
	*p++ = '\n';
	l->len = (size_t)(p - l->buf);
	l->rows++;
}

/* A block of the census at an attach, in the table before the log:
 * a "census" row at 0 ms. */
static int census_row(const struct heap_block *b, void *ctx)
{
	struct heap_event e = { HEV_CENSUS, b->fn, 0, 0, 0, b->size, b->addr, 0 };

	if (b->before)
		on_event(ctx, &e);
	return 0;
}

void evlog_attach(struct evlog *l, struct heap *h, const struct stacks *stacks,
		  uint64_t start_ns)
{
	l->h = h;
	l->stacks = stacks;
	l->start_ns = start_ns;
	heap_observe(h, on_event, l);
	heap_foreach(h, census_row, l);
}

uint64_t evlog_rows(const struct evlog *l)
{
	return l->rows;
}

/* ---- naming the callers ---- */

struct names {
	struct { uint64_t pc; char *name; } *e;
	size_t cap, n;		/* cap: a power of two */
	report_namer namer;
	void *ctx;
};

/* "function (file:line)", as a frame of the text report without its
 * address; CSV-quoted when it holds a comma or a quote. */
static char *frame_name(const struct frame_info *fi)
{
	const char *s = strrchr(fi->module ? fi->module : "", '/');
	const char *mod = fi->module ? (s ? s + 1 : fi->module) : NULL;
	const char *fn = fi->function ? fi->function : "???";
	char *raw, *out, *q;
	const char *r;
	int ok;

	if (fi->file && fi->line > 0)
		ok = asprintf(&raw, "%s (%s:%d)", fn, fi->file, fi->line);
	else if (mod && fi->function)
		ok = asprintf(&raw, "%s (%s)", fn, mod);
	else if (mod)
		ok = asprintf(&raw, "%s (%s+0x%" PRIx64 ")", fn, mod, fi->module_offset);
	else
		ok = asprintf(&raw, "%s (0x%" PRIx64 ")", fn, fi->pc);
	if (ok < 0)
		die("out of memory");
	if (!strpbrk(raw, ",\"\n\r"))
		return raw;
	out = q = xmalloc(2 * strlen(raw) + 3);
	*q++ = '"';
	for (r = raw; *r; r++) {
		if (*r == '"')
			*q++ = '"';
		*q++ = *r == '\n' || *r == '\r' ? ' ' : *r;
	}
	*q++ = '"';
	*q = 0;
	free(raw);
	return out;
}

static const char *name_of(struct names *nm, uint64_t pc)
{
	struct frame_info fi;
	size_t i;

	if ((nm->n + 1) * 2 > nm->cap) {
		struct names old = *nm;
		size_t k;

		nm->cap = nm->cap ? 2 * nm->cap : 1024;
		nm->e = xcalloc(nm->cap, sizeof(*nm->e));
		for (k = 0; k < old.cap; k++) {
			if (!old.e[k].pc)
				continue;
			for (i = hash64(old.e[k].pc) & (nm->cap - 1); nm->e[i].pc;
			     i = (i + 1) & (nm->cap - 1))
				;
			nm->e[i] = old.e[k];
		}
		free(old.e);
	}
	for (i = hash64(pc) & (nm->cap - 1); nm->e[i].pc; i = (i + 1) & (nm->cap - 1))
		if (nm->e[i].pc == pc)
			return nm->e[i].name;
	nm->e[i].pc = pc;
	nm->namer(nm->ctx, pc, 1, &fi);
	nm->e[i].name = frame_name(&fi);
	nm->n++;
	return nm->e[i].name;
}

/* Copy the log to OUT, each "@address" caller named. */
static int rewrite(struct evlog *l, FILE *in, FILE *out, struct names *nm)
{
	char line[512];

	while (fgets(line, sizeof(line), in)) {
		char *c = strrchr(line, ',');

		if (c && c[1] == '@') {
			uint64_t pc = strtoull(c + 2, NULL, 16);

			c[1] = 0;
			fputs(line, out);
			if (nm->namer)
				fputs(name_of(nm, pc), out);
			else
				fprintf(out, "0x%" PRIx64, pc);
			putc('\n', out);
		} else {
			fputs(line, out);
		}
	}
	if (ferror(in))
		return error("cannot read %s back: %s", l->path, strerror(errno));
	return 0;
}

int evlog_finish(struct evlog *l, report_namer namer, void *ctx)
{
	struct names nm = { .namer = namer, .ctx = ctx };
	struct outfile of;
	FILE *in;
	size_t i;
	int ret;

	if (l->finished)
		return 0;
	l->finished = 1;
	if (l->h)
		heap_observe(l->h, NULL, NULL);
	flush_buf(l);
	close(l->fd);
	l->fd = -1;
	if (!l->rewrite || l->failed)
		return l->failed ? -1 : 0;
	in = fopen(l->path, "re");
	if (!in)
		return error("cannot read %s back: %s", l->path, strerror(errno));
	if (outfile_open(&of, l->path)) {
		fclose(in);
		return -1;
	}
	ret = rewrite(l, in, of.f, &nm);
	fclose(in);
	if (outfile_commit(&of))
		ret = -1;
	for (i = 0; i < nm.cap; i++)
		free(nm.e[i].name);
	free(nm.e);
	return ret;
}

void evlog_close(struct evlog *l)
{
	if (!l)
		return;
	evlog_finish(l, NULL, NULL);
	free(l->path);
	free(l);
}
