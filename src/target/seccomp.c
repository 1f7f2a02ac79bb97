/*
 * seccomp.c - the target's seccomp filters, run on the system calls ptleak
 * would inject (see seccomp.h).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "arch/arch.h"
#include "target/cbpf.h"
#include "target/seccomp.h"
#include "base/util.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif
#ifndef SECCOMP_RET_ACTION_FULL
#define SECCOMP_RET_ACTION_FULL 0xffff0000U
#endif

/* What a filter's action does to the system call, for messages. */
static const char *action_words(uint32_t action)
{
	switch (action) {
	case SECCOMP_RET_KILL_PROCESS: return "kill it for";
	case SECCOMP_RET_KILL_THREAD: return "kill the thread for";
	case SECCOMP_RET_TRAP: return "send it SIGSYS for";
	case SECCOMP_RET_ERRNO: return "make fail";
	case SECCOMP_RET_TRACE: return "hand to a seccomp tracer";
	case SECCOMP_RET_LOG: return "log";
	default: return "not allow";
	}
}

/* The result of filter IDX of TID on D: 1 allowed, 0 not (WHY), 2 no
 * such filter (the last was passed). */
static int run_filter(pid_t tid, long idx, const struct seccomp_data *d,
		      const char *name, char *why, size_t len)
{
	long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)idx, NULL);
	struct sock_filter *prog;
	char err[160];
	uint32_t ret;
	int rc;

	if (n < 0 && errno == ENOENT)
		return 2;
	if (n <= 0) {
		snprintf(why, len, "it runs under a seccomp filter ptleak cannot "
			 "read (%s%s)", strerror(errno),
			 errno == EACCES ? ": needs CAP_SYS_ADMIN" : "");
		return 0;
	}
	prog = xcalloc((size_t)n, sizeof(*prog));
	if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)idx, prog) != n) {
		snprintf(why, len, "it runs under a seccomp filter ptleak cannot "
			 "read (%s)", strerror(errno));
		free(prog);
		return 0;
	}
	rc = cbpf_run(prog, (size_t)n, d, sizeof(*d), &ret, err, sizeof(err));
	free(prog);
	if (rc) {
		snprintf(why, len, "it runs under a seccomp filter ptleak cannot "
			 "run (%s)", err);
		return 0;
	}
	/* SECCOMP_RET_LOG: the kernel logs the call and runs it */
	if ((ret & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW ||
	    (ret & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_LOG)
		return 1;
	snprintf(why, len, "it runs under a seccomp filter that would %s "
		 "ptleak's %s", action_words(ret & SECCOMP_RET_ACTION_FULL), name);
	return 0;
}

static struct {
	pid_t tid;		/* 0: none */
	unsigned long long mode;
} known;

void seccomp_forget(void)
{
	known.tid = 0;
}

/* TID's seccomp mode: 0, or -1. */
static int mode_of(pid_t tid, unsigned long long *mode)
{
	static const char *const fields[] = { "Threads:", "Seccomp:" };
	unsigned long long v[2];

	if (known.tid == tid) {
		*mode = known.mode;
		return 0;
	}
	if (proc_status_fields(tid, fields, 2, 10, v) != 2)
		return -1;
	*mode = v[1];
	if (v[0] == 1) {
		known.tid = tid;
		known.mode = v[1];
	}
	return 0;
}

int seccomp_allows(pid_t tid, const char *name, long nr,
		   const uint64_t args[6], char *why, size_t len)
{
	unsigned long long mode;
	struct seccomp_data d;
	struct arch_regs r;
	long idx;
	int i, rc;

	if (mode_of(tid, &mode) || mode == 0)
		return 1;
	if (mode == 1) {
		snprintf(why, len, "it runs in seccomp strict mode, which would "
			 "kill it for ptleak's %s", name);
		return 0;
	}
	if (arch_get_regs(tid, &r)) {
		snprintf(why, len, "cannot read the registers of thread %d: %s",
			 (int)tid, strerror(errno));
		return 0;
	}
	memset(&d, 0, sizeof(d));
	d.nr = (int)nr;
	d.arch = arch_audit_arch;
	/* the kernel shows the address after the system call instruction */
	d.instruction_pointer = arch_pc(&r) + ARCH_SYSCALL_INSN_LEN;
	for (i = 0; i < 6; i++)
		d.args[i] = args[i];
	for (idx = 0;; idx++) {
		rc = run_filter(tid, idx, &d, name, why, len);
		if (rc == 2)
			return 1;
		if (!rc)
			return 0;
	}
}
