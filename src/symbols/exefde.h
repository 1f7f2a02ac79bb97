/*
 * exefde.h - the FDE that starts at an address of a process's executable,
 * read from the file's .eh_frame_hdr and .eh_frame (private to symbols/).
 */
#ifndef PTLEAK_EXEFDE_H
#define PTLEAK_EXEFDE_H

#include <stdint.h>
#include <sys/types.h>

/*
 * In the executable of process PID (/proc/PID/exe, loaded so that its
 * entry point is at ENTRY), the FDE that starts at running address M:
 * its end into *HI, 0.  -1 if there is none, or the file has what this
 * reader leaves to libunwind (no .eh_frame_hdr, a table or pointer
 * encoding other than the linkers' usual ones, 64-bit DWARF).
 */
int exe_fde_end(pid_t pid, uint64_t entry, uint64_t m, uint64_t *hi);

#endif
