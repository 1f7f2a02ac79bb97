/*
 * rechook.h - the recorder's hooked calls (docs/recorder.md, piece 5):
 * what the mapper tells the hooks (struct rec_conf, reached through the
 * blob's context word), the stub's frame (struct rec_call, shared with
 * arch/$(ARCH)/recorder/stub.S) and the records the hooks put in the ring.
 * Freestanding: included by the hooks, by the stub (assembler: only the
 * REC_CALL_* offsets) and by ptleak.
 *
 * A patched function's entry jumps to its trampoline (arch_patch.h),
 * which enters the blob's rec_stub with the function id and the relocated
 * original.  rec_stub saves the argument registers in a struct rec_call
 * on its own stack, calls hook_enter(call), calls the original with the
 * original arguments, stores the result, calls hook_leave(call) and
 * returns the result.  The call's state lives in that frame only: a
 * longjmp out of the original abandons it with nothing to undo.
 *
 * Nesting rule: a call is recorded unless its return address lies in the
 * stub range (the code page: a tail call from another patched function
 * returns there) or in the body of an allocator function of the same
 * object (realloc -> malloc inside libc).  A signal handler's call returns
 * into the handler: recorded, whatever its thread was doing.
 */
#ifndef PTLEAK_RECHOOK_H
#define PTLEAK_RECHOOK_H

/* The data area's memfd name, and how /proc/PID/maps shows it (the
 * reachability scan leaves it out: ptleak's, not the program's). */
#define REC_AREA_NAME		"ptleak-ring"
#define REC_AREA_NAME_MAPS	"/memfd:" REC_AREA_NAME

/* struct rec_call, for the stub */
#define REC_CALL_ARGS	0	/* 6 argument registers, in ABI order */
#define REC_CALL_FN	48	/* function id (REC_FN) */
#define REC_CALL_ORIG	56	/* relocated original entry */
#define REC_CALL_RET	64	/* result (rax) */
#define REC_CALL_RET2	72	/* second result register (rdx), kept */
#define REC_CALL_RA	80	/* the caller's return address */
#define REC_CALL_REC	88	/* set by hook_enter: REC_RECORD_* */
#define REC_CALL_SCRUB	92	/* set by hook_enter: its scrub class */
/* rec_call.record: not recorded; recorded, hook_leave to call; recorded
 * whole by hook_enter (a free: the stub clears rec_call.outer's word
 * itself and scrubs by hook_enter's class, hook_leave not called) */
#define REC_RECORD_NO		0
#define REC_RECORD_LEAVE	1
#define REC_RECORD_DONE		2
/* the caller-saved registers after the original returned, given back
 * after hook_leave (a caller built with -fipa-ra counts on those its
 * callee leaves alone) */
#define REC_CALL_RCX	96
#define REC_CALL_RSI	104
#define REC_CALL_RDI	112
#define REC_CALL_R8	120
#define REC_CALL_R9	128
#define REC_CALL_R10	136
#define REC_CALL_R11	144
#define REC_CALL_OUTER	152
/* the callee-saved registers at the entry (the hooks preserve them, but
 * ptleak, taking a stopped thread out of a hook at detach, sets them
 * back from here) */
#define REC_CALL_RBX	160
#define REC_CALL_R12	168
#define REC_CALL_R13	176
#define REC_CALL_R14	184
#define REC_CALL_R15	192
/* %r10 and %r11 at the entry, stored there by the trampoline (right
 * below the return address and the stub's saved rbp) */
#define REC_CALL_IN_R10	208
#define REC_CALL_IN_R11	216
#define REC_CALL_SIZE	224	/* a multiple of 16 */
/*
 * Bytes below the stub's frame the stub zeroes before it returns, with
 * the frame: the hooks' own frames held the block's address (and the
 * walks the frames' registers), the stack's dead part would keep it as
 * a root for the leak scan.  A store counts (a call's ~90 stores were
 * most of what the stub cost perl), so the hooks tell the stub how deep
 * the call's own chain went: hook_enter in rec_call.scrub, hook_leave,
 * returning the larger of it and its own, one of these classes (stub.S
 * stores from the class's depth up; gcc -fstack-usage frames with their
 * return addresses, the blob built -mno-red-zone; test_scrubbed checks
 * each path's residue and zeros):
 */
