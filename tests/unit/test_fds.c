/* test_fds.c - the file-descriptor table, and reading /proc/self/fd. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tables/fds.h"

static struct fd_now now(int fd, const char *target, uint64_t ino)
{
	struct fd_now n;

	n.fd = fd;
	n.target = (char *)target;
	n.dev = ino ? 8 : 0;
	n.ino = ino;
	return n;
}

static struct fd_rec traced(int fd, const char *target, const char *fn,
			    uint32_t stack, uint64_t ino)
{
	struct fd_rec r;

	memset(&r, 0, sizeof(r));
	r.fd = fd;
	r.origin = FD_TRACED;
	r.type = (uint8_t)fd_type_of(target);
	r.opened_by = fn;
	r.target = (char *)target;
	r.stack = stack;
	r.tid = 100;
	r.time_ns = 5;
	r.dev = ino ? 8 : 0;
	r.ino = ino;
	return r;
}

static void counts(const struct fdtable *t, uint64_t open, uint64_t inherited)
{
	uint64_t o, i;

	fds_count(t, &o, &i);
	assert_int_equal(o, open);
	assert_int_equal(i, inherited);
}

static void test_types(void **state)
{
	assert_int_equal(fd_type_of("/dev/null"), FD_TYPE_FILE);
	assert_int_equal(fd_type_of("/memfd:x (deleted)"), FD_TYPE_FILE);
	assert_int_equal(fd_type_of("pipe:[1234]"), FD_TYPE_PIPE);
	assert_int_equal(fd_type_of("socket:[99]"), FD_TYPE_SOCKET);
	assert_int_equal(fd_type_of("anon_inode:[eventfd]"), FD_TYPE_ANON);
	assert_int_equal(fd_type_of("anon_inode:inotify"), FD_TYPE_ANON);
	assert_int_equal(fd_type_of("net:[4026531840]"), FD_TYPE_OTHER);
	assert_int_equal(fd_type_of(""), FD_TYPE_OTHER);
	assert_int_equal(fd_type_of(NULL), FD_TYPE_OTHER);
	assert_string_equal(fd_type_name(FD_TYPE_FILE), "file");
	assert_string_equal(fd_type_name(FD_TYPE_PIPE), "pipe");
	assert_string_equal(fd_type_name(FD_TYPE_SOCKET), "socket");
	assert_string_equal(fd_type_name(FD_TYPE_ANON), "anon");
	assert_string_equal(fd_type_name(FD_TYPE_OTHER), "other");
}

static void test_inherit_open_close(void **state)
{
	struct fdtable *t = fds_new();
	struct fd_now in[] = { now(0, "/dev/pts/0", 1), now(1, "pipe:[7]", 2),
			       now(2, "/dev/pts/0", 1) };
	struct fd_rec r = traced(3, "/dev/null", "open", 7, 3);
	char target[] = "/dev/null";
	const struct fd_rec *g;

	fds_inherit(t, in, 3);
	counts(t, 3, 0 + 3);
	assert_int_equal(fds_get(t, 1)->origin, FD_INHERITED);
	assert_int_equal(fds_get(t, 1)->type, FD_TYPE_PIPE);
	assert_null(fds_get(t, 3));

	r.target = target;
	fds_open(t, &r);
	target[0] = 'X';	/* the table has its own copy */
	g = fds_get(t, 3);
	assert_non_null(g);
	assert_string_equal(g->target, "/dev/null");
	assert_string_equal(g->opened_by, "open");
	assert_int_equal(g->stack, 7);
	assert_int_equal(g->tid, 100);
	assert_int_equal(g->type, FD_TYPE_FILE);
	counts(t, 4, 3);

	assert_int_equal(fds_close(t, 3), 1);
	assert_int_equal(fds_close(t, 3), 0);
	assert_int_equal(fds_close(t, -1), 0);
	assert_int_equal(fds_close(t, 1000), 0);
	assert_null(fds_get(t, 3));
	assert_null(fds_get(t, -1));
	counts(t, 3, 3);
	/* closing an inherited one */
	assert_int_equal(fds_close(t, 0), 1);
	counts(t, 2, 2);
	fds_delete(t);
}

static void test_dup2_replaces(void **state)
{
	struct fdtable *t = fds_new();
	struct fd_rec a = traced(5, "/a", "open", 1, 10);
	struct fd_rec b = traced(5, "/b", "dup2", 2, 11);

	fds_open(t, &a);
	fds_open(t, &b);
	counts(t, 1, 0);
	assert_string_equal(fds_get(t, 5)->target, "/b");
	assert_string_equal(fds_get(t, 5)->opened_by, "dup2");
	assert_int_equal(fds_get(t, 5)->stack, 2);
	fds_delete(t);
}

