/*
 * fdprobe.c - the file-descriptor probes (fdprobe.h).
 *
 * What glibc 2.36 calls (checked by disassembly, libc6-dbg):
 *  - fopen (= fopen64) is `mov $1,%edx; jmp __fopen_internal`, which
 *    reaches _IO_file_open: __libc_open64 (the address of open/open64),
 *    or __open64_nocancel for a "c" mode;
 *  - fclose -> _IO_file_close_it -> _IO_file_close -> __close_nocancel;
 *  - opendir -> __open64_nocancel; closedir frees the DIR and tail-calls
 *    __close_nocancel; fdopen and fdopendir create no descriptor.
 * So close's breakpoint never sees fclose or closedir, nor open's opendir.
 * fopen and opendir are traced themselves (their record is named after
 * them and its stack starts at their caller), the descriptor read out of
 * the result: offsetof(FILE, _fileno) (stable glibc ABI) and the first
 * int of glibc's struct __dirstream.  fclose and closedir read it at
 * entry; __open_nocancel and __close_nocancel, exported GLIBC_PRIVATE,
 * catch the other internal paths (and fclose/closedir again: harmless).
 */
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "breakpoints/fdprobe.h"
#include "target/memio.h"
#include "recorder/rechook.h"
#include "base/util.h"

_Static_assert(offsetof(FILE, _fileno) == REC_FILE_FILENO, "the hooks' FILE");
_Static_assert(F_DUPFD == REC_F_DUPFD && F_DUPFD_CLOEXEC == REC_F_DUPFD_CLOEXEC,
	       "the hooks' fcntl");

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* What an entry or a return means. */
enum action {
	A_RET_FD,	/* the result is a new descriptor */
	A_DUP2,		/* A_RET_FD unless oldfd == newfd (nothing happens) */
	A_FCNTL,	/* A_RET_FD for F_DUPFD, F_DUPFD_CLOEXEC */
	A_SIGNALFD,	/* A_RET_FD when fd (arg 0) is -1 */
	A_PAIR0,	/* 0: two descriptors in the int[2] at arg 0 */
	A_PAIR3,	/* the same at arg 3 (socketpair) */
	A_FILE,		/* a FILE *: its _fileno */
	A_DIR,		/* a DIR *: its first int */
	A_CLOSE,	/* entry: close arg 0 */
	A_CLOSE_RANGE,	/* entry: close_range(lo, hi, flags) */
	A_CLOSEFROM,	/* entry: closefrom(lo) */
	A_FCLOSE,	/* entry: close the FILE's _fileno */
	A_CLOSEDIR,	/* entry: close the DIR's fd */
};

/* Aliases come right after the name they alias: an address planted
 * twice keeps its first name. */
static const struct {
	const char *name;
	enum action act;
} fns[] = {
	{ "open", A_RET_FD },
	{ "open64", A_RET_FD },
	{ "openat", A_RET_FD },
	{ "openat64", A_RET_FD },
	{ "creat", A_RET_FD },
	{ "creat64", A_RET_FD },
	{ "socket", A_RET_FD },
	{ "socketpair", A_PAIR3 },
	{ "accept", A_RET_FD },
	{ "accept4", A_RET_FD },
	{ "pipe", A_PAIR0 },
	{ "pipe2", A_PAIR0 },
	{ "dup", A_RET_FD },
	{ "dup2", A_DUP2 },
	{ "dup3", A_RET_FD },
	{ "fcntl", A_FCNTL },
	{ "fcntl64", A_FCNTL },
	{ "eventfd", A_RET_FD },
	{ "timerfd_create", A_RET_FD },
	{ "signalfd", A_SIGNALFD },
	{ "epoll_create", A_RET_FD },
	{ "epoll_create1", A_RET_FD },
	{ "inotify_init", A_RET_FD },
	{ "inotify_init1", A_RET_FD },
	{ "memfd_create", A_RET_FD },
	{ "fopen", A_FILE },
	{ "fopen64", A_FILE },
	{ "opendir", A_DIR },
	{ "__open_nocancel", A_RET_FD },
	{ "__open64_nocancel", A_RET_FD },
	{ "close", A_CLOSE },
	{ "__close_nocancel", A_CLOSE },
	{ "close_range", A_CLOSE_RANGE },
	{ "closefrom", A_CLOSEFROM },
	{ "fclose", A_FCLOSE },
	{ "closedir", A_CLOSEDIR },
};

