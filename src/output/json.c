/*
 * json.c - a small streaming JSON writer.
 *
 * first[d] says no element has been written yet in the container at depth
 * d (depth 0 is the top level); after_key says a key was just written, so
 * the next value takes no comma.  Nesting deeper than JSON_MAX_DEPTH - 1
 * is a caller bug: the output stays well-nested but commas at the deepest
 * levels may be wrong.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output/json.h"
#include "base/util.h"

static inline int level(const struct json *j)
{
	return j->depth < JSON_MAX_DEPTH ? j->depth : JSON_MAX_DEPTH - 1;
}

/* Before any value or key: the comma, if one is due. */
static void before_value(struct json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth > 0) {
		if (!j->first[level(j)])
			putc(',', j->f);
		j->first[level(j)] = 0;
	}
}

/* After a complete value: the top-level value ends with a newline. */
static void after_value(struct json *j)
{
	if (j->depth == 0)
		putc('\n', j->f);
}

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = 1;
}

static void open_container(struct json *j, int c)
{
	before_value(j);
	putc(c, j->f);
	j->depth++;
	j->first[level(j)] = 1;
}

static void close_container(struct json *j, int c)
{
	if (j->depth > 0)
		j->depth--;
	j->after_key = 0;
	putc(c, j->f);
	after_value(j);
}

void json_object_begin(struct json *j)
{
	open_container(j, '{');
}

void json_object_end(struct json *j)
{
	close_container(j, '}');
}

void json_array_begin(struct json *j)
{
	open_container(j, '[');
}

void json_array_end(struct json *j)
{
	close_container(j, ']');
}

static void write_string(FILE *f, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)str;
	const unsigned char *run = p;	/* start of bytes to copy verbatim */

	putc('"', f);
	for (;;) {
		unsigned char c = *p;
		const char *esc;
		char ubuf[7];
		int n;

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0x80) {
			n = utf8_len((const char *)p);
			if (n) {
				p += n;
				continue;
			}
		}
		if (p > run)
			fwrite(run, 1, (size_t)(p - run), f);
		if (c == 0)
			break;
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			if (c >= 0x80) {
				esc = "\\ufffd";
			} else {
				memcpy(ubuf, "\\u00", 4);
				ubuf[4] = hex[c >> 4];
				ubuf[5] = hex[c & 15];
				ubuf[6] = '\0';
				esc = ubuf;
			}
			break;
		}
		fputs(esc, f);
		p++;
		run = p;
	}
	putc('"', f);
}

void json_key(struct json *j, const char *key)
{
	before_value(j);
	write_string(j->f, key ? key : "");
	putc(':', j->f);
	j->after_key = 1;
}

void json_string(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	before_value(j);
	write_string(j->f, s);
	after_value(j);
}

void json_int(struct json *j, int64_t v)
{
	before_value(j);
	fprintf(j->f, "%" PRId64, v);
	after_value(j);
}

void json_uint(struct json *j, uint64_t v)
{
	before_value(j);
	fprintf(j->f, "%" PRIu64, v);
	after_value(j);
}

void json_seconds(struct json *j, double v)
{
	before_value(j);
	fprintf(j->f, "%.3f", v);
	after_value(j);
}

void json_double(struct json *j, double v)
{
	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	before_value(j);
	fprintf(j->f, "%.1f", v);
	after_value(j);
}

void json_bool(struct json *j, int v)
{
	before_value(j);
	fputs(v ? "true" : "false", j->f);
	after_value(j);
}

void json_null(struct json *j)
{
	before_value(j);
	fputs("null", j->f);
	after_value(j);
}
