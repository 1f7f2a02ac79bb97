/*
 * rec_area.c - the recorder's memory in the target: the shared data area
 * (memfd) and the code pages near the patched objects (rec_priv.h has
 * the layout).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/arch.h"
#include "target/maps.h"
#include "target/memio.h"
#include "rec_priv.h"
#include "recorder/recblob.h"
#include "recorder/ring.h"
#include "target/seccomp.h"
#include "tables/stacks.h"
#include "base/util.h"

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1u
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

struct recorder *rec_new(pid_t pid, unsigned depth)
{
	struct recorder *R = xcalloc(1, sizeof(*R));

	R->pid = pid;
	R->depth = depth;
	R->memfd = -1;
	R->area_fd = -1;
	R->walked = stacks_new();
	R->ss_log2 = STACKSET_LOG_MIN;
	R->nlanes = 1;
	R->slow_drain = getenv("PTLEAK_DEBUG") &&
			strstr(getenv("PTLEAK_DEBUG"), "slow-drain");
	return R;
}

void rec_delete(struct recorder *R)
{
	unsigned i;

	if (!R)
		return;
	for (i = 0; i < REC_NLANES; i++)
		if (R->rd[i])
			ring_reader_delete(R->rd[i]);
	free(R->queues);
	if (R->area)
		munmap(R->area, AREA_SIZE);
	if (R->memfd >= 0)
		close(R->memfd);
	if (R->area_fd >= 0)
		close(R->area_fd);
	for (i = 0; i < R->nobjs; i++)
		free(R->objs[i].path);
	free(R->objs);
	free(R->fns);
	free(R->tslots);
	free(R->walked_of.e);
	free(R->ss_hashes);
	free(R->stack_of.e);
	free(R->reallocs);
	free(R->marks);
	stacks_delete(R->walked);
	free(R);
}

void rec_set_pid(struct recorder *R, pid_t pid)
{
	if (R)
		R->pid = pid;
}

int rec_injected(const struct recorder *R)
{
	return R && R->area;
}

/* The arguments of each system call rec_inject runs (NAME: its address
 * in the target, FD: the memfd). */
static void args_memfd(uint64_t *a, uint64_t name)
{
	memset(a, 0, 6 * sizeof(*a));
	a[0] = name;
	a[1] = MFD_CLOEXEC;
}

static void args_ftruncate(uint64_t *a, uint64_t fd)
{
	memset(a, 0, 6 * sizeof(*a));
	a[0] = fd;
	a[1] = AREA_SIZE;
}

static void args_mmap_area(uint64_t *a, uint64_t fd)
{
	memset(a, 0, 6 * sizeof(*a));
	a[1] = AREA_SIZE;
	a[2] = PROT_READ | PROT_WRITE;
	a[3] = MAP_SHARED;
	a[4] = fd;
}

static void args_close(uint64_t *a, uint64_t fd)
{
	memset(a, 0, 6 * sizeof(*a));
	a[0] = fd;
}

static void args_mmap_code(uint64_t *a, uint64_t at)
{
	memset(a, 0, 6 * sizeof(*a));
	a[0] = at;
	a[1] = CODE_PAGE_SIZE;
	a[2] = PROT_READ | PROT_EXEC;
	a[3] = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	a[4] = (uint64_t)-1;
}

/* Process PID's pid as it sees it (getpid() in its pid namespace: the
 * last NSpid of /proc/PID/status; PID if that cannot be read). */
static pid_t own_pid(pid_t pid)
{
	char path[64], line[256];
	long v = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (;;) {
			long x = strtol(p, &end, 10);

			if (end == p)
				break;
			v = x;
			p = end;
		}
		break;
	}
	fclose(f);
	return (pid_t)v;
}

int rec_allowed(pid_t tid, char *why, size_t len)
{
	uint64_t a[6];

	args_memfd(a, 0);
	if (!seccomp_allows(tid, "memfd_create", arch_sys_memfd_create, a, why, len))
		return 0;
	args_ftruncate(a, 3);
	if (!seccomp_allows(tid, "ftruncate", arch_sys_ftruncate, a, why, len))
		return 0;
	args_mmap_area(a, 3);
	if (!seccomp_allows(tid, "mmap", arch_sys_mmap, a, why, len))
		return 0;
	args_close(a, 3);
	if (!seccomp_allows(tid, "close", arch_sys_close, a, why, len))
		return 0;
	args_mmap_code(a, 0);
	return seccomp_allows(tid, "mmap", arch_sys_mmap, a, why, len);
}

