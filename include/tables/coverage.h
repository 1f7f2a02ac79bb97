/*
 * coverage.h - what ptleak could not see, so that a report never claims
 * more than was seen ("no leaks are possible" after nothing was traced).
 *
 * The tracer counts the calls it could not record (their memory could not
 * be read, their first instruction could not be stepped over) with
 * cov_lost(); only the first one prints a warning, so stderr stays
 * bounded whatever the number of calls.  At a report, cov_why() says why
 * a part (heap, descriptors) is not tracked, or NULL if it is.
 */
#ifndef PTLEAK_COVERAGE_H
#define PTLEAK_COVERAGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cov_part { COV_HEAP, COV_FDS, COV_NPARTS };

struct coverage {
	uint64_t lost[COV_NPARTS];	/* calls not recorded */
	char first[COV_NPARTS][384];	/* why the first of them was not */
	char stopped[COV_NPARTS][192];	/* why none is any more, "": none */
	int warned;			/* the one warning was printed */
};

/*
 * A call of PART was not recorded because of MSG (printf-like, "cannot
 * read the return address of malloc in thread 12"); ERR: the errno of
 * the failure, or 0.  The first call of the session prints one warning.
 */
void cov_lost(struct coverage *c, enum cov_part part, int err,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Nothing of PART is recorded from now on because of MSG (printf-like,
 * "the target wrote over ptleak's ring at 0.412 s; heap events after
 * 0.412 s are not tracked"): cov_why() gives MSG from now on.  Prints
 * nothing (the caller says it once); the first MSG stays.
 */
void cov_stop(struct coverage *c, enum cov_part part, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Forget PART's lost calls and stop (an exec: the old image's heap is
 * gone). */
void cov_reset(struct coverage *c, enum cov_part part);

/* cov_stop()'s MSG (followed by "; N allocator calls were not recorded
 * (first: MSG)" if some were), else "N allocator calls were not
 * recorded (first: MSG)" into BUF, or NULL if no call of PART was lost. */
const char *cov_why(const struct coverage *c, enum cov_part part, char *buf,
		    size_t size);

/* What the tracer knows at a report. */
struct cov_view {
	const char *prog;	/* the program, for messages (argv[0]) */
	pid_t pid;
	int is_static;		/* no dynamic linker: a static executable */
	int malloc_bound;	/* malloc's breakpoint is planted */
	unsigned fd_planted;	/* fd functions planted */
	int mem_err;		/* errno of reading the target's memory, 0 */
	int fd_err;		/* errno of reading /proc/PID/fd, 0 */
};

/*
 * Why the report's heap (descriptors) cannot be trusted, into BUF, or
 * NULL: no malloc (fd function) found, calls not recorded (cov_why), or
 * the memory (/proc/PID/fd) unreadable for lack of permission.
 */
const char *cov_heap_why(const struct coverage *c, const struct cov_view *v,
			 char *buf, size_t size);
const char *cov_fds_why(const struct coverage *c, const struct cov_view *v,
			char *buf, size_t size);

/* ": STRERROR" and, for EPERM/EACCES, what it means for a traced process
 * (not dumpable) and what to do: appended to a message about ERR. */
const char *cov_err_text(int err, char *buf, size_t size);

#endif