/* A number no kernel gives (the target's hooks or functions said so)
 * sizes nothing: ignored; the last one the kernel allows is kept. */
static void test_fd_bound(void **state)
{
	struct fdtable *t = fds_new();
	struct fd_rec big = traced(INT_MAX, "/x", "open", 1, 0);
	struct fd_rec at = traced(fds_max(), "/x", "open", 1, 0);
	struct fd_rec last = traced(fds_max() - 1, "/y", "open", 1, 0);
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	int nr_open = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &nr_open), 1);
	fclose(f);
	assert_int_equal(fds_max(), nr_open);
	fds_open(t, &big);
	fds_open(t, &at);
	counts(t, 0, 0);
	assert_null(fds_get(t, INT_MAX));
	fds_open(t, &last);
	counts(t, 1, 0);
	assert_string_equal(fds_get(t, nr_open - 1)->target, "/y");
	fds_delete(t);
}

/* The table's memory is one record per open descriptor, whatever the
 * numbers (a dense table indexed by fd took 56 MB for the last number
 * Debian's nr_open allows); lookups, closes and a sync among sparse
 * numbers stay exact. */
static void test_fd_sparse(void **state)
{
	struct fdtable *t = fds_new();
	struct fd_rec hi = traced(fds_max() - 1, "/hi", "open", 1, 0);
	struct fd_rec mid = traced(70000, "/mid", "open", 2, 0);
	struct fd_rec lo = traced(3, "/lo", "open", 3, 0);
	struct fd_now n[4];
	size_t before = mallinfo2().uordblks;

	fds_open(t, &hi);
	fds_open(t, &lo);
	fds_open(t, &mid);
	assert_true(mallinfo2().uordblks - before < 4096);
	counts(t, 3, 0);
	assert_int_equal(fds_limit(t), fds_max());
	assert_null(fds_get(t, 4));
	assert_null(fds_get(t, 69999));
	assert_string_equal(fds_get(t, 70000)->target, "/mid");
	assert_string_equal(fds_get(t, 3)->target, "/lo");
	assert_int_equal(fds_close(t, 69999), 0);
	assert_int_equal(fds_close(t, 70000), 1);
	assert_int_equal(fds_close(t, 70000), 0);
	fds_open(t, &mid);
	fds_close_range(t, 4, 80000);
	counts(t, 2, 0);
	assert_null(fds_get(t, 70000));
	/* /proc: 3 the same, 9 new, hi gone, 9 listed twice */
	n[0] = now(3, "/lo", 0);
	n[1] = now(9, "/nine", 0);
	n[2] = now(9, "/nine", 0);
	n[3] = now(200000, "/far", 0);
	fds_sync(t, n, 4);
	counts(t, 3, 0);
	assert_int_equal(fds_get(t, 3)->origin, FD_TRACED);
	assert_int_equal(fds_get(t, 9)->origin, FD_UNKNOWN);
	assert_int_equal(fds_get(t, 200000)->origin, FD_UNKNOWN);
	assert_null(fds_get(t, fds_max() - 1));
	assert_int_equal(fds_limit(t), 200001);
	fds_close_range(t, 0, UINT_MAX);
	counts(t, 0, 0);
	assert_int_equal(fds_limit(t), 0);
	fds_delete(t);
}

static void test_close_range(void **state)
{
	struct fdtable *t = fds_new();
	int fd;

	for (fd = 0; fd < 20; fd++) {
		struct fd_rec r = traced(fd, "/x", "open", 1, 0);

		fds_open(t, &r);
	}
	fds_close_range(t, 5, 9);
	counts(t, 15, 0);
	assert_non_null(fds_get(t, 4));
	assert_null(fds_get(t, 5));
	assert_null(fds_get(t, 9));
	assert_non_null(fds_get(t, 10));
	fds_close_range(t, 15, UINT_MAX);	/* closefrom(15) */
	counts(t, 10, 0);
	assert_non_null(fds_get(t, 14));
	assert_null(fds_get(t, 15));
	fds_close_range(t, 100, 200);		/* beyond: nothing */
	counts(t, 10, 0);
	fds_delete(t);
}

