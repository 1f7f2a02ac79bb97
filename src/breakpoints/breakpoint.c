/* breakpoint.c - planted breakpoints and the scratch area. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "breakpoints/breakpoint.h"
#include "target/guard.h"
#include "target/memio.h"
#include "target/seccomp.h"
#include "base/util.h"

#define SCRATCH_SIZE 4096ull
#define NEAR (1ull << 30)	/* rip-relative reach we accept: 1 GiB */

static const uint8_t bp_insn[ARCH_BP_LEN] = ARCH_BP_INSN;

static void note_guard(void *ctx, pid_t tid, const struct arch_inject_note *n)
{
	guard_inject(((struct bpset *)ctx)->guard, tid, n);
}

/* s->via as the trampoline is now */
static void set_via(struct bpset *s)
{
	s->via.insn = s->trampoline ? s->trampoline + arch_trampoline_syscall : 0;
	s->via.end = s->trampoline ? s->trampoline + arch_trampoline_clone : 0;
	s->via.note = note_guard;
	s->via.ctx = s;
}

const struct arch_inject_via *bpset_via(const struct bpset *s)
{
	return &s->via;
}

int bpset_init(struct bpset *s, pid_t pid)
{
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	set_via(s);
	s->memfd = mem_open(pid);
	return s->memfd < 0 ? -1 : 0;
}

static void clear(struct bpset *s)
{
	unsigned i;

	for (i = 0; i < s->cap; i++)
		free(s->tab[i]);
	free(s->tab);
	s->tab = NULL;
	s->cap = s->count = 0;
	s->npages = 0;
	s->trampoline = 0;
	set_via(s);
}

int bpset_reset(struct bpset *s)
{
	clear(s);
	if (s->memfd >= 0)
		close(s->memfd);
	s->memfd = mem_open(s->pid);
	return s->memfd < 0 ? -1 : 0;
}

void bpset_release(struct bpset *s)
{
	clear(s);
	if (s->memfd >= 0)
		close(s->memfd);
	s->memfd = -1;
}

static unsigned slot_of(const struct bpset *s, uint64_t addr)
{
	return (unsigned)(hash64(addr) & (s->cap - 1));
}

struct bp *bp_find(const struct bpset *s, uint64_t addr)
{
	unsigned i;

	if (!s->cap)
		return NULL;
	for (i = slot_of(s, addr); s->tab[i]; i = (i + 1) & (s->cap - 1))
		if (s->tab[i]->addr == addr)
			return s->tab[i];
	return NULL;
}

static void insert(struct bpset *s, struct bp *bp)
{
	unsigned i;

	if ((s->count + 1) * 2 > s->cap) {
		struct bp **old = s->tab;
		unsigned oldcap = s->cap;

		s->cap = s->cap ? s->cap * 2 : 64;
		s->tab = xcalloc(s->cap, sizeof(*s->tab));
		s->count = 0;
		for (i = 0; i < oldcap; i++)
			if (old[i])
				insert(s, old[i]);
		free(old);
	}
	for (i = slot_of(s, bp->addr); s->tab[i]; i = (i + 1) & (s->cap - 1))
		;
	s->tab[i] = bp;
	s->count++;
}

int bpset_clone(struct bpset *dst, const struct bpset *src, pid_t pid)
{
	unsigned i;

	if (bpset_init(dst, pid))
		return -1;
	memcpy(dst->pages, src->pages, sizeof(dst->pages));
	dst->npages = src->npages;
	dst->trampoline = src->trampoline;
	set_via(dst);
	for (i = 0; i < src->cap; i++) {
		struct bp *bp;

		if (!src->tab[i])
			continue;
		bp = xmalloc(sizeof(*bp));
		*bp = *src->tab[i];
		insert(dst, bp);
	}
	return 0;
}

void bpset_guard(struct bpset *s, struct guard *g)
{
	unsigned i;

	s->guard = g;
	for (i = 0; g && i < s->cap; i++)
		if (s->tab[i] && s->tab[i]->kind != BP_TRAMPOLINE)
			guard_code(g, s->tab[i]->addr, s->tab[i]->orig, ARCH_BP_LEN);
}

static void map_args(uint64_t *args, uint64_t hint)
{
	args[0] = hint;
	args[1] = SCRATCH_SIZE;
	args[2] = PROT_READ | PROT_EXEC;
	args[3] = MAP_PRIVATE | MAP_ANONYMOUS;
	args[4] = (uint64_t)-1;
	args[5] = 0;
}