#define NFNS ARRAY_SIZE(fns)

/* glibc's struct __dirstream starts with the descriptor */
#define DIR_FD_OFFSET REC_DIR_FD

/* What the recorder's hooks do for an action (rechook.h). */
static unsigned rec_kind(enum action a)
{
	switch (a) {
	case A_DUP2:
		return REC_FN_FD_DUP2;
	case A_FCNTL:
		return REC_FN_FD_FCNTL;
	case A_SIGNALFD:
		return REC_FN_FD_SIGNALFD;
	case A_PAIR0:
		return REC_FN_FD_PAIR0;
	case A_PAIR3:
		return REC_FN_FD_PAIR3;
	case A_FILE:
		return REC_FN_FD_FILE;
	case A_DIR:
		return REC_FN_FD_DIR;
	case A_CLOSE:
	case A_CLOSE_RANGE:
	case A_CLOSEFROM:
		return REC_FN_FD_CLOSE;
	case A_FCLOSE:
		return REC_FN_FD_FCLOSE;
	case A_CLOSEDIR:
		return REC_FN_FD_CLOSEDIR;
	default:
		return REC_FN_FD_RET;
	}
}

struct fdprobe {
	struct fdtable *tab;
	struct fd_list now;	/* /proc/PID/fd, reused */
	int started;		/* the launch's exec was seen */
	int bound;		/* bound in this image */
	unsigned planted;	/* functions planted in this image */
	/* the object each function was bound in, [lo, hi) */
	uint64_t mod_lo[NFNS], mod_hi[NFNS];
};

struct fdprobe *fdprobe_new(void)
{
	struct fdprobe *fp = xcalloc(1, sizeof(*fp));

	fp->tab = fds_new();
	return fp;
}

void fdprobe_delete(struct fdprobe *fp)
{
	if (!fp)
		return;
	fds_delete(fp->tab);
	fd_list_free(&fp->now);
	free(fp);
}

const struct fdtable *fdprobe_table(const struct fdprobe *fp)
{
	return fp->tab;
}

void fdprobe_exec(struct fdprobe *fp, pid_t pid)
{
	fp->bound = 0;
	fp->planted = 0;
	memset(fp->mod_lo, 0, sizeof(fp->mod_lo));
	memset(fp->mod_hi, 0, sizeof(fp->mod_hi));
	if (fds_proc_read(pid, &fp->now)) {
		warning("cannot read /proc/%d/fd: %m", (int)pid);
		return;
	}
	if (!fp->started)
		fds_inherit(fp->tab, fp->now.v, fp->now.n);
	else
		fds_exec(fp->tab, fp->now.v, fp->now.n);
	fp->started = 1;
}

void fdprobe_attach(struct fdprobe *fp, pid_t pid)
{
	fp->started = 0;
	fdprobe_exec(fp, pid);
}

int fdprobe_bound(const struct fdprobe *fp)
{
	return fp->bound;
}

unsigned fdprobe_planted(const struct fdprobe *fp)
{
	return fp->planted;
}

/* The index of object [LO, HI) in MODS (added if new). */
static unsigned obj_index(uint64_t (*mods)[2], unsigned *nmods, uint64_t lo,
			  uint64_t hi)
{
	unsigned i;

	for (i = 0; i < *nmods; i++)
		if (mods[i][0] == lo && mods[i][1] == hi)
			return i;
	mods[*nmods][0] = lo;
	mods[*nmods][1] = hi;
	return (*nmods)++;
}

