/*
 * census_attach.c - the census of the heap at an attach (census.h), in
 * the stop where recording starts: every thread held outside the
 * allocator and no arena locked (census_attach_quiesce, before anything
 * is planted), then the census into the heap table (census_attach_take,
 * once the allocator is bound, before any thread runs again).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/census.h"
#include "target/memio.h"
#include "tables/stacks.h"
#include "session.h"
#include "symbols/symbols.h"
#include "base/util.h"

/*
 * Rounds of letting the threads inside the allocator run out (a round
 * is 0.2-1 ms), and rounds without fewer threads inside before every
 * thread runs once (one inside may wait for something a held one holds,
 * in user space).  A thread that is inside malloc or free 95-99% of its
 * time is caught outside once in 20-100 rounds; letting all run every
 * 10th round, as before, undid the rounds before it: 4 such threads
 * reached the 400 rounds' end (an inexact census) in most attaches.
 */
#define QUIESCE_ROUNDS 1000
#define QUIESCE_PATIENCE 300

/* The functions of glibc's malloc a thread can be inside (their callees
 * too: the unwound stack is looked at). */
static const char *const malloc_fns[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray",
	"posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
	"malloc_trim", "mallopt", "mallinfo", "mallinfo2", "malloc_info",
	"malloc_stats", "malloc_usable_size", "__libc_freeres",
	"__libc_thread_freeres",
};
#define NFNS (sizeof(malloc_fns) / sizeof(malloc_fns[0]))

struct cmem {
	pid_t pid;
	int pagemap;
	const struct census_map *maps;
	size_t nmaps;
};

static long cread(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct cmem *m = ctx;
	size_t i;

	for (i = 0; i < m->nmaps; i++)
		if (addr >= m->maps[i].start && addr < m->maps[i].end)
			break;
	/* untouched anonymous pages: zeros, not faulted in */
	if (i < m->nmaps && !m->maps[i].inode && m->pagemap >= 0 &&
	    len > m->maps[i].end - addr)
		len = m->maps[i].end - addr;
	if (i < m->nmaps && !m->maps[i].inode && m->pagemap >= 0)
		return (long)mem_read_resident(m->pid, m->pagemap, addr, buf, len);
	return (long)mem_read(m->pid, addr, buf, len);
}

struct cstate {
	struct cmem mem;
	struct census_map *maps;
	struct census_thread *threads;
	struct census_input in;
	struct sym_def defs[NFNS];
	uint64_t pc;		/* the last thread looked at */
};

/* The input of a census: maps, threads (held) and their thread pointers;
 * memory read from process FROM (0: the target itself, else its
 * snapshot). */
static int cstate_open(struct session *S, struct cstate *cs, pid_t from)
{
	struct proc *P = S->proc;
	char path[64];
	size_t n = 0;
	unsigned i;
	struct task *t;

	memset(cs, 0, sizeof(*cs));
	cs->mem.pid = from ? from : P->mem_pid;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)(from ? from : P->pid));
	cs->mem.pagemap = open(path, O_RDONLY | O_CLOEXEC);
	if (census_maps_read(from ? from : P->pid, &cs->maps, &cs->mem.nmaps))
		return -1;
	cs->mem.maps = cs->maps;
	cs->threads = xcalloc(S->ntasks + 1, sizeof(*cs->threads));
	for_each_proc_task(S, i, t) {
		struct arch_regs r;

		if (t->role != ROLE_THREAD || !t->held || arch_get_regs(t->tid, &r))
			continue;
		cs->threads[n].tid = t->tid;
		cs->threads[n++].tp = arch_tp(&r);
	}
	cs->in.read = cread;
	cs->in.ctx = &cs->mem;
	cs->in.maps = cs->maps;
	cs->in.nmaps = cs->mem.nmaps;
	cs->in.threads = cs->threads;
	cs->in.nthreads = n;
	return 0;
}

