/*
 * heap.h - the table of live heap blocks, totals and peak.
 *
 * Knows nothing of ptrace: it is fed events (from breakpoints today, maybe
 * from an in-process recorder later) and read by the report.  Semantics
 * are exact and follow glibc:
 *  - a NULL result is no allocation (callers do not call heap_alloc);
 *  - free(NULL) is nothing; a free of an unknown address is counted in
 *    unknown_frees, never an error: a block allocated before tracing
 *    started, or glibc's own recycling (a thread's exit hands every chunk
 *    of its tcache to free(), chunks the program freed long ago);
 *  - realloc is two-phased because another thread may be handed the old
 *    address as soon as realloc released it, before realloc returns.
 */
#ifndef PTLEAK_HEAP_H
#define PTLEAK_HEAP_H

#include <stdint.h>

/* Allocator functions, in the order breakpoints are resolved.  Aliases at
 * one address get the first name of this list. */
enum alloc_fn {
	AF_MALLOC,
	AF_CALLOC,
	AF_REALLOC,
	AF_REALLOCARRAY,
	AF_FREE,
	AF_POSIX_MEMALIGN,
	AF_ALIGNED_ALLOC,
	AF_MEMALIGN,
	AF_VALLOC,
	AF_PVALLOC,
	AF_COUNT
};

/* "malloc", "calloc", ...; NULL for an out-of-range value. */
const char *alloc_fn_name(enum alloc_fn fn);

struct heap_block {
	uint64_t addr;
	uint64_t size;		/* bytes requested (calloc: nmemb * size) */
	uint64_t time_ns;	/* when it was allocated (now_ns()) */
	uint32_t stack;		/* interned allocation stack (stacks.h), 0 = none */
	int32_t tid;		/* allocating thread */
	uint8_t fn;		/* enum alloc_fn */
	uint8_t flags;		/* HB_* */
	uint8_t before;		/* made before ptleak attached: found by the
				 * census (census.h), no stack, SIZE usable */
	uint16_t type;		/* a census block's C++ class: the census's
				 * type index + 1, 0 unknown */
};

/*
 * How the table stores a live block: 24 bytes (heap_store.h), read in
 * place by the scan (analysis/scan.h) through heap_entries.
 *  - size: the size, or HEAP_SIZE_BIG for 2^32 - 1 bytes or more (then
 *    kept aside: heap_entry_size);
 *  - stack: the stack id, or a census block's (before) type: such a
 *    block has no stack;
 *  - meta: the time in microseconds (HEAP_TIME_BITS, from an epoch set by
 *    the first time seen: 0 is time 0, times are exact to the
 *    microsecond, within 101 days before the first and 305 after), the
 *    index of the allocating thread in heap_threads (the threads past
 *    HEAP_MAX_THREADS share tid 0's entry: such a block reads back with
 *    tid 0), fn, HB_REPLACEMENT, before.
 */
struct heap_entry {
	uint64_t addr;
	uint32_t size;
	uint32_t stack;
	uint64_t meta;
};

#define HEAP_SIZE_BIG		UINT32_MAX
#define HEAP_TIME_BITS		45
#define HEAP_META_THREAD(m)	((uint32_t)((m) >> 45) & 0x1fff)
#define HEAP_META_FN(m)		((uint8_t)(((m) >> 58) & 0xf))
#define HEAP_META_REPL		(1ull << 62)
#define HEAP_META_BEFORE	(1ull << 63)

/* Entries are kept in chunks of HEAP_CHUNK. */
#define HEAP_CHUNK_BITS		16
#define HEAP_CHUNK		(1u << HEAP_CHUNK_BITS)

/* The live blocks as stored: entry I (0 <= I < N) in place.  Valid until
 * the table changes. */
struct heap_entries {
	struct heap_entry *const *chunk;
	size_t n;
	const struct heap *heap;
};

void heap_entries(const struct heap *h, struct heap_entries *out);

static inline const struct heap_entry *heap_entry(const struct heap_entries *e,
						  size_t i)
{
	return &e->chunk[i >> HEAP_CHUNK_BITS][i & (HEAP_CHUNK - 1)];
}

/* An entry's size (HEAP_SIZE_BIG: looked up aside). */
uint64_t heap_big_size(const struct heap *h, uint64_t addr);
static inline uint64_t heap_entry_size(const struct heap_entries *e,
				       const struct heap_entry *x)
{
	return x->size != HEAP_SIZE_BIG ? x->size : heap_big_size(e->heap, x->addr);
}

/* An entry as a block (all its fields). */
void heap_entry_block(const struct heap_entries *e, const struct heap_entry *x,
		      struct heap_block *out);
/* An entry's time (heap_block.time_ns). */
uint64_t heap_entry_time(const struct heap_entries *e, const struct heap_entry *x);
/* The entry index of the live block at ADDR, or -1. */
long heap_index_of(const struct heap *h, uint64_t addr);

