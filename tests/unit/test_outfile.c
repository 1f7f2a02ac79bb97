/* test_outfile.c - report files: checks, atomic and in-place writes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "output/outfile.h"
#include "capture.h"

static char dir[64];

static int setup(void **state)
{
	strcpy(dir, "/tmp/test_outfile.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static char *in_dir(const char *name)
{
	static char buf[4][128];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

/* outfile_check(PATH) fails with "ptleak: cannot write PATH: TAIL". */
static void check_refused(const char *path, const char *tail)
{
	char expect[256], *err;
	struct cap c;
	int ret;

	cap_begin(&c);
	ret = outfile_check(path);
	err = cap_end(&c);
	assert_int_equal(ret, -1);
	snprintf(expect, sizeof(expect), "ptleak: cannot write %s: %s\n", path, tail);
	assert_string_equal(err, expect);
	free(err);
}

static void test_check(void **state)
{
	char expect[128];

	check_refused(dir, "Is a directory");
	snprintf(expect, sizeof(expect), "%s/", dir);
	check_refused(expect, "a file name is needed, not a directory");
	check_refused(in_dir("missing/r"), "No such file or directory");
	{
		struct cap c;
		char *err;

		cap_begin(&c);
		assert_int_equal(outfile_check(""), -1);
		err = cap_end(&c);
		assert_string_equal(err, "ptleak: cannot write '': empty file name\n");
		free(err);
	}
	assert_int_equal(outfile_check(in_dir("r.json")), 0);
	/* nothing left behind */
	assert_int_equal(access(in_dir("r.json"), F_OK), -1);
	assert_int_equal(access(in_dir("r.json.tmp"), F_OK), -1);
	assert_int_equal(outfile_check("/dev/null"), 0);
}

static void write_report(const char *path, const char *text)
{
	struct outfile of;

	assert_int_equal(outfile_open(&of, path), 0);
	fputs(text, of.f);
	assert_int_equal(outfile_commit(&of), 0);
}

static ino_t inode(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static void check_content(const char *path, const char *want)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_true(fgets(buf, sizeof(buf), f) || !*want);
	fclose(f);
	assert_string_equal(buf, want);
}

static void test_regular_and_link(void **state)
{
	const char *real = in_dir("real.json"), *link = in_dir("link.json");
	ino_t ino;
	struct stat st;

	write_report(real, "one\n");
	ino = inode(real);
	write_report(real, "two\n");
	/* renamed over: a reader holding the old file still has it whole */
	assert_true(inode(real) != ino);
	check_content(real, "two\n");
	assert_int_equal(symlink("real.json", link), 0);
	ino = inode(real);
	write_report(link, "three\n");
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_true(inode(real) != ino);
	check_content(real, "three\n");
	/* a dangling link's file is created */
	assert_int_equal(symlink("new.json", in_dir("dangling")), 0);
	write_report(in_dir("dangling"), "four\n");
	check_content(in_dir("new.json"), "four\n");
	assert_int_equal(access(in_dir("new.json.tmp"), F_OK), -1);
	/* a loop */
	assert_int_equal(symlink("loop", in_dir("loop")), 0);
	check_refused(in_dir("loop"), "Too many levels of symbolic links");
}

