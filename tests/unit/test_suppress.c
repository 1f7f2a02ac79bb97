/* test_suppress.c - suppressions files: parsing and matching. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analysis/suppress.h"
#include "capture.h"

/* ---- helpers ---- */

/* Write TEXT to a new temp file; its path into PATH (>= 64 bytes). */
static void write_tmp(char *path, const char *text)
{
	int fd;
	size_t n = strlen(text);

	strcpy(path, "/tmp/test_suppress.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
}

static struct suppressions *load_text(const char *text)
{
	char path[64];
	struct suppressions *s;

	write_tmp(path, text);
	s = supp_load(path);
	unlink(path);
	return s;
}

/* Loading TEXT fails with the message "ptleak: PATH:LINE: ...'GOT'". */
static void check_malformed(const char *text, int line, const char *got)
{
	char path[64], expect[256], *err;
	struct suppressions *s;
	struct cap c;

	write_tmp(path, text);
	cap_begin(&c);
	s = supp_load(path);
	err = cap_end(&c);
	unlink(path);
	assert_null(s);
	snprintf(expect, sizeof(expect),
		 "ptleak: %s:%d: expected leak:GLOB, fd:GLOB or type:GLOB, got '%s'\n",
		 path, line, got);
	assert_string_equal(err, expect);
	free(err);
}

static struct frame_info frame(const char *fn, const char *file,
			       const char *module)
{
	struct frame_info fi;

	memset(&fi, 0, sizeof(fi));
	fi.pc = 0x1000;
	fi.function = fn;
	fi.file = file;
	fi.line = file ? 10 : 0;
	fi.module = module;
	return fi;
}

#define LIBFOO "/usr/lib/x86_64-linux-gnu/libfoo.so.1"

/* ---- tests ---- */

static void test_parse(void **state)
{
	/* leading blanks are skipped, as LSan does */
	struct suppressions *s = load_text(
		"# a comment\n"
		"\n"
		"leak:grow_buffer\r\n"
		"   \t\r\n"
		" \tfd:open_log  \n"
		"  #leak:not_me\n"
		"leak:lib*.so*\t\r\n"
		"leak:x");	/* no final newline */
	assert_non_null(s);
	assert_int_equal(s->n, 4);
	assert_int_equal(s->p[0].kind, SUPP_LEAK);
	assert_string_equal(s->p[0].glob, "grow_buffer");
	assert_int_equal(s->p[0].line, 3);
	assert_int_equal(s->p[1].kind, SUPP_FD);
	assert_string_equal(s->p[1].glob, "open_log");
	assert_int_equal(s->p[1].line, 5);
	assert_int_equal(s->p[2].kind, SUPP_LEAK);
	assert_string_equal(s->p[2].glob, "lib*.so*");
	assert_int_equal(s->p[2].line, 7);
	assert_string_equal(s->p[3].glob, "x");
	assert_int_equal(s->p[3].line, 8);
	assert_true(s->p[0].count == 0 && s->p[0].bytes == 0);
	supp_free(s);

	/* an empty file, or only comments: no patterns */
	s = load_text("");
	assert_non_null(s);
	assert_int_equal(s->n, 0);
	supp_free(s);
	s = load_text("# nothing\r\n\r\n");
	assert_non_null(s);
	assert_int_equal(s->n, 0);
	supp_free(s);
	supp_free(NULL);
}

static void test_malformed(void **state)
{
	check_malformed("leak:a\nfoo\n", 2, "foo");
	check_malformed("# c\n\nleak:\r\n", 3, "leak:");
	check_malformed("fd:   \n", 1, "fd:");
	check_malformed("Leak:x\n", 1, "Leak:x");
	check_malformed("leak x\n", 1, "leak x");
	check_malformed("called:x  \r\n", 1, "called:x");
	check_malformed("  foo \n", 1, "foo");
}

/* Loading the LEN bytes DATA fails with exactly "ptleak: PATH" + TAIL. */
static void check_refused(const char *data, size_t len, const char *tail)
{
	char path[64], expect[256], *err;
	struct suppressions *s;
	struct cap c;
	FILE *f;

	strcpy(path, "/tmp/test_suppress.XXXXXX");
	f = fdopen(mkstemp(path), "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	cap_begin(&c);
	s = supp_load(path);
	err = cap_end(&c);
	unlink(path);
	assert_null(s);
	snprintf(expect, sizeof(expect), "ptleak: %s%s\n", path, tail);
	assert_string_equal(err, expect);
	free(err);
}

static void test_bounds(void **state)
{
	size_t big = SUPP_MAX_FILE + 1;
	char *buf = malloc(big);
	struct suppressions *s;

	assert_non_null(buf);
	/* a line of SUPP_MAX_LINE bytes is read, one more is refused */
	memcpy(buf, "#\nleak:", 7);
	memset(buf + 7, 'x', SUPP_MAX_LINE - 5);
	buf[SUPP_MAX_LINE + 2] = '\n';
	buf[SUPP_MAX_LINE + 3] = '\0';
	s = load_text(buf);
	assert_non_null(s);
	assert_int_equal(s->n, 1);
	assert_int_equal(strlen(s->p[0].glob), SUPP_MAX_LINE - 5);
	supp_free(s);
	buf[SUPP_MAX_LINE + 2] = 'x';
	check_refused(buf, SUPP_MAX_LINE + 3, ":2: line longer than 4096 bytes");
	/* a NUL byte: /dev/zero, a binary file */
	check_refused("leak:a\nleak:\0b\n", 15, ":2: a NUL byte: not a suppressions file");
	/* newlines alone count too: no file is read whole past the bound */
	memset(buf, '\n', big);
	check_refused(buf, big, ": more than 16 MiB: not a suppressions file");
	free(buf);
}

static void test_unreadable(void **state)
{
	struct cap c;
	char *err;

	cap_begin(&c);
	assert_null(supp_load("/nonexistent/supp.txt"));
	err = cap_end(&c);
	assert_string_equal(err,
		"ptleak: cannot read /nonexistent/supp.txt: No such file or directory\n");
	free(err);

	/* a directory cannot be read */
	cap_begin(&c);
	assert_null(supp_load("/tmp"));
	err = cap_end(&c);
	assert_true(!strncmp(err, "ptleak: cannot read /tmp: ", 26));
	free(err);
}

static void test_match(void **state)
{
	struct suppressions *s = load_text(
		"fd:grow_buffer\n"		/* 0: fd only */
		"leak:grow_*\n"			/* 1 */
		"leak:h_basic.c\n"		/* 2: file */
		"leak:libfoo.so.?\n"		/* 3: module basename */
		"leak:/opt/*/libbar.so\n"	/* 4: module full path */
		"leak:f?o\n");			/* 5 */
	struct frame_info fr[3];

	assert_non_null(s);
	assert_int_equal(s->n, 6);

	/* by function glob; fd: patterns never match leaks */
	fr[0] = frame("malloc", NULL, "/lib/libc.so.6");
	fr[1] = frame("grow_buffer", NULL, "/x/h_basic");
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 2), 1);
	assert_int_equal(supp_match(s, SUPP_FD, fr, 2), 0);
	/* only the first N frames are looked at */
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 1), -1);
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 0), -1);

	/* by source file */
	fr[1] = frame("other", "h_basic.c", "/x/h_basic");
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 2), 2);
	/* the glob must match the whole name */
	fr[1] = frame("other", "h_basic.cc", "/x/h_basic");
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 2), -1);

	/* by module basename, '?' for one character */
	fr[1] = frame(NULL, NULL, LIBFOO);
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 2), 3);
	fr[1] = frame(NULL, NULL, "/usr/lib/libfoo.so.12");
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 2), -1);

	/* by module full path; '*' also crosses '/' (no FNM_PATHNAME) */
	fr[1] = frame(NULL, NULL, "/opt/a/b/libbar.so");
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 2), 4);
	fr[1] = frame(NULL, NULL, "/usr/libbar.so");
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 2), -1);

	/* '?' in a function glob; the first matching pattern wins, in file
	 * order, whichever frame matches */
	fr[1] = frame("foo", NULL, NULL);
	fr[2] = frame("grow_x", NULL, NULL);
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 3), 1);
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 2), 5);
	fr[1] = frame("fooo", NULL, NULL);
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 2), -1);

	/* all fields NULL: no match, no crash */
	fr[0] = frame(NULL, NULL, NULL);
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 1), -1);

	/* matching does not count */
	assert_true(s->p[1].count == 0 && s->p[1].bytes == 0);
	supp_free(s);

	/* no suppressions */
	assert_int_equal(supp_match(NULL, SUPP_LEAK, fr, 1), -1);
}

/* A star matches everything named, including an empty-looking frame's
 * module; a bracket expression works too. */
static void test_star_and_brackets(void **state)
{
	struct suppressions *s = load_text("leak:*\nfd:[a-c]*_fd\n");
	struct frame_info fr[1];

	assert_non_null(s);
	fr[0] = frame(NULL, NULL, "/bin/x");
	assert_int_equal(supp_match(s, SUPP_LEAK, fr, 1), 0);
	fr[0] = frame("b_fd", NULL, NULL);
	assert_int_equal(supp_match(s, SUPP_FD, fr, 1), 1);
	fr[0] = frame("d_fd", NULL, NULL);
	assert_int_equal(supp_match(s, SUPP_FD, fr, 1), -1);
	supp_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_star_and_brackets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
