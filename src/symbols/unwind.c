/* unwind.c - libunwind-ptrace over a stack snapshot. */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libunwind-ptrace.h>
#include <stdlib.h>
#include <string.h>

#include "target/memio.h"
#include "symbols/symbols.h"
#include "symbols/unwind.h"
#include "exefde.h"
#include "base/util.h"

/* exported by libunwind, declared only in its internal headers */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di,
					      unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

/*
 * The binary-search table of one loaded object's FDEs: its .eh_frame_hdr
 * in the target, or, for an object without one (static executables
 * linked without --eh-frame-hdr), a table ptleak builds from .eh_frame
 * and serves to libunwind at a synthetic address no process can map.
 */
struct utable {
	uint64_t start, end;
	unw_dyn_info_t di;
	int32_t *syn;		/* (pc - segbase, fde - segbase) pairs, or NULL */
	size_t nsyn;
};

/* non-canonical on x86-64 and aarch64: never a user address */
#define SYN_BASE 0xfff0000000000000ull
#define SYN_SPAN (1ull << 36)

/*
 * Pages of .eh_frame_hdr and .eh_frame (and code, for libunwind's signal
 * frame and PLT checks) read while libunwind's caches are cold: one
 * process_vm_readv per page instead of one per 8-byte word (~650 for the
 * first few stacks of a small program).  Direct-mapped; emptied at every
 * flush, which comes before any breakpoint is planted in new code.
 */
#define RO_PAGE 4096u
#define RO_PAGES 32u


#define SNAP_FIRST 8192u	/* read at each stop, from the stack pointer */
#define SNAP_MAX (64u * 1024)	/* extended up to this on demand */

struct unwinder {
	pid_t pid;
	unw_addr_space_t as;
	void *upt;			/* _UPT_create(pid): put_unwind_info's */
	struct utable *tabs;		/* sorted by start */
	size_t ntabs, atabs;
	int tabs_fresh;			/* loaded since the last flush */

	/* the stop being unwound */
	pid_t tid;
	const struct arch_regs *regs;
	const struct ret_fix *fixes;
	unsigned nfixes;
	uint64_t snap_base;		/* address of snap[0] */
	size_t snap_len;		/* bytes valid */
	int snap_end;			/* the mapping ends at snap_base + snap_len */
	uint8_t snap[SNAP_MAX];
	/* the pages' addresses apart from their bytes: a flush writes one
	 * array, not a word in each of 32 pages (32 page faults) */
	uint64_t ro_addr[RO_PAGES];	/* 0: empty */
	uint8_t ro_data[RO_PAGES][RO_PAGE];

	/* main, where stacks end: from the entry code (unwinder_set_entry) */
	uint64_t entry, main_ref;	/* main, or a pointer to it (kind 1) */
	int main_kind;			/* -1: unknown, MAIN_UNDECODED */
	uint8_t entry_code[64];		/* for MAIN_UNDECODED */
	size_t entry_len;
	unsigned main_tries;
	uint64_t main_lo, main_hi;	/* its FDE's range once resolved */
	uint64_t main_sym_m;		/* main_from_symbols asked for it */

	/* reads of the target's memory in this unwind: its unwind
	 * information is the target's (a DW_OP_skip back to itself loops
	 * libunwind's expression evaluator for ever) */
	unsigned long work;
};

/* reads one unwind may make: far more than any real stack needs */
#define UNWIND_WORK_MAX (1ul << 20)

/* main_kind: the entry code read, not decoded yet */
#define MAIN_UNDECODED (-2)

/* attempts to find main's FDE (a GOT slot is filled at relocation) */
#define MAIN_TRIES 16

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
	if (got < 0) {
		u->snap_end = 1;
		return -1;
	}
	u->snap_len += (size_t)got;
	if (u->snap_len < want)
		u->snap_end = 1;
	return addr + 8 <= u->snap_base + u->snap_len ? 0 : -1;
}

