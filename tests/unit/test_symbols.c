/*
 * test_symbols.c - sym_find_in_module on a library: the addresses the
 * dynamic linker itself gives (dlsym on libc's handle), names with
 * several versions (the default one), and names libc does not define.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbols.h"

static void test_libc_functions(void **state)
{
	/* pthread_cond_wait, fmemopen, regexec, glob64: a compat version
	 * too (the default one is the dynamic linker's); the others: one */
	static const char *const names[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free",
		"posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
		"open", "openat", "close", "dup3", "execve", "fexecve", "fopen",
		"pthread_cond_wait", "fmemopen", "regexec", "glob64",
		"no_such_function_in_libc", "_IO_2_1_stdout_",
	};
	enum { N = sizeof(names) / sizeof(names[0]) };
	struct sym_def out[N];
	struct symbolizer *s;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	unsigned k;

	(void)state;
	assert_non_null(libc);
	s = sym_open(getpid());
	assert_non_null(s);
	memset(out, 0, sizeof(out));
	assert_int_equal(sym_find_in_module(s, (uint64_t)(uintptr_t)dlsym(libc, "malloc"),
					    names, N, 1, out), N - 2);
	for (k = 0; k < N; k++) {
		void *want = k < N - 2 ? dlsym(libc, names[k]) : NULL;

		if ((uint64_t)(uintptr_t)want != out[k].addr)
			fail_msg("%s: %#lx, the dynamic linker's %p", names[k],
				 (unsigned long)out[k].addr, want);
		if (want) {
			const char *m = strrchr(out[k].module, '/');

			assert_non_null(m);
			assert_string_equal(m, "/libc.so.6");
			assert_true(out[k].size > 0);
		}
	}
	/* _IO_2_1_stdout_ is an object: found as one */
	memset(out, 0, sizeof(out));
	assert_int_equal(sym_find_in_module(s, (uint64_t)(uintptr_t)dlsym(libc, "malloc"),
					    &names[N - 1], 1, 0, out), 1);
	assert_int_equal(out[0].addr, (uint64_t)(uintptr_t)dlsym(libc, names[N - 1]));
	sym_close(s);
	dlclose(libc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc_functions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
