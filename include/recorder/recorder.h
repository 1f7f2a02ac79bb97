/*
 * recorder.h - the recorder engine, ptleak's side (docs/recorder.md,
 * docs/design.md "The recorder"): what ptleak injects into a target so
 * that the target records its own allocator calls into a ring that ptleak
 * drains, with no ptrace stop per call.
 *
 *   rec_area.c    the shared data area (memfd mapped in the target and in
 *                 ptleak: rec_conf, ring, thread table, stack set, unwind
 *                 tables) and the code pages (hook blob, trampolines,
 *                 relocated prologues) mapped near the patched objects
 *   rec_patch.c   patching a function's entry, and restoring it
 *   rec_objs.c    the loaded objects' unwind tables, the thread table
 *   rec_drain.c   ring records to the heap table (heap.h), stacks interned
 *
 * Every injection is a system call run by a stopped thread while every
 * other thread of the target is stopped (arch_inject), checked
 * first against the thread's seccomp filters.  Code is written through
 * /proc/PID/mem into pages mapped read+exec: no mapping is ever writable
 * and executable.
 */
#ifndef PTLEAK_RECORDER_H
#define PTLEAK_RECORDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder/rechook.h"

struct arch_inject_via;
struct fdprobe;
struct heap;
struct stacks;
struct recorder;
struct heap_block;

/* A new recorder for process PID keeping DEPTH pcs per stack (the
 * function's entry included, as the breakpoint engine's stacks).  Nothing
 * is injected yet. */
struct recorder *rec_new(pid_t pid, unsigned depth);
/* Forget everything on ptleak's side (ptleak's mapping of the area is
 * unmapped; the target is not touched: see rec_detach). */
void rec_delete(struct recorder *R);

/*
 * Would stopped thread TID's seccomp filters let every system call of
 * rec_inject run?  1 yes; 0 no, WHY (LEN bytes) says which and why.
 */
int rec_allowed(pid_t tid, char *why, size_t len);

/* The system calls of rec_inject, rec_code_page and rec_unmap run as
 * VIA says (arch.h; it must outlive R); none set: at the thread's pc. */
void rec_set_via(struct recorder *R, const struct arch_inject_via *via);

/*
 * Map the data area into the target (memfd_create, ftruncate, mmap
 * MAP_SHARED, close, run by stopped thread TID; every other thread
 * stopped) and into ptleak, and a first code page within reach of
 * [NEAR_LO, NEAR_HI) (the first object to patch).  *HELD_SIG: a signal that arrived meanwhile
 * (0: none), to resume TID with.  0, or -1 with a message in WHY (the
 * caller decides between a notice and an error).
 */
int rec_inject(struct recorder *R, pid_t tid, uint64_t near_lo,
	       uint64_t near_hi, int *held_sig, char *why, size_t len);
/* The breakpoint engine's trampoline (hijacked returns land there). */
void rec_set_trampoline(struct recorder *R, uint64_t addr);
/* Stack slot SLOT holds the trampoline instead of REAL (0: not any
 * more): the hooks' walks take REAL there.  Thread of SLOT stopped. */
void rec_hijack(struct recorder *R, uint64_t slot, uint64_t real);

/* The data area exists in the target. */
int rec_injected(const struct recorder *R);
/* The process's memory and /proc are reached through thread PID from now
 * on (its leader exited: a zombie has no maps and no memory). */
void rec_set_pid(struct recorder *R, pid_t pid);

/*
 * Patch the allocator or descriptor function NAME at ADDR (its body SIZE
 * bytes, in the object whose index is OBJ) so that its calls are
 * recorded; KIND is a rechook.h enum rec_kind, TAG ptleak's enum alloc_fn
 * (an allocator) or fdprobe's index of the function (REC_FN_IS_FD).  A code page
 * within reach is mapped if needed (TID runs the mmap, every other thread
 * stopped).  PCS[0..NPCS-1]: the pcs of the stopped threads; a function
 * with one of them inside the bytes to displace is not patched.  0; 1 if
 * ADDR is patched already (an alias); -1 with WHY when this function
 * cannot be patched (the caller plants a breakpoint instead).
 */
