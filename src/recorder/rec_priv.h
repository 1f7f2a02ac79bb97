/*
 * rec_priv.h - the recorder's state, private to src/rec_*.c
 * (include/recorder.h is the API).
 *
 * The data area (one memfd, mapped MAP_SHARED by the target and by ptleak;
 * sparse: only what is touched costs memory), at these offsets:
 *
 *   AREA_CONF      struct rec_conf (rechook.h): what the hooks read
 *   AREA_RING      the ring (ring.h): 2^RING_LOG2 bytes of records
 *   AREA_THREADS   struct rec_thread[NTHREADS]: stacks by TCB
 *   AREA_STACKSET  uint64_t[NSTACKSET]: stack hashes ptleak has seen
 *   AREA_PCCACHE   struct rec_pccache[NPCCACHE]: the hooks' rule cache
 *   AREA_HIJACK    struct rec_hijack[NHIJACK]: returns ptleak hijacked
 *   AREA_SCACHE    struct rec_scache[NTHREADS + 1]: the hooks' stack
 *                  caches, by thread entry, then main_scache (written by
 *                  the hooks)
 *   AREA_LANES     lanes 1.. (REC_NLANES - 1): a ring per thread entry
 *                  (struct rec_thread.lane; the ring above is lane 0)
 *   AREA_ARENA     unwind tables and struct rec_objs generations,
 *                  appended, never rewritten while published
 *
 * ptleak writes the area through its own mapping; the code pages (r-x in
 * the target) through /proc/PID/mem.
 */
#ifndef PTLEAK_REC_PRIV_H
#define PTLEAK_REC_PRIV_H

#include <stdint.h>
#include <sys/types.h>

#include "arch/arch_patch.h"
#include "tables/heap.h"
#include "recorder/rechook.h"
#include "recorder/recorder.h"

/* 1 MiB: in L2 (producers store into lines the consumer just zeroed); 8 MiB
 * cost the target 2,048 shmem faults of ~2 us and sqlite3 5-10 ms */
#define RING_LOG2	20
#define AREA_CONF	0ull
#define AREA_RING	(64ull << 10)
#define AREA_THREADS	(AREA_RING + (2ull << 20))
_Static_assert(RING_DATA_OFF + (1ull << RING_LOG2) <= AREA_THREADS - AREA_RING,
	       "the ring overlaps the thread table");
#define NTHREADS	16384ull		/* 512 KiB */
#define AREA_STACKSET	(AREA_THREADS + NTHREADS * sizeof(struct rec_thread))
/* the stack set's tables, 2^12 to 2^17 hashes (32 KiB to 1 MiB), one
 * after the other: it starts small, each hash at a random place (1 MiB
 * from the start cost sqlite3 ~170 shmem faults and 1.5 ms for 318
 * stacks), and doubles at half full (rec_stacks.c) */
#define STACKSET_LOG_MIN	12u
#define STACKSET_LOG_MAX	17u
#define STACKSET_OFF(log2)	(8 * ((1ull << (log2)) - (1ull << STACKSET_LOG_MIN)))
#define AREA_PCCACHE	(AREA_STACKSET + STACKSET_OFF(STACKSET_LOG_MAX + 1))
#define NPCCACHE	(1ull << 14)		/* 256 KiB */
#define AREA_HIJACK	(AREA_PCCACHE + NPCCACHE * sizeof(struct rec_pccache))
#define NHIJACK		4096ull			/* 64 KiB */
#define AREA_SCACHE	(AREA_HIJACK + NHIJACK * sizeof(struct rec_hijack))
						/* per thread entry: 88 MiB */
#define AREA_LANES	(AREA_SCACHE + (NTHREADS + 1) * sizeof(struct rec_scache))
/* 16 rings of 1 MiB: a thread's records in its own ring, whose lines no
 * other thread writes (one ring for all: its head's line moved between
 * the CPUs at every record, 4 threads' hooks 3.6x dearer) */
#define REC_NLANES	16u
#define LANE_STRIDE	((1ull << RING_LOG2) + 4096)	/* a ring and its header, a page over */
#define AREA_ARENA	(AREA_LANES + (REC_NLANES - 1) * LANE_STRIDE)
#define AREA_SIZE	(256ull << 20)
_Static_assert(RING_DATA_OFF + (1ull << RING_LOG2) <= LANE_STRIDE &&
	       AREA_ARENA + (64ull << 20) <= AREA_SIZE,
	       "the lanes overlap, or leave the arena under 64 MiB");

#define CODE_PAGE_SIZE	(64ull << 10)
#define CODE_SLOT	(ARCH_TRAMP_LEN + ARCH_RELOC_MAX)

struct code_page {
	uint64_t addr, used;
};

/* Open addressing, 64-bit keys (0: free) to 32-bit ids (rec_drain.c). */
#define REC_STACK_MEMO	64	/* power of two */

struct idmap {
	struct { uint64_t key; uint32_t id; } *e;
	size_t cap, count;
};

/* A patched function. */
struct rec_fn {
	const char *name;
	uint64_t addr, size;
	uint32_t fn;			/* REC_FN_TAGGED id */
	uint64_t tramp, reloc;		/* in its code page */
	unsigned reloc_len;
	struct arch_patch p;
};

/* A loaded object's table, and whether it is in the current generation. */
struct rec_obj {
	char *path;
	uint64_t bias, lo, hi;
	uint64_t tab;			/* the table's offset in the area */
	unsigned gen;
};

/* A realloc whose begin was taken, its end not yet. */
struct rec_realloc {
	uint64_t tid, old;
	int live;
	struct heap_block held;
};

