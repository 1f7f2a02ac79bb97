/*
 * patch_self.h - patch functions of the test process itself exactly as
 * ptleak will patch a target's (docs/recorder.md, pieces 4 and 5): a code
 * page within rel32 reach (MAP_FIXED_NOREPLACE, never MAP_FIXED) holding
 * the hook blob, then per function a trampoline and its relocated
 * prologue, made r-x; the 5-byte jumps written through mprotect of the
 * functions' pages (never writable and executable at once).  For the
 * cmocka tests test_hooks_stub and test_hooks_stub_glibc; the caller must make sure
 * no code of a function's page runs while it is being written.
 */
#ifndef PATCH_SELF_H
#define PATCH_SELF_H

#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/arch_patch.h"
#include "recorder/recblob.h"
#include "recorder/rechook.h"
#include "recorder/ring.h"

#define PAGE		4096ul
#define PATCH_SLOT	(32 + ARCH_RELOC_MAX)	/* trampoline + relocated */
#define PATCH_BLOB_LEN	(4 * PAGE)	/* room for the blob */
#define PATCH_CODE_LEN	(PATCH_BLOB_LEN + PAGE)	/* blob, then the slots */

struct fn {
	void *addr;
	const char *name;
	unsigned kind;
	uint64_t size;			/* the symbol's: the body */
	struct arch_patch p;
	uint8_t saved[ARCH_PATCH_MAX_LEN];
};

/* The size of function NAME in PATH's symbol table of type TYPE
 * (SHT_SYMTAB or SHT_DYNSYM), its link address in *VALUE; 0 if none. */
static inline uint64_t elf_func(const char *path, unsigned type,
				const char *name, uint64_t *value)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	uint64_t size = 0;
	GElf_Shdr sh;
	GElf_Sym s;
	Elf_Data *d;
	Elf *e;
	size_t i;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (!size && e && (scn = elf_nextscn(e, scn))) {
		gelf_getshdr(scn, &sh);
		if (sh.sh_type != type)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; !size && i < sh.sh_size / sh.sh_entsize; i++) {
			gelf_getsym(d, (int)i, &s);
			if (GELF_ST_TYPE(s.st_info) == STT_FUNC && s.st_size &&
			    !strcmp(elf_strptr(e, sh.sh_link, s.st_name), name)) {
				size = s.st_size;
				if (value)
					*value = s.st_value;
			}
		}
	}
	elf_end(e);
	close(fd);
	return size;
}

/* A mapping within rel32 reach of NEAR, never over an existing one. */
static inline uint8_t *map_near(uint64_t near, size_t len)
{
	uint64_t base = near & ~(PAGE - 1), d, a;
	void *p;
	int sign;

	for (d = 1ul << 20; d < (1ul << 30); d += 1ul << 20)
		for (sign = -1; sign <= 1; sign += 2) {
			a = base + (uint64_t)sign * d;
			p = mmap((void *)a, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				 -1, 0);
			if (p == (void *)a)
				return p;
			if (p != MAP_FAILED)	/* an old kernel's hint */
				munmap(p, len);
		}
	return NULL;
}

/* Write N bytes of code at AT: its pages r-w for the copy, then r-x. */
static inline int write_code(uint64_t at, const void *b, size_t n)
{
	uint64_t lo = at & ~(PAGE - 1), hi = (at + n + PAGE - 1) & ~(PAGE - 1);

	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE))
		return -1;
	memcpy((void *)at, b, n);
	return mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
}

/* The offset of the tid in the TCB, found as ptleak will: the word where
 * both this thread's and another's TCB equal their gettid(). */
static int tid_hits[1024];

static inline void mark_tid(void)
{
	const int32_t *tcb = (const int32_t *)pthread_self();
	int32_t me = (int32_t)gettid();
	unsigned i;

	for (i = 0; i < 1024; i++)
		if (tcb[i] == me)
			tid_hits[i]++;
}

