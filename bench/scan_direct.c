/*
 * scan_direct N SIZE [array|lists [R]]: the reachability scan alone,
 * without tracing the allocations (which take ~50 s for 10^6 blocks under
 * breakpoints).  A forked child builds scan_heap's heap (N blocks of SIZE
 * bytes, even ones in a list held by a global, odd ones in a dropped
 * list), hands their addresses over in shared memory and stops; the
 * parent feeds them to a heap table and runs ptleak's scan_process() on
 * the stopped child (the stack from its stack pointer, as at exit), then
 * prints the classes and the scan's time, bytes read and peak RSS of both
 * processes.  CPU: the scanner's CPU time (user + system, all its
 * threads) during the scan, the figure to compare on a loaded machine.
 * "array": the blocks are all held by one array (a block too) instead of
 * the two lists, as bench/big_heap's are.  R: the scan R times, a line
 * each (a median on a loaded machine; a profile of the scan alone).
 * Linked with build/libptleak.a.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tables/heap.h"
#include "analysis/roots.h"

void **volatile scan_direct_kept;	/* a root: the global holding the kept list */

static __attribute__((noinline)) void build(long n, size_t size,
					    uint64_t *addrs, int array)
{
	void **prev_even = NULL, **prev_odd = NULL;
	void **arr = array ? malloc((size_t)n * sizeof(*arr)) : NULL;
	long i;

	if (array) {
		if (!arr)
			_exit(1);
		for (i = 0; i < n; i++) {
			arr[i] = malloc(size);
			if (!arr[i])
				_exit(1);
			memset(arr[i], 0, size);
			addrs[i] = (uint64_t)(uintptr_t)arr[i];
		}
		addrs[n] = (uint64_t)(uintptr_t)arr;
		scan_direct_kept = arr;
		return;
	}
	for (i = 0; i < n; i++) {
		void **b = malloc(size);

		if (!b)
			_exit(1);
		memset(b, 0, size);
		if (i % 2 == 0) {
			b[0] = prev_even;
			prev_even = b;
		} else {
			b[0] = prev_odd;
			prev_odd = b;
		}
		addrs[i] = (uint64_t)(uintptr_t)b;
	}
	scan_direct_kept = prev_even;
	prev_odd = NULL;
}

/* No stale pointer to the lost list left on the stack. */
static __attribute__((noinline)) void wipe(void)
{
	volatile char junk[16384];
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = 0;
}

static void child(long n, size_t size, uint64_t *addrs, int array)
{
	ptrace(PTRACE_TRACEME, 0, 0, 0);
	build(n, size, addrs, array);
	wipe();
	munmap(addrs, (size_t)(n + 1) * 8);
	raise(SIGSTOP);
	_exit(0);
}

static long hwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 1024;
	int array = argc > 3 && !strcmp(argv[3], "array");
	int repeat = argc > 4 ? atoi(argv[4]) : 1, r;
	uint64_t *addrs = mmap(NULL, (n + 1) * 8, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t cls[4] = { 0 }, t0, t1, c0, c1;
	struct scan_result out;
	struct scan_stats st;
	struct arch_regs regs;
	struct timespec ts;
	struct heap *h;
	pid_t pid;
	int status;

	if (addrs == MAP_FAILED)
		return 1;
	pid = fork();
	if (!pid)
		child(n, size, addrs, array);
	if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status) ||
	    arch_get_regs(pid, &regs))
		return 1;
	h = heap_new();
	for (i = 0; i < n; i++) {
		struct heap_block b = { .addr = addrs[i], .size = size, .tid = pid,
					.fn = AF_MALLOC };

		heap_alloc(h, &b);
	}
	if (array) {
		struct heap_block b = { .addr = addrs[n], .size = (uint64_t)n * 8,
					.tid = pid, .fn = AF_MALLOC };

		heap_alloc(h, &b);
	}
	for (r = 0; r < repeat; r++) {
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		c0 = ts.tv_sec * 1000000000ull + ts.tv_nsec;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = ts.tv_sec * 1000000000ull + ts.tv_nsec;
		if (scan_process(pid, h, &regs, 1, 0, NULL, 0, 1, NULL, 0, &out, &st))
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t1 = ts.tv_sec * 1000000000ull + ts.tv_nsec;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		c1 = ts.tv_sec * 1000000000ull + ts.tv_nsec;
		memset(cls, 0, sizeof(cls));
		for (i = 0; i < (long)out.n; i++)
			cls[out.cls[i]]++;
		printf("scan: %zu blocks, %llu bytes read in %.3f s (%.0f MB/s), "
		       "CPU %.3f s (%.0f MB/s); "
		       "definitely %llu indirectly %llu possibly %llu reachable %llu; "
		       "peak RSS scanner %ld KB, target %ld KB; %llu bytes by the "
		       "second thread\n", out.n,
		       (unsigned long long)st.bytes_scanned, (t1 - t0) / 1e9,
		       st.bytes_scanned / ((t1 - t0) / 1e9) / 1e6, (c1 - c0) / 1e9,
		       st.bytes_scanned / ((c1 - c0) / 1e9) / 1e6,
		       (unsigned long long)cls[0], (unsigned long long)cls[1],
		       (unsigned long long)cls[2], (unsigned long long)cls[3],
		       hwm_kb(getpid()), hwm_kb(pid), (unsigned long long)st.worker_bytes);
		scan_result_free(&out);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 0;
}
