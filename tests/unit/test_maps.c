/* test_maps.c - maps.c: /proc/PID/maps lines, names with spaces, quotes,
 * non-ASCII bytes and any length. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "target/maps.h"

static void parse_ok(const char *text, uint64_t start, uint64_t end, const char *perms,
		     uint64_t offset, unsigned maj, unsigned min, uint64_t inode,
		     const char *name)
{
	char line[512];
	struct maps_entry e;

	snprintf(line, sizeof(line), "%s", text);
	assert_int_equal(maps_parse(line, &e), 0);
	assert_int_equal(e.start, start);
	assert_int_equal(e.end, end);
	assert_string_equal(e.perms, perms);
	assert_int_equal(e.offset, offset);
	assert_int_equal(e.maj, maj);
	assert_int_equal(e.min, min);
	assert_int_equal(e.inode, inode);
	assert_string_equal(e.name, name);
}

static void test_parse(void **state)
{
	/* the name is the rest of the line: spaces, a quote, UTF-8 */
	parse_ok("55d0c0a00000-55d0c0a01000 r--p 00001000 fd:01 1234                       "
		 "/root/pt leak x'\xc3\xa9/ptleak/build/targets/h_basic\n",
		 0x55d0c0a00000, 0x55d0c0a01000, "r--p", 0x1000, 0xfd, 1, 1234,
		 "/root/pt leak x'\xc3\xa9/ptleak/build/targets/h_basic");
	parse_ok("7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n", 0x7f0000000000,
		 0x7f0000021000, "rw-p", 0, 0, 0, 0, "");
	parse_ok("7f0000000000-7f0000021000 rw-p 00000000 00:00 0", 0x7f0000000000,
		 0x7f0000021000, "rw-p", 0, 0, 0, 0, "");
	parse_ok("01000000-01021000 rw-p 00000000 00:00 0                          [heap]",
		 0x1000000, 0x1021000, "rw-p", 0, 0, 0, 0, "[heap]");
	parse_ok("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]",
		 0xffffffffff600000ull, 0xffffffffff601000ull, "--xp", 0, 0, 0, 0,
		 "[vsyscall]");
	/* blanks inside and at the end of a name are the name's */
	parse_ok("1000-2000 r-xp 00000000 08:11 77 /a  two  spaces/x (deleted)",
		 0x1000, 0x2000, "r-xp", 0, 8, 0x11, 77, "/a  two  spaces/x (deleted)");
	parse_ok("1000-2000 r-xp 00000000 08:11 77\t/tab\n", 0x1000, 0x2000, "r-xp", 0, 8,
		 0x11, 77, "/tab");
}

static void test_parse_bad(void **state)
{
	static const char *bad[] = {
		"", "\n", "garbage", "1000-2000 r-xp", "1000-2000 r-xp 0 08:01",
		"zz-2000 r-xp 00000000 08:01 1 /a", "1000-2000 r-xp 00000000 08:01 12x /a",
		"1000 r-xp 00000000 08:01 1 /a",
	};
	struct maps_entry e;
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[64];

		snprintf(line, sizeof(line), "%s", bad[i]);
		assert_int_equal(maps_parse(line, &e), -1);
	}
}

/* A line longer than MAPS_LINE_MAX is skipped whole; the lines around it
 * are read. */
static void test_overlong_line(void **state)
{
	char path[] = "/tmp/ptleak-maps.XXXXXX";
	struct maps_file *m;
	struct maps_entry e;
	int fd = mkstemp(path);
	FILE *f;
	size_t i;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "1000-2000 r-xp 00000000 08:01 1 /first\n");
	fprintf(f, "3000-4000 r-xp 00000000 08:01 2 /");
	for (i = 0; i < MAPS_LINE_MAX + 10; i++)
		putc('x', f);
	fprintf(f, " 5000-6000 r-xp 00000000 08:01 3 /not a line\n");
	fprintf(f, "7000-8000 rw-p 00000000 00:00 0\n");
	fprintf(f, "junk\n9000-a000 r--p 00002000 08:01 4 /last one");
	fclose(f);
	m = maps_open_path(path);
	assert_non_null(m);
	assert_int_equal(maps_next(m, &e), 1);
	assert_string_equal(e.name, "/first");
	assert_int_equal(maps_next(m, &e), 1);
	assert_int_equal(e.start, 0x7000);
	assert_string_equal(e.name, "");
	assert_int_equal(maps_next(m, &e), 1);
	assert_int_equal(e.start, 0x9000);
	assert_int_equal(e.offset, 0x2000);
	assert_string_equal(e.name, "/last one");
	assert_int_equal(maps_next(m, &e), 0);
	maps_close(m);
	unlink(path);
	assert_null(maps_open_path(path));
}

/* This process's own maps, with a file mapped from a directory whose
 * path holds a space, a quote, an e-acute and is 1,000 bytes long (the
 * old readers' 512-byte lines cut it in two): found with its whole
 * path, and the mappings after it (the stack) too. */
static void test_own_long_path(void **state)
{
	char base[] = "/tmp/ptleak-maps.XXXXXX", path[1200], comp[201];
	const char *odd = "pt leak x'\xc3\xa9";
	int found = 0, stack = 0, fd, n;
	struct maps_file *m;
	struct maps_entry e;
	void *p;

	assert_non_null(mkdtemp(base));
	memset(comp, 'd', 200);
	comp[200] = '\0';
	n = snprintf(path, sizeof(path), "%s/%s", base, odd);
	assert_int_equal(mkdir(path, 0700), 0);
	while (n < 1000) {
		n += snprintf(path + n, sizeof(path) - n, "/%s", comp);
		assert_int_equal(mkdir(path, 0700), 0);
	}
	strcat(path, "/obj");
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(p != MAP_FAILED);
	close(fd);

	m = maps_open(getpid());
	assert_non_null(m);
	while (maps_next(m, &e)) {
		if (e.start == (uint64_t)(uintptr_t)p) {
			assert_string_equal(e.name, path);
			assert_string_equal(e.perms, "r--p");
			found++;
		}
		stack += !strcmp(e.name, "[stack]");
	}
	maps_close(m);
	assert_int_equal(found, 1);
	assert_int_equal(stack, 1);

	munmap(p, 4096);
	assert_int_equal(unlink(path), 0);
	while (strlen(path) > strlen(base)) {
		*strrchr(path, '/') = '\0';
		if (strlen(path) > strlen(base))
			assert_int_equal(rmdir(path), 0);
	}
	assert_int_equal(rmdir(base), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_overlong_line),
		cmocka_unit_test(test_own_long_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