/* anything that walks or may: leave_alloc (hook_leave tail-calls it),
 * emit_stack, walk_cached, step, rule_at, 712 bytes (walk instead of
 * walk_cached: 592) */
#define REC_SCRUB	768
/* ring_wait after emit or leave_alloc, 216 and 264; emit's tid_of (a
 * thread with no entry), 176 */
#define REC_SCRUB_WAIT	384
/* leave_alloc alone (emit_fast inlined: a stack the thread's cache had as
 * a way, interned: perl's every call but ~1 in 60), 168 */
#define REC_SCRUB_EMIT	192
/* the hooks alone, nothing recorded (hook_enter of a malloc: its nesting
 * and its thread's entry, 104), or a free's emit (hook_enter tail-calls
 * it: its frame in hook_enter's place), 120 */
#define REC_SCRUB_MIN	128

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>

#include "recorder/ring.h"
#include "recorder/unwtab_walk.h"

struct rec_call {
	uint64_t arg[6];
	uint64_t fn;
	uint64_t orig;
	uint64_t ret;
	uint64_t ret2;
	uint64_t ra;
	uint32_t record;	/* set by hook_enter: REC_RECORD_* */
	uint32_t scrub;		/* set by hook_enter: its class (REC_SCRUB_*) */
	uint64_t post[7];	/* rcx rsi rdi r8 r9 r10 r11 */
	uint64_t outer;		/* set by hook_enter: the word it made this
				 * call's (struct rec_thread.outer), to clear */
	uint64_t saved[5];	/* rbx r12 r13 r14 r15 */
	uint64_t entry;		/* set by hook_enter: the thread's struct
				 * rec_thread, 0: none (looked up once a call) */
	uint64_t in_r10, in_r11;
};

_Static_assert(offsetof(struct rec_call, fn) == REC_CALL_FN, "rec_call");
_Static_assert(REC_SCRUB_MIN < REC_SCRUB_EMIT && REC_SCRUB_EMIT < REC_SCRUB_WAIT &&
	       REC_SCRUB_WAIT < REC_SCRUB && REC_SCRUB_MIN % 16 == 0, "scrub classes");
_Static_assert(offsetof(struct rec_call, orig) == REC_CALL_ORIG, "rec_call");
_Static_assert(offsetof(struct rec_call, ret) == REC_CALL_RET, "rec_call");
_Static_assert(offsetof(struct rec_call, ret2) == REC_CALL_RET2, "rec_call");
_Static_assert(offsetof(struct rec_call, ra) == REC_CALL_RA, "rec_call");
_Static_assert(offsetof(struct rec_call, record) == REC_CALL_REC, "rec_call");
_Static_assert(offsetof(struct rec_call, scrub) == REC_CALL_SCRUB, "rec_call");
_Static_assert(offsetof(struct rec_call, post) == REC_CALL_RCX, "rec_call");
_Static_assert(offsetof(struct rec_call, outer) == REC_CALL_OUTER, "rec_call");
_Static_assert(offsetof(struct rec_call, saved) == REC_CALL_RBX, "rec_call");
_Static_assert(offsetof(struct rec_call, in_r10) == REC_CALL_IN_R10, "rec_call");
_Static_assert(offsetof(struct rec_call, in_r11) == REC_CALL_IN_R11, "rec_call");
_Static_assert(sizeof(struct rec_call) == REC_CALL_SIZE, "rec_call");

