/*
 * r_seccomp_memfd - a program under a seccomp filter that forbids
 * memfd_create (the recorder's shared ring) but not mmap.
 *
 *   r_seccomp_memfd errno   installs a filter failing memfd_create with
 *                           EPERM, then execs "r_seccomp_memfd run errno"
 *   r_seccomp_memfd kill    the same with a filter killing the process
 *                           for memfd_create ("run kill")
 *   r_seccomp_memfd getpid  a filter killing the process for getpid
 *                           ("run getpid"), which the recorder's
 *                           descriptor hooks would call; the run also
 *                           keeps one descriptor (open, @fdleak)
 *
 * The new image runs under the filter from its start.  It checks, in the
 * errno mode, that memfd_create fails with EPERM (exit 3 if not), maps a
 * page (exit 4 if it cannot), does 20 malloc(48) + free pairs, loses 2
 * blocks of 64 bytes (leak_one) and says "leaked 2" by write(2).
 * No libseccomp: a classic BPF program given to prctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void *volatile sink;

__attribute__((noinline)) static void leak_one(void)
{
	sink = malloc(64);	/* @leak */
}

static void install(unsigned action, unsigned nr)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("r_seccomp_memfd: seccomp");
		exit(2);
	}
}

static int run(const char *mode)
{
	void *page;
	int i;

	if (!strcmp(mode, "errno") &&
	    (syscall(SYS_memfd_create, "probe", 0) != -1 || errno != EPERM))
		return 3;
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 4;
	munmap(page, 4096);
	for (i = 0; i < 20; i++) {
		char *p = malloc(48);
		p[0] = 1;
		free(p);
	}
	leak_one();	/* @leak1 */
	leak_one();	/* @leak2 */
	if (!strcmp(mode, "getpid") && open("/dev/null", O_RDONLY) < 0)	/* @fdleak */
		return 6;
	return write(1, "leaked 2\n", 9) == 9 ? 0 : 5;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "run"))
		return run(argv[2]);	/* @run */
	if (argc < 2 || (strcmp(argv[1], "errno") && strcmp(argv[1], "kill") &&
			 strcmp(argv[1], "getpid"))) {
		fprintf(stderr, "usage: r_seccomp_memfd errno|kill|getpid\n");
		return 2;
	}
	if (!strcmp(argv[1], "getpid"))
		install(SECCOMP_RET_KILL_PROCESS, SYS_getpid);
	else
		install(strcmp(argv[1], "kill") ? SECCOMP_RET_ERRNO | EPERM :
			SECCOMP_RET_KILL_PROCESS, SYS_memfd_create);
	execl("/proc/self/exe", argv[0], "run", argv[1], (char *)NULL);
	perror("r_seccomp_memfd: exec");
	return 2;
}
