/*
 * seccomp.h - would the target's seccomp filters let ptleak's injected
 * system calls run?
 *
 * A filter may kill the process for a system call ptleak injects (an mmap
 * of an executable page, say).  Before every injection ptleak asks here:
 * strict mode refuses everything ptleak injects; in filter mode every
 * filter of the thread is read (PTRACE_SECCOMP_GET_FILTER, which needs
 * CAP_SYS_ADMIN) and run (cbpf.h) on the exact system call: the injection
 * is allowed only if every filter returns SECCOMP_RET_ALLOW.
 */
#ifndef PTLEAK_SECCOMP_H
#define PTLEAK_SECCOMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Would system call NR (called NAME in messages) with ARGS, run by
 * stopped traced thread TID at its current pc, be allowed by every
 * seccomp filter of TID?  1: yes.  0: no, and WHY (LEN bytes) says why,
 * e.g. "it runs under a seccomp filter that would kill it for ptleak's
 * mmap".  A filter that cannot be read or run counts as a refusal.
 */
int seccomp_allows(pid_t tid, const char *name, long nr,
		   const uint64_t args[6], char *why, size_t len);

/*
 * A traced thread reported a stop (it may have run since the last one):
 * what seccomp_allows knows of modes is stale.  It keeps a thread's
 * mode (its /proc/TID/status, ~25 us a read, 15 injections at a launch)
 * only while the thread is its process's only one and no stop has been
 * reported since: stopped and alone, nothing can change the mode.
 */
void seccomp_forget(void);

#endif
