/*
 * elfsyms.h - the set-up lookups of symbols.h without libdwfl.
 *
 * At a launch, ptleak looks up a few dozen names (the dynamic linker's
 * rendezvous, the allocator, descriptor and exec functions) in each
 * loaded object while the program waits.  A libdwfl session for that
 * read /proc/PID/maps, mapped each object through libelf and built its
 * section list: about 1 ms a launch (0.5 ms at the exec stop alone).  Here the object holding an
 * address is found in /proc/PID/maps (read once), its file mapped
 * read-only and its symbol table read in place: the same answers
 * (tests/unit/test_symbols.c compares them with libdwfl's), else -2 and
 * the caller asks libdwfl.
 */
#ifndef PTLEAK_ELFSYMS_H
#define PTLEAK_ELFSYMS_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/symbols.h"

/* A symbol table in memory: a library's .dynsym with its versions and
 * .gnu.hash (each may be NULL), or an executable's .symtab. */
struct symtab_view {
	const Elf64_Sym *syms;
	size_t nsyms;
	const char *str;
	size_t strsz;
	const uint16_t *ver;	/* .gnu.version, NSYMS entries */
	const uint32_t *hash;	/* .gnu.hash */
	size_t hashwords;
};

/*
 * The defined global or weak symbols NAMES (functions if FUNCS, else data
 * objects) of library table V, in their default version, at BIAS +
 * st_value, into OUT[k] with MODULE, for each OUT[k] still empty:
 * through .gnu.hash, else by a scan.  Returns the number found.
 */
int symtab_find_dynsym(const struct symtab_view *v, uint64_t bias,
		       const char *const *names, unsigned n, int funcs,
		       const char *module, struct sym_def *out);

/*
 * An object with header EH, program headers PH and dynamic section DYN
 * (NDYN entries) is a shared library: ET_DYN, not flagged a PIE
 * executable (DF_1_PIE), and without an interpreter or with a DT_SONAME
 * (glibc's libc.so.6 has both: it runs as a program too).  Its .dynsym
 * holds every global symbol it defines (the link made the others local).
 */
int symtab_is_library(const Elf64_Ehdr *eh, const Elf64_Phdr *ph,
		      const Elf64_Dyn *dyn, size_t ndyn);

/* NAME (from a symbol table) is WANT, or WANT's default version
 * ("fclose@@GLIBC_2.2.5"). */
int symtab_name_is(const char *name, const char *want);

struct elfsyms;

/* Lookups in the objects process PID maps (/proc/PID/maps read at the
 * first one). */
struct elfsyms *elfsyms_open(pid_t pid);
void elfsyms_close(struct elfsyms *es);

/*
 * sym_find_in_module's answer for the object mapped at IN_MODULE: the
 * number of names found (OUT[k].module owned by ES), or -2 if this cannot
 * answer as libdwfl would (no object there, no file, a deleted or
 * replaced one, an unusual table or layout): ask libdwfl.
 */
int elfsyms_find(struct elfsyms *es, uint64_t in_module,
		 const char *const *names, unsigned n, int funcs,
		 struct sym_def *out);

/* The addresses [*LO, *HI) of the object mapped at ADDR (its file's
 * adjacent mappings, as libdwfl's module): 0, or -2 (ask libdwfl). */
int elfsyms_module_range(struct elfsyms *es, uint64_t addr, uint64_t *lo,
			 uint64_t *hi);

#endif
