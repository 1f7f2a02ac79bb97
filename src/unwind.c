/* unwind.c - libunwind-ptrace over a stack snapshot. */
#include <libunwind-ptrace.h>
#include <stdlib.h>
#include <string.h>

#include "memio.h"
#include "unwind.h"
#include "util.h"

#define SNAP_FIRST 8192u	/* read at each stop, from the stack pointer */
#define SNAP_MAX (64u * 1024)	/* extended up to this on demand */

struct unwinder {
	pid_t pid;
	unw_addr_space_t as;
	void *upt;			/* _UPT_create(pid): find_proc_info state */
	struct unwind_stats stats;

	/* the stop being unwound */
	pid_t tid;
	const struct arch_regs *regs;
	const struct ret_fix *fixes;
	unsigned nfixes;
	uint64_t snap_base;		/* address of snap[0] */
	size_t snap_len;		/* bytes valid */
	int snap_end;			/* the mapping ends at snap_base + snap_len */
	uint8_t snap[SNAP_MAX];
};

/*
 * libunwind passes the accessors the "arg" given to unw_init_remote, but
 * _UPT_find_proc_info needs its own UPT_info as arg and hands that on to
 * access_mem.  ptleak is single-threaded: the unwind in progress is here.
 */
static struct unwinder *current;

static int snap_extend(struct unwinder *u, uint64_t addr)
{
	size_t want;
	ssize_t got;

	if (u->snap_end || addr < u->snap_base ||
	    addr + 8 > u->snap_base + SNAP_MAX)
		return -1;
	want = (addr + 8 - u->snap_base + 4095) & ~(size_t)4095;
	if (want > SNAP_MAX)
		want = SNAP_MAX;
	got = mem_read(u->tid, u->snap_base + u->snap_len, u->snap + u->snap_len,
		       want - u->snap_len);
	u->stats.extra_reads++;
	if (got < 0) {
		u->snap_end = 1;
		return -1;
	}
	u->snap_len += (size_t)got;
	u->stats.snapshot_bytes += (uint64_t)got;
	if (u->snap_len < want)
		u->snap_end = 1;
	return addr + 8 <= u->snap_base + u->snap_len ? 0 : -1;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val,
		      int write, void *arg)
{
	struct unwinder *u = current;
	unsigned i;

	if (write)
		return -UNW_EINVAL;
	for (i = 0; i < u->nfixes; i++) {
		if (u->fixes[i].slot == addr) {
			*val = u->fixes[i].real;
			return 0;
		}
	}
	if (addr >= u->snap_base &&
	    (addr + 8 <= u->snap_base + u->snap_len || !snap_extend(u, addr))) {
		memcpy(val, u->snap + (addr - u->snap_base), 8);
		return 0;
	}
	/* text, .eh_frame: only while libunwind's caches are cold */
	u->stats.extra_reads++;
	if (mem_read_all(u->tid, addr, val, 8))
		return -UNW_EINVAL;
	return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val,
		      int write, void *arg)
{
	uint64_t v;

	if (write || arch_unw_reg(current->regs, reg, &v))
		return -UNW_EBADREG;
	*val = v;
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg,
			unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EBADREG;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip,
			  unw_proc_info_t *pi, int need_unwind_info, void *arg)
{
	return _UPT_find_proc_info(as, ip, pi, need_unwind_info, current->upt);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	_UPT_put_unwind_info(as, pi, current->upt);
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap,
				  void *arg)
{
	return -UNW_ENOINFO;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf,
			 size_t len, unw_word_t *offp, void *arg)
{
	return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

struct unwinder *unwinder_new(pid_t pid)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	u->pid = pid;
	u->as = unw_create_addr_space(&accessors, 0);
	u->upt = _UPT_create(pid);
	if (!u->as || !u->upt) {
		error("libunwind: cannot create an address space for process %d",
		      (int)pid);
		unwinder_delete(u);
		return NULL;
	}
	/*
	 * ptleak is single-threaded: a per-thread cache is one global cache
	 * without the lock whose signal masking costs two rt_sigprocmask
	 * calls per frame.
	 */
	unw_set_caching_policy(u->as, UNW_CACHE_PER_THREAD);
	unw_set_cache_size(u->as, 1024, 0);
	return u;
}

void unwinder_delete(struct unwinder *u)
{
	if (!u)
		return;
	if (u->upt)
		_UPT_destroy(u->upt);
	if (u->as)
		unw_destroy_addr_space(u->as);
	free(u);
}

void unwinder_set_pid(struct unwinder *u, pid_t pid)
{
	u->pid = pid;
	unwinder_flush(u);
}

void unwinder_flush(struct unwinder *u)
{
	unw_flush_cache(u->as, 0, 0);
	/* _UPT keeps the last ELF image it used; a new one drops it */
	_UPT_destroy(u->upt);
	u->upt = _UPT_create(u->pid);
}

unsigned unwind_stack(struct unwinder *u, pid_t tid, const struct arch_regs *r,
		      const struct ret_fix *fixes, unsigned nfixes,
		      uint64_t *pcs, unsigned max)
{
	unw_cursor_t cur;
	unsigned n = 0;
	ssize_t got;

	u->snap_len = 0;
	if (!max)
		return 0;
	pcs[n++] = arch_pc(r);
	if (max == 1)
		return n;

	u->tid = tid;
	u->regs = r;
	u->fixes = fixes;
	u->nfixes = nfixes;
	u->snap_base = arch_sp(r);
	u->snap_end = 0;
	got = mem_read(tid, u->snap_base, u->snap, SNAP_FIRST);
	u->snap_len = got > 0 ? (size_t)got : 0;
	if (u->snap_len < SNAP_FIRST)
		u->snap_end = 1;
	u->stats.unwinds++;
	u->stats.snapshot_bytes += u->snap_len;
	current = u;

	if (unw_init_remote(&cur, u->as, u) < 0)
		goto out;
	while (n < max && unw_step(&cur) > 0) {
		unw_word_t ip;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		pcs[n++] = ip;
	}
out:
	current = NULL;
	return n;
}

int unwind_snapshot_read(const struct unwinder *u, uint64_t addr, uint64_t *val)
{
	if (addr < u->snap_base || addr + 8 > u->snap_base + u->snap_len)
		return -1;
	memcpy(val, u->snap + (addr - u->snap_base), 8);
	return 0;
}

const struct unwind_stats *unwinder_stats(const struct unwinder *u)
{
	return &u->stats;
}
