/*
 * rec_arch.h - what the recorder's hooks need of the CPU, x86-64 Linux.
 * Freestanding.  The whole contract:
 *
 *   uint64_t rec_arch_tcb(void);   the thread's TCB (glibc: struct
 *            pthread, whose first word points to itself: %fs:0)
 */
#ifndef PTLEAK_REC_ARCH_H
#define PTLEAK_REC_ARCH_H

#include <stdint.h>

static inline uint64_t rec_arch_tcb(void)
{
	uint64_t p;

	__asm__("mov %%fs:0, %0" : "=r"(p));
	return p;
}

#endif