/* The block replaces one its thread freed just before (since its
 * previous allocation): a block of the same size, or one from before
 * tracing (unknown to the table, or a census block: heap_thread.pre_frees,
 * whatever its size: a census block's is the usable one).  A pool whose
 * blocks are replaced one by one, by another stack than the one that made
 * them (or after an attach, made before it), is not growth (growth.h):
 * replacements are left out of it. */
#define HB_REPLACEMENT 1

struct heap_stats {
	uint64_t allocs;		/* successful allocations, realloc included */
	uint64_t frees;			/* frees of live blocks, realloc's release of its old block */
	uint64_t bytes_allocated;	/* sum of sizes of all allocations */
	uint64_t in_use_bytes;
	uint64_t in_use_blocks;
	uint64_t peak_bytes;		/* maximum of in_use_bytes ever */
	uint64_t unknown_frees;		/* frees of addresses not in the table (not in frees) */
};

struct heap;

struct heap *heap_new(void);
void heap_delete(struct heap *h);
/* Forget every block and zero the stats (after an exec). */
void heap_reset(struct heap *h);

/* A successful allocation B (B->addr != 0).  If B->addr is already live
 * (a missed free), the old block is replaced and counted freed. */
void heap_alloc(struct heap *h, const struct heap_block *b);

/*
 * B was live before tracing started (the census of an attach): live now,
 * in in_use, but no allocation is counted (totals are the calls seen) and
 * the observer is not told.  A later free or realloc of it is counted as
 * of any live block.
 */
void heap_census(struct heap *h, const struct heap_block *b);
/*
 * ON: a census is being taken from a snapshot while the program runs
 * (census_attach.c): the table remembers the addresses freed from now on
 * that it does not know (frees, realloc's old block), and heap_census
 * then makes a block freed so, which was live at the snapshot, no block
 * (its free counted as a free of a live block, not an unknown one).  OFF
 * (the census is in): forgotten.
 */
void heap_census_pending(struct heap *h, int on);
/*
 * A fork child's table (-f): every live block of SRC made live in DST as
 * heap_census does (no allocation counted), its stack id STACK(CTX, id)
 * in DST's stacks (0: none), everything else kept.
 */
void heap_inherit(struct heap *dst, const struct heap *src,
		  uint32_t (*stack)(void *ctx, uint32_t id), void *ctx);

/* N blocks are coming (a census): the table made room for them at once
 * instead of growing step by step. */
void heap_reserve(struct heap *h, size_t n);

/* ADDR's slot will be wanted soon: start loading it (a hint). */
void heap_prefetch(const struct heap *h, uint64_t addr);
/* ADDR will be freed soon, its slot loaded already (heap_prefetch some
 * time before): start loading its block's entry, and the index slot of
 * the entry that its removal will move, the BACK + 1-th from the end
 * (BACK: the frees less the allocations before it in this run of
 * events; negative: none known).  Hints: nothing changes. */
void heap_prefetch_free(const struct heap *h, uint64_t addr, long back);
/* 1 if the table is too big for the caches: heap_prefetch_free is worth
 * its reads; 0: the caller leaves it. */
int heap_prefetch_worth(const struct heap *h);

/* free(ADDR).  Returns 1 if ADDR was live, 0 if unknown, -1 for ADDR 0
 * (nothing counted).  The free is thread 0's (heap_free_by). */
int heap_free(struct heap *h, uint64_t addr);
/* free(ADDR) called by thread TID at TIME_NS (now_ns()): as heap_free,
 * the free counted to TID (heap_threads) and told to the observer. */
int heap_free_by(struct heap *h, uint64_t addr, int32_t tid, uint64_t time_ns);
/*
 * heap_alloc(B) then heap_free_by(B's address, TID, TIME_NS), with
 * nothing between them: the same counts, peak, growth and events, the
 * table's entry neither made nor removed (a block freed by the next call:
 * most of a busy program's).  0, or -1 with nothing done when B's address
 * is live (the caller makes both calls).
 */
int heap_alloc_free(struct heap *h, const struct heap_block *b, int32_t tid,
		    uint64_t time_ns);

/*
 * realloc(OLD, SIZE), entry: take OLD out of the live table without
 * counting anything; *HELD receives it.  Returns 1 if OLD was live, else 0
 * (also for OLD == 0).
 */
int heap_realloc_begin(struct heap *h, uint64_t old, struct heap_block *held);

/*
 * realloc return.  OLD and WAS_LIVE/HELD as from heap_realloc_begin, SIZE
 * the requested size, NEWB the result block (NEWB->addr = result, 0 if
 * NULL was returned; its size is SIZE):
 *  - result != 0: OLD (if != 0) counts as freed, NEWB is allocated;
 *  - result == 0, SIZE == 0, OLD != 0: glibc freed OLD; counted freed;
 *  - result == 0 otherwise: failure, HELD goes back live unchanged.
 */
