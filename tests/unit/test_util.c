/* test_util.c - util.c: names made safe for a terminal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_safe),
		cmocka_unit_test(test_messages_escaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
