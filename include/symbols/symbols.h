/*
 * symbols.h - names for addresses and addresses for names, with libdw.
 *
 * A symbolizer is a libdwfl session over the objects mapped in a process
 * (dwfl_linux_proc_report; made at its first need by sym_open_setup,
 * whose lookups elfsyms.h answers without it).  It serves two purposes:
 *  - at set-up, find where functions (the allocator) are defined, in the
 *    order the dynamic linker binds them, from the objects' own symbol
 *    tables (.symtab, else .dynsym: no debug file is read);
 *  - at report time only, name the PCs of reported stacks: function,
 *    source file and line (from the object's own debug info or a separate
 *    one found by build-id or debuglink), module.
 * It is never used on the per-allocation path.
 */
#ifndef PTLEAK_SYMBOLS_H
#define PTLEAK_SYMBOLS_H

#include <stdint.h>
#include <sys/types.h>

struct symbolizer;

/* A session over the objects PID maps (made at its first need: PID must
 * stay stopped meanwhile).  NULL with a message if they cannot be read. */
struct symbolizer *sym_open(pid_t pid);

/*
 * For set-up lookups (sym_find_in_module): no libdwfl session until one
 * is needed (elfsyms.h answers from the files themselves); never NULL.
 */
struct symbolizer *sym_open_setup(pid_t pid);

/* Non-zero if S needed its libdwfl session and could not make it (the
 * message said why). */
int sym_failed(const struct symbolizer *s);

/* Non-zero: sym_open_setup's lookups through libdwfl alone (the unit
 * tests compare the two). */
extern int sym_setup_libdwfl;
void sym_close(struct symbolizer *s);

/* The addresses [*LO, *HI) of the object mapped at ADDR: 0, or -1. */
int sym_module_range(struct symbolizer *s, uint64_t addr, uint64_t *lo,
		     uint64_t *hi);

/* Its libdwfl session, for walking the modules (dwfl_getmodules). */
struct Dwfl *sym_dwfl(struct symbolizer *s);

struct sym_def {
	uint64_t addr;		/* 0: not defined in that module */
	uint64_t size;		/* st_size, may be 0 */
	const char *module;	/* path of the defining object (symbolizer-owned) */
};

/*
 * In the module containing address IN_MODULE, look up global or weak
 * defined symbols called NAMES[0..N-1] (functions if FUNCS, data objects
 * otherwise); fills OUT[i] for each name found there, leaves the others
 * untouched.  Returns the number found, or -1 if no module contains
 * IN_MODULE.  A shared library's from its .dynsym (it holds every global
 * symbol the library defines; no debug file loaded), an executable's from
 * its whole symbol table.
 */
int sym_find_in_module(struct symbolizer *s, uint64_t in_module,
		       const char *const *names, unsigned n, int funcs,
		       struct sym_def *out);

/*
 * An object PATH that process had loaded at BIAS and has unloaded
 * (dlclose): addresses no mapped object holds are named from the file,
 * their module "PATH (unloaded)".  Added first are preferred where two
 * overlap.  0, or -1 (the file cannot be read: such frames stay
 * unnamed).
 */
int sym_add_unloaded(struct symbolizer *s, const char *path, uint64_t bias);

struct frame_info {
	uint64_t pc;
	const char *function;	/* demangled; NULL if unknown */
	const char *symbol;	/* the same as the object names it (mangled,
				 * no @VERSION); NULL if unknown */
	const char *file;	/* basename of the source file, or NULL */
	const char *path;	/* the source file as the line table names it
				 * (absolute when it has the directory), or
				 * NULL: what --html reads its lines from */
	int line;		/* 0 if unknown */
	const char *module;	/* full path of the object, or NULL */
	uint64_t module_offset;	/* pc relative to the module's start */
};

/*
 * Name PC.  CALLER is non-zero for every frame but the innermost: PC is
 * then a return address and the line is that of PC - 1 (the call).
 * The innermost frame (an allocator or descriptor function's entry) gets
 * its symbol from the object itself and no line: no debug file is opened
 * for it.  A caller frame uses the object's debug file when one exists
 * (build-id, debuglink; debuginfod only if DEBUGINFOD_URLS is set), and
 * its DWARF is read only then.
 * Strings are owned by the symbolizer and live until sym_close.
 */
void sym_lookup(struct symbolizer *s, uint64_t pc, int caller,
		struct frame_info *out);

#endif
