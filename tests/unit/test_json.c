/* test_json.c - the streaming JSON writer, byte for byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/json.h"

struct out {
	char *buf;
	size_t len;
	FILE *f;
	struct json j;
};

static void out_open(struct out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	assert_non_null(o->f);
	json_init(&o->j, o->f);
}

/* Close the stream and compare everything written with EXPECT. */
static void out_check(struct out *o, const char *expect)
{
	assert_int_equal(fclose(o->f), 0);
	assert_int_equal(o->len, strlen(expect));
	assert_string_equal(o->buf, expect);
	free(o->buf);
}

/* One string value at the top level. */
static void check_string(const char *in, const char *expect)
{
	struct out o;

	out_open(&o);
	json_string(&o.j, in);
	out_check(&o, expect);
}

static void test_nested_document(void **state)
{
	struct out o;
	struct json *j = &o.j;

	out_open(&o);
	json_object_begin(j);
	json_key(j, "version");
	json_int(j, 1);
	json_key(j, "tool");
	json_string(j, "ptleak");
	json_key(j, "target");
	json_object_begin(j);
	json_key(j, "pid");
	json_int(j, 1234);
	json_key(j, "argv");
	json_array_begin(j);
	json_string(j, "./app");
	json_string(j, "-v");
	json_array_end(j);
	json_key(j, "exit");
	json_object_begin(j);
	json_key(j, "code");
	json_int(j, 0);
	json_object_end(j);
	json_object_end(j);
	json_key(j, "heap");
	json_object_begin(j);
	json_key(j, "in_use");
	json_object_begin(j);
	json_key(j, "bytes");
	json_uint(j, 4472);
	json_key(j, "blocks");
	json_uint(j, 6);
	json_object_end(j);
	json_key(j, "records");
	json_array_begin(j);
	json_object_begin(j);
	json_key(j, "kind");
	json_string(j, "definitely_lost");
	json_key(j, "stack");
	json_array_begin(j);
	json_object_begin(j);
	json_key(j, "pc");
	json_string(j, "0x55d0c0a01183");
	json_key(j, "function");
	json_string(j, "grow_buffer");
	json_key(j, "line");
	json_int(j, 14);
	json_key(j, "file");
	json_string(j, NULL);
	json_object_end(j);
	json_object_begin(j);
	json_object_end(j);
	json_array_end(j);
	json_object_end(j);
	json_array_begin(j);
	json_array_end(j);
	json_array_begin(j);
	json_array_begin(j);
	json_int(j, -1);
	json_array_end(j);
	json_bool(j, 1);
	json_bool(j, 0);
	json_null(j);
	json_array_end(j);
	json_array_end(j);
	json_object_end(j);
	json_key(j, "fds");
	json_null(j);
	json_key(j, "empty");
	json_object_begin(j);
	json_object_end(j);
	json_object_end(j);
	out_check(&o,
		  "{\"version\":1,\"tool\":\"ptleak\","
		  "\"target\":{\"pid\":1234,\"argv\":[\"./app\",\"-v\"],"
		  "\"exit\":{\"code\":0}},"
		  "\"heap\":{\"in_use\":{\"bytes\":4472,\"blocks\":6},"
		  "\"records\":[{\"kind\":\"definitely_lost\",\"stack\":["
		  "{\"pc\":\"0x55d0c0a01183\",\"function\":\"grow_buffer\","
		  "\"line\":14,\"file\":null},{}]},[],[[-1],true,false,null]]},"
		  "\"fds\":null,\"empty\":{}}\n");
}

static void test_top_level_values(void **state)
{
	struct out o;

	out_open(&o);
	json_array_begin(&o.j);
	json_array_end(&o.j);
	json_object_begin(&o.j);
	json_object_end(&o.j);
	json_int(&o.j, 5);
	json_string(&o.j, "x");
	json_null(&o.j);
	out_check(&o, "[]\n{}\n5\n\"x\"\nnull\n");
}