/* 8 bytes of read-only memory at ADDR through the page cache: 0 or -1. */
static int ro_read(struct unwinder *u, uint64_t addr, uint64_t *val)
{
	uint64_t page = addr & ~(uint64_t)(RO_PAGE - 1);
	unsigned i = (unsigned)((page / RO_PAGE) % RO_PAGES);

	if (addr + 8 > page + RO_PAGE || !page)
		return mem_read_all(u->tid, addr, val, 8);
	if (u->ro_addr[i] != page) {
		u->ro_addr[i] = 0;
		if (mem_read(u->tid, page, u->ro_data[i], RO_PAGE) != (ssize_t)RO_PAGE)
			return mem_read_all(u->tid, addr, val, 8);
		u->ro_addr[i] = page;
	}
	memcpy(val, u->ro_data[i] + (addr - page), 8);
	return 0;
}

static struct utable *find_table(struct unwinder *u, uint64_t ip);

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val,
		      int write, void *arg)
{
	struct unwinder *u = current;
	unsigned i;

	if (write || ++u->work > UNWIND_WORK_MAX)
		return -UNW_EINVAL;
	if (addr >= SYN_BASE) {
		size_t k = (addr - SYN_BASE) / SYN_SPAN;
		uint64_t off = (addr - SYN_BASE) % SYN_SPAN;

		if (k >= u->ntabs || !u->tabs[k].syn ||
		    off + 8 > u->tabs[k].nsyn * 2 * sizeof(int32_t) + 8)
			return -UNW_EINVAL;
		memcpy(val, (char *)u->tabs[k].syn + off, 8);
		return 0;
	}
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
	/* text, .eh_frame of a loaded object: through the page cache (read
	 * only while libunwind's caches are cold); anything else (the stack
	 * beyond the snapshot, which changes from stop to stop) directly */
	if (find_table(u, addr) ? ro_read(u, addr, val)
				: mem_read_all(u->tid, addr, val, 8))
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

/* eh_frame_hdr: version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4,
 * table datarel|sdata4: what every x86-64 and aarch64 toolchain emits */
#define EH_HDR_ENC 0x3b031b01u

static struct utable *new_table(struct unwinder *u, uint64_t start,
				 uint64_t end)
{
	struct utable *t;

	grow_array((void **)&u->tabs, &u->atabs, u->ntabs + 1, sizeof(*u->tabs));
	t = &u->tabs[u->ntabs++];
	memset(t, 0, sizeof(*t));
	t->start = start;
	t->end = end;
	t->di.start_ip = start;
	t->di.end_ip = end;
	t->di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	return t;
}

/* Size of a DW_EH_PE_* value's format, 0 if not supported. */
static unsigned enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;
	case 0x03: case 0x0b: return 4;
	case 0x02: case 0x0a: return 2;
	}
	return 0;
}

/* Decode an encoded pointer at P (which lives at target address AT). */
static int read_enc(const uint8_t *p, uint8_t enc, uint64_t at, uint64_t *out)
{
	int64_t v;

	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: { uint64_t x; memcpy(&x, p, 8); v = (int64_t)x; break; }
	case 0x03: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
	case 0x0b: { int32_t x; memcpy(&x, p, 4); v = x; break; }
	case 0x02: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
	case 0x0a: { int16_t x; memcpy(&x, p, 2); v = x; break; }
	default: return -1;
	}
	switch (enc & 0x70) {
	case 0x00: *out = (uint64_t)v; return 0;
	case 0x10: *out = at + (uint64_t)v; return 0;	/* pcrel */
	}
	return -1;
}

/* The FDE pointer encoding ('R') of a CIE, 0 (absptr) if it has none. */
static int cie_fde_encoding(const Dwarf_CIE *cie)
{
	const uint8_t *d = cie->augmentation_data;
	size_t i = 0;
	const char *a;

	if (cie->augmentation[0] != 'z')
		return cie->augmentation[0] ? -1 : 0;
	for (a = cie->augmentation + 1; *a; a++) {
		if (i >= cie->augmentation_data_size)
			return -1;
		switch (*a) {
		case 'R':
			return d[i];
		case 'L':
			i++;
			break;
		case 'P': {
			unsigned n = enc_size(d[i]);

			if (!n)
				return -1;
			i += 1 + n;
			break;
		}
		case 'S': case 'B':
			break;
		default:
			return -1;
		}
	}
	return 0;
}

