/*
 * fds.h - the table of a process's open file descriptors.
 *
 * Knows nothing of ptrace: it is fed events (a descriptor was created by
 * a traced function, closed, a range closed, the process exec'd) and
 * what /proc/PID/fd lists (fds_proc_read), and read by the report.
 *
 * Each open descriptor has an origin:
 *  - inherited: open when tracing started (launch: at the exec stop;
 *    attach: when attached); never reported as a leak;
 *  - traced: created by a traced function, with its name, stack, thread
 *    and time;
 *  - unknown: open in /proc/PID/fd at a sync but never seen created (a
 *    raw system call, a path inside the C library no breakpoint covers).
 * A descriptor's identity is the (device, inode) of what it refers to,
 * taken from stat(2) of /proc/PID/fd/N: a sync that finds another file
 * under a traced number (closed and reused behind ptleak's back) makes
 * the record unknown.
 */
#ifndef PTLEAK_FDS_H
#define PTLEAK_FDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum fd_type { FD_TYPE_FILE, FD_TYPE_PIPE, FD_TYPE_SOCKET, FD_TYPE_ANON,
	       FD_TYPE_OTHER };

/* The type from the text of a /proc/PID/fd/N link: "pipe:[..]",
 * "socket:[..]", "anon_inode:...", a path (file), anything else (other). */
enum fd_type fd_type_of(const char *target);
/* "file", "pipe", "socket", "anon", "other" */
const char *fd_type_name(enum fd_type t);

enum fd_origin { FD_INHERITED, FD_TRACED, FD_UNKNOWN };

struct fd_rec {
	int fd;
	uint8_t origin;		/* enum fd_origin */
	uint8_t type;		/* enum fd_type */
	uint8_t before_exec;	/* traced in an image that exec'd since: its
				 * stack is gone (0) */
	const char *opened_by;	/* static name of the creating function,
				 * NULL unless traced */
	char *target;		/* link text, owned by the table (may be NULL) */
	uint32_t stack;		/* stacks.h id, 0: none */
	int32_t tid;		/* creating thread */
	uint64_t time_ns;	/* when created (now_ns()), 0: unknown */
	uint64_t dev, ino;	/* identity, 0/0: unknown */
};

/* One entry of /proc/PID/fd. */
struct fd_now {
	int fd;
	char *target;		/* link text, NULL if unreadable */
	uint64_t dev, ino;	/* 0/0 if stat failed */
};

struct fd_list {
	struct fd_now *v;	/* sorted by fd */
	size_t n, alloc;
};

/* Read /proc/PID/fd into L (emptied first).  0, or -1 with errno set
 * (the process is gone). */
int fds_proc_read(pid_t pid, struct fd_list *l);
/* Link text and identity of PID's descriptor FD into *OUT (target
 * malloc'd).  0, or -1 if the link cannot be read. */
int fds_proc_one(pid_t pid, int fd, struct fd_now *out);
void fd_list_free(struct fd_list *l);

struct fdtable;

struct fdtable *fds_new(void);
void fds_delete(struct fdtable *t);

/* Forget everything; every descriptor of NOW[0..N-1] is inherited. */
void fds_inherit(struct fdtable *t, const struct fd_now *now, size_t n);

/* No descriptor number reaches this: the kernel's bound
 * (/proc/sys/fs/nr_open, read once; 2^20 if unreadable). */
int fds_max(void);

/* A traced creation: R (its target copied).  An open record under the
 * same number is replaced (dup2 onto an open descriptor).  A number
 * below 0 or at least fds_max() (the target can return any) is
 * ignored. */
void fds_open(struct fdtable *t, const struct fd_rec *r);

/* close(FD): 1 if the table had it open, else 0. */
int fds_close(struct fdtable *t, int fd);

/* close_range(LO, HI) (inclusive) and closefrom(LO) (HI = UINT_MAX). */
void fds_close_range(struct fdtable *t, unsigned lo, unsigned hi);

/*
 * Make the table what /proc says (NOW[0..N-1], sorted by fd): records
 * whose descriptor is not open are dropped; descriptors never seen
 * created become unknown records, as do traced ones whose identity
 * changed; targets and types are refreshed.
 */
void fds_sync(struct fdtable *t, const struct fd_now *now, size_t n);

/*
 * The process exec'd; NOW is /proc after the exec (close-on-exec
 * descriptors are gone).  As fds_sync, and the survivors' stacks are
 * dropped (they name code of the old image): before_exec is set.
 */
void fds_exec(struct fdtable *t, const struct fd_now *now, size_t n);

/* The open record of FD, or NULL. */
const struct fd_rec *fds_get(const struct fdtable *t, int fd);

/* Every fd with a record is below this. */
int fds_limit(const struct fdtable *t);

/* Open descriptors, and how many of them are inherited. */
void fds_count(const struct fdtable *t, uint64_t *open, uint64_t *inherited);

#endif