static void test_sync(void **state)
{
	struct fdtable *t = fds_new();
	struct fd_now in[] = { now(0, "/dev/pts/0", 1), now(1, "/dev/pts/0", 1),
			       now(2, "/dev/pts/0", 1) };
	struct fd_rec a = traced(3, "/a", "open", 1, 10);
	struct fd_rec b = traced(4, "/b", "open", 2, 11);
	struct fd_rec c = traced(6, "/c", "socket", 3, 12);
	/* 1 closed behind our back; 3 still /a (renamed); 4 gone; 5 raw
	 * syscall; 6 closed and reopened as another file; 40 beyond */
	struct fd_now seen[] = { now(0, "/dev/pts/0", 1), now(2, "/dev/pts/0", 1),
				 now(3, "/a-renamed", 10), now(5, "/raw", 13),
				 now(6, "/other", 14), now(40, "socket:[5]", 15) };
	const struct fd_rec *g;

	fds_inherit(t, in, 3);
	fds_open(t, &a);
	fds_open(t, &b);
	fds_open(t, &c);
	fds_sync(t, seen, 6);
	counts(t, 6, 2);
	assert_null(fds_get(t, 1));
	g = fds_get(t, 3);
	assert_int_equal(g->origin, FD_TRACED);
	assert_string_equal(g->target, "/a-renamed");
	assert_string_equal(g->opened_by, "open");
	assert_int_equal(g->stack, 1);
	assert_null(fds_get(t, 4));
	g = fds_get(t, 5);
	assert_int_equal(g->origin, FD_UNKNOWN);
	assert_null(g->opened_by);
	assert_string_equal(g->target, "/raw");
	assert_int_equal(g->stack, 0);
	g = fds_get(t, 6);
	assert_int_equal(g->origin, FD_UNKNOWN);
	assert_string_equal(g->target, "/other");
	g = fds_get(t, 40);
	assert_int_equal(g->origin, FD_UNKNOWN);
	assert_int_equal(g->type, FD_TYPE_SOCKET);
	assert_true(fds_limit(t) > 40);
	/* nothing open */
	fds_sync(t, NULL, 0);
	counts(t, 0, 0);
	fds_delete(t);
}

static void test_exec(void **state)
{
	struct fdtable *t = fds_new();
	struct fd_now in[] = { now(0, "/dev/null", 1) };
	struct fd_rec keep = traced(3, "/keep", "open", 4, 10);
	struct fd_rec cloexec = traced(4, "/cloexec", "open", 5, 11);
	struct fd_now after[] = { now(0, "/dev/null", 1), now(3, "/keep", 10) };
	const struct fd_rec *g;

	fds_inherit(t, in, 1);
	fds_open(t, &keep);
	fds_open(t, &cloexec);
	fds_exec(t, after, 2);
	counts(t, 2, 1);
	assert_null(fds_get(t, 4));
	g = fds_get(t, 3);
	assert_int_equal(g->origin, FD_TRACED);
	assert_int_equal(g->before_exec, 1);
	assert_int_equal(g->stack, 0);
	assert_string_equal(g->opened_by, "open");
	assert_int_equal(fds_get(t, 0)->origin, FD_INHERITED);
	/* inherit forgets everything */
	fds_inherit(t, NULL, 0);
	counts(t, 0, 0);
	fds_delete(t);
}

static void test_proc_self(void **state)
{
	struct fd_list l = { 0 };
	int p[2], fd, i, seen = 0;

	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fds_proc_read(getpid(), &l), 0);
	for (i = 0; i < (int)l.n; i++) {
		if (i)
			assert_true(l.v[i - 1].fd < l.v[i].fd);
		if (l.v[i].fd == fd) {
			assert_string_equal(l.v[i].target, "/dev/null");
			assert_true(l.v[i].ino != 0);
			seen++;
		}
		if (l.v[i].fd == p[0] || l.v[i].fd == p[1]) {
			assert_int_equal(fd_type_of(l.v[i].target), FD_TYPE_PIPE);
			seen++;
		}
	}
	assert_int_equal(seen, 3);
	close(fd);
	/* read again into the same list (the number may now be the
	 * reader's own descriptor of /proc/PID/fd) */
	assert_int_equal(fds_proc_read(getpid(), &l), 0);
	for (i = 0; i < (int)l.n; i++)
		if (l.v[i].fd == fd)
			assert_string_not_equal(l.v[i].target, "/dev/null");
	fd_list_free(&l);
	assert_int_equal(fds_proc_read(-5, &l), -1);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_inherit_open_close),
		cmocka_unit_test(test_dup2_replaces),
		cmocka_unit_test(test_fd_bound),
		cmocka_unit_test(test_fd_sparse),
		cmocka_unit_test(test_close_range),
		cmocka_unit_test(test_sync),
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_proc_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