struct fde_ent {
	uint64_t pc, fde;
};

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_ent *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* A search table for ELF's .eh_frame, loaded at BIAS. */
static void synth_table(struct unwinder *u, Elf *elf, Dwarf_Addr bias,
			uint64_t start, uint64_t end)
{
	size_t shstrndx, n = 0, alloc = 0, i;
	struct fde_ent *ents = NULL;
	struct { Dwarf_Off off; int enc; } cies[64];
	unsigned ncies = 0;
	Elf_Scn *scn = NULL;
	Elf_Data *data = NULL;
	uint64_t base = 0, segbase;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	struct utable *t;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".eh_frame") && sh.sh_type == SHT_PROGBITS) {
			data = elf_getdata(scn, NULL);
			base = sh.sh_addr + bias;
			break;
		}
	}
	if (!data || !data->d_buf)
		return;
	while (dwarf_next_cfi((const unsigned char *)elf_getident(elf, NULL), data, 1, off, &next, &e) == 0) {
		if (dwarf_cfi_cie_p(&e)) {
			if (ncies < ARRAY_SIZE(cies)) {
				cies[ncies].off = off;
				cies[ncies].enc = cie_fde_encoding(&e.cie);
				ncies++;
			}
		} else {
			const uint8_t *p = e.fde.start;
			uint64_t at = base + (uint64_t)(p - (const uint8_t *)data->d_buf);
			int enc = -1;
			unsigned k;

			for (k = 0; k < ncies; k++)
				if (cies[k].off == e.fde.CIE_pointer)
					enc = cies[k].enc;
			grow_array((void **)&ents, &alloc, n + 1, sizeof(*ents));
			if (enc >= 0 && !read_enc(p, (uint8_t)enc, at, &ents[n].pc) &&
			    ents[n].pc) {
				ents[n].fde = base + off;
				n++;
			}
		}
		off = next;
	}
	if (!n) {
		free(ents);
		return;
	}
	qsort(ents, n, sizeof(*ents), cmp_fde);
	segbase = base;
	t = new_table(u, start, end);
	t->syn = xcalloc(2 * n + 2, sizeof(int32_t));
	t->nsyn = n;
	for (i = 0; i < n; i++) {
		t->syn[2 * i] = (int32_t)(ents[i].pc - segbase);
		t->syn[2 * i + 1] = (int32_t)(ents[i].fde - segbase);
	}
	free(ents);
	t->di.u.rti.segbase = segbase;
	t->di.u.rti.table_len = n * 8 / sizeof(unw_word_t);
	/* its index is fixed only after sorting: see load_tables */
}

static int add_table(Dwfl_Module *mod, void **ud, const char *name,
		     Dwarf_Addr start, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr bias, end;
	size_t i, nph;
	Elf *elf = dwfl_module_getelf(mod, &bias);

	dwfl_module_info(mod, NULL, NULL, &end, NULL, NULL, NULL, NULL);
	if (!elf || elf_getphdrnum(elf, &nph))
		return DWARF_CB_OK;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		uint32_t hdr[3];
		uint64_t at;
		struct utable *t;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		at = ph.p_vaddr + bias;
		if (mem_read_all(u->pid, at, hdr, sizeof(hdr)) || hdr[0] != EH_HDR_ENC)
			break;
		t = new_table(u, start, end);
		t->di.u.rti.segbase = at;
		t->di.u.rti.table_data = at + sizeof(hdr);
		t->di.u.rti.table_len = hdr[2] * 8 / sizeof(unw_word_t);
		return DWARF_CB_OK;
	}
	synth_table(u, elf, bias, start, end);
	return DWARF_CB_OK;
}

