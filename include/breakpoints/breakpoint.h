/*
 * breakpoint.h - breakpoints that stay planted, and the scratch area.
 *
 * A breakpoint replaces the first bytes of an instruction with the arch's
 * breakpoint instruction.  The displaced instruction is analysed once at
 * planting; when a thread hits the breakpoint the tracer either emulates
 * it or sends the thread to its out-of-line slot, so the breakpoint is
 * never lifted while other threads run.
 *
 * The scratch area is memory ptleak maps into the target (an injected
 * mmap, read+exec): page 0 holds the return trampoline, the rest the
 * out-of-line slots.  Slots whose instruction is rip-relative must lie
 * within +-2 GiB of it, so further pages are mapped near such code.
 */
#ifndef PTLEAK_BREAKPOINT_H
#define PTLEAK_BREAKPOINT_H

#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"

enum bp_kind {
	BP_ALLOC,	/* an allocator entry; fn is an enum alloc_fn */
	BP_RENDEZVOUS,	/* the dynamic linker's _dl_debug_state */
	BP_TRAMPOLINE,	/* where hijacked returns land */
	BP_FD,		/* a file-descriptor function; fn indexes fdprobe.c's list */
	BP_EXEC,	/* execve, execveat, fexecve: the image is reported first */
};

struct bp {
	uint64_t addr;
	uint64_t end;		/* end of the function (addr if unknown) */
	enum bp_kind kind;
	int fn;
	const char *name;	/* static string */
	uint8_t orig[ARCH_BP_LEN];
	struct arch_insn insn;	/* the displaced instruction */
	uint64_t xol;		/* its out-of-line slot, 0 if emulated */
	uint64_t fallback;	/* emulated: a slot to run it in if emulation
				 * fails (0: none, e.g. for a ret) */
};

struct guard;

struct scratch_page {
	uint64_t addr, size, used;
};

struct bpset {
	pid_t pid;
	int memfd;		/* /proc/PID/mem */
	struct bp **tab;	/* open addressing by address */
	unsigned cap, count;
	struct scratch_page pages[8];
	unsigned npages;
	uint64_t trampoline;	/* 0 until the scratch area exists */
	/* a signal that arrived while a thread ran an injected system call:
	 * the caller resumes that thread with it (and clears it) */
	int held_sig;
	/* told of every breakpoint planted and removed (guard.h), or NULL */
	struct guard *guard;
	struct arch_inject_via via;	/* bpset_via */
};

/*
 * How a thread of the process runs a system call for ptleak: at the
 * trampoline's (arch_trampoline_syscall) once the scratch page exists,
 * at the thread's pc before; the guardian told (guard_inject).  The
 * pointer stays valid, and up to date, as long as S.
 */
const struct arch_inject_via *bpset_via(const struct bpset *s);

/* An empty set for process PID (opens /proc/PID/mem).  0 or -1. */
int bpset_init(struct bpset *s, pid_t pid);
/* Forget everything without touching the target (after exec): reopens
 * /proc/PID/mem for the new image. */
int bpset_reset(struct bpset *s);
void bpset_release(struct bpset *s);

/*
 * May stopped thread TID run the mmap of bpset_scratch() under its
 * seccomp filters (seccomp.h)?  1 yes; 0 no, WHY (LEN bytes) says why.
 * Every injection is checked so (a refused munmap leaves the page mapped,
 * with a warning), this tells a caller before it starts.
 */
int bpset_scratch_allowed(pid_t tid, char *why, size_t len);

/*
 * Map the scratch area and its trampoline, making stopped thread TID run
 * the mmap, written at ENTRY (the program's entry point, AT_ENTRY: no
 * thread runs it again; 0: at TID's pc).  Every other thread of the
 * process must be stopped.  0 or -1.
 */
int bpset_scratch(struct bpset *s, pid_t tid, uint64_t entry);

/*
 * Plant a breakpoint at ADDR (TID: a stopped thread, in case a scratch
 * page near ADDR must be mapped).  An existing breakpoint at ADDR is
 * returned as is (aliases share one).  NULL with a message on error.
 */
struct bp *bp_plant(struct bpset *s, pid_t tid, uint64_t addr, uint64_t end,
		    enum bp_kind kind, int fn, const char *name);

struct bp *bp_find(const struct bpset *s, uint64_t addr);

/*
 * -f: DST, for forked child PID, becomes a copy of SRC (the child's
 * memory holds SRC's breakpoints and scratch area, copied at the fork).
 * No guardian.  0 or -1 (message).
 */
int bpset_clone(struct bpset *dst, const struct bpset *src, pid_t pid);

/* Guardian G (guard.h, may be NULL) is told every breakpoint of S, and
 * of every one planted or removed from now on. */
void bpset_guard(struct bpset *s, struct guard *g);

/*
 * Write the original bytes of every breakpoint into the memory of process
 * PID (the set's own process, or a forked child that inherited them).
 * 0, or -1 if any write failed.
 */
int bpset_unplant_all(struct bpset *s, pid_t pid);

/*
 * The breakpoint whose out-of-line slot (or fallback slot) holds PC, and
 * that slot's address in *SLOT; NULL if PC is in none.
 */
const struct bp *bp_find_slot(const struct bpset *s, uint64_t pc,
			      uint64_t *slot);

/*
 * Unmap the scratch area, making stopped thread TID run the munmaps (as
 * bpset_scratch).  Nothing may point into it any more: no thread's pc, no
 * hijacked return.  0, or -1 with a message (some pages stay mapped).
 */
int bpset_unmap_scratch(struct bpset *s, pid_t tid);

#endif