/* Stopped thread TID runs system call NAME as VIA says: 0 and *RET, or
 * -1 with WHY. */
static int inject(const struct arch_inject_via *via, pid_t tid,
		  const char *name, long nr, const uint64_t a[6],
		  uint64_t *ret, int *held_sig, char *why, size_t len)
{
	int sig = 0;

	if (!seccomp_allows(tid, name, nr, a, why, len))
		return -1;
	if (arch_inject(tid, via, nr, a, ret, &sig, NULL)) {
		snprintf(why, len, "thread %d could not run %s for ptleak",
			 (int)tid, name);
		return -1;
	}
	if (sig)
		*held_sig = sig;
	if (*ret > -4096ull) {
		snprintf(why, len, "%s in thread %d failed: %s", name, (int)tid,
			 strerror((int)-*ret));
		return -1;
	}
	return 0;
}

static int rec_code_link(struct recorder *R);

/* The name the memfd gets (/proc/PID/maps shows REC_AREA_NAME_MAPS): in
 * the target, in a code page. */
static const char memfd_name[] = REC_AREA_NAME;

/*
 * Can records of several lanes be ordered by their times?  Only if the
 * kernel keeps its clock on the TSC (it checked that the CPUs' counters
 * agree, none warps against another); PTLEAK_DEBUG=no-lanes says no.
 */
static int lanes_usable(void)
{
	const char *dbg = getenv("PTLEAK_DEBUG");
	char buf[32] = "";
	FILE *f;

	if (dbg && strstr(dbg, "no-lanes"))
		return 0;
	f = fopen("/sys/devices/system/clocksource/clocksource0/"
		  "current_clocksource", "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strcmp(buf, "tsc\n");
}

int rec_inject(struct recorder *R, pid_t tid, uint64_t near_lo,
	       uint64_t near_hi, int *held_sig, char *why, size_t len)
{
	uint64_t a[6], fd, addr, name;
	struct code_page *pg;
	char path[64];
	void *mem;
	int lfd;

	if (R->area)
		return 0;
	R->memfd = R->memfd >= 0 ? R->memfd : mem_open(R->pid);
	if (R->memfd < 0) {
		snprintf(why, len, "cannot open /proc/%d/mem", (int)R->pid);
		return -1;
	}
	/* a first code page anywhere: the memfd's name goes there */
	pg = rec_code_page(R, tid, near_lo, near_hi, held_sig, why, len);
	if (!pg)
		return -1;
	name = rec_code_alloc(pg, sizeof(memfd_name));
	if (!name || rec_code_write(R, name, memfd_name, sizeof(memfd_name))) {
		snprintf(why, len, "cannot write into ptleak's code page");
		return -1;
	}
	args_memfd(a, name);
	if (inject(R->via, tid, "memfd_create", arch_sys_memfd_create, a, &fd,
		   held_sig, why, len))
		return -1;
	args_ftruncate(a, fd);
	if (inject(R->via, tid, "ftruncate", arch_sys_ftruncate, a, &addr,
		   held_sig, why, len))
		goto close_fd;
	args_mmap_area(a, fd);
	if (inject(R->via, tid, "mmap", arch_sys_mmap, a, &addr, held_sig,
		   why, len))
		goto close_fd;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)R->pid, (int)fd);
	lfd = open(path, O_RDWR | O_CLOEXEC);
	if (lfd < 0) {
		snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
		goto unmap;
	}
	mem = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
	if (mem == MAP_FAILED) {
		close(lfd);
		snprintf(why, len, "cannot map the target's ring: %s", strerror(errno));
		goto unmap;
	}
	args_close(a, fd);
	if (inject(R->via, tid, "close", arch_sys_close, a, &fd, held_sig, why, len)) {
		munmap(mem, AREA_SIZE);
		close(lfd);
		goto unmap;
	}
	R->area = mem;
	R->area_fd = lfd;
	R->area_t = addr;
	R->arena_used = AREA_ARENA;
	R->conf = (struct rec_conf *)(R->area + AREA_CONF);
	ring_init(R->area + AREA_RING, RING_LOG2);
	R->rd[0] = ring_reader_new(R->area + AREA_RING, ring_mem_size(RING_LOG2));
	R->conf->ring = (struct ring *)(R->area_t + AREA_RING);
	/* the lanes made as threads come (rec_objs.c lane_pick): 16 rings'
	 * headers, each a page, cost a single thread 0.3 ms */
	R->lanes_max = lanes_usable() ? REC_NLANES : 1;
	R->conf->lanes = R->area_t + AREA_LANES;
	R->conf->lane_stride = LANE_STRIDE;
	R->conf->nlanes = R->nlanes;
	R->conf->depth = R->depth > 1 ? R->depth - 1 : 0;
	/* the descriptor hooks' getpid, if the filters allow it */
	memset(a, 0, sizeof(a));
	if (seccomp_allows(tid, "getpid", arch_sys_getpid, a, NULL, 0))
		R->conf->pid = (uint64_t)own_pid(R->pid);
	R->conf->threads = (struct rec_thread *)(R->area_t + AREA_THREADS);
	R->conf->threads_mask = NTHREADS - 1;
	rec_stackset_publish(R);
	R->conf->pccache = (struct rec_pccache *)(R->area_t + AREA_PCCACHE);
	R->conf->pccache_mask = NPCCACHE - 1;
	R->conf->hijacks = (const struct rec_hijack *)(R->area_t + AREA_HIJACK);
	R->conf->hijacks_mask = NHIJACK - 1;
	/* PTLEAK_DEBUG=no-stack-cache: every walk from the caller (the
	 * tests compare both) */
	if (!getenv("PTLEAK_DEBUG") ||
	    !strstr(getenv("PTLEAK_DEBUG"), "no-stack-cache"))
	{
		R->conf->scache = (struct rec_scache *)(R->area_t + AREA_SCACHE);
		R->conf->main_scache = R->conf->scache + NTHREADS;
	}
	/* the code page mapped already */
	R->conf->stub_lo = pg->addr;
	R->conf->stub_hi = pg->addr + CODE_PAGE_SIZE;
	rec_near_add(R, pg->addr, pg->addr + CODE_PAGE_SIZE);
	R->conf->nstubs = R->nstubs = 1;
	R->conf->stub[0].lo = pg->addr;
	R->conf->stub[0].hi = pg->addr + CODE_PAGE_SIZE;
	if (rec_code_link(R)) {
		snprintf(why, len, "cannot write into ptleak's code page");
		return -1;
	}
	return 0;

