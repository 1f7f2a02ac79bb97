/*
 * h_exec_thread: a thread other than main calls exec.  The new image runs
 * with the leader's pid; a thread of it comes and goes, then it leaks
 * 4242 bytes: the report is made at the new image's exit and has them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char **args;
static void *volatile kept;

static void *execer(void *arg)
{
	execl("/proc/self/exe", args[0], "again", (char *)NULL);
	perror("exec");
	return arg;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	args = argv;
	if (argc > 1) {
		char *p;

		pthread_create(&t, NULL, nothing, NULL);
		pthread_join(t, NULL);
		p = malloc(4242); /* @new_image_leak */
		printf("new image %d\n", p != NULL); /* @printf */
		return 0;
	}
	kept = malloc(1111);
	pthread_create(&t, NULL, execer, NULL);
	for (;;)
		pause();
}