/* What a patched function is: its arguments' meaning. */
enum rec_kind {
	REC_FN_MALLOC = 1,	/* (size): malloc, valloc, pvalloc */
	REC_FN_CALLOC,		/* (n, size) */
	REC_FN_REALLOC,		/* (old, size) */
	REC_FN_FREE,		/* (addr) */
	REC_FN_MEMALIGN,	/* (align, size): memalign, aligned_alloc */
	REC_FN_POSIX_MEMALIGN,	/* (memptr, align, size) -> int */
	REC_FN_REALLOCARRAY,	/* (old, n, size) */
	/* descriptor functions (fdprobe.h has the list): creations are
	 * recorded after they returned (REC_FD_OPEN), closes before the
	 * original runs (REC_FD_CLOSE: before the kernel can give the number
	 * to another thread) */
	REC_FN_FD_RET = 32,	/* the result is a new descriptor */
	REC_FN_FD_DUP2,		/* (old, new): unless old == new */
	REC_FN_FD_FCNTL,	/* (fd, cmd): F_DUPFD, F_DUPFD_CLOEXEC only */
	REC_FN_FD_SIGNALFD,	/* (fd, ...): fd -1 only */
	REC_FN_FD_FILE,		/* -> FILE *: v0 = its _fileno */
	REC_FN_FD_DIR,		/* -> DIR *: v0 = its first int */
	REC_FN_FD_PAIR0,	/* (int[2], ...) -> 0: v0, v1 = the pair */
	REC_FN_FD_PAIR3,	/* (a, b, c, int[2]) -> 0: the same */
	REC_FN_FD_CLOSE,	/* (a0, a1, a2): close, close_range, closefrom */
	REC_FN_FD_FCLOSE,	/* (FILE *): v = its _fileno */
	REC_FN_FD_CLOSEDIR,	/* (DIR *): v = its first int */
};

#define REC_FN_IS_FD(kind)	((kind) >= REC_FN_FD_RET)
#define REC_FN_FD_IS_CLOSE(kind) ((kind) >= REC_FN_FD_CLOSE)

/* Linux's F_DUPFD and F_DUPFD_CLOEXEC; glibc's offsetof(FILE, _fileno)
 * on LP64 and the descriptor's offset in its struct __dirstream (ptleak
 * checks the first against <stdio.h>) */
#define REC_F_DUPFD		0
#define REC_F_DUPFD_CLOEXEC	1030
#define REC_FILE_FILENO		112
#define REC_DIR_FD		0

/*
 * A function id: its kind, the index of its object (nesting rule) and a
 * tag the hooks pass through untouched (ptleak: its enum alloc_fn).
 */
#define REC_FN(kind, obj)	((uint32_t)(kind) | (uint32_t)(obj) << 8)
#define REC_FN_TAGGED(kind, obj, tag) (REC_FN(kind, obj) | (uint32_t)(tag) << 16)
#define REC_FN_KIND(fn)		((unsigned)(fn) & 0xff)
#define REC_FN_OBJ(fn)		(((unsigned)(fn) >> 8) & 0xff)
#define REC_FN_TAG(fn)		(((unsigned)(fn) >> 16) & 0xff)

/*
 * Ring record types and words.  Every record starts with fn (the id) in
 * its low 32 bits and the tid in its high 32 (0 if unknown: see struct
 * rec_thread), then its time t: the TSC (ring_arch_tsc) read before the
 * record was reserved.  ptleak merges the lanes by it (docs/recorder.md,
 * "Lanes").
 * Below, "fn tid" stands for those two words.  The records of allocations
 * (ALLOC, REALLOC_END, MEMALIGN) end with the call's stack: a 64-bit
 * hash of it, then npcs (the ring header's count) return addresses,
 * innermost first (the caller's first): all of them when the hash is not
 * in the stack set (rec_conf.stackset), none when it is (ptleak has seen
 * that stack: interned).  FREE and REALLOC_BEGIN carry no stack (npcs 0,
 * no hash word).
 *   REC_ALLOC          fn tid result a0 a1 hash pcs  a0, a1: the size arguments
 *                                               (a1 0 for one-size kinds)
 *   REC_FREE           fn tid addr              before the original runs
 *   REC_REALLOC_BEGIN  fn tid old               before the original runs
 *   REC_REALLOC_END    fn tid old a1 a2 result hash pcs  after it returned;
 *                                               a1, a2: the size arguments
 *                                               (realloc: size, 0;
 *                                               reallocarray: n, size)
 *   REC_MEMALIGN       fn tid memptr align size rc result hash pcs
 *                      result: *memptr read after return if rc == 0, else 0
 *   REC_FD_OPEN        fn tid a0 a1 result v0 v1 hash pcs  after it
 *                                               returned; v0, v1: the
 *                                               descriptors read (FILE,
 *                                               DIR, PAIR kinds), else -1
 *   REC_FD_CLOSE       fn tid a0 a1 a2 v        before the original runs;
 *                                               v: the descriptor read
 *                                               (FCLOSE, CLOSEDIR), else -1
 * An ALLOC whose stack is interned, in a thread's own lane, is committed
 * open (ring.h) with one word more, last: the time of the block's free
 * if the thread's next record would have been that free (REC_FREE of
 * the same address) and the record was still in the ring then; the free
 * has no record of its own (ring_amend).  REC_OPEN_HDR is its header.
 */
