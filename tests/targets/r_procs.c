/*
 * r_procs - fork, vfork, posix_spawn, dlopen/dlclose and exec while
 * allocating.
 *
 *   r_procs [report] [exec]
 *
 * main keeps malloc(111); a forked child does 100 malloc(20) + free pairs
 * and loses malloc(999) before _exit(0); a vfork child execs /bin/true;
 * posix_spawn runs /bin/true; r_dlib.so (beside the executable) is
 * dlopen'd, its r_dlib_work() called (its 77-byte block kept in a global)
 * and dlclose'd.  Then with "report" the program sends itself SIGUSR1
 * (ptleak --report-on-signal makes a report of this image then); with
 * "exec" it execs itself as "r_procs image2", which keeps malloc(4242),
 * does 10 malloc(30) + free pairs and exits 0.  Output by write(2) only
 * (no stdio buffer), "r_procs: done" or "r_procs: image2 done".
 *
 * The children's calls are not the parent's.  The parent's own, from the
 * source: malloc(111), the library's 64 (freed by its destructor), its 50
 * pairs of 10 and its 77; dlopen and dlclose allocate and free inside the
 * dynamic linker (see the case for the numbers).
 */
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void *volatile kept_main, *volatile kept_lib, *volatile kept_image2;

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(3);
}

static int wait_ok(pid_t pid)
{
	int st;

	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st);
}

static void child_work(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		char *p = malloc(20);
		p[0] = 1;
		free(p);
	}
	kept_main = malloc(999);
	_exit(0);
}

static int use_library(const char *self)
{
	char path[PATH_MAX];
	void *(*work)(void);
	char *slash;
	void *h;

	strncpy(path, self, sizeof(path) - 16);
	path[sizeof(path) - 16] = 0;
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "r_dlib.so");
	h = dlopen(path, RTLD_NOW);	/* @dlopen */
	if (!h)
		return -1;
	work = (void *(*)(void))dlsym(h, "r_dlib_work");
	if (!work)
		return -1;
	kept_lib = work();	/* @call_work */
	return dlclose(h);	/* @dlclose */
}

static int image2(void)
{
	int i;

	kept_image2 = malloc(4242);	/* @image2_keep */
	for (i = 0; i < 10; i++) {
		char *p = malloc(30);
		p[0] = 1;
		free(p);
	}
	say("r_procs: image2 done\n");
	return 0;
}

int main(int argc, char **argv)
{
	char *true_argv[] = { "true", NULL };
	char self[PATH_MAX];
	ssize_t n;
	pid_t pid;
	int i, report = 0, exec = 0;

	if (argc > 1 && !strcmp(argv[1], "image2"))
		return image2();	/* @image2 */
	for (i = 1; i < argc; i++) {
		report |= !strcmp(argv[i], "report");
		exec |= !strcmp(argv[i], "exec");
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return 2;
	self[n] = 0;
	kept_main = malloc(111);	/* @main_keep */
	pid = fork();
	if (pid == 0)
		child_work();
	if (!wait_ok(pid))
		return 4;
	pid = vfork();
	if (pid == 0) {
		execv("/bin/true", true_argv);
		_exit(127);
	}
	if (!wait_ok(pid))
		return 5;
	if (posix_spawn(&pid, "/bin/true", NULL, NULL, true_argv, environ) || !wait_ok(pid))
		return 6;
	if (use_library(self))	/* @call_use_library */
		return 7;
	if (report)
		raise(SIGUSR1);
	if (exec) {
		execl(self, "r_procs", "image2", (char *)NULL);
		return 8;
	}
	say("r_procs: done\n");
	return 0;
}
