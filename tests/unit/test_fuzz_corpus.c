/*
 * test_fuzz_corpus - every input of the fuzzers' regression corpus
 * (tests/fuzz/corpus/NAME/: what crashed or hung a harness once, and
 * hand-made inputs for each check) through its harness (tests/fuzz/
 * fuzz_NAME.c, built without libFuzzer), so that fixed bugs stay fixed
 * without clang at check time.  tests/fuzz/corpus/NAME/EXPECT lists
 * "FILE RESULT" for the inputs whose result is known (the harness's
 * return value); every other file must merely pass through (no crash,
 * no hang: run-unit's time limit).  FUZZ_CORPUS_VERBOSE=1 prints every
 * file's result.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#define CORPUS "tests/fuzz/corpus"

typedef long (*harness)(const uint8_t *data, size_t size);

#define HARNESSES(X) X(ring) X(cbpf) X(fastdec) X(cfi) X(unwtab) \
	X(dwline) X(dwlcache) X(elfsyms) X(supp) X(census)
#define DECLARE(name) long fuzz_##name(const uint8_t *data, size_t size);
HARNESSES(DECLARE)

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

/* The expected result of FILE in DIR's EXPECT, or 0 (none) in *HAVE. */
static long expected(const char *dir, const char *file, int *have)
{
	char path[512], name[256];
	long v;
	FILE *f;

	*have = 0;
	snprintf(path, sizeof(path), "%s/EXPECT", dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%255s %ld", name, &v) == 2)
		if (!strcmp(name, file)) {
			*have = 1;
			break;
		}
	fclose(f);
	return v;
}

static void replay(const char *name, harness fn)
{
	char dir[256], path[512];
	struct dirent *de;
	unsigned files = 0, known = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", CORPUS, name);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		uint8_t *data;
		size_t size;
		long got, want;
		int have;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "EXPECT"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		data = slurp(path, &size);
		got = fn(data, size);
		free(data);
		want = expected(dir, de->d_name, &have);
		if (getenv("FUZZ_CORPUS_VERBOSE"))	/* to write EXPECT lines */
			printf("%s %ld\n", path, got);
		if (have && got != want)
			fail_msg("%s: %ld, expected %ld", path, got, want);
		files++;
		known += have;
	}
	closedir(d);
	printf("%s: %u inputs, %u with their result checked\n", name, files, known);
	assert_true(files > 0);
}

#define TEST(name) \
	static void test_##name(void **state) { replay(#name, fuzz_##name); }
HARNESSES(TEST)

#define ENTRY(name) cmocka_unit_test(test_##name),

int main(void)
{
	const struct CMUnitTest tests[] = { HARNESSES(ENTRY) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
