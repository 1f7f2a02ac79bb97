/*
 * census.h - the blocks a process's allocator holds, found from outside:
 * the census taken at an attach (SPEC.md "Attached: the heap that was
 * there before").
 *
 * Knows nothing of ptrace: the process's memory is read through a
 * callback (process_vm_readv in the session, a forked child in the unit
 * tests), its mappings and threads are given.  Everything read is the
 * target's and untrusted: every walk is bounded by the memory it walks,
 * every list by a count and a cycle limit, every pointer checked against
 * the chunks found; a heap that does not add up gives a census with
 * exact 0 and a reason, never a crash, a hang or an unbounded allocation
 * (the blocks found are at most one per 32 bytes of heap read).
 *
 * glibc malloc (2.26 and later, x86-64 layout of 2.35-2.36,
 * census_glibc.c): main_arena found without symbols, from a live pattern
 * in libc's writable data (its `next` pointing to itself or into a ring
 * of thread arenas, each in a 64 MiB-aligned heap whose heap_info names
 * it); every arena's heaps walked chunk by chunk, a chunk in use when the
 * next one's PREV_INUSE says so, less top, fastbins (safe-linked) and
 * every thread's tcache (its thread pointer plus glibc's tcache TLS
 * offset, read from libc's R_X86_64_TPOFF64 GOT slots and validated); the
 * tcache_perthread_structs are allocator metadata, not blocks; mmapped
 * chunks found by a page-by-page scan of writable anonymous memory
 * (not only at mapping starts), reconciled with mp_.n_mmaps and
 * mp_.mmapped_mem when mp_ is found.
 */
#ifndef PTLEAK_CENSUS_H
#define PTLEAK_CENSUS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Read up to LEN bytes at ADDR into BUF: the number read from ADDR on
 * (short at an unmapped page), or -1.  Pages the process never touched
 * should read as zeros without being faulted in.
 */
typedef long (*census_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* One line of /proc/PID/maps. */
struct census_map {
	uint64_t start, end, offset;
	uint64_t inode;
	char perms[5];		/* "rw-p" */
	char *path;		/* "" for anonymous memory, "[heap]", "[stack]" */
};

struct census_thread {
	int32_t tid;
	uint64_t tp;		/* its thread pointer (arch_tp) */
};

struct census_input {
	census_read_fn read;
	void *ctx;
	const struct census_map *maps;	/* sorted, as /proc/PID/maps */
	size_t nmaps;
	const struct census_thread *threads;
	size_t nthreads;
};

/* A live block: user address and usable size (malloc_usable_size); its
 * first word (0 if it could not be read); TYPE, census_types' name index
 * + 1 (0: none known). */
struct census_block {
	uint64_t addr, size;
	uint64_t word0;
	uint16_t type;
};

#define CENSUS_MAX_TYPES 65535

enum census_allocator {
	CENSUS_GLIBC,
	CENSUS_JEMALLOC,
	CENSUS_TCMALLOC,
	CENSUS_MIMALLOC,
	CENSUS_OTHER,
};

/* "glibc", "jemalloc", "tcmalloc", "mimalloc", "other" */
const char *census_allocator_name(int allocator);

#define CENSUS_MAX_ARENAS 1024

struct census {
	int allocator;			/* enum census_allocator */
	int exact;			/* every block found, and only blocks */
	char why[200];			/* exact 0: why not */
	struct census_block *blocks;	/* sorted by addr */
	size_t nblocks;
	uint64_t bytes;			/* their usable sizes together */
	/* glibc: what was found */
	uint64_t main_arena, mp;	/* 0: not found */
	uint64_t arenas[CENSUS_MAX_ARENAS];	/* main_arena first */
	unsigned narenas;
	int64_t tcache_tpoff;		/* tcache's offset from the thread
					 * pointer, 0: unknown */
	unsigned ntcaches;		/* threads whose tcache was found */
	uint64_t nmmapped;		/* mmapped chunks among the blocks */
	/* census_types: the C++ classes found, demangled */
	char **types;
	unsigned ntypes;
	size_t atypes;
};

/*
 * The memory maps of PID into *MAPS (*N entries; census_maps_free frees
 * them).  0, or -1 with a message.
 */
int census_maps_read(pid_t pid, struct census_map **maps, size_t *n);
void census_maps_free(struct census_map *maps, size_t n);

/*
 * Which allocator the process uses when malloc is bound in object MODULE
 * (a path; NULL or "" for a static executable's own).
 */
int census_allocator_of(const char *module);

/*
 * Find glibc's arenas (main_arena, the ring of the others) into C, C
 * zeroed first.  0, or -1 (C->why says why: not glibc's layout, nothing
 * found).  Cheap: libc's writable data and one header per arena.
 */
int census_glibc_arenas(const struct census_input *in, struct census *c);

/*
 * Whether an arena found by census_glibc_arenas is locked now (its mutex
 * word not zero): its address, or 0 if none is.
 */
uint64_t census_glibc_locked(const struct census_input *in,
			     const struct census *c);

/*
 * The census of glibc's heap, C from census_glibc_arenas (called first
 * if C->main_arena is 0).  Every thread of the process must be stopped
 * outside the allocator.  0 (C->exact says whether it is exact), or -1
 * with C->why (no census: not glibc's, unreadable).
 */
int census_glibc(const struct census_input *in, struct census *c);

/*
 * The C++ class of each block whose first word points to a vtable in a
 * loaded object's read-only data: vtable[-1] is a typeinfo (its own first
 * word in read-only data too), whose second word is the mangled name, in
 * read-only data; the name demangled into C->types, each block's TYPE its
 * index + 1.  Vtables are looked up once each.
 */
void census_types(const struct census_input *in, struct census *c);

/* A census of an allocator that cannot be enumerated from outside:
 * no blocks, exact 0, WHY said. */
void census_unsupported(struct census *c, int allocator);

/* Free C's blocks (C itself is the caller's); their count and bytes
 * stay. */
void census_free(struct census *c);
/* Free everything C holds (C itself is the caller's). */
void census_release(struct census *c);

#endif
