/* test_util.c - util.c: names made safe for a terminal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/util.h"
#include "capture.h"

static void check_safe(const char *in, const char *want)
{
	char *hold;
	const char *got = text_safe(in, &hold);

	assert_string_equal(got, want);
	/* a copy only when something was escaped */
	if (!strcmp(in, want))
		assert_true(got == in && !hold);
	else
		assert_true(got == hold);
	free(hold);
}

static void test_text_safe(void **state)
{
	char *hold = (char *)1;

	assert_null(text_safe(NULL, &hold));
	assert_null(hold);
	check_safe("", "");
	check_safe("operator new(unsigned long)", "operator new(unsigned long)");
	check_safe("leak\x1b[2Jesc", "leak\\x1b[2Jesc");
	check_safe("a\nb\tc\rd\x7f", "a\\x0ab\\x09c\\x0dd\\x7f");
	/* UTF-8 kept; C1 controls (U+009B, CSI) and stray bytes escaped */
	check_safe("caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac");
	check_safe("x\xc2\x9b" "31m", "x\\xc2\\x9b31m");
	check_safe("\x9b" "31m\xff\xc3", "\\x9b31m\\xff\\xc3");
	check_safe("\xed\xa0\x80", "\\xed\\xa0\\x80");	/* a surrogate */
}

static void test_messages_escaped(void **state)
{
	struct cap c;
	char *err;

	cap_begin(&c);
	error("cannot execute '%s': %s", "no\x1b]0;title\x07such", "No such file");
	err = cap_end(&c);
	assert_string_equal(err, "ptleak: cannot execute 'no\\x1b]0;title\\x07such': "
			    "No such file\n");
	free(err);
}

/* radix_sort_kv32: by key over all four bytes, equal keys kept in order */
static void test_radix_sort(void **state)
{
	static const uint32_t keys[] = {
		0x01000000, 7, 0xffffffff, 7, 0x00010000, 0, 0x100, 7, 0x01000000,
	};
	static const uint32_t sorted[] = {
		0, 7, 7, 7, 0x100, 0x00010000, 0x01000000, 0x01000000, 0xffffffff,
	};
	static const uint32_t vals[] = { 5, 1, 3, 7, 6, 4, 0, 8, 2 };
	struct kv32 a[9], tmp[9], same[3] = { { 4, 2 }, { 4, 0 }, { 4, 1 } };
	unsigned i;

	for (i = 0; i < 9; i++)
		a[i] = (struct kv32){ keys[i], i };
	radix_sort_kv32(a, tmp, 9);
	for (i = 0; i < 9; i++) {
		assert_int_equal(a[i].key, sorted[i]);
		assert_int_equal(a[i].val, vals[i]);
	}
	radix_sort_kv32(same, tmp, 3);	/* one digit every pass */
	assert_int_equal(same[0].val, 2);
	assert_int_equal(same[2].val, 1);
	radix_sort_kv32(a, tmp, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_safe),
		cmocka_unit_test(test_messages_escaped),
		cmocka_unit_test(test_radix_sort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