int bpset_scratch_allowed(pid_t tid, char *why, size_t len)
{
	uint64_t args[6];

	map_args(args, 0);
	return seccomp_allows(tid, "mmap", arch_sys_mmap, args, why, len);
}

static int map_page(struct bpset *s, pid_t tid, uint64_t hint, uint64_t entry)
{
	struct arch_inject_via v = s->via;
	uint64_t args[6], ret;
	struct scratch_page *p;
	char why[256];
	int sig;

	if (s->npages == ARRAY_SIZE(s->pages))
		return error("too many scratch pages in process %d", (int)s->pid);
	map_args(args, hint);
	if (!seccomp_allows(tid, "mmap", arch_sys_mmap, args, why, sizeof(why)))
		return error("cannot map a scratch page into process %d: %s",
			     (int)s->pid, why);
	/* the first (the trampoline is in it): written at the program's
	 * entry point, run once at its start (else at the thread's pc) */
	if (!v.insn && entry) {
		v.insn = entry;
		v.end = entry + 4;
		v.write = 1;
	}
	if (arch_inject(tid, &v, arch_sys_mmap, args, &ret, &sig, NULL))
		return -1;
	if (sig)
		s->held_sig = sig;
	if (ret > -4096ull)
		return error("cannot map a scratch page in process %d: %s",
			     (int)s->pid, strerror((int)-ret));
	p = &s->pages[s->npages++];
	p->addr = ret;
	p->size = SCRATCH_SIZE;
	p->used = 0;
	return 0;
}

static uint64_t scratch_alloc(struct bpset *s, uint64_t size, uint64_t near)
{
	unsigned i;

	for (i = 0; i < s->npages; i++) {
		struct scratch_page *p = &s->pages[i];
		uint64_t a = p->addr + p->used;
		uint64_t dist = a > near ? a - near : near - a;

		if (p->used + size > p->size || (near && dist >= NEAR))
			continue;
		p->used += size;
		return a;
	}
	return 0;
}

int bpset_scratch(struct bpset *s, pid_t tid, uint64_t entry)
{
	uint64_t t;

	if (s->trampoline)
		return 0;
	if (map_page(s, tid, 0, entry))
		return -1;
	t = scratch_alloc(s, ARCH_XOL_SLOT_SIZE, 0);
	if (mem_poke(s->memfd, t, arch_trampoline_code, arch_trampoline_len))
		return error("cannot write the return trampoline at %#llx into process %d: %s",
			     (unsigned long long)t, (int)s->pid, strerror(errno));
	s->trampoline = t;
	set_via(s);
	return 0;
}

struct bp *bp_plant(struct bpset *s, pid_t tid, uint64_t addr, uint64_t end,
		    enum bp_kind kind, int fn, const char *name)
{
	uint8_t code[ARCH_MAX_INSN_LEN + 1];
	char err[256];
	struct bp *bp = bp_find(s, addr);
	ssize_t n;

