/*
 * outfile.h - the report files (-o, --json): checked before the target
 * runs, written so that what is at the path stays what it was meant to be.
 *
 *   a regular file, or none yet   written to PATH.tmp, then renamed onto
 *                                 PATH: a reader never sees half a report
 *   a symbolic link               the same for the file it points to (the
 *                                 link stays a link)
 *   anything else (/dev/null, a   written in place: renaming a regular file
 *   FIFO, a pipe as /dev/fd/N,    over it would replace the device; opened
 *   a terminal)                   without blocking (a FIFO that nobody reads
 *                                 is an error, not a hang)
 */
#ifndef PTLEAK_OUTFILE_H
#define PTLEAK_OUTFILE_H

#include <stdio.h>
#include <sys/types.h>

/*
 * TMPL with "%p" replaced by PID, "%q{VAR}" by the value of environment
 * variable VAR and "%%" by "%".  Malloc'd; NULL after one "ptleak: ..."
 * message for another "%" sequence, a "%q" without "{VAR}", or VAR not
 * set (valgrind's rules).
 */
char *outfile_expand(const char *tmpl, pid_t pid);

/* The pid that %p stands for in the names given to outfile_check and
 * outfile_open from now on (until it is known, 0: a name is checked with
 * "0" in its place). */
void outfile_set_pid(pid_t pid);

/* Does NAME contain "%p" (so that it is known only with the pid)? */
int outfile_has_pid(const char *name);

/*
 * Is PATH a name to write to?  Refuses an empty name, a name ending in
 * '/' and a directory with one "ptleak: cannot write PATH: ..." message:
 * 0 or -1.  Done before the target runs, so that an unusable output does
 * not cost the run (-o's file is then opened at once).
 */
int outfile_check_name(const char *path);

/*
 * Can outfile_open write PATH?  outfile_check_name, then: a file written
 * in place must be writable; for one replaced by a rename, a temporary
 * file is created in its directory and removed (a missing or unwritable
 * directory fails).  0 or -1 (message).
 */
int outfile_check(const char *path);

struct outfile {
	char *path;		/* as given, expanded: for messages */
	char *dest;		/* PATH, symbolic links followed (NULL: in place) */
	char *tmp;		/* DEST.tmp, or NULL: written in place */
	FILE *f;
};

/* Open PATH (expanded) for a new report into OF (OF->f): 0, or -1
 * (message). */
int outfile_open(struct outfile *of, const char *path);

/* Close OF and, unless in place, rename it onto its destination: 0, or -1
 * (message, the temporary file removed). */
int outfile_commit(struct outfile *of);

/*
 * The file name of process PID's report for NAME (every output option):
 * NAME expanded as outfile_expand does (%p, %q{VAR}, %%); without "%p", a
 * CHILD process (-f) gets NAME.PID.
 * Allocated (the caller frees it).
 */
char *outfile_pid_name(const char *name, pid_t pid, int child);

#endif