struct recorder {
	pid_t pid;
	pid_t first_tid;	/* the first thread rec_thread_set saw */
	/* how its system calls run in the target (rec_set_via; NULL: at
	 * the thread's pc, nobody told) */
	const struct arch_inject_via *via;
	unsigned depth;
	int memfd;			/* /proc/PID/mem */
	uint8_t *area;			/* ptleak's mapping, NULL: none */
	int area_fd;			/* the memfd, ptleak's (-1: none) */
	uint64_t area_t;		/* the target's */
	uint64_t arena_used;
	struct rec_conf *conf;		/* in ptleak's mapping */
	/* the lanes' readers: rd[0] the shared ring's; nlanes made so far
	 * (the lowest ones), lanes_max (1: no lanes, the TSC not usable or
	 * PTLEAK_DEBUG=no-lanes) */
	struct ring_reader *rd[REC_NLANES];
	unsigned nlanes, lanes_max;	/* made so far, at most */
	unsigned lane_users[REC_NLANES];	/* thread entries per lane */
	struct rec_queues *queues;	/* rec_drain.c's (NULL: none yet),
					 * freed by rec_delete */
	int broken;			/* a corrupt ring: no more draining */
	int disabled;			/* rec_disable: no lane made now */
	/* the conf's counts, ptleak's copies: the target can write the
	 * conf's, never used to index anything on ptleak's side */
	unsigned nranges, nstubs;
	/* records that failed their checks (rec_drain), skipped */
	uint64_t bad;
	uint64_t amended;	/* records of a free amended (debug stats) */
	/* the ring's lost count at the last drain that found it sane, and
	 * each lane's, with its head read after it (a lost record reserved
	 * 8 bytes or more first: a count that grows faster, or shrinks, was
	 * written by the target) */
	uint64_t lost;
	uint64_t lane_lost[REC_NLANES], lane_head[REC_NLANES];
	const char *why;		/* why broken, if not a reader's */
	/* PTLEAK_DEBUG=slow-drain: ~1 us per record taken (a consumer
	 * slower than the target's threads, for the tests) */
	int slow_drain;
	struct code_page pages[REC_MAX_STUBS];
	unsigned npages;
	struct rec_fn *fns;
	unsigned nfns, afns;
	struct rec_obj *objs;
	unsigned nobjs, aobjs, gen;
	uint64_t blobtab;		/* the blob's own table in the arena */
	uint64_t gadget;		/* a `leave; ret` of the program's (detach) */
	/* tids of the thread table's entries, to forget them at exit */
	struct { pid_t tid; unsigned slot; } *tslots;
	size_t ntslots, atslots;
	/* drain: stack hash -> walked pcs (interned in walked) */
	struct stacks *walked;
	struct idmap walked_of;
	/* the stack set: its table's log2 (STACKSET_LOG_MIN..), its
	 * hashes, and every hash put there (ptleak's copy: a bigger table
	 * is filled from it, not from the target's memory) */
	unsigned ss_log2;
	uint64_t ss_count;
	uint64_t *ss_hashes;
	size_t ss_n, ss_cap;
	/* (walked id, fn) -> the stack id of ptleak's stacks */
	struct idmap stack_of;
	/* the last stack ids by (record hash, fn): both maps' answer,
	 * which never changes once given (id 0: empty) */
	struct { uint64_t hash; uint32_t fn, id; } stack_memo[REC_STACK_MEMO];
	uint64_t main_lo, main_hi;
	struct rec_realloc *reallocs;
	size_t nreallocs, areallocs;
	/* when records were known to exist: a record whose time is below
	 * tsc was reserved before ns (rec_checkpoint); oldest first */
	struct { uint64_t tsc, ns, heads; } *marks;
	size_t nmarks, amarks, firstmark;
};

/* The ring of lane L in ptleak's mapping. */
static inline struct ring *rec_lane(const struct recorder *R, unsigned l)
{
	return (struct ring *)(R->area + (l ? AREA_LANES + (l - 1) * LANE_STRIDE :
					  AREA_RING));
}

/* The id in ST of the stack of a record of function F: hash HASH, and
 * the NPCS pcs at PCS when it came whole (rec_stacks.c).  0 when the
 * hash is unknown (its whole record was lost). */
struct stacks;
uint32_t rec_stack_of(struct recorder *R, struct stacks *st,
		      const struct rec_fn *f, uint64_t hash, const uint64_t *pcs,
		      unsigned npcs);

/* conf.stackset := R's current table of the stack set (rec_stacks.c). */
void rec_stackset_publish(struct recorder *R);
/* Append LEN bytes to the area's arena: their offset, or 0 if full. */
uint64_t rec_arena_put(struct recorder *R, const void *data, size_t len);
/* Copy LEN bytes to target code at ADDR (a code page or a patched
 * entry).  0, or -1 with a message. */
int rec_code_write(struct recorder *R, uint64_t addr, const void *buf,
		   size_t len);
/* A code page within rel32 reach of [LO, HI), mapped if needed (TID
 * runs the mmap).  NULL with WHY. */
struct code_page *rec_code_page(struct recorder *R, pid_t tid, uint64_t lo,
				uint64_t hi, int *held_sig, char *why,
				size_t len);
/* [*LO, *HI): the mapping of process PID holding ADDR (/proc/PID/maps).
 * 0 or -1. */
int rec_mapping_of(pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi);
/* LEN bytes of code page PG, or 0 when it is full. */
uint64_t rec_code_alloc(struct code_page *pg, uint64_t len);
/* PTLEAK_DEBUG=stats: the live threads' walks with the stack cache and
 * how many a way gave (stderr). */
void rec_debug_scache(const struct recorder *R);
/* rec_conf's [near_lo, near_hi) widened to hold [LO, HI): before the
 * range or stub page is published. */
void rec_near_add(struct recorder *R, uint64_t lo, uint64_t hi);

#endif
