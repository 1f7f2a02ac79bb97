/*
 * image.c - the process image: the auxiliary vector, the dynamic linker's
 * rendezvous and link map, and binding the allocator (and descriptor)
 * probes in the objects loaded; an exec starts it all again.
 */
#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis/census.h"
#include "breakpoints/fdprobe.h"
#include "target/guard.h"
#include "recorder/recorder.h"
#include "target/memio.h"
#include "session.h"
#include "symbols/symbols.h"
#include "base/util.h"

static const char *const alloc_names[AF_COUNT] = {
	"malloc", "calloc", "realloc", "reallocarray", "free",
	"posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
};

static int read_auxv(pid_t pid, uint64_t *base, uint64_t *entry)
{
	char path[64];
	uint64_t av[2];
	int fd;

	*base = *entry = 0;
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error("cannot open %s: %s", path, strerror(errno));
	while (read(fd, av, sizeof(av)) == sizeof(av) && av[0] != AT_NULL) {
		if (av[0] == AT_BASE)
			*base = av[1];
		else if (av[0] == AT_ENTRY)
			*entry = av[1];
	}
	close(fd);
	return 0;
}

/* The index of object MODULE among those bound so far (nesting rule). */
static unsigned object_index(const char **mods, unsigned *n, const char *module)
{
	unsigned i;

	for (i = 0; i < *n; i++)
		if (!strcmp(mods[i], module))
			return i;
	if (*n < AF_COUNT)
		mods[(*n)++] = module;
	return i;
}

static const char *const exec_names[] = { "execve", "execveat", "fexecve" };

/* A breakpoint on each exec function (in the first object defining it),
 * once per image: the image is reported before an exec replaces it. */
static void bind_exec(struct session *S, struct symbolizer *s, pid_t tid,
		      const uint64_t *order, unsigned n)
{
	struct proc *P = S->proc;
	struct sym_def defs[ARRAY_SIZE(exec_names)];
	unsigned i;

	memset(defs, 0, sizeof(defs));
	for (i = 0; i < n; i++)
		sym_find_in_module(s, order[i], exec_names,
				   ARRAY_SIZE(exec_names), 1, defs);
	for (i = 0; i < ARRAY_SIZE(exec_names); i++) {
		if (!defs[i].addr || bp_find(&P->bps, defs[i].addr))
			continue;
		if (!bp_plant(&P->bps, tid, defs[i].addr, defs[i].addr + defs[i].size,
			      BP_EXEC, (int)i, exec_names[i]))
			warning("an exec in process %d by %s is reported after "
				"the old image is gone", (int)P->pid, exec_names[i]);
	}
}

struct fd_bind {
	struct session *S;
	pid_t tid;
};

/* fdprobe_patch_fn: a descriptor function offered to the recorder. */
static int bind_fd(void *ctx, const struct sym_def *d, const char *name,
		   unsigned kind, unsigned idx, unsigned obj, uint64_t lo,
		   uint64_t hi)
{
	struct fd_bind *fb = ctx;
	int r = recs_bind_fd(fb->S, fb->tid, d, name, kind, idx, obj, lo, hi);

	if (r < 0)
		fb->S->proc->rec_fatal = 1;
	return r;
}

/* Patch (recorder) or plant a breakpoint on each allocator function, then
 * each descriptor function, in the first of the objects ORDER (addresses
 * inside them, link-map order) that defines it. */