unmap:
	args_close(a, 0);
	a[0] = addr;
	a[1] = AREA_SIZE;
	inject(R->via, tid, "munmap", arch_sys_munmap, a, &fd, held_sig, path,
	       sizeof(path));
close_fd:
	args_close(a, fd);
	inject(R->via, tid, "close", arch_sys_close, a, &fd, held_sig, path,
	       sizeof(path));
	return -1;
}

uint64_t rec_arena_put(struct recorder *R, const void *data, size_t len)
{
	uint64_t off = (R->arena_used + 63) & ~63ull;

	if (!R->area || off + len > AREA_SIZE)
		return 0;
	/* written through the file: fresh pages without a page fault each
	 * (4-5 times faster for a 200 KB table where faults are dear) */
	if (R->area_fd < 0 ||
	    pwrite(R->area_fd, data, len, (off_t)off) != (ssize_t)len)
		memcpy(R->area + off, data, len);
	R->arena_used = off + len;
	return off;
}

int rec_code_write(struct recorder *R, uint64_t addr, const void *buf,
		   size_t len)
{
	if (mem_poke(R->memfd, addr, buf, len))
		return error("cannot write ptleak's code at %#" PRIx64
			     " in process %d: %s", addr, (int)R->pid,
			     strerror(errno));
	return 0;
}

uint64_t rec_code_alloc(struct code_page *pg, uint64_t len)
{
	uint64_t a = (pg->used + 15) & ~15ull;

	if (a + len > CODE_PAGE_SIZE)
		return 0;
	pg->used = a + len;
	return pg->addr + a;
}

static int in_reach(uint64_t a, uint64_t lo, uint64_t hi)
{
	uint64_t end = a + CODE_PAGE_SIZE;

	if (!lo && !hi)
		return 1;
	return (a >= hi ? end - lo : hi - a) < (uint64_t)ARCH_PATCH_REACH;
}

/*
 * A free range of CODE_PAGE_SIZE bytes in the target within reach of
 * [LO, HI) (anywhere if both are 0), as close to it as the gaps of
 * /proc/PID/maps allow: 0 if none.
 */
