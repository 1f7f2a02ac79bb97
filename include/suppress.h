/*
 * suppress.h - LSan-style suppressions: lines "leak:GLOB" and "fd:GLOB",
 * "#" comments, blank lines.  GLOB (fnmatch(3): *, ?, [...]) must match
 * the whole of a frame's function, source file (basename), module path or
 * module basename; a record is suppressed when any frame of its stack
 * matches any pattern of its kind.
 */
#ifndef PTLEAK_SUPPRESS_H
#define PTLEAK_SUPPRESS_H

#include <stdint.h>

#include "symbols.h"

enum supp_kind { SUPP_LEAK, SUPP_FD };

struct supp_pattern {
	enum supp_kind kind;
	char *glob;
	int line;		/* in the file */
	uint64_t count;		/* records suppressed by it */
	uint64_t bytes;		/* their bytes (leak patterns) */
};

struct suppressions {
	struct supp_pattern *p;
	unsigned n;
};

/* Bounds on what is read: a line, the whole file (/dev/zero is no
 * suppressions file, and ptleak's memory stays bounded). */
#define SUPP_MAX_LINE 4096
#define SUPP_MAX_FILE (16 << 20)

/*
 * Load PATH.  NULL after one "ptleak: PATH:LINE: ..." message for a
 * malformed line (no "leak:" or "fd:" prefix, empty glob, longer than
 * SUPP_MAX_LINE, a NUL byte), "ptleak: PATH: more than 16 MiB: ...", or
 * "ptleak: cannot read PATH: ..." if it cannot be read.
 */
struct suppressions *supp_load(const char *path);
void supp_free(struct suppressions *s);

/* Index of the first pattern of KIND matching a frame of FRAMES[0..N-1],
 * or -1.  Does not count. */
int supp_match(const struct suppressions *s, enum supp_kind kind,
	       const struct frame_info *frames, unsigned n);

#endif
