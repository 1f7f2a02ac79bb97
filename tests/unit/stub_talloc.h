/* stub_talloc.h - test_hooks_stub's own allocator (stub_talloc.c), patched in
 * the test process as ptleak patches a target's. */
#ifndef STUB_TALLOC_H
#define STUB_TALLOC_H

#include <setjmp.h>
#include <stddef.h>

/* t_malloc of this size longjmps to *t_jmp from inside the allocator */
#define T_LONGJMP	((size_t)-7)
/* t_malloc or t_realloc of this size raise(SIGALRM) from inside */
#define T_RAISE		777
/* t_malloc of this size is async-signal-safe (t_free of it does nothing) */
#define T_SIGSAFE	1000

extern jmp_buf *t_jmp;

void *t_malloc(size_t n);
void t_free(void *p);
void *t_calloc(size_t n, size_t size);
/* realloc(NULL, n) tail-calls t_malloc, (p, 0) calls t_free, else both */
void *t_realloc(void *p, size_t n);
/* t_realloc(p, n * size) unless it overflows */
void *t_reallocarray(void *p, size_t n, size_t size);
/* a tail call: its whole body is `jmp t_malloc` */
void *t_malloc_tail(size_t n);
int t_posix_memalign(void **memptr, size_t align, size_t n);
/* (void *)(its frame address % 16): NULL if entered with sp % 16 == 8 */
void *t_align(size_t n);

#endif