#define REC_OPEN_LEN	64u	/* header, fn tid t result a0 a1 hash, tf */
#define REC_OPEN_HDR	RING_HDR(REC_OPEN_LEN, RING_OPEN, REC_ALLOC, 0)
/* the open record's result (the block's address), bytes after its start */
#define REC_OPEN_ADDR	24u
enum rec_type {
	REC_ALLOC = 16,		/* below: rec_record's free-form types */
	REC_FREE,
	REC_REALLOC_BEGIN,
	REC_REALLOC_END,
	REC_MEMALIGN,
	REC_FD_OPEN,
	REC_FD_CLOSE,
};

#define REC_MAX_RANGES	32
#define REC_MAX_STUBS	8
#define REC_MAX_OBJS	16

/* An allocator function's body [lo, hi) in object OBJ. */
struct rec_range {
	uint64_t lo, hi;
	uint64_t obj;
};

/*
 * A thread's stack, keyed by its TCB (rec_arch_tcb(): glibc's and musl's
 * thread pointer).  Written by ptleak before the thread runs (at its
 * first stop), fields first, then tcb with release; the hooks read tcb
 * with acquire, then the fields.  An open-addressed table of
 * threads_mask + 1 entries, linear probing from rec_thread_slot(tcb),
 * tcb 0 = free.  A thread found: its tid, and its stack reads clamped to
 * [lo, hi) (no walk when sp is outside: a sigaltstack).  Not found: the
 * main thread's stack bounds if sp lies in them (its TCB is set up after
 * ptleak's injection at launch), tid main_tid; else tid 0, no walk (the
 * caller's return address only).
 */
struct rec_thread {
	uint64_t tcb;
	uint64_t lo, hi;
	uint64_t tid;
	/* written by the thread's hooks: the frame (struct rec_call) of its
	 * recorded call in progress, 0: none (see REC_NEST_DIST) */
	uint64_t outer;
	/* the same for its descriptor creation in progress (fopen's open
	 * is part of it: REC_FD_NEST_DIST) */
	uint64_t fd_outer;
	/* the lane its records go to (rec_conf.lanes), set by ptleak with
	 * the entry: 0 the shared one (rec_conf.ring) */
	uint64_t lane;
	/* written by the thread's hooks: its lane's head after its last
	 * open record (REC_OPEN_HDR), 0: none; ptleak zeroes it with a new
	 * thread's entry */
	uint64_t open_end;
};

static inline uint64_t rec_thread_slot(uint64_t tcb, uint64_t mask)
{
	return ((tcb >> 6) * 0x9e3779b97f4a7c15ull >> 32) & mask;
}

/*
 * The loaded objects' unwind tables (unwtab_walk.h), sorted by lo.
 * ptleak never changes a published struct rec_objs: it writes a new one
 * (dlopen) and replaces rec_conf.objs with release; the hooks load the
 * pointer once per walk with acquire.
 */
struct rec_objs {
	uint64_t n;
	struct unwtab_obj obj[];
};

/* The context word points here.  Written by the mapper before any patch
 * is live; read-only for the hooks (every field but objs is fixed once a
 * patch is live; the tables rec_thread and stackset change as said). */