static void test_in_place(void **state)
{
	const char *fifo = in_dir("fifo"), *null = in_dir("null");
	char buf[16] = "";
	struct stat st;
	int rd;

	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* nobody reads it: an error, not a hang */
	{
		struct outfile of;
		char expect[128], *err;
		struct cap c;

		assert_int_equal(outfile_check(fifo), 0);
		cap_begin(&c);
		assert_int_equal(outfile_open(&of, fifo), -1);
		err = cap_end(&c);
		snprintf(expect, sizeof(expect), "ptleak: cannot write %s: no "
			 "process reads it\n", fifo);
		assert_string_equal(err, expect);
		free(err);
	}
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	write_report(fifo, "fifo\n");
	assert_int_equal(read(rd, buf, sizeof(buf) - 1), 5);
	assert_string_equal(buf, "fifo\n");
	close(rd);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	/* a device: a null device of our own (root only), never /dev/null */
	if (mknod(null, S_IFCHR | 0666, makedev(1, 3)))
		return;
	write_report(null, "x\n");
	assert_int_equal(lstat(null, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(access(in_dir("null.tmp"), F_OK), -1);
}

/* TMPL expanded with pid 1234 is WANT (NULL: refused with message ERR). */
static void check_expand(const char *tmpl, const char *want, const char *err)
{
	struct cap c;
	char *got, *msg;

	cap_begin(&c);
	got = outfile_expand(tmpl, 1234);
	msg = cap_end(&c);
	if (want) {
		assert_non_null(got);
		assert_string_equal(got, want);
		assert_string_equal(msg, "");
	} else {
		assert_null(got);
		assert_string_equal(msg, err);
	}
	free(got);
	free(msg);
}

/* %p, %q{VAR} and %% as valgrind's --log-file; the rest refused */
static void test_expand(void **state)
{
	setenv("PTLEAK_T_VAR", "val/x", 1);
	unsetenv("PTLEAK_T_NONE");
	check_expand("plain.txt", "plain.txt", NULL);
	check_expand("", "", NULL);
	check_expand("vg.%p.log", "vg.1234.log", NULL);
	check_expand("%p%p", "12341234", NULL);
	check_expand("a/%q{PTLEAK_T_VAR}.%p", "a/val/x.1234", NULL);
	check_expand("100%%", "100%", NULL);
	check_expand("x%q{PTLEAK_T_NONE}", NULL,
		     "ptleak: x%q{PTLEAK_T_NONE}: %q{PTLEAK_T_NONE}: environment "
		     "variable PTLEAK_T_NONE is not set\n");
	check_expand("x%n", NULL,
		     "ptleak: x%n: '%' must be followed by p, q{VAR} or %\n");
	check_expand("x%", NULL,
		     "ptleak: x%: '%' must be followed by p, q{VAR} or %\n");
	check_expand("x%q{}", NULL,
		     "ptleak: x%q{}: '%' must be followed by p, q{VAR} or %\n");
	check_expand("x%q{A", NULL,
		     "ptleak: x%q{A: '%' must be followed by p, q{VAR} or %\n");
	assert_int_equal(outfile_has_pid("a%pb"), 1);
	assert_int_equal(outfile_has_pid("a%%pb"), 0);
	assert_int_equal(outfile_has_pid("a%"), 0);
}

/* outfile_open expands the name with outfile_set_pid's pid */
static void test_open_expands(void **state)
{
	struct outfile of;
	char name[160];
	FILE *f;

	snprintf(name, sizeof(name), "%s/r.%%p.txt", dir);
	outfile_set_pid(77);
	assert_int_equal(outfile_check(name), 0);
	assert_int_equal(outfile_open(&of, name), 0);
	fputs("x\n", of.f);
	assert_int_equal(outfile_commit(&of), 0);
	outfile_set_pid(0);
	f = fopen(in_dir("r.77.txt"), "r");
	assert_non_null(f);
	fclose(f);
}

/* -f's names: %p is the pid, everywhere; without one, a child's name
 * gets .PID and the first process's is the name as given. */
static void test_pid_name(void **state)
{
	static const struct {
		const char *name;
		int child;
		const char *want;
	} t[] = {
		{ "r.txt", 0, "r.txt" },
		{ "r.txt", 1, "r.txt.4712" },
		{ "r.%p.txt", 0, "r.4712.txt" },
		{ "r.%p.txt", 1, "r.4712.txt" },
		{ "%p/%p", 1, "4712/4712" },
		{ "50%", 1, "50%.4712" },
		{ "a%q", 1, "a%q.4712" },
		{ "", 1, ".4712" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *got = outfile_pid_name(t[i].name, 4712, t[i].child);

		assert_string_equal(got, t[i].want);
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pid_name),
		cmocka_unit_test_setup_teardown(test_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_regular_and_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_place, setup, teardown),
		cmocka_unit_test(test_expand),
		cmocka_unit_test_setup_teardown(test_open_expands, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