	if (bp)
		return bp;
	/* through the mem fd: it keeps the address space, even when the
	 * leader thread has exited (main called pthread_exit) */
	n = pread(s->memfd, code, sizeof(code), (off_t)addr);
	if (n <= 0) {
		error("cannot read the code of %s at %#llx in process %d",
		      name, (unsigned long long)addr, (int)s->pid);
		return NULL;
	}
	bp = xcalloc(1, sizeof(*bp));
	bp->addr = addr;
	bp->end = end > addr ? end : addr;
	bp->kind = kind;
	bp->fn = fn;
	bp->name = name;
	memcpy(bp->orig, code, ARCH_BP_LEN);
	if (arch_insn_analyse(&bp->insn, addr, code, (size_t)n, err, sizeof(err))) {
		error("cannot trace %s at %#llx: %s", name,
		      (unsigned long long)addr, err);
		goto fail;
	}
	if (!arch_insn_is_xol(&bp->insn)) {
		/* emulated; a slot too, in case emulation cannot write the
		 * stack (the CPU grows it, process_vm_writev does not) */
		uint8_t slot[ARCH_XOL_SLOT_SIZE];
		uint64_t near = bp->insn.rip_relative ? addr : 0;
		uint64_t at = scratch_alloc(s, ARCH_XOL_SLOT_SIZE, near);

		if (at && !arch_xol_build(&bp->insn, at, slot, err, sizeof(err)) &&
		    !mem_poke(s->memfd, at, slot, sizeof(slot)))
			bp->fallback = at;
	} else {
		uint8_t slot[ARCH_XOL_SLOT_SIZE];
		uint64_t near = bp->insn.rip_relative ? addr : 0;

		bp->xol = scratch_alloc(s, ARCH_XOL_SLOT_SIZE, near);
		if (!bp->xol && near) {
			/* below the object, within reach of its rip-relative data */
			if (map_page(s, tid, (addr & ~(SCRATCH_SIZE - 1)) - (64ull << 20), 0))
				goto fail;
			bp->xol = scratch_alloc(s, ARCH_XOL_SLOT_SIZE, near);
		}
		if (!bp->xol) {
			error("no room for an out-of-line slot for %s at %#llx",
			      name, (unsigned long long)addr);
			goto fail;
		}
		if (arch_xol_build(&bp->insn, bp->xol, slot, err, sizeof(err))) {
			error("cannot execute %s's first instruction out of line: %s",
			      name, err);
			goto fail;
		}
		if (mem_poke(s->memfd, bp->xol, slot, sizeof(slot))) {
			error("cannot write an out-of-line slot into process %d: %s",
			      (int)s->pid, strerror(errno));
			goto fail;
		}
	}
	if (mem_poke(s->memfd, addr, bp_insn, ARCH_BP_LEN)) {
		error("cannot write a breakpoint at %s (%#llx) in process %d: %s",
		      name, (unsigned long long)addr, (int)s->pid, strerror(errno));
		goto fail;
	}
	insert(s, bp);
	if (kind != BP_TRAMPOLINE)
		guard_code(s->guard, addr, bp->orig, ARCH_BP_LEN);
	return bp;
fail:
	free(bp);
	return NULL;
}

const struct bp *bp_find_slot(const struct bpset *s, uint64_t pc,
			      uint64_t *slot)
{
	unsigned i;

	for (i = 0; i < s->cap; i++) {
		const struct bp *bp = s->tab[i];

		if (!bp)
			continue;
		if (bp->xol && pc >= bp->xol && pc < bp->xol + ARCH_XOL_SLOT_SIZE) {
			*slot = bp->xol;
			return bp;
		}
		if (bp->fallback && pc >= bp->fallback &&
		    pc < bp->fallback + ARCH_XOL_SLOT_SIZE) {
			*slot = bp->fallback;
			return bp;
		}
	}
	return NULL;
}

int bpset_unmap_scratch(struct bpset *s, pid_t tid)
{
	int ret = 0;

	while (s->npages) {
		struct scratch_page *p = &s->pages[s->npages - 1];
		uint64_t args[6] = { p->addr, p->size, 0, 0, 0, 0 }, r;
		char why[256];
		int sig;

		if (!seccomp_allows(tid, "munmap", arch_sys_munmap, args, why,
				    sizeof(why))) {
			warning("ptleak's scratch page at %#llx stays mapped in "
				"process %d, unused: %s", (unsigned long long)p->addr,
				(int)s->pid, why);
			s->npages--;
			continue;
		}
		struct arch_inject_via at_pc = s->via;

		/* at the thread's pc: the trampoline may be in that page */
		at_pc.insn = 0;
		if (arch_inject(tid, &at_pc, arch_sys_munmap, args, &r, &sig, NULL))
			return -1;
		if (sig)
			s->held_sig = sig;
		if (r > -4096ull)
			ret = error("cannot unmap ptleak's scratch page at %#llx in "
				    "process %d: %s", (unsigned long long)p->addr,
				    (int)s->pid, strerror((int)-r));
		s->npages--;
	}
	s->trampoline = 0;
	set_via(s);
	return ret;
}

int bpset_unplant_all(struct bpset *s, pid_t pid)
{
	int fd = pid == s->pid ? s->memfd : mem_open(pid);
	int ret = 0;
	unsigned i;

	if (fd < 0)
		return -1;
	for (i = 0; i < s->cap; i++) {
		struct bp *bp = s->tab[i];

		if (!bp || bp->kind == BP_TRAMPOLINE)
			continue;
		if (mem_poke(fd, bp->addr, bp->orig, ARCH_BP_LEN))
			ret = error("cannot restore the code of %s in process %d: %s",
				    bp->name, (int)pid, strerror(errno));
		else if (fd == s->memfd)
			guard_code_done(s->guard, bp->addr);
	}
	if (fd != s->memfd)
		close(fd);
	return ret;
}