int rec_patch(struct recorder *R, pid_t tid, const char *name, uint64_t addr,
	      uint64_t size, unsigned obj, unsigned kind, unsigned tag,
	      const uint64_t *pcs, unsigned npcs, int *held_sig, char *why,
	      size_t len);
/* An allocator function of object OBJ at ADDR (SIZE bytes) seen with a
 * breakpoint: calls made from its body are nested too.  0 or -1 (full). */
int rec_nest_range(struct recorder *R, uint64_t addr, uint64_t size,
		   unsigned obj);
/* Is a breakpointed allocator call returning to RA part of a recorded
 * one (RA in a code page or in a patched allocator's body)? */
int rec_ra_nested(const struct recorder *R, uint64_t ra);
/* Object OBJ (REC_MAX_OBJS at most) spans [LO, HI): set before a
 * descriptor function of it is patched (the hooks' REC_FD_NEST_DIST
 * rule).  0, or -1 (OBJ too big, or no recorder). */
int rec_obj_text(struct recorder *R, unsigned obj, uint64_t lo, uint64_t hi);
/* Can descriptor functions be patched?  Their hooks ask the kernel for
 * the pid (a vfork child's calls are its own): not if the target's
 * seccomp filters refuse getpid. */
int rec_fd_hooks(const struct recorder *R);
/* Functions patched. */
unsigned rec_npatched(const struct recorder *R);

/*
 * The unwind tables: object PATH loaded at BIAS (run-time address - link
 * address).  Collected by rec_object_add, published at once by
 * rec_objects_publish (the hooks see the new set from their next walk).
 * A new generation (rec_objects_begin) forgets the objects not added
 * again (dlclose).
 */
void rec_objects_begin(struct recorder *R);
int rec_object_add(struct recorder *R, const char *path, uint64_t bias);
int rec_objects_publish(struct recorder *R);

/*
 * The thread whose TCB (thread pointer) is TCB and stack pointer SP is
 * thread TID: its stack is the mapping holding SP (read from
 * /proc/PID/maps).  Before it runs (its first stop), or at attach.
 */
int rec_thread_set(struct recorder *R, pid_t tid, uint64_t tcb, uint64_t sp);
/* Thread TID exited: its entry walks no more. */
/* Records carry the TSC from now on (rec_conf.need_tsc): a second
 * thread of execution shares the memory (rec_thread_set does it for a
 * second thread it is told of). */
void rec_need_times(struct recorder *R);
void rec_thread_gone(struct recorder *R, pid_t tid);
/* The main thread's stack and tid, for the hooks that run before its
 * TCB is in the thread table (launch): from its first sp. */
int rec_main_stack(struct recorder *R, pid_t tid, uint64_t sp);
/* main's code [LO, HI): a return address there ends a stack. */
void rec_set_main(struct recorder *R, uint64_t lo, uint64_t hi);

/*
 * Now: a record reserved before now gets this time, or an earlier one,
 * when it is drained (a thread's death is compared with the birth of
 * blocks).  Returns the time (now_ns()).
 */
uint64_t rec_checkpoint(struct recorder *R);

/*
 * Take every record the target has committed: into heap table H and
 * descriptor probes FP (NULL: none), stacks interned in ST.  Returns the
 * number of records taken, or -1 when the ring's header makes no sense
 * (the target wrote over it: rec_why() says what; nothing printed; the
 * ring is not read again).  *LOST: records given up by the target so
 * far (the target's own count).  Every word of a record is checked
 * before use; one that fails (more pcs than words, too short for its
 * type, an unknown function or type, more than 4,096 reallocs begun and
 * not ended) is skipped and counted in rec_bad().
 */
long rec_drain(struct recorder *R, struct heap *h, struct fdprobe *fp,
	       struct stacks *st, uint64_t *lost);
/*
 * The same when no thread of the target can write a record: all stopped
 * out of the hooks, or gone.  rec_drain() leaves the records of the last
 * microseconds, and those later than a record being written in another
 * lane, for the next drain (docs/recorder.md, "Lanes"); this one takes
 * every record committed.
 */
