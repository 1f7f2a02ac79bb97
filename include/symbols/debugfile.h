/*
 * debugfile.h - find an object's separate debug file without debuginfod.
 *
 * libdwfl's dwfl_standard_find_debuginfo ends, when no local file is
 * found (the vdso, a library without a -dbg package), in its debuginfod
 * client, which dlopens libdebuginfod and with it libcurl, gnutls,
 * kerberos and two dozen other libraries: tens of milliseconds, whether
 * DEBUGINFOD_URLS is set or not (elfutils 0.188).  This finder looks in
 * the usual places only, and hands over to libdwfl's standard finder
 * (debuginfod included) only when DEBUGINFOD_URLS is set and not empty,
 * that is when the user asked for it.
 */
#ifndef PTLEAK_DEBUGFILE_H
#define PTLEAK_DEBUGFILE_H

#include <elfutils/libdwfl.h>

/*
 * A Dwfl_Callbacks.find_debuginfo: the debug file of MOD by build-id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug), else by its .gnu_debuglink
 * name next to the object, in its .debug/ or under /usr/lib/debug, each
 * candidate checked against the object's build-id (or the link's CRC
 * when it has none), each opened by open_untrusted (the names are the
 * target's); with DEBUGINFOD_URLS set, then debuginfod.  An open fd and
 * *DEBUGINFO_FILE_NAME (malloc'd), or -1: libdwfl then uses what the
 * object itself has.
 */
int debugfile_find(Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name,
		   const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name);

/* A find_debuginfo that finds nothing: symbols from the object itself
 * (.symtab, else .dynsym), no separate file opened. */
int debugfile_none(Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name,
		   const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name);

#endif
