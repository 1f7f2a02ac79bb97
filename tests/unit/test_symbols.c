/*
 * test_symbols.c - sym_find_in_module on a library: the addresses the
 * dynamic linker itself gives (dlsym on libc's handle), names with
 * several versions (the default one), and names libc does not define.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbols/symbols.h"

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

struct objects {
	uint64_t in[64];	/* an address in each (its dynamic section) */
	unsigned n;
};

static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct objects *o = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum && o->n < 64; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC ||
		    (info->dlpi_phdr[i].p_type == PT_LOAD && !info->dlpi_name[0])) {
			o->in[o->n++] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			break;
		}
	return 0;
}

/*
 * The set-up lookups (sym_open_setup: elfsyms.c, the files read in
 * place) give libdwfl's answers, names, sizes, modules and module ranges,
 * in every object of this process: the executable (its .symtab), libc,
 * ld.so, libcmocka, the vdso (read from memory).  Asked of a forked
 * child, whose maps stay what they are while both read the files.
 */
static void test_setup_lookups_as_libdwfl(void **state)
{
	static const char *const funcs[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free",
		"posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
		"open", "open64", "openat", "creat", "socket", "pipe2", "dup3",
		"fcntl", "fopen", "opendir", "__open_nocancel", "close",
		"__close_nocancel", "close_range", "fclose", "closedir", "execve",
		"execveat", "fexecve", "_dl_debug_state", "main", "glob64",
		"regexec", "test_libc_functions", "__vdso_clock_gettime",
		"clock_gettime", "_cmocka_run_group_tests", "no_such_function",
	};
	static const char *const objs[] = {
		"_r_debug", "environ", "_IO_2_1_stdout_", "stdout", "no_such_object",
	};
	enum { NF = sizeof(funcs) / sizeof(funcs[0]), NO = sizeof(objs) / sizeof(objs[0]) };
	struct objects o = { .n = 0 };
	struct sym_def a[NF], b[NF];
	struct symbolizer *fast, *slow;
	unsigned i, k, found = 0, kind;
	pid_t child = fork();

	(void)state;
	if (!child) {
		/* gone with the test, whatever it ends with */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(1);
		close(2);
		for (;;)
			pause();
	}
	assert_true(child > 0);
	fast = sym_open_setup(child);
	slow = sym_open_setup(child);
	dl_iterate_phdr(add_object, &o);
	assert_true(o.n >= 4);
	for (i = 0; i < o.n; i++) {
		for (kind = 0; kind < 2; kind++) {
			const char *const *names = kind ? objs : funcs;
			unsigned n = kind ? NO : NF;
			int ra, rb;

			memset(a, 0, sizeof(a));
			memset(b, 0, sizeof(b));
			ra = sym_find_in_module(fast, o.in[i], names, n, !kind, a);
			sym_setup_libdwfl = 1;
			rb = sym_find_in_module(slow, o.in[i], names, n, !kind, b);
			sym_setup_libdwfl = 0;
			if (ra != rb)
				fail_msg("object %u (%#lx): %d found, libdwfl %d", i,
					 (unsigned long)o.in[i], ra, rb);
			for (k = 0; k < n; k++) {
				uint64_t la, ha, lb, hb;

				if (a[k].addr != b[k].addr || a[k].size != b[k].size)
					fail_msg("%s: %#lx size %lu, libdwfl %#lx size %lu",
						 names[k], (unsigned long)a[k].addr,
						 (unsigned long)a[k].size,
						 (unsigned long)b[k].addr,
						 (unsigned long)b[k].size);
				if (!a[k].addr)
					continue;
				found++;
				assert_string_equal(a[k].module, b[k].module);
				assert_int_equal(sym_module_range(fast, a[k].addr, &la, &ha), 0);
				sym_setup_libdwfl = 1;
				assert_int_equal(sym_module_range(slow, a[k].addr, &lb, &hb), 0);
				sym_setup_libdwfl = 0;
				assert_int_equal(la, lb);
				assert_int_equal(ha, hb);
			}
		}
	}
	/* libc's 29 + _dl_debug_state, _r_debug, main, the test's own, the
	 * vdso's 2, cmocka's, environ/stdout/_IO_2_1_stdout_ */
	printf("# %u definitions in %u objects, as libdwfl finds them\n", found, o.n);
	assert_true(found >= 40);
	sym_close(fast);
	sym_close(slow);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

/* Functions with mangled names: abcd::abcd() and one whose name is
 * 16,500 a's (16,508 characters mangled, past the 16 KiB the demangler
 * is given). */
#define R1 "aaaaa"
#define R10 R1 R1 R1 R1 R1 R1 R1 R1 R1 R1
#define R100 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10
#define R1000 R100 R100 R100 R100 R100 R100 R100 R100 R100 R100
#define LONG_NAME "_Z16500" R1000 R1000 R1000 R100 R100 R100 "v"
void short_mangled(void) __asm__("_ZN4abcd4abcdEv");
void long_mangled(void) __asm__(LONG_NAME);
__attribute__((noinline, used)) void short_mangled(void) { __asm__ volatile(""); }
__attribute__((noinline, used)) void long_mangled(void) { __asm__ volatile(""); }

/* A name the demangler gets is at most 16 KiB long: a longer one (the
 * target's string) is shown as it is, a shorter one demangled.  (Debian
 * 12's libstdc++ refuses any name that demangles to more than ~1 KiB:
 * without the bound this passes too, here.) */
static void test_demangle_bound(void **state)
{
	struct symbolizer *s = sym_open(getpid());
	struct frame_info f;

	(void)state;
	assert_non_null(s);
	assert_true(strlen(LONG_NAME) > 16384);
	sym_lookup(s, (uint64_t)(uintptr_t)short_mangled, 0, &f);
	assert_non_null(f.function);
	assert_string_equal(f.function, "abcd::abcd()");
	sym_lookup(s, (uint64_t)(uintptr_t)long_mangled, 0, &f);
	assert_non_null(f.function);
	assert_string_equal(f.function, LONG_NAME);
	sym_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc_functions),
		cmocka_unit_test(test_setup_lookups_as_libdwfl),
		cmocka_unit_test(test_demangle_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