struct rec_conf {
	struct ring *ring;	/* lane 0: the threads with no lane of their own */
	/* lane i (1 <= i < nlanes) at lanes + (i - 1) * lane_stride: a
	 * ring per thread of the table (struct rec_thread.lane; nlanes <= 1:
	 * every record goes to ring) */
	uint64_t lanes, lane_stride, nlanes;
	int64_t tid_off;	/* tid (int32) at TCB + tid_off; 0: unknown
				 * (struct rec_thread gives it then) */
	uint64_t stub_lo, stub_hi;	/* the code page: stubs, relocated code */
	uint64_t nstubs;	/* in stub[] below */
	/* stacks: at most depth return addresses per record (0: the
	 * caller's alone, no walk) */
	uint64_t depth;
	/* a return address into main ([main_lo, main_hi), tested as ra - 1)
	 * is the last one recorded, as the breakpoint engine's unwinder does */
	uint64_t main_lo, main_hi;
	/* the main thread's stack: a walk reads [sp, main_stack_hi) only,
	 * so main_stack_lo may (should) be as low as the stack may grow */
	uint64_t main_stack_lo, main_stack_hi, main_tid;
	/* struct rec_thread.outer of the main thread while it is not in the
	 * table (written by the hooks) */
	uint64_t main_outer;
	const struct rec_objs *objs;	/* NULL: no tables, no walk */
	struct rec_thread *threads;	/* NULL: none */
	uint64_t threads_mask;
	/* stack hashes ptleak has seen (written by ptleak only), as one
	 * word (rec_stackset_word): the table's address, and the log2 of
	 * its entries in the top byte; 0: none.  One word because ptleak
	 * grows the set by publishing a bigger table elsewhere: a hook
	 * never pairs a table with another's size.  Open addressing,
	 * linear probing from hash & (entries - 1), 0 free; the hooks probe
	 * at most REC_STACKSET_PROBES entries */
	uint64_t stackset;
	/* optional (NULL: none): the unwind rules the hooks looked up, by
	 * pc, pccache_mask + 1 entries zeroed by ptleak and written by the
	 * hooks of every thread (struct rec_pccache) */
	struct rec_pccache *pccache;
	uint64_t pccache_mask;
	/* return addresses the breakpoint engine hijacked (a descriptor
	 * call in progress returns through ptleak's trampoline, at
	 * hijack_ret): a walk that reads hijack_ret from stack slot S takes
	 * the real one from the entry of S (struct rec_hijack) */
	uint64_t hijack_ret;
	const struct rec_hijack *hijacks;
	uint64_t hijacks_mask;
	/* struct rec_thread.fd_outer of the main thread while it is not in
	 * the table (written by the hooks) */
	uint64_t main_fd_outer;
	/* the process: a descriptor call made by another one (a vfork or
	 * posix_spawn child, sharing the memory until its exec) is not
	 * recorded (its descriptors are its own) */
	uint64_t pid;
	/* optional (NULL: none): the threads' stack caches, one per entry
	 * of the thread table, at the entry's index (struct rec_scache),
	 * and the one of the calls on the main stack by a thread without
	 * an entry (the main thread until its TCB is known: shared, so
	 * taken with a compare-and-swap) */
	struct rec_scache *scache;
	struct rec_scache *main_scache;
	/* [near_lo, near_hi): covers every range and stub page (widened
	 * before a new one is published): a return address outside is not
	 * nested, whatever the lists say (0, 0: not known, look) */
	uint64_t near_lo, near_hi;
	/* 1 once the process has had a second thread (ptleak writes it
	 * before that thread runs): records carry the TSC only then; 0:
	 * their time is 0 (one producer's records need no merge, and
	 * ptleak dates them by its drain) */
	uint64_t need_tsc;
	/* ---- the lists, read only by a call inside [near_lo, near_hi) or a
	 * descriptor call (the fields above are a call's: a few cache
	 * lines) ---- */
	uint64_t nranges;
	struct rec_range range[REC_MAX_RANGES];
	/* more code pages (one per object out of rel32 reach of the first):
	 * a return address in any of them is nested too */
	struct { uint64_t lo, hi; } stub[REC_MAX_STUBS];
	/* the objects of the patched descriptor functions, [lo, hi) by
	 * REC_FN_OBJ (written before their patches are live): a creation
	 * inside another one is part of it if it returns into the object
	 * of the outer function */
	struct { uint64_t lo, hi; } obj_text[REC_MAX_OBJS];
};

/*
 * A hijacked return: the stack slot that holds hijack_ret and the real
 * return address.  Open addressing by rec_hijack_slot(slot), linear
 * probing, slot 0 free; real 0: a slot no longer hijacked (kept: the
 * probe chains stay whole).  Written by ptleak while the thread whose
 * stack holds SLOT is stopped (real, then slot with release).
 */
struct rec_hijack {
	uint64_t slot;
	uint64_t real;
};

