/*
 * roots.h - the reachability scan of a traced process: its live blocks,
 * its roots, its memory.
 *
 * Roots: the registers of the given threads (live reports); their stacks
 * from the stack pointer (less the red zone) to the end of the mapping
 * (which holds the thread's TLS and descriptor in glibc); dead threads'
 * cached stacks above the sp they died with, for blocks born before they
 * died; every readable and writable mapping less what the allocator owns
 * (with glibc: the brk heap, thread arenas' heaps, mmapped chunks, found
 * per block; with another allocator: a mapping holding a live block,
 * whole, but in an object's data or bss only the blocks); the written pages of read-only private file mappings (RELRO).
 * The allocator's memory is heap: scanned only inside reachable blocks.
 * Pages never touched are not read (nor faulted in); reads go through a
 * bounded read-ahead cache.
 */
#ifndef PTLEAK_ROOTS_H
#define PTLEAK_ROOTS_H

#include <stddef.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "tables/heap.h"
#include "analysis/scan.h"

/*
 * Classify the live blocks of HEAP in process PID (any live thread),
 * stopped threads' registers REGS[0..NREGS-1]: their stack pointers place
 * the stack roots, and with REG_ROOTS their values are roots too (a live
 * report; at exit valgrind does not count the exiting thread's registers:
 * its leak check runs after the thread is gone).  DEAD: threads that
 * exited alone; their stacks (still mapped) are scanned only above the
 * stack pointer they died with, and only for blocks born before they died
 * (scan_range.born_before).  ALLOC: ROOTS_GLIBC, the allocator is
 * glibc's (see scan_input.glibc_chunks); ROOTS_OLDER_UNKNOWN, blocks the
 * allocator held before tracing started are not in HEAP (an attach whose
 * census is not exact): only HEAP's blocks are heap, every other byte of
 * a writable mapping is a root, so that nothing is lost through an older
 * block.  SKIP[0..NSKIP): mappings left out (neither roots nor heap: a
 * snapshot's shared mappings, read before and found to point into no
 * block; NULL: none).  *OUT: the verdicts by heap entry (heap_entries; the caller's to
 * free, scan_result_free).  0, or -1 with a message.
 */
/* A thread that exited alone: its stack stays mapped (glibc's cache). */
struct scan_dead {
	uint64_t sp;		/* the stack pointer it died with */
	uint64_t died_ns;	/* when (the clock of heap_block.time_ns) */
};

#define ROOTS_GLIBC		1
#define ROOTS_OLDER_UNKNOWN	2

int scan_process(pid_t pid, const struct heap *heap,
		 const struct arch_regs *regs, unsigned nregs, int reg_roots,
		 const struct scan_dead *dead, size_t ndead, int alloc,
		 const struct scan_range *skip, size_t nskip,
		 struct scan_result *out, struct scan_stats *st);

#endif
