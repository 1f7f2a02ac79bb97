/*
 * scan.h - which live blocks are lost: valgrind memcheck's classes.
 *
 * The classifier knows nothing of ptrace: it reads memory through a
 * callback (process_vm_readv in the tracer, an array in the unit tests).
 * Roots are memory ranges (thread stacks from sp up, writable segments of
 * loaded objects, other writable mappings that hold no block) and values
 * (registers).  Heap memory is scanned only inside live blocks,
 * transitively from what the roots reach.  Every aligned 8-byte word is a
 * candidate pointer:
 *  - a pointer to a block's first byte from a root, a register or a
 *    still reachable block makes it still reachable;
 *  - any other pointer to it (into its interior, or from a possibly lost
 *    block) makes it possibly lost; classes only go up, and a block is
 *    scanned again when it goes up (memcheck's lc_push / is_prior_definite);
 *  - a block reached only from lost blocks is indirectly lost, and its
 *    bytes are added to the "indirect" bytes of the definitely lost
 *    block(s) whose loss it follows from (valgrind's "N (D direct, I
 *    indirect) bytes");
 *  - every other block is definitely lost.
 * No recursion: chains of 10^6 blocks must not overflow a stack.
 */
#ifndef PTLEAK_SCAN_H
#define PTLEAK_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "tables/heap.h"

enum scan_class {
	SCAN_DEFINITELY_LOST,
	SCAN_INDIRECTLY_LOST,
	SCAN_POSSIBLY_LOST,
	SCAN_STILL_REACHABLE,
};

/* "definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable" */
const char *scan_class_key(enum scan_class c);
/* "definitely lost", ..., "still reachable" (as valgrind words them);
 * NULL for any other value. */
const char *scan_class_words(int c);

struct scan_block {
	uint64_t addr, size;	/* input */
	uint64_t born;		/* input: allocation time (see born_before) */
	enum scan_class cls;	/* output */
	uint64_t indirect;	/* output: bytes indirectly lost through this
				 * definitely lost block (0 for the others) */
};

struct scan_range {
	uint64_t start, end;	/* [start, end) */
	/*
	 * Not 0: the memory of a thread that died at this time (its stack
	 * and descriptor, which glibc keeps for reuse): a word there cannot
	 * point to a block born at or after it.  Such a word is a stale
	 * pointer to an earlier block whose address a new block reuses;
	 * valgrind, which never hands a freed address out again so soon,
	 * sees no pointer there either.
	 */
	uint64_t born_before;
};

/*
 * Read LEN bytes at ADDR into BUF: returns the number of bytes read from
 * the start (short at an unmapped page), or -1.  Called once per block
 * (small ranges: the caller reads ahead) and per piece of up to 128 KiB
 * of larger ranges.
 */
