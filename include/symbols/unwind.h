/*
 * unwind.h - call stacks of a stopped thread with libunwind-ptrace.
 *
 * One unwind costs no ptrace call: registers come from the stop (already
 * fetched), the stack from one process_vm_readv snapshot starting at the
 * stack pointer (extended page by page only if an unwind walks past it),
 * and libunwind's per-address-space caches (register-state cache and
 * _UPT_find_proc_info's ELF image) stay warm across stops.  Return
 * addresses that ptleak itself hijacked are shown as the real ones.
 */
#ifndef PTLEAK_UNWIND_H
#define PTLEAK_UNWIND_H

#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"

struct unwinder;

/* An unwinder for process PID.  NULL with a message on error. */
struct unwinder *unwinder_new(pid_t pid);
void unwinder_delete(struct unwinder *u);

/* Read the process's maps through thread PID from now on (the one given
 * to unwinder_new exited).  Flushes the caches. */
void unwinder_set_pid(struct unwinder *u, pid_t pid);

/* Forget cached unwind info (after exec, dlclose, a new mapping). */
void unwinder_flush(struct unwinder *u);

/*
 * The image's entry point is ENTRY (its code read through thread TID):
 * from now on stacks end at the frame in main, whose address the entry
 * code gives (arch_main_from_entry) and whose extent its FDE, so that
 * stripped executables' stacks end there too.  Called at each exec.
 */
void unwinder_set_entry(struct unwinder *u, pid_t tid, uint64_t entry);

/* main's code [*LO, *HI) (memory read through thread TID, which may run):
 * 0, or -1 while it is not known (the executable not relocated yet). */
int unwinder_main_range(struct unwinder *u, pid_t tid, uint64_t *lo,
			uint64_t *hi);

/* A stack slot holding a hijacked return address, and the real one. */
struct ret_fix {
	uint64_t slot;
	uint64_t real;
};

/*
 * The call stack of thread TID stopped with registers R: PCS[0] is R's pc,
 * then the return addresses of its callers, at most MAX, the last one in
 * main when main is reached.  FIXES lists the
 * thread's hijacked return slots.  Returns the number of PCs (>= 1).
 */
unsigned unwind_stack(struct unwinder *u, pid_t tid, const struct arch_regs *r,
		      const struct ret_fix *fixes, unsigned nfixes,
		      uint64_t *pcs, unsigned max);

/* The 8 bytes at ADDR if the last unwind's stack snapshot holds them:
 * 0, else -1. */
int unwind_snapshot_read(const struct unwinder *u, uint64_t addr, uint64_t *val);


#endif
