/* test_coverage.c - calls not recorded: one warning, exact counts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "coverage.h"
#include "capture.h"

#define HINT " (the process is not dumpable: setuid, or " \
	"prctl(PR_SET_DUMPABLE, 0); run ptleak as root or with CAP_SYS_PTRACE)"

static void test_one_warning(void **state)
{
	struct coverage c;
	struct cap cap;
	char buf[512], *err;
	int i;

	memset(&c, 0, sizeof(c));
	assert_null(cov_why(&c, COV_HEAP, buf, sizeof(buf)));
	cap_begin(&cap);
	for (i = 0; i < 10000; i++)
		cov_lost(&c, COV_HEAP, EPERM, "cannot read the return address of "
			 "malloc in thread %d", 7);
	cov_lost(&c, COV_FDS, 0, "cannot emulate push in thread 8 at open");
	err = cap_end(&cap);
	/* bounded: one line whatever the number of calls */
	assert_string_equal(err, "ptleak: warning: cannot read the return "
		"address of malloc in thread 7: Operation not permitted" HINT
		": this call is not recorded, nor any like it (the report counts "
		"them)\n");
	free(err);
	assert_string_equal(cov_why(&c, COV_HEAP, buf, sizeof(buf)),
		"10000 allocator calls were not recorded (first: cannot read the "
		"return address of malloc in thread 7: Operation not permitted"
		HINT ")");
	assert_string_equal(cov_why(&c, COV_FDS, buf, sizeof(buf)),
		"1 descriptor call was not recorded (first: cannot emulate push "
		"in thread 8 at open)");
	cov_reset(&c, COV_HEAP);
	assert_null(cov_why(&c, COV_HEAP, buf, sizeof(buf)));
	assert_non_null(cov_why(&c, COV_FDS, buf, sizeof(buf)));
}

static void test_err_text(void **state)
{
	char buf[256];

	assert_string_equal(cov_err_text(0, buf, sizeof(buf)), "");
	assert_string_equal(cov_err_text(ESRCH, buf, sizeof(buf)),
			    ": No such process");
	assert_string_equal(cov_err_text(EACCES, buf, sizeof(buf)),
			    ": Permission denied" HINT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_warning),
		cmocka_unit_test(test_err_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
