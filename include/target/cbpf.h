/*
 * cbpf.h - a classic BPF interpreter, as the kernel runs seccomp filters.
 *
 * No ptrace, no /proc: a program (struct sock_filter[]) and the bytes it
 * reads (for seccomp, a struct seccomp_data).  Used to learn, before
 * ptleak injects a system call, what the target's seccomp filters would
 * do with it (seccomp.h).
 */
#ifndef PTLEAK_CBPF_H
#define PTLEAK_CBPF_H

#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>

/*
 * Run PROG (N instructions) on DATA (LEN bytes, read as native-endian
 * 32-bit words at 4-aligned offsets, as seccomp does).  0 and the
 * program's return value in *RET; -1 with a reason in ERR when the
 * program is not one the kernel would have accepted (an unknown opcode, a
 * jump or a memory slot out of range, a misaligned or out-of-range load,
 * no return at the end).  A division by zero returns 0, as the kernel does.
 */
int cbpf_run(const struct sock_filter *prog, size_t n, const void *data,
	     size_t len, uint32_t *ret, char *err, size_t errlen);

#endif