static void cstate_close(struct cstate *cs)
{
	census_maps_free(cs->maps, cs->mem.nmaps);
	free(cs->threads);
	if (cs->mem.pagemap >= 0)
		close(cs->mem.pagemap);
	cs->maps = NULL;
	cs->threads = NULL;
}

/* Thread T (held) is inside one of glibc's malloc functions: which one
 * into *WHICH; 2 if it is in a system call there (waiting for a lock,
 * perhaps one a held thread holds). */
static int inside(struct session *S, struct cstate *cs, struct task *t,
		  const char **which)
{
	struct arch_regs r;
	uint64_t pcs[64];
	unsigned n, i, k;

	if (arch_get_regs(t->tid, &r))
		return 0;
	n = unwind_stack(S->proc->unw, t->tid, &r, NULL, 0, pcs, 64);
	cs->pc = arch_pc(&r);
	for (i = 0; i < n; i++)
		for (k = 0; k < NFNS; k++)
			if (cs->defs[k].addr && pcs[i] >= cs->defs[k].addr &&
			    pcs[i] < cs->defs[k].addr + (cs->defs[k].size ?
							 cs->defs[k].size : 1)) {
				*which = malloc_fns[k];
				return arch_syscall_nr(&r) >= 0 ? 2 : 1;
			}
	return 0;
}

/* Let the held threads BUSY[0..N-1] (or all: ALL) run a moment, then
 * hold them again. */
static int let_run(struct session *S, struct task **busy, size_t n, int all,
		   unsigned round)
{
	struct task *t;
	unsigned k;
	size_t i;

	if (all) {
		events_release_all(S);
	} else {
		S->hold = 0;
		for (i = 0; i < n; i++) {
			busy[i]->held = 0;
			if (busy[i]->held_listen)
				task_listen(S, busy[i]);
			else
				task_resume(S, busy[i], busy[i]->held_sig);
		}
	}
	usleep(50 + 10 * (round % 50));
	/* a thread stopped meanwhile is taken as it is: interrupted again,
	 * it would stop at once at its next resume (events_reap) */
	for_each_proc_task(S, k, t)
		if (!t->held && t->started && !t->parked && !t->dying &&
		    t->role != ROLE_VFORK_CHILD && events_reap(S, t->tid) < 0)
			return -1;
	/* strict, as the attach's first stop: a thread that started a vfork
	 * meanwhile waits in the kernel for its child, unheld (counted
	 * stopped by events_stop_all), and the recorder wants every thread
	 * held (recsession.c: "its threads run", 1 attach in ~350) */
	return events_stop_all(S) || events_wait_all_stopped(S, 1);
}

