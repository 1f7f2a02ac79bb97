/*
 * test_cfi.c - the one-pass CFI interpreter (cfi.h) is exact: every
 * table compiled with it equals, byte for byte, the one compiled by
 * asking libdw for every row (unwtab_compile_slow), stats included.
 *
 * Objects: libc, ld.so, libstdc++, libm, libgcc_s, python3, the test
 * targets (static ones too), the odd objects next to this test, then the
 * other shared objects of /lib/x86_64-linux-gnu in name order until about
 * 3 s are spent (each file once, by inode).  For a longer sweep:
 *   PTLEAK_CFI_BUDGET_MS=1000000 PTLEAK_CFI_DIRS=/usr/bin:/usr/sbin \
 *       build/tests/test_cfi
 */
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <unistd.h>

#include "recorder/unwtab.h"
#include "base/util.h"

#define LIBDIR "/lib/x86_64-linux-gnu"
#define BUDGET_MS 3000
#define MAXFILES 16384

static const char *const core[] = {
	LIBDIR "/libc.so.6", LIBDIR "/ld-linux-x86-64.so.2",
	LIBDIR "/libstdc++.so.6", LIBDIR "/libm.so.6",
	LIBDIR "/libgcc_s.so.1", "/usr/bin/python3",
};

/* files compared, by inode, and totals */
static struct {
	ino_t ino[MAXFILES];
	dev_t dev[MAXFILES];
	unsigned n, tables, fdes, libdw_fdes;
} done;

static double now_ms(void)
{
	return now_ns() / 1e6;
}

static int seen_file(const char *path)
{
	struct stat st;
	unsigned i;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 1;
	for (i = 0; i < done.n; i++)
		if (done.ino[i] == st.st_ino && done.dev[i] == st.st_dev)
			return 1;
	if (done.n < MAXFILES) {
		done.ino[done.n] = st.st_ino;
		done.dev[done.n++] = st.st_dev;
	}
	return 0;
}

/*
 * PATH compiled both ways: the same result, the same bytes and stats
 * (but libdw_fdes).  Returns the fast compilation's stats in *OUT.
 */
static void compare(const char *path, struct unwtab_stats *out)
{
	struct unwtab_hdr *fast = NULL, *slow = NULL;
	struct unwtab_stats sf, ss;
	int rf, rs;

	memset(&sf, 0, sizeof(sf));
	memset(&ss, 0, sizeof(ss));
	util_silent++;
	rf = unwtab_compile(path, &fast, &sf);
	rs = unwtab_compile_slow(path, &slow, &ss);
	util_silent--;
	if (rf != rs)
		fail_msg("%s: compiled %d with the interpreter, %d by libdw",
			 path, rf, rs);
	if (out)
		*out = sf;
	if (rf < 0)
		return;
	if (fast->size != slow->size || memcmp(fast, slow, fast->size))
		fail_msg("%s: tables differ (%u and %u bytes)", path,
			 fast->size, slow->size);
	assert_int_equal(ss.libdw_fdes, ss.fdes);
	assert_true(sf.libdw_fdes <= sf.fdes);
	ss.libdw_fdes = sf.libdw_fdes;
	if (memcmp(&sf, &ss, sizeof(sf)))
		fail_msg("%s: stats differ", path);
	done.tables++;
	done.fdes += sf.fdes;
	done.libdw_fdes += sf.libdw_fdes;
	free(fast);
	free(slow);
}

/* The directory of this test's binary + "/" + REL. */
static void next_to_me(char *buf, size_t size, const char *rel)
{
	ssize_t len = readlink("/proc/self/exe", buf, size - 1);
	char *slash;

	assert_true(len > 0);
	buf[len] = 0;
	slash = strrchr(buf, '/');
	snprintf(slash + 1, size - (slash + 1 - buf), "%s", rel);
}

/* Every regular file of DIR whose name has SUFFIX (NULL: any). */
static unsigned compare_dir(const char *dir, const char *suffix,
			    double deadline)
{
	struct dirent **names;
	char path[PATH_MAX];
	unsigned n = 0;
	int i, count = scandir(dir, &names, NULL, alphasort);

	assert_true(count >= 0);
	for (i = 0; i < count; i++) {
		if ((!suffix || strstr(names[i]->d_name, suffix)) &&
		    now_ms() < deadline) {
			snprintf(path, sizeof(path), "%s/%s", dir,
				 names[i]->d_name);
			if (!seen_file(path)) {
				compare(path, NULL);
				n++;
			}
		}
		free(names[i]);
	}
	free(names);
	return n;
}