static uint64_t find_gap(pid_t pid, uint64_t lo, uint64_t hi)
{
	uint64_t prev_end = 1ull << 20, best = 0, bestd = UINT64_MAX, s, e;
	struct maps_file *f = maps_open(pid);
	struct maps_entry me;

	if (!f)
		return 0;
	for (;;) {
		int more = maps_next(f, &me);

		if (more)
			s = me.start, e = me.end;
		else
			s = e = 0x7ffffffff000ul;	/* end of user space */
		if (s >= prev_end + CODE_PAGE_SIZE) {
			/* the gap [prev_end, s): its end nearest below LO,
			 * its start nearest above HI */
			uint64_t cand[2] = { s - CODE_PAGE_SIZE, prev_end };
			unsigned i;

			for (i = 0; i < 2; i++) {
				uint64_t c = cand[i], d;

				if (!in_reach(c, lo, hi))
					continue;
				d = c >= hi ? c - hi : lo - c;
				if (!lo && !hi)
					d = UINT64_MAX - c;	/* highest */
				if (d < bestd)
					bestd = d, best = c;
			}
		}
		if (e > prev_end)
			prev_end = e;
		if (!more || s == 0x7ffffffff000ul)
			break;
	}
	maps_close(f);
	return best;
}

struct code_page *rec_code_page(struct recorder *R, pid_t tid, uint64_t lo,
				uint64_t hi, int *held_sig, char *why,
				size_t len)
{
	uint64_t a[6], at, ret, ctx;
	struct code_page *pg;
	unsigned i;

	for (i = 0; i < R->npages; i++)
		if (in_reach(R->pages[i].addr, lo, hi) &&
		    R->pages[i].used + CODE_SLOT <= CODE_PAGE_SIZE)
			return &R->pages[i];
	if (R->npages == REC_MAX_STUBS) {
		snprintf(why, len, "ptleak has mapped %d code pages already",
			 REC_MAX_STUBS);
		return NULL;
	}
	at = find_gap(R->pid, lo, hi);
	if (!at) {
		snprintf(why, len, "no free address within 2 GiB of %#" PRIx64
			 " for ptleak's code", lo);
		return NULL;
	}
	args_mmap_code(a, at);
	if (inject(R->via, tid, "mmap", arch_sys_mmap, a, &ret, held_sig, why,
		   len))
		return NULL;
	pg = &R->pages[R->npages++];
	pg->addr = ret;
	if (getenv("PTLEAK_DEBUG") && strstr(getenv("PTLEAK_DEBUG"), "stats"))
		fprintf(stderr, "ptleak-debug: recorder: code page at %#llx\n",
			(unsigned long long)ret);
	pg->used = 0;
	if (ret != at) {
		/* MAP_FIXED_NOREPLACE unknown (Linux < 4.17): a hint */
		if (!in_reach(ret, lo, hi)) {
			snprintf(why, len, "the kernel mapped ptleak's code at "
				 "%#" PRIx64 ", out of reach", ret);
			return NULL;	/* unmapped at detach */
		}
	}
	/* the hook blob first: its context word points to the conf */
	if (!rec_code_alloc(pg, RECBLOB_SIZE) ||
	    rec_code_write(R, pg->addr, rec_blob, rec_blob_size)) {
		snprintf(why, len, "cannot write ptleak's code into process %d",
			 (int)R->pid);
		return NULL;
	}
	ctx = R->area ? R->area_t + AREA_CONF : 0;
	if (ctx && rec_code_write(R, pg->addr + RECBLOB_OFF_rec_ctx, &ctx, 8))
		return NULL;
	if (R->conf && R->npages > 1 && R->nstubs < REC_MAX_STUBS) {
		rec_near_add(R, pg->addr, pg->addr + CODE_PAGE_SIZE);
		R->conf->stub[R->nstubs].lo = pg->addr;
		R->conf->stub[R->nstubs].hi = pg->addr + CODE_PAGE_SIZE;
		R->nstubs++;
		__atomic_store_n(&R->conf->nstubs, R->nstubs, __ATOMIC_RELEASE);
	}
	return pg;
}

void rec_near_add(struct recorder *R, uint64_t lo, uint64_t hi)
{
	struct rec_conf *c = R->conf;

	if (!c->near_hi || lo < c->near_lo)
		__atomic_store_n(&c->near_lo, lo, __ATOMIC_RELAXED);
	if (hi > c->near_hi)
		__atomic_store_n(&c->near_hi, hi, __ATOMIC_RELAXED);
}

