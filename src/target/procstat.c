/* procstat.c - a process's figures from /proc (procstat.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/procstat.h"
#include "base/util.h"

/* The contents of PATH (at most LEN - 1 bytes), NUL-terminated: its
 * length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

int procstat_mem(pid_t pid, uint64_t *rss_kb, uint64_t *vm_kb)
{
	static long page_kb;
	unsigned long long size, resident;
	char path[64], buf[256];

	if (!page_kb)
		page_kb = sysconf(_SC_PAGESIZE) / 1024;
	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	if (read_small(path, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return -1;
	*vm_kb = size * (uint64_t)page_kb;
	*rss_kb = resident * (uint64_t)page_kb;
	return 0;
}

int procstat_resources(pid_t pid, pid_t via, double wall_s,
		       struct proc_resources *r)
{
	unsigned long long utime, stime, hwm;
	char path[64], buf[1024], *p;
	long tck = sysconf(_SC_CLK_TCK);

	memset(r, 0, sizeof(*r));
	r->wall_s = wall_s;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	/* "pid (comm) state ...": comm may hold spaces and ')' */
	if (read_small(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &utime, &stime) != 2 || tck <= 0)
		return -1;
	r->known = 1;
	r->user_s = (double)utime / (double)tck;
	r->sys_s = (double)stime / (double)tck;
	if (!proc_status_field(via, "VmHWM:", 10, &hwm))
		r->max_rss_kb = hwm;
	return 0;
}

int procstat_comm(pid_t pid, pid_t tid, char *name, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	n = read_small(path, name, len);
	if (n < 0)
		return -1;
	if (n > 0 && name[n - 1] == '\n')
		name[n - 1] = 0;
	return 0;
}

/* /proc/PID/cmdline as a NULL-terminated argv (the caller frees it and
 * its strings), or NULL. */
char procstat_state(pid_t pid, pid_t tid)
{
	char path[96], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* "pid (comm) state ...": comm may hold spaces and ')' */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

char **procstat_cmdline(pid_t pid)
{
	char path[64], buf[4096];
	size_t n = 0, i, k = 0;
	char **argv;
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	len = read_small(path, buf, sizeof(buf));
	if (len <= 0)
		return NULL;
	for (i = 0; i < (size_t)len; i++)
		n += !buf[i];
	if (buf[len - 1])
		n++;		/* cut short */
	argv = xcalloc(n + 1, sizeof(*argv));
	for (i = 0; i < (size_t)len && k < n; i += strlen(buf + i) + 1)
		argv[k++] = xstrdup(buf + i);
	return argv;
}
