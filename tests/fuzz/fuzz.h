/*
 * fuzz.h - the shape of a fuzz harness (tests/fuzz/README.md).
 *
 * tests/fuzz/fuzz_NAME.c feeds one input to a parser of what the target
 * controls, through that module's public entry point:
 *
 *	FUZZ(NAME)
 *	{
 *		... data, size ...
 *		return what it found (compared by the corpus replay);
 *	}
 *
 * Built with -DFUZZ_LIBFUZZER (make fuzz: clang, libFuzzer, ASan, UBSan)
 * it is a libFuzzer program (LLVMFuzzerTestOneInput); without, the
 * function fuzz_NAME() that tests/unit/test_fuzz_corpus.c calls for every
 * file of tests/fuzz/corpus/NAME/ in make check.
 */
#ifndef PTLEAK_FUZZ_H
#define PTLEAK_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef FUZZ_LIBFUZZER
#define FUZZ_ENTRY(name) \
	int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) \
	{ \
		fuzz_##name(d, n); \
		return 0; \
	}
#else
#define FUZZ_ENTRY(name)
#endif

#define FUZZ(name) \
	long fuzz_##name(const uint8_t *data, size_t size); \
	FUZZ_ENTRY(name) \
	long fuzz_##name(const uint8_t *data, size_t size)

/*
 * DATA as a regular file (a parser that opens a path): its path, the
 * same file rewritten at every call, removed at exit.  Per harness (a
 * static), per process.
 */
static inline char *fuzz_path_buf(void)
{
	static char path[64];

	return path;
}

static inline void fuzz_unlink(void)
{
	unlink(fuzz_path_buf());
}

static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char *fuzz_path = fuzz_path_buf();

	if (fd < 0) {
		const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

		snprintf(fuzz_path, 64, "%.40s/ptleak-fuzz.XXXXXX", dir);
		fd = mkstemp(fuzz_path);
		if (fd < 0) {
			perror(fuzz_path);
			abort();
		}
		atexit(fuzz_unlink);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
		perror(fuzz_path);
		abort();
	}
	return fuzz_path;
}

#endif