long rec_drain_quiet(struct recorder *R, struct heap *h, struct fdprobe *fp,
		     struct stacks *st, uint64_t *lost);
/* Records skipped because they failed their checks, so far. */
uint64_t rec_bad(const struct recorder *R);
/* What in the ring's header made rec_drain() stop, or NULL. */
const char *rec_why(const struct recorder *R);

/* Records reserved but not run: the drain stopped at a hole (a record
 * being written, or given up by its thread), or holds records for the
 * next drain. */
int rec_blocked(const struct recorder *R);

/* The old blocks of the reallocs whose begin the drain took and whose
 * end it has not (threads inside realloc: heap_holds_put), those that
 * were live at the begin: up to MAX into OUT.  Their number (OUT NULL:
 * all of them, counted). */
size_t rec_held(const struct recorder *R, struct heap_block *out, size_t max);
/* Now, for rec_caught_up(): the rings' heads. */
void rec_mark(struct recorder *R);
/* Every record reserved before the last rec_mark() is run. */
int rec_caught_up(const struct recorder *R);
/* PTLEAK_DEBUG=stats: the rings' counters on stderr. */
void rec_debug_ring(const struct recorder *R);
/* A count that grows whenever the drain takes or runs a record. */
uint64_t rec_progress(const struct recorder *R);
/* How full the fullest ring is now, in 256ths of its size (0-256; the
 * target writes head: a pace, never a bound). */
unsigned rec_fill(const struct recorder *R);
/*
 * The drain timer's next interval after one of NS nanoseconds whose
 * drains found the fullest ring FILL 256ths full: half of it from a
 * quarter up (a producer that finds the ring full waits, spinning then
 * sleeping, for the next drain), twice it under a sixteenth, within
 * REC_DRAIN_MIN_NS..REC_DRAIN_MAX_NS (the 1 MiB ring fills in ~1.5 ms at
 * one busy thread's 12 M records a second).
 */
#define REC_DRAIN_MIN_NS	250000l
#define REC_DRAIN_MAX_NS	2000000l
long rec_drain_pace(long ns, unsigned fill);
/* Give up the holes at the rings' tails (no producer can be inside them:
 * every thread stopped out of the hooks, or gone).  Bytes skipped. */
long rec_skip_holes(struct recorder *R);

/*
 * Restore every patched entry in the memory of process PID (the target,
 * or a forked child that inherited the patches).  0, or -1 if a write
 * failed (message).
 */
int rec_unpatch(struct recorder *R, pid_t pid);
/* Stop recording: the hooks pass straight through from now on. */
void rec_disable(struct recorder *R);
/* Is PC in one of the code pages (a stub, a relocated prologue)? */
int rec_pc_in_code(const struct recorder *R, uint64_t pc);
/*
 * A thread stopped at PC inside a relocated prologue: the equivalent pc
 * in the original function, or PC if it is not in one.
 */
uint64_t rec_fixup_pc(const struct recorder *R, uint64_t pc);

/*
 * Detach (rec_detach.c), the entries restored: thread TID, stopped with
 * registers R, taken out of the recorder's code (R changed: 1; nothing
 * to do: 0; its state unknown: -1).
 */
struct arch_regs;
int rec_take_out(const struct recorder *R, pid_t tid, struct arch_regs *r);
/*
 * Every stub frame on thread TID's stack (from SP) whose original has not
 * returned yet returns to the caller without the stub (through a
 * `leave; ret` of the program's code).  The number of frames changed, or
 * -1 if one could not be.
 */
int rec_unwind_stubs(struct recorder *R, pid_t tid, uint64_t sp);
/* The hooks of every code page lose their context: they pass through. */
void rec_unlink_code(struct recorder *R);

/*
 * Unmap the code pages and the data area from the target (TID runs the
 * munmaps; every thread stopped, none inside: rec_take_out).  0, or
 * -1 with a message (what stays mapped).
 */
int rec_unmap(struct recorder *R, pid_t tid, int *held_sig, int code_too);
/* The same in a forked child's copy (TID: the child, stopped before it
 * ran), R unchanged. */
int rec_unmap_copy(const struct recorder *R, pid_t tid, int *held_sig);

#endif
