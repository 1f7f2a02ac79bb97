/*
 * rec_objs.c - what the hooks need to walk a stack: the loaded objects'
 * unwind tables (unwtab.h) and the threads' stacks (struct rec_thread),
 * written into the data area before the code they describe can run.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec_priv.h"
#include "recorder/recblob.h"
#include "recorder/unwtab.h"
#include "target/maps.h"
#include "base/util.h"

void rec_objects_begin(struct recorder *R)
{
	R->gen++;
}

/* The run-time range of PATH's executable segments loaded at BIAS. */
static int exec_range(const char *path, uint64_t bias, uint64_t *lo,
		      uint64_t *hi)
{
	int fd = open_untrusted(path);
	GElf_Phdr ph;
	size_t n, i;
	Elf *e;

	*lo = UINT64_MAX;
	*hi = 0;
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && !elf_getphdrnum(e, &n))
		for (i = 0; i < n; i++) {
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X))
				continue;
			if (*lo > bias + ph.p_vaddr)
				*lo = bias + ph.p_vaddr;
			if (*hi < bias + ph.p_vaddr + ph.p_memsz)
				*hi = bias + ph.p_vaddr + ph.p_memsz;
		}
	if (e)
		elf_end(e);
	close(fd);
	if (*lo < *hi)
		return 0;
	errno = 0;	/* a file without code, not a refused one */
	return -1;
}

struct put_table {
	struct recorder *R;
	uint64_t off;	/* in the data area, 0: no room */
};

static int put_table(void *ctx, const struct unwtab_hdr *h)
{
	struct put_table *p = ctx;

	p->off = rec_arena_put(p->R, h, h->size);
	return 0;
}

int rec_object_add(struct recorder *R, const char *path, uint64_t bias)
{
	struct rec_obj *o;
	uint64_t lo, hi, tab = 0;
	unsigned i;

	if (!R->area)
		return 0;
	if (exec_range(path, bias, &lo, &hi)) {
		/* a FIFO or device the target put in its place since */
		if (errno == EINVAL && util_first(path))
			warning("%s is not a regular file any more (replaced after it "
				"was loaded): stacks through it end there", path);
		return 0;	/* no code: nothing to walk */
	}
	for (i = 0; i < R->nobjs; i++) {
		o = &R->objs[i];
		if (!strcmp(o->path, path)) {
			if (o->bias == bias && o->gen == R->gen - 1) {
				o->gen = R->gen;	/* loaded still */
				return 0;
			}
			tab = o->tab;	/* the same file again: its table */
		}
	}
	if (!tab) {
		struct put_table put = { R, 0 };

		if (unwtab_compile_use(path, put_table, &put))
			return -1;
		tab = put.off;
		if (!tab)
			return error("no room left in ptleak's data area for the "
				     "unwind table of %s", path);
	}
	if (R->nobjs == R->aobjs) {
		R->aobjs = R->aobjs ? 2 * R->aobjs : 32;
		R->objs = xrealloc(R->objs, R->aobjs * sizeof(*R->objs));
	}
	o = &R->objs[R->nobjs++];
	o->path = xstrdup(path);
	o->bias = bias;
	o->lo = lo;
	o->hi = hi;
	o->tab = tab;
	o->gen = R->gen;
	return 0;
}

