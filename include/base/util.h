/* util.h - errors, allocation, formatting, time, /proc fields. */
#ifndef PTLEAK_UTIL_H
#define PTLEAK_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * error(): print "ptleak: MSG" on stderr and return -1, git style:
 *     return error("cannot open %s: %s", path, strerror(errno));
 * die() prints the same and exits 1; only main() and option parsing use it.
 */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* die() whose message was given already (by a report child of ptleak's,
 * snapshot.c): die_hook, then exit 1. */
void die_said(void) __attribute__((noreturn));

/* The exit status of a usage error (a bad option or argument). */
#define EXIT_USAGE 64
/* "ptleak: " FMT (one %s: ARG, made safe for a terminal) on stderr;
 * returns EXIT_USAGE.  For the command line's parsers. */
int usage_error(const char *fmt, const char *arg);
/* -q: warnings are not printed */
extern int util_quiet;
/* error() prints nothing while this is set: a try in the background whose
 * failure is not the user's business (it returns -1 all the same) */
extern int util_silent;
/* Called once by die() before it exits (the tracer lets go of its
 * target there); NULL: none. */
extern void (*die_hook)(void);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Grow *P (of *ALLOC elements of SIZE bytes) to hold at least NEED. */
void grow_array(void **p, size_t *alloc, size_t need, size_t size);

/* A 32-bit key and what it sorts (radix_sort_kv32). */
struct kv32 {
	uint32_t key, val;
};

/* Sort the N pairs at A by key, stably: LSD radix, 8 bits a pass, through
 * TMP (room for N pairs).  For thousands of keys, where qsort's calls to
 * a comparison were a tenth of an unwind table's compilation. */
void radix_sort_kv32(struct kv32 *a, struct kv32 *tmp, size_t n);

/* Length of the valid UTF-8 sequence at S (S[0] >= 0x80), 0 if S[0]
 * does not start one (never reads past S's terminating NUL). */
int utf8_len(const char *s);

/*
 * S as it may go to a terminal: control characters (C0, DEL, C1) and
 * bytes that are not UTF-8 written "\x1b".  Returns S itself when
 * nothing needs escaping (*HOLD = NULL), else a copy in *HOLD, which the
 * caller frees (free(*HOLD) always works).  NULL stays NULL.
 */
const char *text_safe(const char *s, char **hold);

/* "1,234,567" into BUF (at least 32 bytes); returns BUF. */
char *fmt_thousands(char *buf, uint64_t v);

/*
 * The number after FIELD ("Tgid:", "SigPnd:") in /proc/TID/status, read
 * in BASE (10, 16), into *V.  0, or -1 if the file or the field is not
 * there.
 */
int proc_status_field(pid_t tid, const char *field, int base,
		      unsigned long long *v);
/* The numbers after FIELDS[0..N-1] (N distinct fields) in one read of
 * /proc/TID/status into V: how many lines matched one, or -1. */
int proc_status_fields(pid_t tid, const char *const *fields, unsigned n,
		       int base, unsigned long long *v);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);

/*
 * Open PATH for reading when the target chose it (an object it mapped, a
 * debug file its build-id or .gnu_debuglink names): a regular file only,
 * never a device, FIFO or socket (opened O_NONBLOCK, so that a FIFO put
 * in a mapped object's place cannot make ptleak wait for a writer), no
 * controlling terminal.  The descriptor (O_CLOEXEC), or -1 with errno
 * (EINVAL: not a regular file).
 */
int open_untrusted(const char *path);

/* A thread running FN(ARG) into *TH, started with every signal blocked
 * (ptleak's signals are the tracer thread's: its handlers interrupt a
 * traced thread to end the wait).  pthread_create's result. */
int util_thread_start(pthread_t *th, void *(*fn)(void *), void *arg);

/* 1 the first time KEY is seen by this process, else 0 (a message said
 * once per file; after 64 keys, 0: bounded). */
int util_first(const char *key);

/* 64-bit mix for hash tables. */
static inline uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
