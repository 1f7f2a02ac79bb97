/*
 * capture.h - unit tests: capture what is written to stderr (the
 * "ptleak: ..." messages) while the code under test runs.  Include after
 * <cmocka.h>.
 */
#ifndef PTLEAK_TEST_CAPTURE_H
#define PTLEAK_TEST_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* cap_begin(&c) ... cap_end(&c): the text written to stderr in between
 * (malloc'd, NUL-terminated). */
struct cap {
	int saved;
	FILE *tmp;
};

static inline void cap_begin(struct cap *c)
{
	fflush(stderr);
	c->tmp = tmpfile();
	assert_non_null(c->tmp);
	c->saved = dup(2);
	assert_true(c->saved >= 0);
	assert_true(dup2(fileno(c->tmp), 2) >= 0);
}

static inline char *cap_end(struct cap *c)
{
	char *buf;
	long n;

	fflush(stderr);
	assert_true(dup2(c->saved, 2) >= 0);
	close(c->saved);
	n = ftell(c->tmp);
	assert_true(n >= 0);
	rewind(c->tmp);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, c->tmp), (size_t)n);
	buf[n] = '\0';
	fclose(c->tmp);
	return buf;
}

#endif
