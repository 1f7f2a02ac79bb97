/*
 * procstat.h - a process's figures from /proc, read without stopping it:
 * its memory (statm), its resources (CPU times, peak RSS), a thread's
 * name.  One open and read each; nothing is kept.
 */
#ifndef PTLEAK_PROCSTAT_H
#define PTLEAK_PROCSTAT_H

#include <stdint.h>
#include <sys/types.h>

/* Resident and virtual size of process PID in KiB (/proc/PID/statm).
 * 0, or -1 (the process is gone). */
int procstat_mem(pid_t pid, uint64_t *rss_kb, uint64_t *vm_kb);

struct proc_resources {
	int known;		/* 0: nothing could be read */
	double user_s, sys_s;	/* CPU time of every thread, exited ones too */
	double wall_s;		/* since tracing started */
	uint64_t max_rss_kb;	/* VmHWM, 0 if unknown */
};

/*
 * Resources of process PID: CPU times from /proc/PID/stat (the whole
 * thread group, exited threads included), the peak RSS (VmHWM) from
 * /proc/VIA/status (VIA a live thread of it: a zombie leader has no
 * memory to describe).  WALL_S is given.  0, or -1 (R->known 0).
 */
int procstat_resources(pid_t pid, pid_t via, double wall_s,
		       struct proc_resources *r);

/* The name of thread TID of PID (/proc/PID/task/TID/comm) into NAME
 * (LEN bytes, newline dropped).  0, or -1 (gone). */
int procstat_comm(pid_t pid, pid_t tid, char *name, size_t len);

/* The state letter of thread TID of PID ('R', 'S', 't', 'Z', ...) from
 * /proc/PID/task/TID/stat, 0 if it is gone. */
char procstat_state(pid_t pid, pid_t tid);

/* /proc/PID/cmdline as a NULL-terminated argv (the caller frees it and
 * its strings), or NULL.  At most 4 KiB of it: a longer one is cut. */
char **procstat_cmdline(pid_t pid);

#endif