/* The first code page is mapped before the area: its context word. */
static int rec_code_link(struct recorder *R)
{
	uint64_t ctx = R->area_t + AREA_CONF;
	unsigned i;

	for (i = 0; i < R->npages; i++)
		if (rec_code_write(R, R->pages[i].addr + RECBLOB_OFF_rec_ctx, &ctx, 8))
			return -1;
	return 0;
}

int rec_pc_in_code(const struct recorder *R, uint64_t pc)
{
	unsigned i;

	for (i = 0; R && i < R->npages; i++)
		if (pc >= R->pages[i].addr && pc < R->pages[i].addr + CODE_PAGE_SIZE)
			return 1;
	return 0;
}

void rec_disable(struct recorder *R)
{
	unsigned l;

	if (!R || !R->area)
		return;
	R->disabled = 1;
	for (l = 0; l < R->nlanes; l++)
		__atomic_store_n(&rec_lane(R, l)->enabled, 0, __ATOMIC_SEQ_CST);
}

int rec_unmap_copy(const struct recorder *R, pid_t tid, int *held_sig)
{
	uint64_t a[6], ret;
	char why[256];
	unsigned i;
	int err = 0;

	memset(a, 0, sizeof(a));
	for (i = 0; R && i <= R->npages; i++) {
		a[0] = i < R->npages ? R->pages[i].addr : R->area_t;
		a[1] = i < R->npages ? CODE_PAGE_SIZE : AREA_SIZE;
		if (!a[0])
			continue;
		if (inject(NULL, tid, "munmap", arch_sys_munmap, a, &ret, held_sig, why,
			   sizeof(why)))
			err = error("ptleak's memory at %#" PRIx64 " stays mapped in "
				    "process %d: %s", a[0], (int)tid, why);
	}
	return err;
}

int rec_unmap(struct recorder *R, pid_t tid, int *held_sig, int code_too)
{
	uint64_t a[6], ret;
	char why[256];
	int err = 0;
	unsigned i;

	if (!R || !R->npages)
		return 0;
	memset(a, 0, sizeof(a));
	for (i = 0; i < R->npages && code_too; i++) {
		a[0] = R->pages[i].addr;
		a[1] = CODE_PAGE_SIZE;
		if (inject(R->via, tid, "munmap", arch_sys_munmap, a, &ret, held_sig, why,
			   sizeof(why)))
			err = error("ptleak's code page at %#" PRIx64 " stays mapped "
				    "in process %d: %s", R->pages[i].addr,
				    (int)R->pid, why);
	}
	if (code_too)
		R->npages = 0;
	if (R->area) {
		a[0] = R->area_t;
		a[1] = AREA_SIZE;
		if (inject(R->via, tid, "munmap", arch_sys_munmap, a, &ret, held_sig, why,
			   sizeof(why)))
			err = error("ptleak's data area at %#" PRIx64 " stays mapped "
				    "in process %d: %s", R->area_t, (int)R->pid, why);
	}
	return err;
}

void rec_set_via(struct recorder *R, const struct arch_inject_via *via)
{
	if (R)
		R->via = via;
}

void rec_set_trampoline(struct recorder *R, uint64_t addr)
{
	if (R && R->area)
		__atomic_store_n(&R->conf->hijack_ret, addr, __ATOMIC_RELEASE);
}

void rec_hijack(struct recorder *R, uint64_t slot, uint64_t real)
{
	struct rec_hijack *t;
	uint64_t i, n, at = NHIJACK, given = NHIJACK;

	if (!R || !R->area || !slot)
		return;
	t = (struct rec_hijack *)(R->area + AREA_HIJACK);
	for (i = rec_hijack_slot(slot, NHIJACK - 1), n = 0; n < NHIJACK;
	     i = (i + 1) & (NHIJACK - 1), n++) {
		if (t[i].slot == slot) {
			__atomic_store_n(&t[i].real, real, __ATOMIC_RELEASE);
			return;
		}
		if (!t[i].slot) {
			at = i;
			break;
		}
		if (!t[i].real && given == NHIJACK)
			given = i;	/* given back: reusable */
	}
	if (!real)
		return;
	if (given < NHIJACK)
		at = given;
	if (at == NHIJACK)
		return;		/* full: that walk stops at the trampoline */
	__atomic_store_n(&t[at].real, real, __ATOMIC_RELAXED);
	__atomic_store_n(&t[at].slot, slot, __ATOMIC_RELEASE);
}

int rec_fd_hooks(const struct recorder *R)
{
	return R && R->area && R->conf->pid;
}