static int cmp_table(const void *a, const void *b)
{
	const struct utable *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void clear_tables(struct unwinder *u)
{
	size_t i;

	for (i = 0; i < u->ntabs; i++)
		free(u->tabs[i].syn);
	u->ntabs = 0;
}

/* The search tables of every object mapped now. */
static void load_tables(struct unwinder *u)
{
	struct symbolizer *s;
	size_t i;

	clear_tables(u);
	u->tabs_fresh = 1;
	s = sym_open(u->pid);
	if (!s)
		return;
	dwfl_getmodules(sym_dwfl(s), add_table, u, 0);
	sym_close(s);
	if (u->ntabs)
		qsort(u->tabs, u->ntabs, sizeof(*u->tabs), cmp_table);
	for (i = 0; i < u->ntabs; i++)
		if (u->tabs[i].syn)
			u->tabs[i].di.u.rti.table_data = SYN_BASE + i * SYN_SPAN;
}

static struct utable *find_table(struct unwinder *u, uint64_t ip)
{
	size_t lo = 0, hi = u->ntabs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ip < u->tabs[mid].start)
			hi = mid;
		else if (ip >= u->tabs[mid].end)
			lo = mid + 1;
		else
			return &u->tabs[mid];
	}
	return NULL;
}

/* The table of IP; an object mapped since the tables were read makes
 * them read again, once until the next flush. */
static struct utable *table_of(struct unwinder *u, uint64_t ip)
{
	struct utable *t = find_table(u, ip);

	if (!t && !u->tabs_fresh) {
		load_tables(u);
		t = find_table(u, ip);
	}
	return t;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip,
			  unw_proc_info_t *pi, int need_unwind_info, void *arg)
{
	struct unwinder *u = current;
	struct utable *t = table_of(u, ip);

	if (!t)
		return -UNW_ENOINFO;
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &t->di, pi,
						   need_unwind_info, arg);
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
	u->main_kind = -1;
	u->upt = _UPT_create(pid);
	if (!u->upt) {
		error("libunwind: cannot create an address space for process %d",
		      (int)pid);
		unwinder_delete(u);
		return NULL;
	}
	return u;
}

/*
 * libunwind's address space, made on first use (0.4-0.5 ms with its
 * cache: under the recorder a program may never need it).  0, or -1.
 */
static int need_as(struct unwinder *u)
{
	if (u->as)
		return 0;
	u->as = unw_create_addr_space(&accessors, 0);
	if (!u->as)
		return error("libunwind: cannot create an address space for "
			     "process %d", (int)u->pid);
	/*
	 * ptleak is single-threaded: a per-thread cache is one global cache
	 * without the lock whose signal masking costs two rt_sigprocmask
	 * calls per frame.
	 */
	unw_set_caching_policy(u->as, getenv("PTLEAK_UNW_NOCACHE") ? UNW_CACHE_NONE : UNW_CACHE_PER_THREAD);
	unw_set_cache_size(u->as, 1024, 0);
	return 0;
}

void unwinder_delete(struct unwinder *u)
{
	if (!u)
		return;
	if (u->upt)
		_UPT_destroy(u->upt);
	if (u->as)
		unw_destroy_addr_space(u->as);
	clear_tables(u);
	free(u->tabs);
	free(u);
}

void unwinder_set_pid(struct unwinder *u, pid_t pid)
{
	u->pid = pid;
	unwinder_flush(u);
}

void unwinder_flush(struct unwinder *u)
{
	if (u->as)
		unw_flush_cache(u->as, 0, 0);
	clear_tables(u);
	u->tabs_fresh = 0;
	memset(u->ro_addr, 0, sizeof(u->ro_addr));
}

void unwinder_set_entry(struct unwinder *u, pid_t tid, uint64_t entry)
{
	ssize_t got = mem_read(tid, entry, u->entry_code, sizeof(u->entry_code));

	u->entry = entry;
	u->entry_len = got > 0 ? (size_t)got : 0;
	u->main_lo = u->main_hi = 0;
	u->main_tries = 0;
	u->main_sym_m = 0;
	u->main_kind = got > 0 ? MAIN_UNDECODED : -1;
}

/*
 * u->main_kind, the entry code decoded at its first need: the decoder's
 * first use costs ~1 ms (its tables), which a launch then spends at a
 * drain, while the program runs, not at the exec stop, while it waits.
 */
static int main_kind(struct unwinder *u)
{
	if (u->main_kind == MAIN_UNDECODED)
		u->main_kind = arch_main_from_entry(u->entry_code, u->entry_len,
						    u->entry, &u->main_ref);
	return u->main_kind;
}