static int bind_allocator(struct session *S, pid_t tid, const uint64_t *order,
			  unsigned n)
{
	struct proc *P = S->proc;
	struct sym_def defs[AF_COUNT];
	const char *mods[AF_COUNT];
	struct symbolizer *s;
	unsigned i, nmods = 0;
	int ret = 0, r;

	memset(defs, 0, sizeof(defs));
	recs_bind_begin(S);
	s = sym_open_setup(tid);
	bind_exec(S, s, tid, order, n);
	for (i = 0; i < n && !P->no_heap; i++)
		sym_find_in_module(s, order[i], alloc_names, AF_COUNT, 1, defs);
	if (sym_failed(s)) {
		sym_close(s);
		return -1;
	}
	for (i = 0; i < AF_COUNT; i++) {
		if (P->bound[i] || !defs[i].addr)
			continue;
		r = recs_bind(S, tid, &defs[i], (int)i, alloc_names[i],
			      object_index(mods, &nmods, defs[i].module));
		if (r < 0) {
			ret = -1;
			P->rec_fatal = 1;
			break;
		}
		if (!r && !bp_plant(&P->bps, tid, defs[i].addr,
				    defs[i].addr + defs[i].size, BP_ALLOC, (int)i,
				    alloc_names[i])) {
			ret = -1;	/* the others can still be traced */
			continue;
		}
		P->bound[i] = 1;
		if (i == AF_MALLOC) {
			const char *slash = strrchr(defs[i].module, '/');
			const char *base = slash ? slash + 1 : defs[i].module;

			/* a static executable's malloc: glibc's, most likely */
			P->glibc = !strncmp(base, "libc.so", 7) || !P->r_debug;
			P->allocator = P->r_debug ? census_allocator_of(defs[i].module)
						  : CENSUS_GLIBC;
		}
	}
	if (P->fdp && !fdprobe_bound(P->fdp) && !P->rec_fatal) {
		struct fd_bind fb = { S, tid };

		if (fdprobe_bind(P->fdp, &P->bps, s, tid, order, n, bind_fd, &fb))
			ret = -1;
	}
	sym_close(s);
	return ret;
}

/* struct r_debug and struct link_map, as laid out on LP64 */
#define R_DEBUG_MAP 8
#define R_DEBUG_STATE 24
#define LM_ADDR 0
#define LM_NAME 8
#define LM_LD 16
#define LM_NEXT 24
#define RT_CONSISTENT 0

/* The executable's path (its link map name is empty). */
static void exe_path(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/%d/exe", (int)pid);
}

int image_rendezvous(struct session *S, pid_t tid)
{
	struct proc *P = S->proc;
	uint64_t map, order[1024];
	int32_t state;
	unsigned n = 0, i;
	int rec = P->rec && rec_injected(P->rec);

	if (mem_read_all(tid, P->r_debug + R_DEBUG_STATE, &state, sizeof(state)) ||
	    mem_read_all(tid, P->r_debug + R_DEBUG_MAP, &map, sizeof(map)))
		return error("cannot read the dynamic linker's r_debug in process %d",
			     (int)P->pid);
	unloaded_rendezvous(&S->proc->unloaded, tid, state, map);
	if (state != RT_CONSISTENT)
		return 0;
	unwinder_flush(P->unw);
	for (i = 0; i < AF_COUNT && (P->bound[i] || P->no_heap); i++)
		;
	if (i == AF_COUNT && (!P->fdp || fdprobe_bound(P->fdp)) && !rec)
		return 0;
	if (rec)
		rec_objects_begin(P->rec);
	while (map && n < ARRAY_SIZE(order)) {
		uint64_t lm[4];
		char name[4096];

		if (mem_read_all(tid, map, lm, sizeof(lm)))
			return error("cannot read the link map of process %d",
				     (int)P->pid);
		if (lm[LM_LD / 8])
			order[n++] = lm[LM_LD / 8];
		if (rec) {
			ssize_t got = mem_read(tid, lm[LM_NAME / 8], name, sizeof(name) - 1);

			name[got > 0 ? got : 0] = '\0';
			if (!name[0])
				exe_path(P->pid, name, sizeof(name));
			rec_object_add(P->rec, name, lm[LM_ADDR / 8]);
		}
		map = lm[LM_NEXT / 8];
	}
	if (rec) {
		rec_objects_publish(P->rec);
		debug_time("rendezvous: objects' unwind tables published");
	}
	if (i == AF_COUNT && (!P->fdp || fdprobe_bound(P->fdp)))
		return 0;
	debug_time("rendezvous: binding");
	if (bind_allocator(S, tid, order, n))
		return -1;
	debug_time("rendezvous: functions bound");
	/* injected just now: the objects' tables */
	if (!rec && P->rec && rec_injected(P->rec))
		return image_rendezvous(S, tid);
	return 0;
}

/* A static executable's load bias: its entry ENTRY less the file's. */
static uint64_t static_bias(const char *path, uint64_t entry)
{
	Elf64_Ehdr eh;
	int fd = open_untrusted(path);
	ssize_t got = fd < 0 ? -1 : pread(fd, &eh, sizeof(eh), 0);

	if (fd >= 0)
		close(fd);
	return got == (ssize_t)sizeof(eh) ? entry - eh.e_entry : 0;
}