int fdprobe_bind(struct fdprobe *fp, struct bpset *bps, struct symbolizer *s,
		 pid_t tid, const uint64_t *order, unsigned n,
		 fdprobe_patch_fn patch, void *ctx)
{
	const char *names[NFNS];
	struct sym_def defs[NFNS];
	uint64_t mods[NFNS][2];
	unsigned i, nmods = 0;
	int ret = 0, r;

	for (i = 0; i < NFNS; i++)
		names[i] = fns[i].name;
	memset(defs, 0, sizeof(defs));
	for (i = 0; i < n; i++)
		sym_find_in_module(s, order[i], names, NFNS, 1, defs);
	for (i = 0; i < NFNS; i++) {
		uint64_t lo = 0, hi = 0;
		struct bp *bp;

		if (!defs[i].addr)
			continue;
		if (sym_module_range(s, defs[i].addr, &lo, &hi))
			lo = hi = 0;
		r = patch ? patch(ctx, &defs[i], fns[i].name, rec_kind(fns[i].act),
				  i, obj_index(mods, &nmods, lo, hi), lo, hi) : 0;
		if (r < 0) {
			ret = -1;
			continue;
		}
		if (r > 0) {
			fp->planted++;	/* recorded by the hooks */
			fp->mod_lo[i] = lo;
			fp->mod_hi[i] = hi;
			continue;
		}
		bp = bp_plant(bps, tid, defs[i].addr, defs[i].addr + defs[i].size,
			      BP_FD, (int)i, fns[i].name);
		if (!bp) {
			ret = -1;	/* the others can still be traced */
			continue;
		}
		fp->planted++;
		if (bp->kind != BP_FD)
			continue;	/* shares an address with another probe */
		fp->mod_lo[i] = lo;
		fp->mod_hi[i] = hi;
	}
	fp->bound = 1;
	return ret;
}

static enum action action_of(const struct bp *bp)
{
	return fns[bp->fn].act;
}

static int is_close(enum action a)
{
	return a >= A_CLOSE;
}

int fdprobe_nested(const struct fdprobe *fp, const struct bp *bp,
		   const struct bp *outer, uint64_t outer_slot,
		   uint64_t slot, uint64_t ret)
{
	if (is_close(action_of(bp)))
		return 0;
	/* a tail call from the outer function: its slot, still hijacked */
	if (slot == outer_slot)
		return 1;
	/* called from inside the object of the outer call (fopen's open in
	 * _IO_file_open), not by a signal handler that interrupted it */
	return ret >= fp->mod_lo[outer->fn] && ret < fp->mod_hi[outer->fn];
}

/* The int at ADDR in thread TID, or -1. */
static int read_int(pid_t tid, uint64_t addr)
{
	int v;

	if (!addr || mem_read_all(tid, addr, &v, sizeof(v)))
		return -1;
	return v;
}

/* A close of action A with arguments A0, A1, A2; V: the descriptor of
 * an fclose's FILE or a closedir's DIR. */
static void closes(struct fdprobe *fp, enum action a, uint64_t a0, uint64_t a1,
		   uint64_t a2, int v)
{
	switch (a) {
	case A_CLOSE:
		fds_close(fp->tab, (int)a0);
		return;
	case A_CLOSE_RANGE:
		/* what the kernel refuses closes nothing; CLOEXEC only marks
		 * (an exec drops them: fdprobe_exec reads /proc again) */
		if ((unsigned)a0 > (unsigned)a1 ||
		    ((unsigned)a2 & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) ||
		    ((unsigned)a2 & CLOSE_RANGE_CLOEXEC))
			return;
		fds_close_range(fp->tab, (unsigned)a0, (unsigned)a1);
		return;
	case A_CLOSEFROM:
		if ((int)a0 >= 0)
			fds_close_range(fp->tab, (unsigned)a0, UINT_MAX);
		return;
	case A_FCLOSE:
	case A_CLOSEDIR:
		fds_close(fp->tab, v);
		return;
	default:
		return;
	}
}

void fdprobe_rec_close(struct fdprobe *fp, unsigned idx, uint64_t a0,
		       uint64_t a1, uint64_t a2, int v)
{
	if (fp && idx < NFNS)
		closes(fp, fns[idx].act, a0, a1, a2, v);
}