typedef long (*scan_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * Optional: how many bytes from ADDR (at most LEN) are known to hold only
 * zeros without reading them (memory the process never touched), so the
 * scan skips them; 0 if ADDR's page may hold data.
 */
typedef uint64_t (*scan_skip_fn)(void *ctx, uint64_t addr, uint64_t len);

/*
 * The blocks to classify in address order, 4 bytes a block: the heap
 * table's entries (heap_entries) read in place through ORDER, entry
 * indices sorted by address (scan_blocks_of); or, with ORDER NULL, an
 * array of scan_block sorted by address (ARR).  A block's id is its entry
 * index (its position in ARR): scan_result is by id.
 */
struct scan_blocks {
	struct heap_entries e;
	uint32_t *order;
	struct scan_block *arr;
	size_t n;
};

static inline uint32_t scan_blocks_id(const struct scan_blocks *b, size_t k)
{
	return b->order ? b->order[k] : (uint32_t)k;
}

static inline uint64_t scan_blocks_addr(const struct scan_blocks *b, size_t k)
{
	return b->order ? heap_entry(&b->e, b->order[k])->addr : b->arr[k].addr;
}

static inline uint64_t scan_blocks_size(const struct scan_blocks *b, size_t k)
{
	return b->order ? heap_entry_size(&b->e, heap_entry(&b->e, b->order[k])) :
	       b->arr[k].size;
}

/* glibc's chunks: is W - A, in a block at A of SIZE bytes, the offset of
 * the next chunk's header (chunk = max(32, (size + 8 + 15) & ~15) bytes
 * from addr - 16), allocator metadata, not a pointer into the block? */
static inline int scan_glibc_next_header(uint64_t size, uint64_t off)
{
	return off == (size + 23 < 32 ? 32 : (size + 23) & ~15ull) - 16;
}

/* The position in B of the block that word W points at or into, as the
 * scan counts a pointer (GLIBC: scan_input.glibc_chunks), or -1.  A
 * binary search. */
long scan_blocks_find(const struct scan_blocks *b, uint64_t w, int glibc);

/* The live blocks of HEAP (valid while it does not change) in address
 * order into *B: a radix sort of their entry indices, by address.  0, or
 * -1 (out of memory, or more than 2^32 - 1 blocks: message). */
int scan_blocks_of(struct scan_blocks *b, const struct heap *heap);
void scan_blocks_free(struct scan_blocks *b);

/* Bytes indirectly lost through definitely lost block ID. */
struct scan_indirect {
	uint64_t id;
	uint64_t bytes;
};

/* What the scan found, by block id. */
struct scan_result {
	uint8_t *cls;			/* [id]: enum scan_class */
	size_t n;
	struct scan_indirect *ind;	/* sorted by id; the others: 0 */
	size_t nind;
};

void scan_result_free(struct scan_result *r);

struct scan_input {
	/* the blocks: SET, or BLOCKS[0..NBLOCKS) sorted by addr,
	 * non-overlapping (then classified in place: cls, indirect) */
	const struct scan_blocks *set;
	struct scan_block *blocks;
	size_t nblocks;
	struct scan_result *result;	/* with SET: the verdicts */
	const struct scan_range *roots;	/* root memory ranges */
	size_t nroots;
	const uint64_t *root_values;	/* register values */
	size_t nvalues;
	scan_read_fn read;
	scan_skip_fn skip;	/* may be NULL */
	void *ctx;
	/*
	 * The blocks come from glibc's malloc: a word pointing exactly at the
	 * header of the chunk after a block (glibc's arena keeps such pointers:
	 * top, bins) is allocator metadata, not a pointer into that block,
	 * even where the block's last 8 bytes overlap that header.
	 */
	int glibc_chunks;
	/*
	 * 0 or 1: the scan on the calling thread only.  2: a second thread
	 * (started at the first batch big enough, every signal blocked in
	 * it, joined before scan_classify returns) also reads memory and
	 * looks its words up, through CTX_WORKER (READ and SKIP must then be
	 * safe on two threads with their two contexts); the marks stay the
	 * calling thread's, the results are the same.  SCAN_THREADS_SPLIT
	 * (tests): as 2, but the second thread takes every other job of a
	 * batch and the first waits for it.
	 */
	int threads;
	void *ctx_worker;
	/*
	 * The most bytes the blocks read ahead may keep (scan_pre.c: the
	 * blocks of preread_min bytes, 0: 1 KiB, to 32 KiB read in address
	 * order before the rest, their hits kept, 4 bytes each, as many as
	 * the cap holds at worst); 0: none.  The results are the same.
	 */
	uint64_t preread;
	uint32_t preread_min;
};

#define SCAN_THREADS_SPLIT	(-2)

struct scan_stats {
	uint64_t bytes_scanned;		/* root and block bytes read */
	uint64_t unreadable_bytes;	/* root bytes that could not be read */
	uint64_t worker_bytes;		/* of bytes_scanned, read by the
					 * second thread */
	uint64_t preread_blocks;	/* blocks read ahead (preread) */
};

/* Sort BLOCKS[0..N) by address (stable; radix, qsort if out of memory). */
void scan_sort_blocks(struct scan_block *blocks, size_t n);

/* Classify IN's blocks (IN->set into IN->result, or IN->blocks in
 * place).  0, or -1 (out of memory: message). */
int scan_classify(struct scan_input *in, struct scan_stats *st);

#endif