static void test_core_objects_exact(void **state)
{
	struct unwtab_stats st;
	unsigned i;

	for (i = 0; i < sizeof(core) / sizeof(core[0]); i++) {
		assert_int_equal(seen_file(core[i]), 0);
		compare(core[i], &st);
		/* the interpreter did run: libdw only for expressions */
		assert_int_equal(st.debug_frame, 0);
		assert_true(st.fdes > 0);
		assert_true(st.libdw_fdes * 50 < st.fdes);
	}
}

/* the targets, static ones too (no .eh_frame_hdr there) */
static void test_targets_exact(void **state)
{
	char dir[PATH_MAX];

	next_to_me(dir, sizeof(dir), "../targets");
	assert_true(compare_dir(dir, NULL, 1e18) >= 40);
	next_to_me(dir, sizeof(dir), ".");
	/* libuwt_*.so: .debug_frame only; CFI libdw refuses; every
	 * instruction (test_cfi_ops) */
	assert_int_equal(compare_dir(dir, "libuwt_", 1e18), 4);
}

/*
 * Every call frame instruction (uwt_cfi_ops.S), with .eh_frame_hdr and
 * without.  uwt_ops_frame: 23 rows, 6 INVALID (val_offset, register,
 * an fp offset past 16 bits, a CFA offset past 32 bits, val_offset_sf
 * twice) and a STOP; its rip offset of (2^58 + 1) * -8 is -8 in libdw's
 * 61 bits, which only the table's bytes show.  uwt_ops_tail: 2 rows, the
 * second cut at the FDE's end.  By libdw: uwt_ops_expr (3 rows, 2
 * INVALID), uwt_ops_unbalanced (restore_state with nothing remembered:
 * refused from its third byte on, 3 rows, 1 INVALID) and, without
 * .eh_frame_hdr, uwt_ops_unknown (the same with an unknown opcode).
 */
static void test_cfi_ops(void **state)
{
	char path[PATH_MAX];
	struct unwtab_stats st;

	next_to_me(path, sizeof(path), "libuwt_cfi_ops.so");
	compare(path, &st);
	assert_int_equal(st.fdes, 4);
	assert_int_equal(st.libdw_fdes, 2);
	assert_int_equal(st.ranges, 23 + 2 + 3 + 3);
	assert_int_equal(st.invalid, 6 + 2 + 1);
	assert_int_equal(st.refused, 1);
	assert_int_equal(st.stop, 1);
	next_to_me(path, sizeof(path), "libuwt_cfi_ops_nohdr.so");
	compare(path, &st);
	assert_int_equal(st.fdes, 5);
	assert_int_equal(st.libdw_fdes, 3);
	assert_int_equal(st.ranges, 23 + 2 + 3 + 3 + 3);
	assert_int_equal(st.invalid, 6 + 2 + 1 + 1);
	assert_int_equal(st.refused, 2);
	assert_int_equal(st.stop, 1);
}

static void test_system_objects_exact(void **state)
{
	const char *budget = getenv("PTLEAK_CFI_BUDGET_MS");
	const char *dirs = getenv("PTLEAK_CFI_DIRS");
	double deadline = now_ms() + (budget ? atof(budget) : BUDGET_MS);
	unsigned n = compare_dir(LIBDIR, ".so", deadline);
	char dir[PATH_MAX], *colon;

	while (dirs && *dirs) {
		snprintf(dir, sizeof(dir), "%s", dirs);
		colon = strchr(dir, ':');
		if (colon)
			*colon = 0;
		dirs += strlen(dir) + (colon != NULL);
		if (access(dir, R_OK) == 0)
			compare_dir(dir, NULL, deadline);
	}
	print_message("%u objects compared, %u tables, %u FDEs, %u of them by libdw\n",
		      done.n, done.tables, done.fdes, done.libdw_fdes);
	assert_true(n >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_core_objects_exact),
		cmocka_unit_test(test_cfi_ops),
		cmocka_unit_test(test_targets_exact),
		cmocka_unit_test(test_system_objects_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
