/* test_proctree.c - the tree summary of -f. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "session/proctree.h"

/* (not inlined: gcc took BUF for a dangling pointer) */
static __attribute__((noinline)) char *print(const struct proctree *t,
					     pid_t first)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	proctree_print(t, f, first);
	fclose(f);
	return buf;
}

/* Children under their parent, in creation order; a process whose parent
 * has no row is a root; status, leaks, an exec's new command line. */
static void test_tree(void **state)
{
	struct proctree *t = proctree_new();
	char *a[] = { "make", "-j2", NULL }, *b[] = { "sh", "-c", "x", NULL };
	char *c[] = { "cc", "a.c", NULL }, *d[] = { "daemon", NULL };
	int r0, r1, r2, r3, r4;
	char *out;

	r0 = proctree_add(t, 100, 0, a);
	r1 = proctree_add(t, 101, 100, b);
	r2 = proctree_add(t, 102, 101, b);
	r3 = proctree_add(t, 103, 100, NULL);
	r4 = proctree_add(t, 200, 999, d);
	proctree_argv(t, r2, c);
	proctree_argv(t, r3, b);
	proctree_leaks(t, r0, 1000, 0);
	proctree_leaks(t, r2, 1234567, 1);
	proctree_leaks(t, r3, 0, 2);
	proctree_exit(t, r0, 0);
	proctree_exit(t, r1, 2 << 8);
	proctree_exit(t, r2, SIGSEGV);
	proctree_exit(t, r4, -1);
	out = print(t, 100);
	assert_string_equal(out,
		"ptleak[100]:\n"
		"ptleak[100]: PROCESS TREE: 5 processes\n"
		"ptleak[100]:   100 make -j2: exit 0, lost 1,000 bytes, 0 fds\n"
		"ptleak[100]:     101 sh -c x: exit 2, lost 0 bytes, 0 fds\n"
		"ptleak[100]:       102 cc a.c: killed by signal 11, lost 1,234,567 bytes, 1 fd\n"
		"ptleak[100]:     103 sh -c x: running, lost 0 bytes, 2 fds\n"
		"ptleak[100]:   200 daemon: let go, lost 0 bytes, 0 fds\n");
	free(out);
	proctree_free(t);
}

/* Bounded: rows past PROCTREE_MAX are counted and summed in one line;
 * a command line is cut past PROCTREE_CMD_MAX bytes, its control
 * characters replaced. */
static void test_bounds(void **state)
{
	struct proctree *t = proctree_new();
	char longarg[PROCTREE_CMD_MAX + 100], *argv[] = { "x\ty", longarg, NULL };
	char *out, *line;
	int i, row;

	memset(longarg, 'a', sizeof(longarg) - 1);
	longarg[sizeof(longarg) - 1] = '\0';
	for (i = 0; i < PROCTREE_MAX + 3; i++) {
		row = proctree_add(t, 1000 + i, i ? 1000 : 0, argv);
		assert_int_equal(row, i < PROCTREE_MAX ? i : -1);
		proctree_leaks(t, row, 10, 1);
	}
	out = print(t, 1000);
	assert_non_null(strstr(out, "PROCESS TREE: 4099 processes\n"));
	assert_non_null(strstr(out, "ptleak[1000]:   3 more processes (not listed): "
				    "lost 30 bytes, 3 fds\n"));
	line = strstr(out, "ptleak[1000]:   1000 x?y aaa");
	assert_non_null(line);
	/* "x?y " and PROCTREE_CMD_MAX - 7 a's, "..." */
	line = strchr(line + strlen("ptleak[1000]:"), ':');
	assert_non_null(line);
	assert_memory_equal(line - 3, "...", 3);
	assert_true(line[-4] == 'a');
	assert_int_equal(line - strstr(out, "1000 x?y aaa") - strlen("1000 "), PROCTREE_CMD_MAX);
	free(out);
	proctree_free(t);
}

/* Paths of any length and bytes are whole below the bound (a checkout
 * 200 bytes deep was cut at 119); past it, never inside a character. */
static void test_long_paths(void **state)
{
	struct proctree *t = proctree_new();
	char path[PROCTREE_CMD_MAX + 8], want[PROCTREE_CMD_MAX + 64];
	char *argv[] = { path, "leaf", NULL }, *out;
	size_t n;

	/* 1,000 bytes of "/pt leak x'\xc3\xa9" and a's */
	snprintf(path, sizeof(path), "/pt leak x'\xc3\xa9/");
	n = strlen(path);
	memset(path + n, 'a', 1000 - n);
	path[1000] = '\0';
	proctree_add(t, 100, 0, argv);
	proctree_exit(t, 0, 0);
	out = print(t, 100);
	snprintf(want, sizeof(want), "ptleak[100]:   100 %s leaf: exit 0, lost 0 bytes, 0 fds\n",
		 path);
	assert_non_null(strstr(out, want));
	free(out);
	/* an exec to a path whose e-acute straddles the cut */
	memset(path, 'b', sizeof(path));
	memcpy(path + PROCTREE_CMD_MAX - 4, "\xc3\xa9", 2);
	path[PROCTREE_CMD_MAX + 2] = '\0';
	argv[1] = NULL;
	proctree_argv(t, 0, argv);
	out = print(t, 100);
	memset(want, 'b', PROCTREE_CMD_MAX - 4);
	snprintf(want + PROCTREE_CMD_MAX - 4, sizeof(want) - (PROCTREE_CMD_MAX - 4),
		 "...: exit 0");
	assert_non_null(strstr(out, want));
	free(out);
	proctree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_long_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