void heap_realloc_end(struct heap *h, uint64_t old, int was_live,
		      const struct heap_block *held, uint64_t size,
		      const struct heap_block *newb);

/*
 * The blocks of reallocs in flight (heap_realloc_begin's HELD, their end
 * not yet told) are still allocated until realloc returns: a report made
 * meanwhile puts them back.  heap_holds_put puts back each of B[0..N-1]
 * whose address is not live in the table (not handed out again), with no
 * allocation counted, no growth note and no new peak; PUT[i] := 1 if it
 * did.  heap_holds_take, after the report, takes those out again: the
 * table and its figures as before.
 */
void heap_holds_put(struct heap *h, const struct heap_block *b, size_t n,
		    uint8_t *put);
void heap_holds_take(struct heap *h, const struct heap_block *b, size_t n,
		     const uint8_t *put);

const struct heap_stats *heap_stats(const struct heap *h);

/* What was allocated at one stack, freed or not. */
struct heap_stack_total {
	uint64_t allocs;
	uint64_t bytes;
};

/* Totals by stack id: [0..*N-1] (id 0: no stack; ids past *N: none). */
const struct heap_stack_total *heap_stack_totals(const struct heap *h,
						 size_t *n);

/* Live block at ADDR or NULL: a copy, valid until the next call. */
const struct heap_block *heap_lookup(const struct heap *h, uint64_t addr);

/* Call FN for every live block, in entry order (heap_entries: B is a
 * copy of entry 0, 1, ...); stops early and returns FN's value if
 * non-zero. */
int heap_foreach(const struct heap *h,
		 int (*fn)(const struct heap_block *b, void *ctx), void *ctx);

/*
 * Per allocation stack: the bytes of the live blocks allocated there,
 * kept up to date at every event (a sample or the folded output reads
 * them without walking the blocks).  0 for an unknown stack.
 */
uint64_t heap_stack_bytes(const struct heap *h, uint32_t stack);
/* The highest stack id that ever had a block (ids 1..this). */
uint32_t heap_stack_max(const struct heap *h);
/* The bytes and blocks in use per stack over time: which grow
 * (growth.h). */
struct growth;
const struct growth *heap_growth(const struct heap *h);
/* The N (at most) stacks with the most bytes in use, largest first:
 * IDS[i], BYTES[i].  Returns how many (stacks with bytes in use only). */
unsigned heap_stack_top(const struct heap *h, unsigned n, uint32_t *ids,
			uint64_t *bytes);

/*
 * Per thread: what it allocated and freed (a free is the freeing
 * thread's, a block's bytes in use its allocating thread's), so that the
 * threads' figures add up to the process's.  Threads that exited keep
 * their entry.  At most HEAP_MAX_THREADS entries: later threads share
 * the entry of tid 0, as do frees told without a thread (heap_free).
 */
#define HEAP_MAX_THREADS 4096

struct heap_thread {
	int32_t tid;		/* 0: the threads beyond the table, together */
	char name[16];		/* /proc/PID/task/TID/comm ("" unknown) */
	uint64_t allocs, frees, bytes_allocated, in_use_bytes;
	/* frees of blocks from before tracing not yet followed by an
	 * allocation of its own (HB_REPLACEMENT), at most 64 */
	uint32_t pre_frees;
	/* the size of the block it freed last since its last allocation,
	 * 0: none (HB_REPLACEMENT) */
	uint64_t freed_size;
};

/* The threads' entries (in the order first seen) into *OUT; their count. */
size_t heap_threads(const struct heap *h, const struct heap_thread **out);
/* Thread TID is called NAME: its entry's, or kept (the last 64 such
 * names) for its entry when its first event comes. */
void heap_thread_name(struct heap *h, int32_t tid, const char *name);

/*
 * Every event, as the table counted it, to an observer (the --events
 * log): an allocation (HEV_ALLOC), a free of a live block (HEV_FREE, its
 * size, STACK 0), a free of an address not in the table (HEV_UNKNOWN_FREE,
 * not counted in frees), a realloc's new block (HEV_REALLOC, OLD its old
 * address; the release of a live old block comes first as a HEV_FREE with
 * the realloc's FN, TID and STACK).
 */
enum heap_ev_type { HEV_ALLOC, HEV_FREE, HEV_UNKNOWN_FREE, HEV_REALLOC,
		   HEV_CENSUS /* a census block (heap_census): never told by
			       * the table, a replay of it (events_log.c) */ };

struct heap_event {
	uint8_t type;		/* enum heap_ev_type */
	uint8_t fn;		/* enum alloc_fn (AF_FREE for a free) */
	int32_t tid;
	uint32_t stack;		/* the caller's stack, 0: none */
	uint64_t time_ns, size, addr, old;
};

typedef void (*heap_observer)(void *ctx, const struct heap_event *e);
/* FN (NULL: none) is called at every event with CTX. */
void heap_observe(struct heap *h, heap_observer fn, void *ctx);

#endif