int fdprobe_entry(struct fdprobe *fp, pid_t tid, const struct bp *bp,
		  const struct arch_regs *r)
{
	uint64_t a0 = arch_arg(r, 0), a1 = arch_arg(r, 1), a2 = arch_arg(r, 2);
	enum action a = action_of(bp);

	switch (a) {
	case A_CLOSE:
	case A_CLOSE_RANGE:
	case A_CLOSEFROM:
		closes(fp, a, a0, a1, a2, -1);
		return 0;
	case A_FCLOSE:
		closes(fp, a, a0, a1, a2,
		       read_int(tid, a0 ? a0 + offsetof(FILE, _fileno) : 0));
		return 0;
	case A_CLOSEDIR:
		closes(fp, a, a0, a1, a2,
		       read_int(tid, a0 ? a0 + DIR_FD_OFFSET : 0));
		return 0;
	case A_DUP2:
		return (int)a0 != (int)a1;
	case A_FCNTL:
		return (int)a1 == F_DUPFD || (int)a1 == F_DUPFD_CLOEXEC;
	case A_SIGNALFD:
		return (int)a0 == -1;
	default:
		return 1;
	}
}

/* Descriptor FD made by function NAME in thread TID (its target read
 * from /proc/VIA/fd). */
static void created(struct fdprobe *fp, pid_t via, pid_t tid, const char *name,
		    int fd, uint32_t stack, uint64_t time_ns)
{
	struct fd_now now;
	struct fd_rec rec;

	if (fd < 0)
		return;
	if (fds_proc_one(via, fd, &now))
		memset(&now, 0, sizeof(now));	/* closed already? kept, no target */
	memset(&rec, 0, sizeof(rec));
	rec.fd = fd;
	rec.origin = FD_TRACED;
	rec.type = (uint8_t)fd_type_of(now.target);
	rec.opened_by = name;
	rec.target = now.target;
	rec.stack = stack;
	rec.tid = tid;
	rec.time_ns = time_ns;
	rec.dev = now.dev;
	rec.ino = now.ino;
	fds_open(fp->tab, &rec);
	free(now.target);
}

void fdprobe_return(struct fdprobe *fp, pid_t tid, const struct bp *bp,
		    const uint64_t *args, uint64_t result, uint32_t stack,
		    uint64_t time_ns)
{
	int pair[2];

	switch (action_of(bp)) {
	case A_PAIR0:
	case A_PAIR3:
		if ((int)result != 0 ||
		    mem_read_all(tid, args[action_of(bp) == A_PAIR0 ? 0 : 3],
				 pair, sizeof(pair)))
			return;
		created(fp, tid, tid, bp->name, pair[0], stack, time_ns);
		created(fp, tid, tid, bp->name, pair[1], stack, time_ns);
		return;
	case A_FILE:
		if (result)
			created(fp, tid, tid, bp->name,
				read_int(tid, result + offsetof(FILE, _fileno)),
				stack, time_ns);
		return;
	case A_DIR:
		if (result)
			created(fp, tid, tid, bp->name,
				read_int(tid, result + DIR_FD_OFFSET), stack, time_ns);
		return;
	default:
		if (!is_close(action_of(bp)))
			created(fp, tid, tid, bp->name, (int)result, stack, time_ns);
	}
}

void fdprobe_rec_open(struct fdprobe *fp, pid_t pid, pid_t tid, unsigned idx,
		      uint64_t result, int v0, int v1, uint32_t stack,
		      uint64_t time_ns)
{
	if (!fp || idx >= NFNS)
		return;
	switch (fns[idx].act) {
	case A_PAIR0:
	case A_PAIR3:
		created(fp, pid, tid, fns[idx].name, v0, stack, time_ns);
		created(fp, pid, tid, fns[idx].name, v1, stack, time_ns);
		return;
	case A_FILE:
	case A_DIR:
		created(fp, pid, tid, fns[idx].name, v0, stack, time_ns);
		return;
	default:
		if (!is_close(fns[idx].act))
			created(fp, pid, tid, fns[idx].name, (int)result, stack,
				time_ns);
	}
}

int fdprobe_sync(struct fdprobe *fp, pid_t pid)
{
	if (fds_proc_read(pid, &fp->now))
		return -1;
	fds_sync(fp->tab, fp->now.v, fp->now.n);
	return 0;
}