int census_attach_quiesce(struct session *S)
{
	struct proc *P = S->proc;
	struct task **busy = NULL;
	struct cstate cs;
	struct census *c;
	unsigned round;
	size_t abusy = 0, fewest = SIZE_MAX;
	unsigned stalled = 0;
	pid_t last = 0;
	const char *which = "";

	if (P->no_heap || !P->census)
		return 0;
	c = P->census;
	if (cstate_open(S, &cs, 0))
		return -1;
	if (census_glibc_arenas(&cs.in, c)) {
		cstate_close(&cs);
		return 0;	/* not glibc's, or not found: said by the census */
	}
	{
		struct symbolizer *s = sym_open_setup(P->mem_pid);

		sym_find_in_module(s, c->main_arena, malloc_fns, NFNS, 1, cs.defs);
		/* (the modules' names are the symbolizer's: not kept) */
		sym_close(s);
	}
	for (round = 0; round < QUIESCE_ROUNDS; round++) {
		size_t n = 0;
		unsigned i;
		struct task *t;
		uint64_t locked;
		int waiting = 0, all;

		for_each_proc_task(S, i, t) {
			int in;

			if (t->role != ROLE_THREAD || !t->held ||
			    !(in = inside(S, &cs, t, &which)))
				continue;
			waiting |= in == 2;
			last = t->tid;
			if (debug_stops)
				fprintf(stderr, "ptleak-debug: census: thread %d inside %s%s pc %#llx\n",
					(int)t->tid, which, in == 2 ? " (in a system call)" : "",
					(unsigned long long)cs.pc);
			grow_array((void **)&busy, &abusy, n + 1, sizeof(*busy));
			busy[n++] = t;
		}
		/* the ring as it is now: threads that ran made arenas */
		if (round && census_glibc_arenas(&cs.in, c))
			break;
		locked = census_glibc_locked(&cs.in, c);
		if (!n && !locked)
			break;
		if (debug_stops)
			fprintf(stderr, "ptleak-debug: census: %zu threads in the "
				"allocator, arena %#llx locked\n", n,
				(unsigned long long)locked);
		if (n < fewest) {
			fewest = n;
			stalled = 0;
		} else {
			stalled++;
		}
		/* a lock only (a thread forking), or a thread waiting in
		 * the kernel (for a lock a held thread may hold), or no
		 * progress for a long while: all run */
		all = !n || waiting || stalled >= QUIESCE_PATIENCE;
		if (all) {
			fewest = SIZE_MAX;	/* the held ones run too */
			stalled = 0;
		}
		if (let_run(S, busy, n, all, round)) {
			free(busy);
			cstate_close(&cs);
			return -1;
		}
	}
	free(busy);
	cstate_close(&cs);
	if (round == QUIESCE_ROUNDS) {
		c->exact = 0;
		snprintf(c->why, sizeof(c->why), "thread %d stayed inside glibc's "
			 "%s while ptleak attached", (int)last, which);
		c->main_arena = 0;
	}
	return 0;
}

/*
 * N of C's blocks into P's table, those before LEFT, from the last: the
 * census's array shrinks as its blocks go into the table (the two are
 * not held whole at once: ptleak's memory stays under 48 bytes a
 * block).  Returns how many are left.
 */
static size_t merge(struct proc *P, struct census *c, size_t left, size_t n)
{
	size_t i = left, end = n < left ? left - n : 0;

	while (i-- > end) {
		struct heap_block b;

		memset(&b, 0, sizeof(b));
		b.addr = c->blocks[i].addr;
		b.size = c->blocks[i].size;
		b.fn = AF_MALLOC;
		b.before = 1;
		b.type = c->blocks[i].type;
		if (i >= 16)	/* its index slot, 16 blocks ahead */
			heap_prefetch(P->heap, c->blocks[i - 16].addr);
		heap_census(P->heap, &b);
		if (i && i % 65536 == 0)
			c->blocks = xrealloc(c->blocks, i * sizeof(*c->blocks));
	}
	return end;
}

/* Read glibc's heap through CS into C; an inexact census adds nothing
 * (its memory is roots). */
static void census_read(struct cstate *cs, struct census *c)
{
	c->main_arena = 0;	/* found again: the ring as it is now */
	if (census_glibc(&cs->in, c) || !c->exact) {
		census_free(c);
		c->nblocks = 0;
		c->bytes = 0;
		c->exact = 0;
	}
	census_types(&cs->in, c);
}

/* A census read from a snapshot while the program runs on. */
struct census_job {
	pthread_t th;
	struct cstate cs;
	struct census *c;
	atomic_int done;
	int joined;
	size_t left;		/* blocks not in the table yet (the first ones) */
};

static void *census_thread(void *arg)
{
	struct census_job *j = arg;

	census_read(&j->cs, j->c);
	atomic_store(&j->done, 1);
	return NULL;
}

