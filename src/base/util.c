/* util.c - errors, allocation, formatting, time, /proc fields. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

int util_quiet;
int util_silent;
void (*die_hook)(void);

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024], *hold;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	/* names from the target or the user: one line, no terminal codes */
	fprintf(stderr, "ptleak: %s%s\n", prefix, text_safe(buf, &hold));
	free(hold);
}

int error(const char *fmt, ...)
{
	va_list ap;

	if (util_silent)
		return -1;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	if (util_quiet)
		return;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void die_said(void)
{
	if (die_hook) {
		void (*hook)(void) = die_hook;

		die_hook = NULL;
		hook();
	}
	exit(1);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	die_said();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory reallocating %zu bytes", n);
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die("out of memory");
	return d;
}

void grow_array(void **p, size_t *alloc, size_t need, size_t size)
{
	size_t n = *alloc ? *alloc : 16;

	if (need <= *alloc)
		return;
	while (n < need)
		n *= 2;
	*p = xrealloc(*p, n * size);
	memset((char *)*p + *alloc * size, 0, (n - *alloc) * size);
	*alloc = n;
}

void radix_sort_kv32(struct kv32 *a, struct kv32 *tmp, size_t n)
{
	struct kv32 *from = a, *to = tmp, *t;
	size_t count[256], i, sum, c;
	unsigned shift;

	for (shift = 0; shift < 32 && n; shift += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(from[i].key >> shift) & 0xff]++;
		if (count[(from[0].key >> shift) & 0xff] == n)
			continue;	/* one digit: the order stays */
		for (i = 0, sum = 0; i < 256; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			to[count[(from[i].key >> shift) & 0xff]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	if (from != a)
		memcpy(a, from, n * sizeof(*a));
}

int utf8_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* > U+10FFFF */
	} else {
		return 0;
	}
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* Bytes of S to write as they are at S: a printable character (1, or a
 * UTF-8 sequence that is not a C1 control), 0: escape S[0]. */
static int printable_len(const char *s)
{
	unsigned char c = (unsigned char)s[0];
	int n;

	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c < 0x80)
		return 0;
	n = utf8_len(s);
	/* U+0080..U+009F: C1 controls (0x9b is CSI to some terminals) */
	return n == 2 && c == 0xc2 && (unsigned char)s[1] < 0xa0 ? 0 : n;
}

const char *text_safe(const char *s, char **hold)
{
	static const char hex[] = "0123456789abcdef";
	const char *p;
	char *o;
	int n;

	*hold = NULL;
	if (!s)
		return s;
	for (p = s; *p && (n = printable_len(p)); p += n)
		;
	if (!*p)
		return s;	/* nothing to escape: no copy */
	o = *hold = xmalloc(strlen(s) * 4 + 1);
	for (p = s; *p; ) {
		n = printable_len(p);
		if (n) {
			memcpy(o, p, (size_t)n);
			o += n;
			p += n;
			continue;
		}
		*o++ = '\\';
		*o++ = 'x';
		*o++ = hex[(unsigned char)*p >> 4];
		*o++ = hex[*p & 15];
		p++;
	}
	*o = '\0';
	return *hold;
}

char *fmt_thousands(char *buf, uint64_t v)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	int i, o = 0;

	for (i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int proc_status_fields(pid_t tid, const char *const *fields, unsigned n,
		       int base, unsigned long long *v)
{
	char path[64], line[256];
	unsigned found = 0, k;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (found < n && fgets(line, sizeof(line), f)) {
		for (k = 0; k < n; k++) {
			size_t len = strlen(fields[k]);

			if (!strncmp(line, fields[k], len)) {
				v[k] = strtoull(line + len, NULL, base);
				found++;
				break;
			}
		}
	}
	fclose(f);
	return (int)found;
}

int proc_status_field(pid_t tid, const char *field, int base,
		      unsigned long long *v)
{
	return proc_status_fields(tid, &field, 1, base, v) == 1 ? 0 : -1;
}

int usage_error(const char *fmt, const char *arg)
{
	char *hold;

	/* ARG as the terminal must show it: no control characters */
	arg = text_safe(arg, &hold);
	fputs("ptleak: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	free(hold);
	return EXIT_USAGE;
}

int open_untrusted(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	/* a regular file: O_NONBLOCK changes nothing for its reads */
	return fd;
}

int util_first(const char *key)
{
	static uint64_t seen[64];
	static unsigned nseen;
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */
	unsigned i;

	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 1099511628211ull;
	for (i = 0; i < nseen; i++)
		if (seen[i] == h)
			return 0;
	if (nseen == 64)
		return 0;
	seen[nseen++] = h;
	return 1;
}

int util_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t all, was;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &was);
	rc = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	return rc;
}
