/*
 * maps.h - /proc/PID/maps, one mapping at a time: every reader of a
 * process's mappings in ptleak goes through here.
 *
 * A line is "START-END PERMS OFFSET MAJ:MIN INODE" and, after blanks,
 * the name: the rest of the line.  A file's path may hold spaces, quotes
 * and any byte but a newline (the kernel writes that one as \012) and be
 * PATH_MAX bytes long; a deleted file's ends in " (deleted)"; [heap],
 * [stack], [vdso], a memfd's "/memfd:NAME (deleted)"; anonymous memory
 * has none.  Lines are read whole, never cut at a fixed length (a path
 * of 558 bytes once split a line in two, and the half was taken for the
 * end of user space).
 */
#ifndef PTLEAK_MAPS_H
#define PTLEAK_MAPS_H

#include <stdint.h>
#include <sys/types.h>

/* The longest line read: the kernel's are shorter (a path of PATH_MAX
 * bytes, each byte at most 4 when escaped, plus the numbers); one longer
 * is skipped whole. */
#define MAPS_LINE_MAX (4 * 4096 + 128)

struct maps_entry {
	uint64_t start, end;	/* [start, end) */
	uint64_t offset;	/* in the file */
	uint64_t inode;		/* 0: not a file */
	unsigned maj, min;	/* the file's device */
	char perms[5];		/* "r-xp" */
	const char *name;	/* the rest of the line, "" if none; it lives
				 * as long as the line it was parsed from */
};

/* LINE (one line, its newline dropped or not) into *E: 0, or -1 if it is
 * not a mapping's line.  E->name points into LINE, without the newline
 * (LINE's newline, if any, is overwritten with a NUL). */
int maps_parse(char *line, struct maps_entry *e);

struct maps_file;

/* /proc/PID/maps opened: NULL (errno set) if it cannot be. */
struct maps_file *maps_open(pid_t pid);

/* The same for a file in that format at PATH (a saved copy). */
struct maps_file *maps_open_path(const char *path);

/* The next mapping into *E (E->name valid until the next call): 1, or 0
 * at the end.  Lines that do not parse, or longer than MAPS_LINE_MAX,
 * are skipped. */
int maps_next(struct maps_file *f, struct maps_entry *e);

void maps_close(struct maps_file *f);

#endif
