/*
 * proctree.h - the tree summary of -f: one row per traced process (its
 * parent, command line, exit status, what it leaked), printed at the end
 * of the first process's text report.
 *
 * Bounded: at most PROCTREE_MAX rows are kept; processes beyond are
 * counted and summed in one line; a command line is cut past
 * PROCTREE_CMD_MAX bytes.
 */
#ifndef PTLEAK_PROCTREE_H
#define PTLEAK_PROCTREE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PROCTREE_MAX 4096
/* A row's command line, its arguments joined by spaces, control
 * characters as '?': whole up to this many bytes (a path of PATH_MAX
 * fits), else cut between two characters and ended with "...". */
#define PROCTREE_CMD_MAX 4096

struct proctree;

struct proctree *proctree_new(void);
void proctree_free(struct proctree *t);

/* A row for process PID, child of PPID (0: the first), running ARGV: its
 * index, or -1 when the table is full (the process is counted). */
int proctree_add(struct proctree *t, pid_t pid, pid_t ppid, char *const *argv);
/* Row ROW runs ARGV now (an exec). */
void proctree_argv(struct proctree *t, int row, char *const *argv);
/* Row ROW's leaks: LOST bytes (definitely, indirectly, possibly) and
 * FDS descriptors, in total over its images. */
void proctree_leaks(struct proctree *t, int row, uint64_t lost, uint64_t fds);
/* Row ROW's process is gone with wait STATUS (-1: ptleak let it go). */
void proctree_exit(struct proctree *t, int row, int status);

/* The summary as text report lines "ptleak[FIRST]: ...": a process's
 * children below it, indented, in the order they were created. */
void proctree_print(const struct proctree *t, FILE *f, pid_t first);

#endif
