/* test_coverage.c - calls not recorded: one warning, exact counts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tables/coverage.h"
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

static void test_heap_fds_why(void **state)
{
	struct coverage c;
	struct cov_view v;
	char buf[512];

	memset(&c, 0, sizeof(c));
	memset(&v, 0, sizeof(v));
	v.prog = "./app";
	v.pid = 42;
	v.is_static = 1;
	assert_string_equal(cov_heap_why(&c, &v, buf, sizeof(buf)),
		"no allocator function found in ./app (stripped static executable?)");
	assert_string_equal(cov_fds_why(&c, &v, buf, sizeof(buf)),
		"no descriptor function found in ./app (stripped static "
		"executable?); only /proc/42/fd is read at reports");
	v.is_static = 0;
	assert_string_equal(cov_heap_why(&c, &v, buf, sizeof(buf)),
		"no allocator function found in the objects loaded by ./app");
	assert_string_equal(cov_fds_why(&c, &v, buf, sizeof(buf)),
		"no descriptor function found in the objects loaded by ./app; "
		"only /proc/42/fd is read at reports");
	/* all seen */
	v.malloc_bound = 1;
	v.fd_planted = 30;
	assert_null(cov_heap_why(&c, &v, buf, sizeof(buf)));
	assert_null(cov_fds_why(&c, &v, buf, sizeof(buf)));
	/* a process gone is no blindness: what was seen holds */
	v.mem_err = ESRCH;
	v.fd_err = ENOENT;
	assert_null(cov_heap_why(&c, &v, buf, sizeof(buf)));
	assert_null(cov_fds_why(&c, &v, buf, sizeof(buf)));
	v.mem_err = EPERM;
	v.fd_err = EACCES;
	assert_string_equal(cov_heap_why(&c, &v, buf, sizeof(buf)),
		"the memory of process 42 cannot be read: Operation not permitted" HINT);
	assert_string_equal(cov_fds_why(&c, &v, buf, sizeof(buf)),
		"/proc/42/fd cannot be read: Permission denied" HINT);
	/* lost calls say more: they come first */
	c.warned = 1;	/* no warning printed here */
	cov_lost(&c, COV_HEAP, 0, "x");
	assert_string_equal(cov_heap_why(&c, &v, buf, sizeof(buf)),
		"1 allocator call was not recorded (first: x)");
}

/* A part stopped: its why from then on, silent, the first one kept;
 * calls lost (before or after) follow it; an exec forgets it. */
static void test_stop(void **state)
{
	struct coverage c;
	struct cap cap;
	char buf[512], *err;

	memset(&c, 0, sizeof(c));
	cap_begin(&cap);
	cov_stop(&c, COV_HEAP, "the target wrote over ptleak's ring at %.3f s", 1.5);
	cov_stop(&c, COV_HEAP, "second");
	err = cap_end(&cap);
	assert_string_equal(err, "");
	free(err);
	assert_string_equal(cov_why(&c, COV_HEAP, buf, sizeof(buf)),
		"the target wrote over ptleak's ring at 1.500 s");
	assert_null(cov_why(&c, COV_FDS, buf, sizeof(buf)));
	c.warned = 1;
	cov_lost(&c, COV_HEAP, 0, "y");
	cov_lost(&c, COV_HEAP, 0, "z");
	assert_string_equal(cov_why(&c, COV_HEAP, buf, sizeof(buf)),
		"the target wrote over ptleak's ring at 1.500 s; 2 allocator calls "
		"were not recorded (first: y)");
	cov_reset(&c, COV_HEAP);
	assert_null(cov_why(&c, COV_HEAP, buf, sizeof(buf)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_warning),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_err_text),
		cmocka_unit_test(test_heap_fds_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