static inline uint64_t rec_hijack_slot(uint64_t slot, uint64_t mask)
{
	return ((slot >> 3) * 0x9e3779b97f4a7c15ull >> 40) & mask;
}

/*
 * An entry of the rule cache: RULE is the address of the struct
 * unwtab_rule found for the lookup address KEY (unwtab_key()) in the
 * tables of the struct rec_objs at OBJS; check = KEY ^ RULE ^ OBJS.
 * Threads write entries racily (rule, then check, relaxed) and read them
 * the same way: a torn entry fails its check (a miss), and a new
 * struct rec_objs misses every old entry.  ptleak zeroes the cache if it
 * ever publishes a struct rec_objs at an address an earlier one had.
 * The slot of KEY: rec_pccache_slot(KEY, pccache_mask).
 */
struct rec_pccache {
	uint64_t check;
	uint64_t rule;
};

static inline uint64_t rec_pccache_slot(uint64_t key, uint64_t mask)
{
	return (key * 0x9e3779b97f4a7c15ull >> 40) & mask;
}

/*
 * The stack cache: per thread (the entry of the thread table at the same
 * index), the frames of its last walk, so that the next walk stops
 * unwinding where it meets a frame it walked before and checks the rest
 * instead of walking it again.  Written and read by that thread's hooks
 * only; ptleak zeroes an entry when it gives its slot to a thread.
 *
 * A frame is its registers (pc, sp, fp: struct unwtab_frame) and where
 * the step from the frame below read them: its pc from ra_at, its fp
 * from fp_at (0: the fp carried over from the frame below).  ra_at 0:
 * not reached by such a step (the first frame, or after a signal frame
 * or a hijacked return): the step into it is never taken on trust.
 *
 * Why this is sound: a walk from a frame is a function of the frame's
 * registers, the words the walk reads from the stack and what the key
 * holds (tables, stack bound, main's range, stub pages, hijack
 * trampoline, depth).  So when a new walk reaches a frame equal, register
 * for register, to cached frame k, and the key is the same, it follows
 * the cached frames k + 1, ... as long as each one's words still hold
 * the values it was built from (one load for the return address, two
 * when the fp was read); the first that does not is walked again from
 * the one before.  A frame at the same sp with the same return address
 * but a different caller (the stack unwound and built again) differs
 * in a word above it, which the check reads.
 *
 * Signals and longjmp: the thread owns its cache while gen is odd (set
 * by a walk before it reads the cache, put back to even after it wrote
 * it; rec_conf.main_scache, which threads may share, with a
 * compare-and-swap and release).  A hook that finds gen odd (a signal handler's call while its
 * thread is in a walk, or a walk a longjmp out of a handler abandoned)
 * walks without the cache and leaves it alone; so the cache is never
 * read or written half-updated.  After such a longjmp the thread's cache
 * stays off (its walks cost what they did before the cache).
 */
#define REC_SCACHE_FRAMES	32
#define REC_SCACHE_PENDING	8
/*
 * The ways: the last REC_SCACHE_WAYS whole walks of the thread, each as
 * its first frame (pc, sp, and fp if the walk depends on it), the words
 * its steps read that the walk depends on (at sp + off: every return
 * address; a saved fp only if a rule finds a CFA from it before a step
 * reads fp again: code built without frame pointers keeps anything in
 * %rbp) and what it gave (hash, count).  A program allocates from a few sites
 * in turn (sqlite3's and perl's loops: 99% of their stacks are one of the
 * last 4-8, 0.1% the last one): a walk whose first frame is a way's and
 * whose words all hold is that way's walk, by the argument above, and
 * costs a load and a compare a word.  A way is written only by a walk
 * that owns the cache and is whole (f[] the whole walk, every step's
 * words known: no signal frame, no hijacked return address), and
 * thrown away with the cache when the key changes.
 */
#define REC_SCACHE_WAYS		8
#define REC_SWAY_WORDS		32