/* A static executable (entry ENTRY): bound now, its one object told to
 * the recorder. */
static int bind_static(struct session *S, pid_t tid, uint64_t entry)
{
	struct proc *P = S->proc;
	char exe[64];

	if (bind_allocator(S, tid, &entry, 1))
		return -1;
	if (P->rec && rec_injected(P->rec)) {
		exe_path(P->pid, exe, sizeof(exe));
		rec_objects_begin(P->rec);
		rec_object_add(P->rec, exe, static_bias(exe, entry));
		rec_objects_publish(P->rec);
	}
	return 0;
}

/*
 * Map the scratch page (stopped thread TID runs the mmap), then catch the
 * dynamic linker's rendezvous, or bind a static executable now.  Every
 * other thread is stopped.
 */
int image_setup(struct session *S, pid_t tid)
{
	struct proc *P = S->proc;
	uint64_t base, entry;
	struct symbolizer *s;
	struct sym_def d[2];
	static const char *const ld_names[] = { "_dl_debug_state" };
	static const char *const ld_data[] = { "_r_debug" };

	debug_time("image setup (exec stop)");
	if (read_auxv(P->mem_pid, &base, &entry) ||
	    bpset_scratch(&P->bps, tid, entry))
		return -1;
	unwinder_set_entry(P->unw, tid, entry);
	if (!base)
		return bind_static(S, tid, entry);

	/* the dynamic linker is a library: found in its .dynsym */
	s = sym_open_setup(P->mem_pid);
	memset(d, 0, sizeof(d));
	sym_find_in_module(s, base, ld_names, 1, 1, &d[0]);
	sym_find_in_module(s, base, ld_data, 1, 0, &d[1]);
	if (sym_failed(s)) {
		sym_close(s);
		return -1;
	}
	sym_close(s);
	if (!d[0].addr || !d[1].addr)
		return error("the dynamic linker of process %d exports no "
			     "_dl_debug_state/_r_debug: cannot see libraries load",
			     (int)P->pid);
	P->r_debug = d[1].addr;
	return bp_plant(&P->bps, tid, d[0].addr, d[0].addr, BP_RENDEZVOUS,
			-1, "_dl_debug_state") ? 0 : -1;
}

/* After exec (the launch's included): a new image, nothing in it yet. */
int image_exec(struct session *S, struct task *t)
{
	struct proc *P = S->proc;
	char why[256];

	if (bpset_reset(&P->bps))
		return -1;
	if (P->bps.guard) {
		/* its /proc/PID/mem is the old image's */
		guard_stop(P->bps.guard);
		P->bps.guard = guard_start(P->pid);
	}
	recs_drain(S);		/* the old image's last calls */
	recs_forget(S);
	heap_reset(P->heap);
	cov_reset(&S->proc->cov, COV_HEAP);	/* the old image's heap is gone */
	if (P->fdp)
		fdprobe_exec(P->fdp, P->pid);
	memset(P->bound, 0, sizeof(P->bound));
	P->r_debug = 0;
	unloaded_free(&P->unloaded);
	unwinder_flush(P->unw);
	tasks_forget_threads(S, t);
	/* the exec'ing thread is the only one left, with the leader's tid */
	t->npend = 0;
	t->exiting = 0;
	P->nalive = 1;
	P->mem_pid = P->pid;
	unwinder_set_pid(P->unw, P->pid);
	if (!bpset_scratch_allowed(t->tid, why, sizeof(why))) {
		/* a child (-f) alone is let go (lifetime_exec) */
		if (P == S->first)
			S->untraceable = 1;
		return error("cannot trace %s (process %d) after its exec: %s; "
			     "it runs on untraced", P->argv && P->argv[0] ?
			     P->argv[0] : "the program", (int)P->pid, why);
	}
	return image_setup(S, t->tid);
}

int image_fork(struct session *S, pid_t tid)
{
	struct proc *P = S->proc;
	uint64_t base, entry;

	if (read_auxv(tid, &base, &entry))
		return -1;
	unwinder_set_entry(P->unw, tid, entry);
	if (!P->r_debug)
		return bind_static(S, tid, entry);
	return image_rendezvous(S, tid);
}
