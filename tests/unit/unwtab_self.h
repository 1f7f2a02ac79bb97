/*
 * unwtab_self.h - unwind tables of the calling process's own objects, and
 * its main thread's stack bounds (tests and bench only).
 */
#ifndef PTLEAK_UNWTAB_SELF_H
#define PTLEAK_UNWTAB_SELF_H

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/unwtab.h"
#include "recorder/unwtab_walk.h"

#define SELF_MAX_OBJS 64

struct self_tabs {
	struct unwtab_obj objs[SELF_MAX_OBJS];	/* sorted by lo */
	unsigned n;
	int failed;		/* an object's table did not compile */
};

static int self_add(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_tabs *t = arg;
	const char *path = info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
	struct unwtab_obj o = { .lo = UINT64_MAX, .bias = info->dlpi_addr };
	struct unwtab_hdr *h;
	unsigned i;

	(void)size;
	if (access(path, R_OK) || t->n == SELF_MAX_OBJS)
		return 0;	/* the vdso: no file */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X))
			continue;
		if (o.lo > info->dlpi_addr + p->p_vaddr)
			o.lo = info->dlpi_addr + p->p_vaddr;
		if (o.hi < info->dlpi_addr + p->p_vaddr + p->p_memsz)
			o.hi = info->dlpi_addr + p->p_vaddr + p->p_memsz;
	}
	if (o.lo >= o.hi)
		return 0;
	if (unwtab_compile(path, &h, NULL) < 0 || unwtab_check(h, h->size) < 0) {
		t->failed++;
		return 0;
	}
	o.tab = h;
	for (i = t->n; i > 0 && t->objs[i - 1].lo > o.lo; i--)
		t->objs[i] = t->objs[i - 1];
	t->objs[i] = o;
	t->n++;
	return 0;
}

static inline void self_tabs_load(struct self_tabs *t)
{
	memset(t, 0, sizeof(*t));
	dl_iterate_phdr(self_add, t);
}

static inline void self_tabs_free(struct self_tabs *t)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		free((void *)t->objs[i].tab);
	t->n = 0;
}

/* The object whose code holds ADDR, or NULL. */
static inline const struct unwtab_obj *self_obj_of(const struct self_tabs *t,
						   const void *addr)
{
	return unwtab_find_obj(t->objs, t->n, (uint64_t)(uintptr_t)addr);
}

/* The end of the main thread's [stack] mapping, 0 if not found. */
static inline uint64_t self_stack_end(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi;
	uint64_t end = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

/*
 * ut_capture(buf, max): the registers at its entry into ut_regs (the
 * caller's frame: return address, sp after the return, rbp), then a tail
 * call of ut_backtrace(buf, max) (glibc's or libunwind's backtrace), whose
 * first pc is then the same return address.
 */
struct ut_regs {
	uint64_t pc, sp, fp;
};
struct ut_regs ut_regs;
int (*ut_backtrace)(void **buf, int max);
int ut_capture(void **buf, int max);
__asm__(".text\n"
	".globl ut_capture\n"
	".type ut_capture, @function\n"
	"ut_capture:\n"
	"	movq (%rsp), %rax\n"
	"	movq %rax, ut_regs(%rip)\n"
	"	leaq 8(%rsp), %rax\n"
	"	movq %rax, ut_regs+8(%rip)\n"
	"	movq %rbp, ut_regs+16(%rip)\n"
	"	jmp *ut_backtrace(%rip)\n"
	".size ut_capture, .-ut_capture\n");

/* ut_capture_regs(): the same registers into ut_regs, no backtrace. */
void ut_capture_regs(void);
__asm__(".text\n"
	".globl ut_capture_regs\n"
	".type ut_capture_regs, @function\n"
	"ut_capture_regs:\n"
	"	movq (%rsp), %rax\n"
	"	movq %rax, ut_regs(%rip)\n"
	"	leaq 8(%rsp), %rax\n"
	"	movq %rax, ut_regs+8(%rip)\n"
	"	movq %rbp, ut_regs+16(%rip)\n"
	"	ret\n"
	".size ut_capture_regs, .-ut_capture_regs\n");

#endif
