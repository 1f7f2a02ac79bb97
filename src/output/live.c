/* live.c - --live's status line (live.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "output/live.h"
#include "base/util.h"

void live_init(struct live *l, FILE *f)
{
	memset(l, 0, sizeof(*l));
	l->f = f;
	l->tty = isatty(fileno(f));
	/* tracing starts with nothing in use: the first line has growth */
	l->have_prev = 1;
}

/* BYTES in B, KiB, MiB or GiB, 3 significant digits or so. */
static const char *size_text(char *buf, size_t len, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = bytes < 0 ? -bytes : bytes;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < ARRAY_SIZE(unit)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%s%.*f %s", bytes < 0 ? "-" : "", u && v < 100 ? 1 : 0,
		 v, unit[u]);
	return buf;
}

void live_format(char *buf, size_t len, const struct tl_sample *s,
		 const struct tl_sample *prev, uint64_t calls,
		 uint64_t prev_calls)
{
	double secs = prev && s->ms > prev->ms ? (double)(s->ms - prev->ms) / 1e3 : 0;
	char b1[32], b2[32], b3[32];
	size_t n;

	n = (size_t)snprintf(buf, len, "ptleak: %.1f s", (double)s->ms / 1e3);
	if (s->heap_bytes != TL_UNKNOWN && n < len) {
		n += (size_t)snprintf(buf + n, len - n, "  heap %s",
				      size_text(b1, sizeof(b1), (double)s->heap_bytes));
		if (secs && prev->heap_bytes != TL_UNKNOWN && n < len)
			n += (size_t)snprintf(buf + n, len - n, " (%s%s/s)",
				s->heap_bytes >= prev->heap_bytes ? "+" : "",
				size_text(b2, sizeof(b2), ((double)s->heap_bytes -
					  (double)prev->heap_bytes) / secs));
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, " in %s blocks",
					      fmt_thousands(b3, s->heap_blocks));
	}
	if (s->rss_kb != TL_UNKNOWN && n < len)
		n += (size_t)snprintf(buf + n, len - n, "  RSS %s",
				      size_text(b1, sizeof(b1), (double)s->rss_kb * 1024));
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "  %" PRIu64 " thread%s",
				      s->threads, s->threads == 1 ? "" : "s");
	if (s->fds != TL_UNKNOWN && n < len)
		n += (size_t)snprintf(buf + n, len - n, "  %" PRIu64 " fd%s", s->fds,
				      s->fds == 1 ? "" : "s");
	if (s->grow_stack && n < len)
		n += (size_t)snprintf(buf + n, len - n, "  growing +%s/s",
				      size_text(b1, sizeof(b1), s->grow_bps));
	if (secs && s->heap_bytes != TL_UNKNOWN && n < len)
		snprintf(buf + n, len - n, "  %s calls/s",
			 fmt_thousands(b1, (uint64_t)((double)(calls - prev_calls) /
						      secs + 0.5)));
}

void live_show(struct live *l, const struct tl_sample *s, uint64_t calls)
{
	char buf[256];

	live_format(buf, sizeof(buf), s, l->have_prev ? &l->prev : NULL, calls,
		    l->prev_calls);
	if (l->tty) {
		fprintf(l->f, "\r%s\033[K", buf);
		l->drawn = 1;
	} else {
		fprintf(l->f, "%s\n", buf);
	}
	fflush(l->f);
	l->prev = *s;
	l->prev_calls = calls;
	l->have_prev = 1;
}

void live_erase(struct live *l)
{
	if (!l->drawn)
		return;
	fputs("\r\033[K", l->f);
	fflush(l->f);
	l->drawn = 0;
}
