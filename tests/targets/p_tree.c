/*
 * p_tree - process trees for -f.  Every process leaks a known amount
 * (definitely lost: the only pointer is overwritten), so that each one's
 * report can be checked exactly.
 *
 *   p_tree tree      leaks 100, fork()s a child (leaks 200 and an fd,
 *                    exits 0), vfork()s a child that execs "p_tree leaf
 *                    300 3" (leaks 300, exits 3), posix_spawn()s "p_tree
 *                    leaf 400 0", then system("exec p_tree leaf 500 0")
 *   p_tree leaf N S  leaks N bytes, exits S
 *   p_tree orphan    forks a child that outlives it (leaks 600 after its
 *                    parent is gone), leaks 100 itself
 *   p_tree killed    forks a child that leaks 700 and kills itself with
 *                    SIGSEGV's default action (raise)
 *   p_tree daemon    double fork + setsid: the grandchild leaks 800 and
 *                    writes "daemon done" into the file named by $P_TREE_OUT
 *   p_tree bomb N    N processes in all, each parent forks two children
 *                    (a binary tree), each process leaks 10 x its depth+1
 *   p_tree busyfork  a thread allocates without pause while the main
 *                    thread forks 20 children, each leaking 64 and
 *                    exiting; the parent leaks nothing
 *   p_tree execself  leaks 100, then execs "p_tree leaf 900 0"
 *   p_tree sleepers  forks 3 children that print their pid, sleep 0.5 s
 *                    (allocating meanwhile), leak 64 and exit 0; says
 *                    "started" once all are, then "children: N failed"
 *   p_tree fdkid     says "ready", waits for SIGUSR2, then forks a child
 *                    that opens, closes, allocates and frees once, says
 *                    "child PID running", waits for SIGUSR1, does it 200
 *                    times more and exits 0; says "child status S"
 *   p_tree wide N    forks N children that all live at once (each waits
 *                    until the parent closes a pipe), each leaking 32
 *                    (calls the breakpoints see after the wait); says
 *                    "wide: F failed"
 *   p_tree attachfork  says "ready", waits for SIGUSR2, then forks a child
 *                    that leaks 250; says "forked" and exits 0
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char self[4096];

/* "exec SELF leaf 500 0" for sh into CMD (LEN bytes): SELF in single
 * quotes, each ' in it as '\'' (the checkout's path may hold any). */
static void exec_self_cmd(char *cmd, size_t len)
{
	size_t n = (size_t)snprintf(cmd, len, "exec '");
	const char *c;

	for (c = self; *c && n + 8 < len; c++) {
		if (*c == '\'')
			n += (size_t)snprintf(cmd + n, len - n, "'\\''");
		else
			cmd[n++] = *c;
	}
	snprintf(cmd + n, len - n, "' leaf 500 0");
}

/* N bytes whose only pointer is gone once this returns. */
static __attribute__((noinline)) void leak(size_t n)
{
	char *volatile p = malloc(n);	/* @leak */

	memset(p, 'x', n);
	p = NULL;
}

/* The stack below main cleared: no stale copy of a lost pointer. */
static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[4096];

	memset((char *)buf, 0, sizeof(buf));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int wait_status(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static int leaf(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	leak((size_t)atol(argv[2]));
	scrub();
	return atoi(argv[3]);
}

static int tree(void)
{
	char *spawn_argv[] = { "p_tree", "leaf", "400", "0", NULL };
	char cmd[4 * sizeof(self) + 32];
	pid_t pid;
	int st;

	leak(100);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		leak(200);
		open("/dev/null", O_RDONLY);	/* @child_fd */
		scrub();
		_exit(0);
	}
	st = wait_status(pid);
	printf("fork: %d\n", st);
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		execl(self, "p_tree", "leaf", "300", "3", (char *)NULL);
		_exit(127);
	}
	st = wait_status(pid);
	printf("vfork: %d\n", st);
	fflush(stdout);
	if (posix_spawn(&pid, self, NULL, NULL, spawn_argv, environ))
		pid = -1;
	st = wait_status(pid);
	printf("posix_spawn: %d\n", st);
	fflush(stdout);
	exec_self_cmd(cmd, sizeof(cmd));
	st = system(cmd);
	printf("system: %d\n", st);
	scrub();
	return 0;
}

static int orphan(void)
{
	int pipefd[2];
	char c;

	if (pipe(pipefd))
		return 2;
	if (fork() == 0) {
		close(pipefd[1]);
		/* the parent's end closes when it exits */
		while (read(pipefd[0], &c, 1) > 0)
			;
		close(pipefd[0]);
		usleep(100000);
		leak(600);
		scrub();
		_exit(0);
	}
	close(pipefd[0]);
	leak(100);
	scrub();
	return 0;		/* pipefd[1] closes: the child goes on */
}

static int killed(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		leak(700);
		scrub();
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		_exit(1);
	}
	st = wait_status(pid);
	printf("child: %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	return 0;
}