static int by_lo(const void *a, const void *b)
{
	const struct unwtab_obj *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int rec_objects_publish(struct recorder *R)
{
	struct unwtab_obj *v;
	uint64_t off, n = 0;
	unsigned i, k;
	size_t sz;

	if (!R->area)
		return 0;
	/* objects gone (dlclose) are forgotten; their tables stay */
	for (i = k = 0; i < R->nobjs; i++) {
		if (R->objs[i].gen == R->gen)
			R->objs[k++] = R->objs[i];
		else
			free(R->objs[i].path);
	}
	R->nobjs = k;
	/* the blob's own table in every code page: walks from a signal
	 * handler go through the stub into its caller */
	if (!R->blobtab)
		R->blobtab = rec_arena_put(R, rec_blob_unwtab, rec_blob_unwtab_size);
	sz = sizeof(struct rec_objs) +
	     (R->nobjs + R->npages) * sizeof(struct unwtab_obj);
	v = xcalloc(1, sz);
	for (i = 0; i < R->npages && R->blobtab; i++) {
		struct unwtab_obj *u = &((struct rec_objs *)v)->obj[n++];

		u->lo = R->pages[i].addr;
		u->hi = R->pages[i].addr + rec_blob_size;
		u->bias = R->pages[i].addr;
		u->tab = (const struct unwtab_hdr *)(R->area_t + R->blobtab);
	}
	for (i = 0; i < R->nobjs; i++) {
		const struct rec_obj *o = &R->objs[i];
		struct unwtab_obj *u = &((struct rec_objs *)v)->obj[n];

		/* overlapping ranges would break the binary search */
		u->lo = o->lo;
		u->hi = o->hi;
		u->bias = o->bias;
		u->tab = (const struct unwtab_hdr *)(R->area_t + o->tab);
		n++;
	}
	((struct rec_objs *)v)->n = n;
	qsort(((struct rec_objs *)v)->obj, n, sizeof(struct unwtab_obj), by_lo);
	off = rec_arena_put(R, v, sz);
	free(v);
	if (!off)
		return error("no room left in ptleak's data area for the list "
			     "of objects");
	__atomic_store_n(&R->conf->objs,
			 (const struct rec_objs *)(R->area_t + off), __ATOMIC_RELEASE);
	return 0;
}

int rec_mapping_of(pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	struct maps_file *f = maps_open(pid);
	struct maps_entry e;
	int ret = -1;

	if (!f)
		return -1;
	while (maps_next(f, &e))
		if (addr >= e.start && addr < e.end) {
			*lo = e.start;
			*hi = e.end;
			ret = 0;
			break;
		}
	maps_close(f);
	return ret;
}

static struct rec_thread *threads(const struct recorder *R)
{
	return (struct rec_thread *)(R->area + AREA_THREADS);
}

static struct rec_scache *scaches(const struct recorder *R)
{
	return (struct rec_scache *)(R->area + AREA_SCACHE);
}

void rec_debug_scache(const struct recorder *R)
{
	const struct rec_thread *T;
	const struct rec_scache *C;
	uint64_t walks, from_way, i;

	if (!R->area)
		return;
	T = threads(R);
	C = scaches(R);
	/* the main thread's shared cache, then the live entries' (a slot
	 * never given out is a hole of the memfd: not read) */
	walks = C[NTHREADS].walks, from_way = C[NTHREADS].from_way;
	for (i = 0; i < NTHREADS; i++)
		if (__atomic_load_n(&T[i].tcb, __ATOMIC_RELAXED)) {
			walks += C[i].walks;
			from_way += C[i].from_way;
		}
	fprintf(stderr, "ptleak-debug: stack cache: %llu walks of live threads, "
		"%llu of them a way\n", (unsigned long long)walks,
		(unsigned long long)from_way);
}

/* Entry E's lane given up (its thread gone or replaced): its records
 * go to the shared ring from now on, if it writes again. */
static void lane_drop(struct recorder *R, struct rec_thread *e)
{
	uint64_t l = e->lane;

	if (l && l < R->nlanes && R->lane_users[l])
		R->lane_users[l]--;
	__atomic_store_n(&e->lane, 0, __ATOMIC_RELAXED);
}

/* The lane for a new thread: a free one (the lowest; made now if it is
 * the next), 0 (the shared ring) if there is none or the rings are
 * disabled: a lane has one producer, which reserves without a locked
 * instruction. */
static uint64_t lane_pick(struct recorder *R)
{
	struct ring *r;
	unsigned l;

	for (l = 1; l < R->nlanes; l++)
		if (!R->lane_users[l]) {
			R->lane_users[l] = 1;
			return l;
		}
	/* ptleak's own flag, not the ring's (the target may write that) */
	if (l >= R->lanes_max || R->disabled)
		return 0;
	r = rec_lane(R, l);
	if (ring_init(r, RING_LOG2) ||
	    !(R->rd[l] = ring_reader_new(r, ring_mem_size(RING_LOG2))))
		return 0;
	R->lane_users[l] = 1;
	R->nlanes = l + 1;
	/* before the thread's entry names it */
	__atomic_store_n(&R->conf->nlanes, R->nlanes, __ATOMIC_RELEASE);
	return l;
}

void rec_need_times(struct recorder *R)
{
	if (R && R->area)
		__atomic_store_n(&R->conf->need_tsc, 1, __ATOMIC_RELEASE);
}

int rec_thread_set(struct recorder *R, pid_t tid, uint64_t tcb, uint64_t sp)
{
	struct rec_thread *T;
	uint64_t lo, hi, i, n;
	int shared;

	/* a second thread, before it runs: the records' times merge lanes
	 * from now on (the first thread's earlier ones, time 0, first) */
	if (!R->first_tid)
		R->first_tid = tid;
	else if (tid != R->first_tid)
		rec_need_times(R);
	if (!R->area || !tcb)
		return 0;
	/* the thread's own /proc entry: the leader may be gone (a zombie
	 * after pthread_exit has no maps) before a thread it made is seen */
	if (rec_mapping_of(tid, sp, &lo, &hi))
		lo = hi = 0;	/* no walk: tid only */
	T = threads(R);
	for (i = rec_thread_slot(tcb, NTHREADS - 1), n = 0; n < NTHREADS;
	     i = (i + 1) & (NTHREADS - 1), n++) {
		uint64_t key = __atomic_load_n(&T[i].tcb, __ATOMIC_RELAXED);

		if (key && key != tcb)
			continue;
		/* a new thread in the slot: no walk in progress (a cache a
		 * longjmp left in use is free again); the same one, seen
		 * again, may be stopped in the middle of one */
		if (key != tcb || T[i].tid != (uint64_t)tid) {
			scaches(R)[i].gen = 0;
			scaches(R)[i].n = 0;
			/* a live thread with this TCB already (clone with
			 * CLONE_VM, no new TLS): both find this entry, so its
			 * records go to the shared ring, whose producers may
			 * be many */
			shared = key == tcb && T[i].tid;
			lane_drop(R, &T[i]);
			T[i].lane = shared ? 0 : lane_pick(R);
		}
		T[i].lo = lo;
		T[i].hi = hi;
		T[i].tid = (uint64_t)tid;
		T[i].outer = 0;		/* a new thread: no call in progress */
		T[i].open_end = 0;	/* nor a record of its own open */
		__atomic_store_n(&T[i].tcb, tcb, __ATOMIC_RELEASE);
		if (R->ntslots == R->atslots) {
			R->atslots = R->atslots ? 2 * R->atslots : 64;
			R->tslots = xrealloc(R->tslots, R->atslots * sizeof(*R->tslots));
		}
		R->tslots[R->ntslots].tid = tid;
		R->tslots[R->ntslots].slot = (unsigned)i;
		R->ntslots++;
		return 0;
	}
	return 0;	/* full: that thread's records get one frame */
}

void rec_thread_gone(struct recorder *R, pid_t tid)
{
	size_t i;

	if (!R || !R->area)
		return;
	for (i = 0; i < R->ntslots; i++) {
		struct rec_thread *e;

		if (R->tslots[i].tid != tid)
			continue;
		e = &threads(R)[R->tslots[i].slot];
		/* the key stays (a probe chain must not break): no walk */
		if (e->tid == (uint64_t)tid) {
			e->hi = 0;
			e->lo = 0;
			e->tid = 0;
			lane_drop(R, e);
		}
		R->tslots[i--] = R->tslots[--R->ntslots];
	}
}

/* Thread TID's stack as rec_thread_set found it, if it holds SP: 0. */
static int thread_stack(struct recorder *R, pid_t tid, uint64_t sp,
			uint64_t *lo, uint64_t *hi)
{
	size_t i;

	for (i = 0; i < R->ntslots; i++) {
		const struct rec_thread *T = &threads(R)[R->tslots[i].slot];

		if (R->tslots[i].tid == tid && T->tid == (uint64_t)tid &&
		    sp >= T->lo && sp < T->hi) {
			*lo = T->lo;
			*hi = T->hi;
			return 0;
		}
	}
	return -1;
}

int rec_main_stack(struct recorder *R, pid_t tid, uint64_t sp)
{
	uint64_t lo, hi;

	/* the thread's mapping, read once (maps are dear to read) */
	if (!R->area || (thread_stack(R, tid, sp, &lo, &hi) &&
			 rec_mapping_of(tid, sp, &lo, &hi)))
		return 0;
	/* the stack grows down from hi: an sp up to 256 MiB below is on it
	 * (a thread not in the table, on another stack there, is the risk:
	 * every thread ptleak saw start is in the table) */
	R->conf->main_stack_lo = hi > (256ull << 20) ? hi - (256ull << 20) : 0;
	R->conf->main_tid = (uint64_t)tid;
	__atomic_store_n(&R->conf->main_stack_hi, hi, __ATOMIC_RELEASE);
	return 0;
}

void rec_set_main(struct recorder *R, uint64_t lo, uint64_t hi)
{
	R->main_lo = lo;
	R->main_hi = hi;
	if (!R->area)
		return;
	/* lo first: [lo, 0) matches nothing meanwhile */
	__atomic_store_n(&R->conf->main_lo, lo, __ATOMIC_RELEASE);
	__atomic_store_n(&R->conf->main_hi, hi, __ATOMIC_RELEASE);
}
