/*
 * unwtab.c - cost of the unwind tables (docs/recorder.md, piece 6).
 *
 *   unwtab [OBJECT...]
 *
 * 1. Compiling a table: rows, rules, bytes and the best of 5 times for
 *    each OBJECT (default libc.so.6 and libstdc++.so.6 as loaded here),
 *    and the best of 5 of asking libdw for every row instead of cfi.c's
 *    interpreter (unwtab_compile_slow, the path before it), interleaved.
 * 2. Walking: this program's own stack, 20 frames deep in a recursion
 *    built -O2 -fomit-frame-pointer, 16 frames per walk with
 *    unwtab_walk.h, against libunwind's unw_backtrace() (its caches warm)
 *    and glibc's backtrace() of the same 16 frames; all must give the same
 *    pcs.  ns per walk, best of 5 rounds of 200,000 (20,000 for glibc).
 * Nothing is asserted about time; exit 1 if the pcs differ.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <libunwind.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recorder/unwtab.h"
#include "recorder/unwtab_walk.h"
#include "../tests/unit/unwtab_self.h"

#define ROUNDS 5
#ifndef WALKS
#define WALKS 200000
#endif
#define DEPTH 16
#define LIBSTDCXX "/lib/x86_64-linux-gnu/libstdc++.so.6"

static struct self_tabs tabs;
/* libunwind.so exports a backtrace too, which the name would bind to */
static int (*glibc_backtrace)(void **, int);
static volatile int sink;
static int failed;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The best of ROUNDS times of COMPILE(PATH); 0 if it failed. */
static int time_compile(int (*compile)(const char *, struct unwtab_hdr **,
				       struct unwtab_stats *),
			const char *path, struct unwtab_hdr **t,
			struct unwtab_stats *st, double *best)
{
	double t0 = now_ms(), t1;

	if (compile(path, t, st) < 0)
		return 0;
	t1 = now_ms();
	if (t1 - t0 < *best)
		*best = t1 - t0;
	return 1;
}

static void bench_compile(const char *path)
{
	struct unwtab_stats st, slow_st;
	struct unwtab_hdr *t, *slow;
	double best = 1e9, best_slow = 1e9;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		if (!time_compile(unwtab_compile, path, &t, &st, &best) ||
		    !time_compile(unwtab_compile_slow, path, &slow, &slow_st,
				  &best_slow))
			exit(1);
		if (t->size != slow->size || memcmp(t, slow, t->size))
			failed = 1;
		free(slow);
		if (i < ROUNDS - 1)
			free(t);
	}
	printf("compile %s: %u FDEs (%u by libdw), %u CFI rows -> %u table rows, "
	       "%u rules, %u bytes (%.1f bytes/row); %u INVALID, %u PLT, %u signal rows; "
	       "best of %d: %.2f ms, libdw for every row %.2f ms (x%.1f)%s\n",
	       path, st.fdes, st.libdw_fdes, st.ranges, t->nrows,
	       t->nrules, t->size, (double)t->size / t->nrows, st.invalid,
	       st.plt, st.signal, ROUNDS, best, best_slow, best_slow / best,
	       failed ? "; tables DIFFER" : "");
	free(t);
}

static void bench_walk(void)
{
	struct unwtab_stack st = { ut_regs.sp, self_stack_end() };
	struct unwtab_frame f = { ut_regs.pc, ut_regs.sp, ut_regs.fp, 0, NULL };
	uint64_t pcs[DEPTH];
	void *bt[DEPTH + 1];
	void *ubt[DEPTH + 1];
	double best = 1e9, best_bt = 1e9, best_unw = 1e9, t0;
	unsigned n = 0, i, r;
	int nbt = 0, nubt = 0;

	for (r = 0; r < ROUNDS; r++) {
		t0 = now_ms();
		for (i = 0; i < WALKS; i++)
			n = unwtab_walk(tabs.objs, tabs.n, &st, f, pcs, DEPTH);
		t0 = (now_ms() - t0) * 1e6 / WALKS;
		if (t0 < best)
			best = t0;
		t0 = now_ms();
		for (i = 0; i < WALKS / 10; i++)
			nbt = glibc_backtrace(bt, DEPTH + 1);	/* + bench_walk */
		t0 = (now_ms() - t0) * 1e6 / (WALKS / 10);
		if (t0 < best_bt)
			best_bt = t0;
		t0 = now_ms();
		for (i = 0; i < WALKS; i++)
			nubt = unw_backtrace(ubt, DEPTH + 1);
		t0 = (now_ms() - t0) * 1e6 / WALKS;
		if (t0 < best_unw)
			best_unw = t0;
	}
	/*
	 * backtrace's bt[1] is the return address of bench_walk's call, the
	 * walk's pcs[0] that of ut_capture_regs' in the same frame: from
	 * the next frame on they must be the same
	 */
	if (n != DEPTH || nbt != DEPTH + 1 || nubt != DEPTH + 1)
		failed = 1;
	for (i = 1; i < n && !failed; i++)
		if (pcs[i] != (uint64_t)(uintptr_t)bt[i + 1] ||
		    pcs[i] != (uint64_t)(uintptr_t)ubt[i + 1])
			failed = 1;
	printf("walk %u frames: unwtab_walk %.1f ns, libunwind unw_backtrace() "
	       "%.1f ns, glibc backtrace() %.1f ns (best of %d rounds); pcs %s\n",
	       n, best, best_unw, best_bt, ROUNDS, failed ? "DIFFER" : "equal");
}

static __attribute__((noinline, noipa)) int recurse(int n)
{
	volatile char pad[24];

	pad[0] = (char)n;
	if (n == 0) {
		ut_capture_regs();
		bench_walk();
	} else {
		recurse(n - 1);
	}
	return pad[0] + sink;
}

int main(int argc, char **argv)
{
	Dl_info dli;
	int i;

	if (argc > 1) {
		for (i = 1; i < argc; i++)
			bench_compile(argv[i]);
	} else {
		if (dladdr((void *)printf, &dli))
			bench_compile(dli.dli_fname);
		if (!access(LIBSTDCXX, R_OK))
			bench_compile(LIBSTDCXX);
	}
	glibc_backtrace = (int (*)(void **, int))
		dlsym(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), "backtrace");
	if (!glibc_backtrace)
		return 1;
	self_tabs_load(&tabs);
	recurse(20);
	self_tabs_free(&tabs);
	return failed;
}