static int daemon_mode(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		setsid();
		if (fork() == 0) {
			const char *out = getenv("P_TREE_OUT");
			FILE *f;

			usleep(100000);
			leak(800);
			scrub();
			f = out ? fopen(out, "w") : NULL;
			if (f) {
				fputs("daemon done\n", f);
				fclose(f);
			}
			_exit(0);
		}
		_exit(0);
	}
	return wait_status(pid) == 0 ? 0 : 1;
}

/* One process of the bomb at DEPTH: N processes in its subtree, itself
 * included. */
static int bomb(int depth, int n)
{
	int left = (n - 1) / 2, right = n - 1 - left, bad = 0;
	pid_t a = -1, b = -1;

	leak(10 * (size_t)(depth + 1));
	if (left > 0 && (a = fork()) == 0)
		_exit(bomb(depth + 1, left));
	if (right > 0 && (b = fork()) == 0)
		_exit(bomb(depth + 1, right));
	if (left > 0)
		bad |= wait_status(a) != 0;
	if (right > 0)
		bad |= wait_status(b) != 0;
	scrub();
	return bad;
}

static volatile int stop_busy;

static void *busy(void *arg)
{
	(void)arg;
	while (!stop_busy) {
		void *p = malloc(100);

		free(p);
	}
	return NULL;
}

static int busyfork(void)
{
	pthread_t th;
	int i, bad = 0;

	pthread_create(&th, NULL, busy, NULL);
	for (i = 0; i < 20; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			leak(64);
			scrub();
			_exit(0);
		}
		bad |= wait_status(pid) != 0;
	}
	stop_busy = 1;
	pthread_join(th, NULL);
	printf("busyfork: %d\n", bad);
	return bad;
}

static int sleepers(void)
{
	pid_t pids[3];
	int i, bad = 0, ready[2];
	char c;

	if (pipe(ready))
		return 2;
	for (i = 0; i < 3; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			uint64_t t0 = now_ms();

			printf("child %d\n", (int)getpid());
			fflush(stdout);
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			while (now_ms() - t0 < 500) {
				free(malloc(32));
				usleep(1000);
			}
			leak(64);
			_exit(0);
		}
	}
	/* every child has said its pid */
	for (i = 0; i < 3; i++)
		if (read(ready[0], &c, 1) != 1)
			return 3;
	printf("started\n");
	fflush(stdout);
	for (i = 0; i < 3; i++)
		bad += wait_status(pids[i]) != 0;
	printf("children: %d failed\n", bad);
	return 0;
}

static int wide(int n)
{
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	int gate[2], i, bad = 0;
	char c;

	if (!pids || pipe(gate))
		return 2;
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			close(gate[1]);
			while (read(gate[0], &c, 1) > 0)
				;
			leak(32);
			free(malloc(10));
			scrub();
			_exit(0);
		}
	}
	close(gate[1]);
	for (i = 0; i < n; i++)
		bad += wait_status(pids[i]) != 0;
	printf("wide: %d failed\n", bad);
	free(pids);
	return bad != 0;
}

static void wait_usr2(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
}

/* open, close, malloc, free: calls the probes see */
static int fd_round(void)
{
	int fd = open("/dev/null", O_RDONLY);
	char *volatile p = malloc(100);

	if (fd < 0 || !p)
		return -1;
	close(fd);
	free(p);
	return 0;
}

static int fdkid(void)
{
	pid_t pid;

	wait_usr2();
	pid = fork();
	if (pid == 0) {
		sigset_t set;
		int i, sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		if (fd_round())
			_exit(1);
		printf("child %d running\n", (int)getpid());
		fflush(stdout);
		sigwait(&set, &sig);
		for (i = 0; i < 200; i++)
			if (fd_round())
				_exit(1);
		_exit(0);
	}
	printf("child status %d\n", wait_status(pid));
	return 0;
}

static int attachfork(void)
{
	sigset_t set;
	pid_t pid;
	int sig, st;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
	pid = fork();
	if (pid == 0) {
		leak(250);
		scrub();
		_exit(0);
	}
	st = wait_status(pid);
	printf("forked %d\n", st);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0 || argc < 2)
		return 2;
	self[n] = '\0';
	if (!strcmp(argv[1], "tree"))
		return tree();
	if (!strcmp(argv[1], "leaf"))
		return leaf(argc, argv);
	if (!strcmp(argv[1], "orphan"))
		return orphan();
	if (!strcmp(argv[1], "killed"))
		return killed();
	if (!strcmp(argv[1], "daemon"))
		return daemon_mode();
	if (!strcmp(argv[1], "bomb") && argc > 2)
		return bomb(0, atoi(argv[2]));
	if (!strcmp(argv[1], "busyfork"))
		return busyfork();
	if (!strcmp(argv[1], "sleepers"))
		return sleepers();
	if (!strcmp(argv[1], "wide") && argc > 2)
		return wide(atoi(argv[2]));
	if (!strcmp(argv[1], "fdkid"))
		return fdkid();
	if (!strcmp(argv[1], "attachfork"))
		return attachfork();
	if (!strcmp(argv[1], "execself")) {
		leak(100);
		scrub();
		execl(self, "p_tree", "leaf", "900", "0", (char *)NULL);
		return 3;
	}
	return 2;
}