void census_attach_take(struct session *S)
{
	struct proc *P = S->proc;
	struct census *c = P->census;
	struct census_job *j;
	struct cstate cs;
	char why[320];

	if (P->no_heap || !c)
		return;
	if (P->allocator != CENSUS_GLIBC) {
		census_unsupported(c, P->allocator);
		return;
	}
	if (!c->main_arena) {
		if (!c->why[0])
			snprintf(c->why, sizeof(c->why), "glibc's arenas were not found");
		c->exact = 0;
		return;
	}
	debug_time("census");
	/* --events logs the census's blocks at the attach (evlog_attach) */
	if (S->o->events)
		snprintf(why, sizeof(why), "--events");
	else if (!snap_clone(S, P, why, sizeof(why))) {
		/* the census reads the snapshot, the threads run on:
		 * what they free meanwhile the table remembers */
		j = xcalloc(1, sizeof(*j));
		if (cstate_open(S, &j->cs, P->snap_pid)) {
			cstate_close(&j->cs);
			free(j);
			snap_kill(P);
			return;
		}
		j->c = c;
		heap_census_pending(P->heap, 1);
		P->cjob = j;
		if (util_thread_start(&j->th, census_thread, j)) {
			census_thread(j);
			j->joined = 1;
		}
		return;
	}
	if (debug_stats)
		fprintf(stderr, "ptleak-debug: census: no snapshot of process %d "
			"(%s): its threads are held while its heap is read\n",
			(int)P->pid, why);
	if (cstate_open(S, &cs, 0))
		return;
	census_read(&cs, c);
	debug_time("census: heap read");
	heap_reserve(P->heap, c->nblocks);
	merge(P, c, c->nblocks, c->nblocks);
	debug_time("census: blocks in the table");
	census_free(c);
	cstate_close(&cs);
}

/* Census blocks put in the table per step while the program runs. */
#define CENSUS_BATCH 65536

void census_attach_step(struct session *S, struct proc *P, int block, int reap)
{
	struct census_job *j = P->cjob;
	struct census *c;
	int stopped = 0;

	if (!j)
		return;
	c = j->c;
	if (!j->joined) {
		if (!block && !atomic_load(&j->done))
			return;
		pthread_join(j->th, NULL);
		j->joined = 1;
	}
	if (j->cs.maps) {
		/* the snapshot is read */
		cstate_close(&j->cs);
		snap_kill(P);
		debug_time("census: heap read");
		heap_reserve(P->heap, c->nblocks);
		j->left = c->nblocks;
	}
	j->left = merge(P, c, j->left, block ? j->left : CENSUS_BATCH);
	if (j->left)
		return;
	heap_census_pending(P->heap, 0);
	census_free(c);
	free(j);
	P->cjob = NULL;
	debug_time("census: blocks in the table");
	if (!reap || S->exec_due)
		return;	/* its zombie: at the next stop of every thread
			 * (a thread held at an execve must stay held) */
	if (!S->hold) {
		if (events_stop_all(S)) {
			events_release_all(S);
			return;
		}
		stopped = 1;
	}
	snap_reap(S, P, 0);
	if (stopped)
		events_release_all(S);
}

void census_attach_steps(struct session *S, int block, int reap)
{
	struct proc *P;

	for (P = S->procs; P; P = P->next)
		census_attach_step(S, P, block, reap);
}

struct restack {
	const struct stacks *from;
	struct stacks *to;
};

static uint32_t restack(void *ctx, uint32_t id)
{
	struct restack *rs = ctx;
	const uint64_t *pcs;
	unsigned n = stacks_get(rs->from, id, &pcs);

	return stacks_intern(rs->to, pcs, n);
}

void census_inherit(struct session *S, struct proc *P, struct proc *Pp)
{
	struct restack rs = { Pp->stacks, P->stacks };
	struct proc *was = S->proc;

	if (P->no_heap || !P->heap || !Pp->heap)
		return;
	census_attach_step(S, Pp, 1, 0);	/* the parent's census in */
	S->proc = Pp;
	recs_drain(S);		/* the parent's table as it is at the fork */
	S->proc = was;
	heap_inherit(P->heap, Pp->heap, restack, &rs);
}