struct rec_sway {
	uint64_t pc, sp, fp;
	uint32_t fpkey;		/* 1: the walk depends on the first fp */
	uint32_t top;		/* the largest of off[] */
	uint64_t hash;
	uint32_t n;		/* pcs of the walk */
	uint32_t nwords;	/* words read + 1; 0: an empty way */
	uint32_t off[REC_SWAY_WORDS];	/* their addresses less sp */
	uint64_t val[REC_SWAY_WORDS];	/* their values */
};
/* rec_sframe.flags */
#define REC_SF_EXACT	1	/* unwtab_frame.exact */
#define REC_SF_SKIP	2	/* in ptleak's code pages: not recorded */
#define REC_SF_MAIN	4	/* a return address into main: the last */
#define REC_SF_FPCFA	8	/* its rule finds the CFA from its fp */

struct rec_sframe {
	uint64_t pc, sp, fp;
	uint64_t ra_at, fp_at;
	uint64_t flags;
};

struct rec_scache {
	uint64_t gen;		/* odd: in use by a walk of the thread */
	/* the key: what the walk read besides frames and stack words */
	uint64_t objs, hi, main_lo, main_hi, hijack_ret, nstubs, max;
	uint64_t n;		/* frames in f[] */
	/* whole: f[] is the whole walk, which ended at f[n - 1] whatever
	 * the words above it (the depth, main, or that frame's rule: STOP,
	 * INVALID, no table), hash its hash; done: it ended by the rule (so
	 * does any walk reaching that frame) */
	uint64_t whole, done, hash;
	uint64_t way_next;	/* the way a whole walk writes next */
	uint64_t walks, from_way;	/* walks with the cache, of them ways
					 * (PTLEAK_DEBUG=stats) */
	uint64_t way_hint;	/* the way last met: looked at first */
	struct rec_sframe f[REC_SCACHE_FRAMES];
	/* the walk's scratch: frames walked before one met the cache */
	struct rec_sframe pend[REC_SCACHE_PENDING];
	struct rec_sway way[REC_SCACHE_WAYS];
};

#define REC_STACKSET_PROBES	8

/* conf.stackset for a table of 2^LOG2 hashes at address ADDR, and back. */
static inline uint64_t rec_stackset_word(uint64_t addr, unsigned log2)
{
	return addr | (uint64_t)log2 << 56;
}

static inline const uint64_t *rec_stackset_table(uint64_t word, uint64_t *mask)
{
	*mask = (1ull << (word >> 56 & 63)) - 1;
	return (const uint64_t *)(uintptr_t)(word & ((1ull << 56) - 1));
}
/*
 * The second nesting rule: a call whose stub frame lies less than this
 * below its thread's recorded call in progress (struct rec_thread.outer)
 * is part of it: an allocator that calls its own entry points from a
 * helper it tail-called (mimalloc's realloc -> mi_heap_realloc ->
 * free).  A signal handler's call is a signal frame (over 1 KiB on
 * x86-64) deeper: recorded.  An outer frame left by longjmp is above any
 * later call's: replaced.
 */
#define REC_NEST_DIST		1024
/*
 * A descriptor creation is part of the creation in progress on its
 * thread (struct rec_thread.fd_outer: fopen, opendir) when its stub frame
 * lies less than this below that one's and it returns into the outer
 * function's object (fopen's open, called by _IO_file_open): counted once,
 * by the outer one.  A signal handler's creation returns into the
 * handler: recorded.
 */
#define REC_FD_NEST_DIST	16384
/* a depth above this is taken as this (ptleak's --depth is at most 256) */
#define REC_MAX_DEPTH		256

/*
 * The stack hash of a record: from REC_STACK_HASH_SEED, rec_stack_hash_add()
 * of each pc with its index in the record, then rec_stack_hash_end() with
 * their count.  Never 0 (0 is a free stack set entry).  For ptleak too,
 * should it want to check a record's hash against its pcs.  A sum of one
 * term per pc: the terms do not wait for each other (a chain of
 * multiplies cost 5 cycles a frame), and the hooks may add them in any
 * order.
 */
#define REC_STACK_HASH_SEED	0x6a09e667f3bcc908ull

static inline uint64_t rec_stack_hash_add(uint64_t h, uint64_t pc, unsigned i)
{
	uint64_t x = (pc + (i + 1) * 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;

	return h + (x ^ x >> 31);
}

static inline uint64_t rec_stack_hash_end(uint64_t h, uint64_t n)
{
	h ^= n * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 33;		/* murmur3's finaliser */
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1;
}

#endif /* __ASSEMBLER__ */
#endif
