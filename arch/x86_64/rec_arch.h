/*
 * rec_arch.h - what the recorder's hooks need of the CPU, x86-64 Linux.
 * Freestanding.  The whole contract:
 *
 *   uint64_t rec_arch_tcb(void);   the thread's TCB (glibc: struct
 *            pthread, whose first word points to itself: %fs:0)
 *   void rec_arch_caller(const struct rec_call *c, uint64_t *sp,
 *                        uint64_t *fp);
 *            the patched function's caller's sp after the call returned
 *            and its frame register (rbp), from the stub's frame
 *            (stub.S: the struct rec_call sits right below the pushed
 *            rbp, which is below the return address)
 *   uint64_t rec_arch_getpid(void);   the process id (the system call:
 *            a vfork child shares the memory, not the pid)
 */
#ifndef PTLEAK_REC_ARCH_H
#define PTLEAK_REC_ARCH_H

#include <stdint.h>

#include "recorder/rechook.h"

static inline uint64_t rec_arch_tcb(void)
{
	uint64_t p;

	__asm__("mov %%fs:0, %0" : "=r"(p));
	return p;
}

static inline void rec_arch_caller(const struct rec_call *c, uint64_t *sp,
				   uint64_t *fp)
{
	uint64_t rbp = (uint64_t)(uintptr_t)c + REC_CALL_SIZE;

	*sp = rbp + 16;		/* past the saved rbp and the return address */
	*fp = *(const uint64_t *)(uintptr_t)rbp;
}

static inline uint64_t rec_arch_getpid(void)
{
	uint64_t ret = 39;	/* __NR_getpid */

	__asm__ volatile("syscall" : "+a"(ret) : : "rcx", "r11", "memory");
	return ret;
}

#endif
