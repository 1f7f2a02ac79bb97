/*
 * suppress.h - suppressions: valgrind's suppression files (vgsupp.h), or
 * LSan-style lines "leak:GLOB", "fd:GLOB" and "type:GLOB" (the C++ class
 * of a block made before an attach, census.h), "#" comments, blank lines;
 * a file's first line tells which.  GLOB (fnmatch(3): *, ?, [...]) must match
 * the whole of a frame's function, source file (basename), module path or
 * module basename; a record is suppressed when any frame of its stack
 * matches any pattern of its kind.
 */
#ifndef PTLEAK_SUPPRESS_H
#define PTLEAK_SUPPRESS_H

#include <stdint.h>

#include "symbols/symbols.h"

enum supp_kind { SUPP_LEAK, SUPP_FD, SUPP_TYPE };

struct vgsupp;

struct supp_pattern {
	enum supp_kind kind;
	char *glob;		/* a valgrind block's name */
	struct vgsupp *vg;	/* a valgrind block (vgsupp.h), NULL: a glob */
	char *file;		/* the file it was read from */
	int line;		/* in the file (a valgrind block: its name's) */
	uint64_t count;		/* records suppressed by it */
	uint64_t bytes;		/* their bytes (leak patterns) */
};

struct suppressions {
	struct supp_pattern *p;
	unsigned n;
	size_t alloc;		/* of p */
};

/* Bounds on what is read: a line, the whole file (/dev/zero is no
 * suppressions file, and ptleak's memory stays bounded). */
#define SUPP_MAX_LINE 4096
#define SUPP_MAX_FILE (16 << 20)

/*
 * Load PATH.  NULL after one "ptleak: PATH:LINE: ..." message for a
 * malformed line (no "leak:", "fd:" or "type:" prefix, empty glob, longer than
 * SUPP_MAX_LINE, a NUL byte), "ptleak: PATH: more than 16 MiB: ...", or
 * "ptleak: cannot read PATH: ..." if it cannot be read.
 */
struct suppressions *supp_load(const char *path);
void supp_free(struct suppressions *s);

/* Index of the first glob of KIND matching a frame of FRAMES[0..N-1],
 * or -1.  Does not count. */
int supp_match(const struct suppressions *s, enum supp_kind kind,
	       const struct frame_info *frames, unsigned n);

/* Index of the first leak pattern, glob or valgrind block, matching a
 * leak of class CLS (enum scan_class; -1: unclassified, which only a
 * block without match-leak-kinds matches) allocated at FRAMES[0..N-1]
 * (frame 0: the allocator), or -1.  Does not count. */
int supp_match_leak(const struct suppressions *s, int cls,
		    const struct frame_info *frames, unsigned n);

/* Index of the first type: pattern matching the whole of class TYPE, or
 * -1.  Does not count. */
int supp_match_type(const struct suppressions *s, const char *type);

/* Load every file of PATHS (NULL-terminated) into one set: NULL after a
 * message as supp_load. */
struct suppressions *supp_load_all(const char *const *paths);

#endif
