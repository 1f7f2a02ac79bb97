/*
 * glibc_heap.h - where glibc's malloc keeps its memory (64-bit glibc 2.x,
 * malloc/malloc.c and malloc/arena.c), for the scan's roots.
 *
 * A block at ADDR is a chunk from ADDR - 16: prev_size at ADDR - 16, size
 * at ADDR - 8 (bit 0x2 IS_MMAPPED, low 3 bits flags).  An mmapped chunk is
 * a mapping of its own from chunk - prev_size (memalign's offset) to chunk
 * + size.  Other chunks live in the main arena (the brk heap) or in a
 * thread arena's heap: HEAP_MAX_SIZE (64 MiB) aligned, starting with a
 * heap_info { ar_ptr, prev, size, ... } whose size is the heap's used size.
 */
#ifndef PTLEAK_GLIBC_HEAP_H
#define PTLEAK_GLIBC_HEAP_H

#include <stdint.h>

#define GLIBC_HEAP_MAX_SIZE	(64ull << 20)
/*
 * A static executable's main thread has its TLS and descriptor at the
 * start of the brk heap (sbrk'd by __libc_setup_tls before malloc's arena):
 * the TLS below the thread pointer, struct pthread from it, 2,368 bytes in
 * glibc 2.36 (_thread_db_sizeof_pthread; 2,304 in older ones).  The roots
 * there run to tp + this.
 */
#define GLIBC_TCB_SIZE		2368ull
#define GLIBC_IS_MMAPPED	0x2ull
#define GLIBC_SIZE_FLAGS	0x7ull

/* Read 8-byte words: 0, or -1. */
typedef int (*glibc_read_fn)(void *ctx, uint64_t addr, uint64_t *w, unsigned n);

/*
 * The memory glibc's malloc owns around live block ADDR that lies in
 * mapping [MAP_START, MAP_END) (not the brk heap): its mmapped chunk, or
 * its thread arena's heap.  Sets [*START, *END) and returns 0; -1 if the
 * headers are not glibc's (the caller then keeps the whole mapping).
 */
int glibc_owner(glibc_read_fn read, void *ctx, uint64_t addr,
		uint64_t map_start, uint64_t map_end, uint64_t *start,
		uint64_t *end);

#endif
