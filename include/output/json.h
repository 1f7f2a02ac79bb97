/*
 * json.h - a small streaming JSON writer.
 *
 * Writes compact JSON with a newline at the end of the top-level value.
 * Commas and key/value separators are placed by the writer; strings are
 * escaped per RFC 8259 (control characters as \u00XX, invalid UTF-8 bytes
 * as \ufffd).
 */
#ifndef PTLEAK_JSON_H
#define PTLEAK_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int depth;
	unsigned char first[JSON_MAX_DEPTH];	/* no element written yet at this depth */
	unsigned char after_key;
};

void json_init(struct json *j, FILE *f);
void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);	/* NULL writes null */
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
/* V (finite) with 3 decimals: seconds */
void json_seconds(struct json *j, double v);
/* V with 1 decimal (a rate); null if it is not finite */
void json_double(struct json *j, double v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);

#endif