static inline void *mark_tid_thread(void *arg)
{
	mark_tid();
	return arg;
}

static inline int64_t find_tid_off(void)
{
	pthread_t th;
	unsigned i;

	memset(tid_hits, 0, sizeof(tid_hits));
	mark_tid();
	pthread_create(&th, NULL, mark_tid_thread, NULL);
	pthread_join(th, NULL);
	for (i = 0; i < 1024; i++)
		if (tid_hits[i] == 2)
			return 4 * (int64_t)i;
	return 0;
}

/*
 * Patch the N functions FNS (addr, kind, size set; function I gets the
 * id REC_FN(kind, 0)) and publish CONF (ring and tid_off set by the
 * caller; the stub range and the bodies are set here) to the blob in a
 * new code page, *CODE.  0, or -1 if a function cannot be patched.
 */
static inline int patch_self(struct rec_conf *conf, struct fn *fns,
			     unsigned n, uint8_t **code)
{
	uint8_t jmp[ARCH_PATCH_MAX_LEN], *c;
	uint64_t slot, stub;
	char err[256];
	unsigned i;

	c = *code = map_near((uint64_t)fns[0].addr, PATCH_CODE_LEN);
	if (!c || n > REC_MAX_RANGES || PATCH_BLOB_LEN + n * PATCH_SLOT > PATCH_CODE_LEN ||
	    rec_blob_size > PATCH_BLOB_LEN)
		return -1;
	conf->stub_lo = (uint64_t)c;
	conf->stub_hi = (uint64_t)c + PATCH_CODE_LEN;
	memcpy(c, rec_blob, rec_blob_size);
	*(struct rec_conf **)(c + RECBLOB_OFF_rec_ctx) = conf;
	stub = (uint64_t)c + RECBLOB_OFF_rec_stub;
	for (i = 0; i < n; i++) {
		struct fn *f = &fns[i];

		if (!f->size || arch_patch_plan(&f->p, f->addr, f->size,
						(uint64_t)f->addr, err, sizeof(err)))
			return -1;
		conf->range[i].lo = (uint64_t)f->addr;
		conf->range[i].hi = (uint64_t)f->addr + f->size;
		conf->range[i].obj = 0;
		slot = (uint64_t)c + PATCH_BLOB_LEN + i * PATCH_SLOT;
		if (arch_relocate(&f->p, slot + 32, (uint8_t *)slot + 32, err,
				  sizeof(err)) < 0 ||
		    arch_trampoline_build(slot, REC_FN(f->kind, 0), slot + 32,
					  stub, (uint8_t *)slot, err, sizeof(err)))
			return -1;
	}
	conf->nranges = n;
	if (mprotect(c, PATCH_CODE_LEN, PROT_READ | PROT_EXEC))
		return -1;
	for (i = 0; i < n; i++) {
		struct fn *f = &fns[i];

		memcpy(f->saved, (void *)f->p.at, f->p.len);
		slot = (uint64_t)c + PATCH_BLOB_LEN + i * PATCH_SLOT;
		if (arch_patch_jump(&f->p, slot, jmp, err, sizeof(err)) ||
		    write_code(f->p.at, jmp, f->p.len))
			return -1;
	}
	return 0;
}

/* A ring of 2^LOG2 data bytes in a new shared mapping, *R, and its
 * consumer, *RD.  0, or -1. */
static inline int ring_map(unsigned log2, struct ring **r,
			   struct ring_reader **rd)
{
	*r = mmap(NULL, ring_mem_size(log2), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (*r == MAP_FAILED || ring_init(*r, log2) < 0)
		return -1;
	*rd = ring_reader_new(*r, ring_mem_size(log2));
	return *rd ? 0 : -1;
}

/* Put the saved bytes back.  0 or -1. */
static inline int unpatch_self(struct fn *fns, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (write_code(fns[i].p.at, fns[i].saved, fns[i].p.len))
			return -1;
	return 0;
}

#endif
