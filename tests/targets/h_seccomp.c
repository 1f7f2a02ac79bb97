/*
 * h_seccomp - a program under a seccomp filter that kills it for an mmap.
 *
 *   h_seccomp wait   installs a filter killing the process on any mmap,
 *                    says "filtered", then answers stdin: "ping" ->
 *                    "pong", "quit" -> "bye" and exit 0
 *   h_seccomp leak   installs a filter killing the process on an mmap of
 *                    an anonymous executable page (what a JIT would do,
 *                    and ptleak's scratch page), then loses 2 blocks of 64
 *                    bytes (leak_one) and says "leaked 2"
 *   h_seccomp exec   installs that filter, then execs "h_seccomp leak"
 *                    (the new image runs under it from its start)
 *   h_seccomp logexec  installs a filter that only logs any mmap
 *                    (SECCOMP_RET_LOG: the call runs), then execs
 *                    "h_seccomp logleak", which loses 2 blocks of 64 bytes
 *                    and says "leaked 2"
 * No libseccomp: a classic BPF program given to prctl.
 */
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

#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))

void *volatile sink;

__attribute__((noinline)) static void leak_one(void)
{
	sink = malloc(64);	/* @leak */
}

static void install(int any_mmap, unsigned action)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_IMM, any_mmap),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 4, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(3)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("h_seccomp: seccomp");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "wait";
	char cmd[64];

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(mode, "logexec")) {
		install(1, SECCOMP_RET_LOG);
		execl("/proc/self/exe", argv[0], "logleak", (char *)NULL);
		perror("h_seccomp: exec");
		return 2;
	}
	if (!strcmp(mode, "logleak")) {
		leak_one();
		leak_one();
		sink = NULL;
		printf("leaked 2\n");
		return 0;
	}
	if (!strcmp(mode, "exec")) {
		install(0, SECCOMP_RET_KILL_PROCESS);
		execl("/proc/self/exe", argv[0], "leak", (char *)NULL);
		perror("h_seccomp: exec");
		return 2;
	}
	if (!strcmp(mode, "leak")) {
		install(0, SECCOMP_RET_KILL_PROCESS);
		leak_one();
		leak_one();
		sink = NULL;
		printf("leaked 2\n");
		return 0;
	}
	install(1, SECCOMP_RET_KILL_PROCESS);
	printf("filtered\n");
	while (fgets(cmd, sizeof(cmd), stdin)) {
		if (!strcmp(cmd, "ping\n"))
			printf("pong\n");
		else if (!strcmp(cmd, "quit\n"))
			break;
	}
	printf("bye\n");
	return 0;
}