/*
 * main's range from the executable's symbol table, when it has main at
 * M (a running address) with a size: the range of its FDE (the compiler
 * writes both from the same function), without reading every object's
 * unwind table (0.7-2 ms at a launch).  A set-up lookup (elfsyms.h: the
 * file read in place, no libdwfl session).  0 if found.
 */
static int main_from_symbols(struct unwinder *u, uint64_t m)
{
	static const char *const name[] = { "main" };
	struct symbolizer *s = sym_open_setup(u->pid);
	struct sym_def d = { 0 };
	int found;

	util_silent++;		/* not found: the FDE says, as before */
	sym_find_in_module(s, m, name, 1, 1, &d);
	util_silent--;
	found = d.addr == m && d.size;
	sym_close(s);
	if (!found)
		return -1;
	u->main_lo = m;
	u->main_hi = m + d.size;
	return 0;
}

/*
 * main's range: its symbol's, else the FDE that starts at its address
 * (stripped executables have no symbol for it).  A GOT slot holds main
 * only once the dynamic linker has relocated the executable: it must
 * point into the executable.
 */
static void resolve_main(struct unwinder *u)
{
	uint64_t m = u->main_ref, end;
	unw_proc_info_t pi;
	struct utable *exe;

	u->main_tries++;
	if (u->main_kind == 1 && mem_read_all(u->tid, u->main_ref, &m, 8))
		return;
	/* the file once per address (a drain retries every 2 ms until
	 * main is known: a stripped executable has no symbol to find) */
	if (m != u->main_sym_m) {
		u->main_sym_m = m;
		if (!main_from_symbols(u, m))
			return;
		/* stripped: its FDE from the file (exefde.h), else libunwind's */
		if (!exe_fde_end(u->pid, u->entry, m, &end)) {
			u->main_lo = m;
			u->main_hi = end;
			return;
		}
	}
	exe = table_of(u, u->entry);
	if (!exe || m < exe->start || m >= exe->end)
		return;
	memset(&pi, 0, sizeof(pi));
	if (need_as(u) ||
	    UNW_OBJ(dwarf_search_unwind_table)(u->as, m, &exe->di, &pi, 0, u) < 0 ||
	    pi.start_ip != m || pi.end_ip <= m)
		return;
	u->main_lo = pi.start_ip;
	u->main_hi = pi.end_ip;
}

int unwinder_main_range(struct unwinder *u, pid_t tid, uint64_t *lo,
			uint64_t *hi)
{
	if (main_kind(u) >= 0 && !u->main_hi) {
		unsigned tries = u->main_tries;

		u->tid = tid;
		u->work = 0;
		current = u;
		resolve_main(u);
		current = NULL;
		u->main_tries = tries;	/* the stops' tries are theirs */
	}
	*lo = u->main_lo;
	*hi = u->main_hi;
	return u->main_hi ? 0 : -1;
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
	u->work = 0;
	u->regs = r;
	u->fixes = fixes;
	u->nfixes = nfixes;
	u->snap_base = arch_sp(r);
	u->snap_end = 0;
	got = mem_read(tid, u->snap_base, u->snap, SNAP_FIRST);
	u->snap_len = got > 0 ? (size_t)got : 0;
	if (u->snap_len < SNAP_FIRST)
		u->snap_end = 1;
	current = u;

	if (main_kind(u) >= 0 && !u->main_hi && u->main_tries < MAIN_TRIES)
		resolve_main(u);
	if (need_as(u) || unw_init_remote(&cur, u->as, u) < 0)
		goto out;
	while (n < max && unw_step(&cur) > 0) {
		unw_word_t ip;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		pcs[n++] = ip;
		/* a return address into main: nothing below it is shown */
		if (ip - 1 >= u->main_lo && ip - 1 < u->main_hi)
			break;
	}
	if (u->work > UNWIND_WORK_MAX && util_first("unwind work"))
		warning("a stack of thread %d took more than %lu reads of its "
			"memory to unwind (its unwind information loops?): "
			"that stack ends there", (int)tid, UNWIND_WORK_MAX);
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
