/*
 * dwline.h - source lines from .debug_line alone.
 *
 * libdw inflates every compressed debug section of a file when its DWARF
 * is first opened: for glibc's debug file (libc6-dbg) ~100 ms of CPU,
 * mostly 5.8 MB of .debug_info that naming a line does not need.  This
 * reader inflates .debug_line (and .debug_line_str) only and indexes the
 * line programs' sequences (DWARF 2 to 5) by address range; a lookup
 * decodes the sequences covering the address again and takes the last
 * row at or below it in program order, as libdw's dwarf_getsrc_die does
 * within a compilation unit.  Used for separate debug files whose
 * .debug_info is compressed; libdw serves the others.
 */
#ifndef PTLEAK_DWLINE_H
#define PTLEAK_DWLINE_H

#include <libelf.h>
#include <stdint.h>

struct dc_kind;

struct dwline;

/* The line tables of ELF file PATH (its .debug_line), NULL if it has
 * none or they cannot be read.  The file stays open until dwline_close. */
struct dwline *dwline_open(const char *path);
void dwline_close(struct dwline *d);

/* The kind of the line tables' cache files (diskcache.h: fuzz_dwlcache
 * writes one). */
extern const struct dc_kind dwline_cache_kind;

/* D was read from the disk cache (diskcache.h: PATH's .debug_line and
 * .debug_line_str inflated and their index, kept by an earlier open). */
int dwline_cached(const struct dwline *d);

/*
 * The source line of link-time address ADDR: 0 with *FILE (the file's
 * name as the line table has it, owned by D) and *LINE, or -1.
 */
int dwline_find(const struct dwline *d, uint64_t addr, const char **file,
		int *line);

/* Is ELF's .debug_info compressed (SHF_COMPRESSED)? */
int dwline_info_compressed(Elf *elf);

#endif
