/*
 * vgsupp.h - valgrind's suppression files, read and written.
 *
 *   {
 *      NAME
 *      Memcheck:Leak
 *      match-leak-kinds: definite,possible      (optional; all, none)
 *      fun:PATTERN      a function (its symbol, mangled, or demangled)
 *      obj:PATTERN      an object's path
 *      src:FILE[:LINE]  a source file's basename (and line)
 *      ...              any number of frames, none included
 *   }
 *
 * PATTERNs have valgrind's wildcards only: '*' (any string) and '?' (any
 * character).  Frames match from the allocator's frame outward, the first
 * line against the allocator (as valgrind's own stacks start there); the
 * stack may go on past the last line.  A C++ allocation (malloc called by
 * operator new) starts at operator new, as valgrind sees it.  Blocks of
 * other tools or other Memcheck kinds (Memcheck:Cond, Helgrind:Race) are
 * read and never match.  '#' lines are comments.
 */
#ifndef PTLEAK_VGSUPP_H
#define PTLEAK_VGSUPP_H

#include <stdio.h>

#include "analysis/suppress.h"
#include "symbols/symbols.h"

struct vgsupp;

/* Reading a file line by line (suppress.c feeds it). */
struct vgparse {
	struct vgsupp *cur;	/* the block being read, NULL between blocks */
	int state;		/* where in the block */
	int start;		/* its first line */
	int name_line;		/* the line of its name */
};

/*
 * Is TEXT (stripped) the first line of a valgrind suppression file?  A
 * file's first line that is not blank or a comment decides its format.
 */
int vgsupp_is_start(const char *text);

/*
 * One stripped line TEXT (line LINENO of PATH) into ST; a finished block
 * goes into S as a SUPP_LEAK pattern (glob: its name).  0, or -1 after
 * one "ptleak: PATH:LINE: what is wrong" message.
 */
int vgsupp_line(struct vgparse *st, struct suppressions *s, const char *text,
		const char *path, int lineno);

/* The end of the file: -1 (message) inside a block, else 0. */
int vgsupp_end(struct vgparse *st, const char *path, int lineno);

void vgsupp_free(struct vgsupp *v);

/* Does V match a leak of class CLS (enum scan_class) allocated at
 * FRAMES[0..N-1] (frame 0: the allocator)? */
int vgsupp_match(const struct vgsupp *v, int cls, const struct frame_info *frames,
		 unsigned n);

/* The frame valgrind's stack of FRAMES starts at: 1 when frame 1 is C++'s
 * operator new or new[] (valgrind replaces them), else 0. */
unsigned vgsupp_first_frame(const struct frame_info *frames, unsigned n);

/* "fun:NAME", "obj:PATH" or "obj:*" for FI into BUF (LEN bytes). */
const char *vgsupp_frame_line(const struct frame_info *fi, char *buf,
			      size_t len);

/* "definite", "indirect", "possible", "reachable" for class CLS */
const char *vgsupp_kind_word(int cls);

/*
 * Print the suppression valgrind's --gen-suppressions=all prints for a
 * leak of class CLS at FRAMES[0..N-1], on F ("{" ... "}").
 */
void vgsupp_print(FILE *f, int cls, const struct frame_info *frames,
		  unsigned n);

#endif
