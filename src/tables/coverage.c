/* coverage.c - what ptleak could not see (coverage.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tables/coverage.h"
#include "base/util.h"

static const char *const part_calls[COV_NPARTS] = {
	[COV_HEAP] = "allocator",
	[COV_FDS] = "descriptor",
};

/* EPERM, EACCES: the kernel refuses a tracer without CAP_SYS_PTRACE */
static int denied(int err)
{
	return err == EPERM || err == EACCES;
}

const char *cov_err_text(int err, char *buf, size_t size)
{
	if (!err) {
		buf[0] = '\0';
		return buf;
	}
	/* the kernel's answer to a tracer without CAP_SYS_PTRACE once the
	 * target is no longer dumpable (it can still be stopped, not read) */
	snprintf(buf, size, ": %s%s", strerror(err),
		 denied(err) ?
		 " (the process is not dumpable: setuid, or prctl(PR_SET_DUMPABLE, 0); "
		 "run ptleak as root or with CAP_SYS_PTRACE)" : "");
	return buf;
}

void cov_lost(struct coverage *c, enum cov_part part, int err,
	      const char *fmt, ...)
{
	char msg[192], etext[160];
	va_list ap;

	if (c->lost[part]++)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(c->first[part], sizeof(c->first[part]), "%s%s", msg,
		 cov_err_text(err, etext, sizeof(etext)));
	if (c->warned)
		return;
	c->warned = 1;
	warning("%s: this call is not recorded, nor any like it (the report "
		"counts them)", c->first[part]);
}

void cov_stop(struct coverage *c, enum cov_part part, const char *fmt, ...)
{
	va_list ap;

	if (c->stopped[part][0])
		return;
	va_start(ap, fmt);
	vsnprintf(c->stopped[part], sizeof(c->stopped[part]), fmt, ap);
	va_end(ap);
}

void cov_reset(struct coverage *c, enum cov_part part)
{
	c->lost[part] = 0;
	c->first[part][0] = '\0';
	c->stopped[part][0] = '\0';
}

const char *cov_why(const struct coverage *c, enum cov_part part, char *buf,
		    size_t size)
{
	uint64_t n = c->lost[part];
	const char *stop = c->stopped[part];

	if (!n && !*stop)
		return NULL;
	if (!n) {
		snprintf(buf, size, "%s", stop);
		return buf;
	}
	snprintf(buf, size, "%s%s%" PRIu64 " %s call%s %s not recorded (first: %s)",
		 stop, *stop ? "; " : "", n, part_calls[part], n == 1 ? "" : "s",
		 n == 1 ? "was" : "were", c->first[part]);
	return buf;
}


const char *cov_heap_why(const struct coverage *c, const struct cov_view *v,
			 char *buf, size_t size)
{
	char etext[160];

	if (!v->malloc_bound) {
		if (v->is_static)
			snprintf(buf, size, "no allocator function found in %s "
				 "(stripped static executable?)", v->prog);
		else
			snprintf(buf, size, "no allocator function found in the "
				 "objects loaded by %s", v->prog);
		return buf;
	}
	if (cov_why(c, COV_HEAP, buf, size))
		return buf;
	/* no call lost yet, but none could be recorded from now on */
	if (!denied(v->mem_err))
		return NULL;
	snprintf(buf, size, "the memory of process %d cannot be read%s",
		 (int)v->pid, cov_err_text(v->mem_err, etext, sizeof(etext)));
	return buf;
}

const char *cov_fds_why(const struct coverage *c, const struct cov_view *v,
			char *buf, size_t size)
{
	char etext[160];

	if (!v->fd_planted) {
		snprintf(buf, size, "no descriptor function found in %s%s%s; "
			 "only /proc/%d/fd is read at reports",
			 v->is_static ? "" : "the objects loaded by ", v->prog,
			 v->is_static ? " (stripped static executable?)" : "",
			 (int)v->pid);
		return buf;
	}
	if (cov_why(c, COV_FDS, buf, size))
		return buf;
	if (!denied(v->fd_err))
		return NULL;
	snprintf(buf, size, "/proc/%d/fd cannot be read%s", (int)v->pid,
		 cov_err_text(v->fd_err, etext, sizeof(etext)));
	return buf;
}