static void test_escape_short_forms(void **state)
{
	check_string("a\"b\\c/d", "\"a\\\"b\\\\c/d\"\n");
	check_string("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"\n");
	check_string("", "\"\"\n");
}

static void test_escape_all_control_chars(void **state)
{
	char in[32], expect[32 * 6 + 8], *e = expect;
	int c;

	for (c = 1; c < 32; c++)
		in[c - 1] = (char)c;
	in[31] = '\0';
	*e++ = '"';
	for (c = 1; c < 32; c++) {
		const char *s = NULL;

		switch (c) {
		case '\b': s = "\\b"; break;
		case '\f': s = "\\f"; break;
		case '\n': s = "\\n"; break;
		case '\r': s = "\\r"; break;
		case '\t': s = "\\t"; break;
		}
		if (s)
			e += sprintf(e, "%s", s);
		else
			e += sprintf(e, "\\u%04x", c);
	}
	strcpy(e, "\"\n");
	check_string(in, expect);
	/* spot checks of the exact form, lowercase hex */
	check_string("\x01", "\"\\u0001\"\n");
	check_string("\x1f", "\"\\u001f\"\n");
	check_string("\x1b[0m", "\"\\u001b[0m\"\n");
	check_string("\x0b", "\"\\u000b\"\n");
	/* DEL and other printable ASCII are not control characters in JSON */
	check_string("\x7f ~", "\"\x7f ~\"\n");
}

static void test_valid_utf8_passes(void **state)
{
	/* é (2 bytes), € (3), U+1F600 (4), U+FFFF, U+10FFFF, U+0080, U+07FF */
	check_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		     "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"\n");
	check_string("\xef\xbf\xbf\xf4\x8f\xbf\xbf\xc2\x80\xdf\xbf",
		     "\"\xef\xbf\xbf\xf4\x8f\xbf\xbf\xc2\x80\xdf\xbf\"\n");
	/* U+E000 just after the surrogates, U+D7FF just before */
	check_string("\xee\x80\x80\xed\x9f\xbf",
		     "\"\xee\x80\x80\xed\x9f\xbf\"\n");
}

static void test_invalid_utf8(void **state)
{
	/* lone continuation bytes, bytes never valid in UTF-8 */
	check_string("a\x80z", "\"a\\ufffdz\"\n");
	check_string("\xbf\xfe\xff", "\"\\ufffd\\ufffd\\ufffd\"\n");
	/* overlong encodings of '/' and NUL */
	check_string("\xc0\xaf", "\"\\ufffd\\ufffd\"\n");
	check_string("\xc1\xbf", "\"\\ufffd\\ufffd\"\n");
	check_string("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"\n");
	check_string("\xf0\x80\x80\xaf",
		     "\"\\ufffd\\ufffd\\ufffd\\ufffd\"\n");
	/* UTF-16 surrogate U+D800 */
	check_string("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"\n");
	/* above U+10FFFF */
	check_string("\xf4\x90\x80\x80",
		     "\"\\ufffd\\ufffd\\ufffd\\ufffd\"\n");
	check_string("\xf5\x80\x80\x80",
		     "\"\\ufffd\\ufffd\\ufffd\\ufffd\"\n");
	/* truncated sequences, followed by ASCII or the end */
	check_string("\xe2\x82" "A", "\"\\ufffd\\ufffdA\"\n");
	check_string("x\xc3", "\"x\\ufffd\"\n");
	check_string("\xf0\x9f\x98", "\"\\ufffd\\ufffd\\ufffd\"\n");
	/* an invalid byte next to a valid sequence leaves it intact */
	check_string("\xff\xc3\xa9\xff", "\"\\ufffd\xc3\xa9\\ufffd\"\n");
	/* in keys too */
	{
		struct out o;

		out_open(&o);
		json_object_begin(&o.j);
		json_key(&o.j, "k\x80\"");
		json_int(&o.j, 1);
		json_object_end(&o.j);
		out_check(&o, "{\"k\\ufffd\\\"\":1}\n");
	}
}

static void test_null_strings(void **state)
{
	struct out o;

	check_string(NULL, "null\n");
	out_open(&o);
	json_array_begin(&o.j);
	json_string(&o.j, NULL);
	json_string(&o.j, "");
	json_string(&o.j, NULL);
	json_array_end(&o.j);
	out_check(&o, "[null,\"\",null]\n");

	out_open(&o);
	json_object_begin(&o.j);
	json_key(&o.j, "function");
	json_string(&o.j, NULL);
	json_key(&o.j, "file");
	json_string(&o.j, NULL);
	json_object_end(&o.j);
	out_check(&o, "{\"function\":null,\"file\":null}\n");
}

static void test_numbers(void **state)
{
	struct out o;

	out_open(&o);
	json_array_begin(&o.j);
	json_int(&o.j, INT64_MIN);
	json_int(&o.j, INT64_MAX);
	json_int(&o.j, 0);
	json_int(&o.j, -42);
	json_uint(&o.j, UINT64_MAX);
	json_uint(&o.j, 0);
	json_array_end(&o.j);
	out_check(&o, "[-9223372036854775808,9223372036854775807,0,-42,"
		      "18446744073709551615,0]\n");
}

static void test_deep_nesting(void **state)
{
	struct out o;
	char expect[256], *e = expect;
	int i;

	out_open(&o);
	for (i = 0; i < JSON_MAX_DEPTH - 1; i++)
		json_array_begin(&o.j);
	json_int(&o.j, 1);
	json_int(&o.j, 2);
	for (i = 0; i < JSON_MAX_DEPTH - 1; i++)
		json_array_end(&o.j);
	for (i = 0; i < JSON_MAX_DEPTH - 1; i++)
		*e++ = '[';
	e += sprintf(e, "1,2");
	for (i = 0; i < JSON_MAX_DEPTH - 1; i++)
		*e++ = ']';
	strcpy(e, "\n");
	out_check(&o, expect);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_document),
		cmocka_unit_test(test_top_level_values),
		cmocka_unit_test(test_escape_short_forms),
		cmocka_unit_test(test_escape_all_control_chars),
		cmocka_unit_test(test_valid_utf8_passes),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_null_strings),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_deep_nesting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
