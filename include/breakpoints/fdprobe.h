/*
 * fdprobe.h - the file-descriptor probes: which functions get a
 * breakpoint, what their entries and returns mean for the fd table.
 *
 * With the recorder (fdprobe_bind's PATCH), a function's calls are
 * recorded in the target by its hooks and drained into fdprobe_rec_open
 * and fdprobe_rec_close: no stop.  Otherwise the tracer owns the
 * breakpoints, the stacks and the hijacked returns (the allocator's
 * mechanism: an entry breakpoint, the return address replaced by the
 * trampoline, never lifted); it calls these hooks:
 *
 *   exec stop (launch included)   fdprobe_exec
 *   first consistent r_debug      fdprobe_bind (static executable: at exec)
 *   entry of a BP_FD breakpoint   fdprobe_nested (if a call of this thread
 *                                 is in progress), then fdprobe_entry: if
 *                                 it returns 1, unwind, hijack the return,
 *                                 keep ARGS (4) in the pending call
 *   that call's return            fdprobe_return
 *   a report                      fdprobe_sync, then fdprobe_table
 *
 * Traced (first definer in link-map order): open, open64, openat,
 * openat64, creat, creat64, socket, socketpair, accept, accept4, pipe,
 * pipe2, dup, dup2, dup3, fcntl, fcntl64 (F_DUPFD, F_DUPFD_CLOEXEC),
 * eventfd, timerfd_create, signalfd (fd -1), epoll_create,
 * epoll_create1, inotify_init, inotify_init1, memfd_create, close,
 * close_range, closefrom; fopen/fopen64 and opendir (the descriptor read
 * from the FILE's _fileno / the DIR's first int at their return),
 * fclose and closedir (read at entry); and glibc's internal
 * __open_nocancel and __close_nocancel (GLIBC_PRIVATE, exported), which
 * fopen with "c", opendir, fclose, closedir and other libc paths call
 * instead of open/close.  A creation made while fopen or opendir is in
 * progress on the same thread, returning into the object that defines
 * them, is part of that call (counted once, by the wrapper).  Closes are
 * never nested: closing an fd twice (fclose, then the __close_nocancel it
 * calls) is harmless, and a close is handled at its entry, before the
 * kernel can give the number to another thread.
 */
#ifndef PTLEAK_FDPROBE_H
#define PTLEAK_FDPROBE_H

#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "breakpoints/breakpoint.h"
#include "tables/fds.h"
#include "symbols/symbols.h"

struct fdprobe;

struct fdprobe *fdprobe_new(void);
void fdprobe_delete(struct fdprobe *fp);

/* The table, for the report. */
const struct fdtable *fdprobe_table(const struct fdprobe *fp);

/*
 * Process PID is at an exec stop.  The first time (the launch), every
 * descriptor open now is inherited; afterwards close-on-exec descriptors
 * are gone and the others keep their records without stacks
 * (fds_exec).  Breakpoints must be bound again.
 */
void fdprobe_exec(struct fdprobe *fp, pid_t pid);

/* Attach: every descriptor open in PID now is inherited. */
void fdprobe_attach(struct fdprobe *fp, pid_t pid);

/* The functions were bound in this image (done once per image). */
int fdprobe_bound(const struct fdprobe *fp);

/* How many of them were found and planted in this image (0: a stripped
 * static executable, say: no call is seen, only /proc at reports). */
unsigned fdprobe_planted(const struct fdprobe *fp);

/*
 * The recorder's offer for function NAME (D, IDX) of object number OBJ
 * (fdprobe's numbering of this bind) spanning [LO, HI): KIND is what
 * its hooks must do (rechook.h REC_FN_FD_*).  1: its calls are recorded
 * (fdprobe_rec_open, fdprobe_rec_close with IDX); 0: plant a breakpoint;
 * -1: neither (a message said why).
 */
typedef int (*fdprobe_patch_fn)(void *ctx, const struct sym_def *d,
				const char *name, unsigned kind, unsigned idx,
				unsigned obj, uint64_t lo, uint64_t hi);

/*
 * Bind every fd function, each in the first of the objects
 * ORDER[0..N-1] (addresses inside them, link-map order) that defines it:
 * offered to PATCH first (NULL: none), else a BP_FD breakpoint.  S is a
 * symbolizer of the process, TID a stopped thread.  0, or -1 if some
 * could not be bound (the others are).
 */
int fdprobe_bind(struct fdprobe *fp, struct bpset *bps, struct symbolizer *s,
		 pid_t tid, const uint64_t *order, unsigned n,
		 fdprobe_patch_fn patch, void *ctx);

/*
 * The recorder's records of function IDX: a close at its entry with
 * arguments A0..A2 (V: the descriptor an fclose's FILE or a closedir's
 * DIR held, read by the hook), and a creation that returned RESULT in
 * thread TID of process PID (V0, V1: the descriptors the hook read for
 * fopen, opendir, pipe, socketpair), its stack STACK at TIME_NS.
 */
void fdprobe_rec_close(struct fdprobe *fp, unsigned idx, uint64_t a0,
		       uint64_t a1, uint64_t a2, int v);
void fdprobe_rec_open(struct fdprobe *fp, pid_t pid, pid_t tid, unsigned idx,
		      uint64_t result, int v0, int v1, uint32_t stack,
		      uint64_t time_ns);

/*
 * Is the call of BP (BP_FD), returning to RET with its return address at
 * SLOT, part of OUTER, the innermost fd call in progress on this thread
 * (OUTER_SLOT its return slot)?
 */
int fdprobe_nested(const struct fdprobe *fp, const struct bp *bp,
		   const struct bp *outer, uint64_t outer_slot,
		   uint64_t slot, uint64_t ret);

/*
 * Entry of BP in thread TID with registers R (at the function's first
 * instruction).  Closes are done here.  Returns 1 if the return must be
 * captured (then fdprobe_return gets the arguments), 0 if not.
 */
int fdprobe_entry(struct fdprobe *fp, pid_t tid, const struct bp *bp,
		  const struct arch_regs *r);

/*
 * The call of BP with ARGS[0..3] returned RESULT in thread TID; STACK and
 * TIME_NS were taken at its entry.
 */
void fdprobe_return(struct fdprobe *fp, pid_t tid, const struct bp *bp,
		    const uint64_t *args, uint64_t result, uint32_t stack,
		    uint64_t time_ns);

/* Before a report: the table made what /proc/PID/fd says (PID: any live
 * thread).  Nothing changes if it cannot be read (the process is gone, or
 * not dumpable): -1 with errno set, else 0. */
int fdprobe_sync(struct fdprobe *fp, pid_t pid);

#endif
