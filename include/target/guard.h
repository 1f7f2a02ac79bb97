/*
 * guard.h - the guardian: a process ptleak forks when it attaches, which
 * puts the target's bytes back if ptleak dies without detaching (SIGKILL,
 * a crash).
 *
 * The kernel detaches a dead tracer's tracees and lets them run: an int3
 * ptleak planted (a descriptor function, the dynamic linker's rendezvous,
 * an allocator function the recorder could not patch) would then kill the
 * target at its next call, and a return address ptleak hijacked would
 * return into its trampoline.  ptleak tells the guardian, in memory they
 * share, every code byte it changed and every return it hijacked; the
 * guardian waits on a pipe whose other end only ptleak holds.  End of
 * file without ptleak's word that it let go: the guardian writes the
 * original bytes and return addresses back through /proc/PID/mem (opened
 * by ptleak while it traced), then exits.  The recorder's entry jumps are
 * left: their hooks turn themselves off.
 *
 * A thread ptleak made run a system call for it (arch_inject) spins
 * after the call until ptleak takes it: ptleak tells the guardian its
 * registers and signal mask before, and when it has them back.  Found
 * still there, the thread is seized (PTRACE_SEIZE, PTRACE_INTERRUPT)
 * before any byte goes back, given its registers and mask, and let go.
 *
 * A thread that hits an int3 in the microseconds between ptleak's death
 * and the guardian's writes is not saved (docs/status.md).
 */
#ifndef PTLEAK_GUARD_H
#define PTLEAK_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct guard;
struct arch_inject_note;

/* The guardian of process PID, running; NULL (a warning said why) if it
 * cannot be had: ptleak traces on without one. */
struct guard *guard_start(pid_t pid);
/* ptleak wrote at ADDR over ORIG[0..LEN-1] (LEN <= 16). */
void guard_code(struct guard *g, uint64_t addr, const uint8_t *orig, size_t len);
/* ptleak put ADDR's bytes back itself. */
void guard_code_done(struct guard *g, uint64_t addr);
/* The return address at stack slot SLOT is ptleak's TRAMP instead of
 * REAL; REAL 0: no longer. */
void guard_ret(struct guard *g, uint64_t slot, uint64_t tramp, uint64_t real);
/* Thread TID runs an injection (N: what it gets back), or (N NULL) has
 * its own registers back. */
void guard_inject(struct guard *g, pid_t tid, const struct arch_inject_note *n);
/* The image is gone (exec): nothing of it to put back. */
void guard_forget_all(struct guard *g);
/* ptleak let go of the target (or it is gone): the guardian exits
 * without writing anything.  G is freed. */
void guard_stop(struct guard *g);

#endif
