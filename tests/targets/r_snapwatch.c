/*
 * r_snapwatch: a program that watches what a live report's snapshot
 * (snapshot.c) does to it.
 *
 *   r_snapwatch N [MODE]
 *
 * Builds a heap of N blocks of 32-79 bytes (one in two kept in a table,
 * the others dropped: leaks), leaks one 100-byte block (@leak), then
 * runs a heartbeat thread that ticks every millisecond and keeps the
 * longest gap between two ticks, and a main loop that, every
 * millisecond, calls waitpid(-1, WNOHANG) (counting the children it
 * reaps) and answers stdin.  Every thread checks that it runs in the
 * process it started in: one that finds itself in another (a copy whose
 * code ran) creates the file named by $SNAPWATCH_MARK and exits.
 * SIGCHLD is counted.  MODE:
 *   noclone  a seccomp filter that fails every clone() that is not a
 *            thread's with EPERM (after the heap and the thread exist;
 *            on both threads)
 *   nproc    RLIMIT_NPROC set to 1 (run it as a user with no other
 *            process: no new process can be made)
 * Then "ready" on stdout; commands on stdin, one per line:
 *   stats    "sigchld S reaped R children C gap_us G": SIGCHLDs, children
 *            reaped, children now (/proc/self/task/-/children, zombies
 *            too), the longest heartbeat gap since the last "reset"
 *   reset    the longest gap forgotten: "reset"
 *   quit     exit 0
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t mypid;
static volatile sig_atomic_t sigchld;
static volatile uint64_t gap_ns;
static void **table;
static char outbuf[256];

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Ran in a copy of the process: say so in a file, and go. */
static void check_process(void)
{
	const char *mark;

	if (syscall(SYS_getpid) == mypid)
		return;
	mark = getenv("SNAPWATCH_MARK");
	if (mark)
		close(open(mark, O_WRONLY | O_CREAT, 0644));
	_exit(3);
}

static void *heartbeat(void *arg)
{
	uint64_t last = now();

	(void)arg;
	for (;;) {
		struct timespec d = { 0, 1000000 };
		uint64_t t;

		nanosleep(&d, NULL);
		check_process();
		t = now();
		if (t - last > gap_ns)
			gap_ns = t - last;
		last = t;
	}
	return NULL;
}

static void on_chld(int sig)
{
	(void)sig;
	sigchld++;
}

__attribute__((noinline)) static void leak(void)
{
	volatile char *p = malloc(100);	/* @leak */

	p[0] = 1;
}

/* The heap: N blocks, the even ones kept in the table.  Not inlined: no
 * pointer to a dropped block stays in main's frame. */
__attribute__((noinline)) static void build(long n)
{
	long i;

	table = malloc((size_t)(n / 2 + 1) * sizeof(*table));
	for (i = 0; i < n; i++) {
		void *p = malloc(32 + (size_t)(i % 48));

		if (i % 2 == 0)
			table[i / 2] = p;
	}
}

/* No stale copy of a dropped pointer below the stack pointer. */
__attribute__((noinline)) static void scrub(void)
{
	volatile char pad[2048];

	memset((char *)pad, 0, sizeof(pad));
}

/* Children of every thread (a child is its creating thread's). */
static int children(void)
{
	char path[300], buf[4096];
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc/self/task");

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		ssize_t len;
		int fd;
		char *s;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", d->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len < 0)
			continue;
		buf[len] = 0;
		for (s = strtok(buf, " \n"); s; s = strtok(NULL, " \n"))
			n++;
	}
	closedir(dir);
	return n;
}

/* Every clone() without CLONE_THREAD fails with EPERM. */
static void noclone(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	/* every thread's (TSYNC): ptleak checks the filter of the thread it
	 * would make the clone through, which may be the heartbeat's */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		    SECCOMP_FILTER_FLAG_TSYNC, &prog)) {
		perror("r_snapwatch: seccomp");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, reaped = 0;
	const char *mode = argc > 2 ? argv[2] : "";
	struct sigaction sa;
	pthread_t th;
	char line[64];
	size_t used = 0;

	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	mypid = getpid();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	build(n);
	scrub();
	leak();
	scrub();
	pthread_create(&th, NULL, heartbeat, NULL);
	if (!strcmp(mode, "noclone"))
		noclone();
	if (!strcmp(mode, "nproc")) {
		struct rlimit r = { 1, 1 };

		if (setrlimit(RLIMIT_NPROC, &r)) {
			perror("r_snapwatch: setrlimit");
			return 2;
		}
	}
	fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct pollfd pfd = { 0, POLLIN, 0 };
		ssize_t got;
		char *nl;

		check_process();
		while (waitpid(-1, NULL, WNOHANG) > 0)
			reaped++;
		if (poll(&pfd, 1, 1) <= 0)
			continue;
		got = read(0, line + used, sizeof(line) - 1 - used);
		if (got <= 0) {
			if (got == 0)
				return 0;
			continue;
		}
		used += (size_t)got;
		line[used] = 0;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			if (!strcmp(line, "stats"))
				printf("sigchld %d reaped %ld children %d gap_us %llu\n",
				       (int)sigchld, reaped, children(),
				       (unsigned long long)(gap_ns / 1000));
			else if (!strcmp(line, "reset"))
				gap_ns = 0, printf("reset\n");
			else if (!strcmp(line, "quit"))
				return 0;
			fflush(stdout);
			used -= (size_t)(nl + 1 - line);
			memmove(line, nl + 1, used + 1);
		}
	}
}
