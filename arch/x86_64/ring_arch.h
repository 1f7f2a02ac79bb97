/*
 * ring_arch.h - what the ring's producer needs of the CPU and the kernel,
 * x86-64 Linux.  Freestanding (no libc): the hooks copied into a target
 * include it as well as ptleak.  The whole contract:
 *
 *   void     ring_arch_pause(void);     spin-wait hint
 *   void     ring_arch_futex_wait(uint32_t *w, uint32_t val, uint64_t ns);
 *            sleep while *W == VAL, at most NS nanoseconds (shared futex:
 *            the word may be in a mapping shared between processes)
 *   void     ring_arch_futex_wake(uint32_t *w);   wake every waiter on W
 *   uint64_t ring_arch_now_ns(void);    CLOCK_MONOTONIC, nanoseconds
 *   uint64_t ring_arch_tsc(void);       a counter that every CPU reads
 *            alike (the TSC: constant and synchronised where the kernel
 *            took it for its clock), no fence
 *   void     ring_arch_prefetch_w(const void *p);  the line at P
 *            asked for, to be written (a hint: never faults)
 *   uint64_t ring_arch_local_add(uint64_t *p, uint64_t v);  *P += V,
 *            returns the old *P: one instruction, atomic against this
 *            thread's signal handlers only, not against other CPUs (no
 *            lock: a word that one thread alone writes)
 */
#ifndef PTLEAK_RING_ARCH_H
#define PTLEAK_RING_ARCH_H

#include <stdint.h>

#define RING_ARCH_SYS_FUTEX		202
#define RING_ARCH_SYS_CLOCK_GETTIME	228
#define RING_ARCH_FUTEX_WAIT		0
#define RING_ARCH_FUTEX_WAKE		1
#define RING_ARCH_CLOCK_MONOTONIC	1

/* The kernel's struct timespec on x86-64. */
struct ring_arch_timespec {
	int64_t sec;
	int64_t nsec;
};

static inline void ring_arch_pause(void)
{
	__asm__ volatile("pause" ::: "memory");
}

static inline long ring_arch_syscall4(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline void ring_arch_futex_wait(uint32_t *w, uint32_t val, uint64_t ns)
{
	struct ring_arch_timespec ts = {
		(int64_t)(ns / 1000000000u), (int64_t)(ns % 1000000000u)
	};

	ring_arch_syscall4(RING_ARCH_SYS_FUTEX, (long)w, RING_ARCH_FUTEX_WAIT,
			   (long)val, (long)&ts);
}

static inline void ring_arch_futex_wake(uint32_t *w)
{
	ring_arch_syscall4(RING_ARCH_SYS_FUTEX, (long)w, RING_ARCH_FUTEX_WAKE,
			   0x7fffffff, 0);
}

static inline uint64_t ring_arch_now_ns(void)
{
	struct ring_arch_timespec ts = { 0, 0 };

	ring_arch_syscall4(RING_ARCH_SYS_CLOCK_GETTIME,
			   RING_ARCH_CLOCK_MONOTONIC, (long)&ts, 0, 0);
	return (uint64_t)ts.sec * 1000000000u + (uint64_t)ts.nsec;
}

/* prefetchw: the line in the exclusive state, as a store would take it
 * (prefetcht0's shared copy needs a second request at the store); a NOP
 * on CPUs without PRFCHW */
static inline void ring_arch_prefetch_w(const void *p)
{
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
}

static inline uint64_t ring_arch_local_add(uint64_t *p, uint64_t v)
{
	__asm__ volatile("xaddq %0, %1" : "+r"(v), "+m"(*p) : : "memory");
	return v;
}

static inline uint64_t ring_arch_tsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

#endif
