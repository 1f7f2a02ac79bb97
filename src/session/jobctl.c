/* jobctl.c - ptleak stops with the program it launched (see jobctl.h). */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/jobctl.h"
#include "base/util.h"

int jobctl_cont_pending(pid_t pid)
{
	unsigned long long shd = 0, own = 0;

	proc_status_field(pid, "ShdPnd:", 16, &shd);
	proc_status_field(pid, "SigPnd:", 16, &own);
	return ((shd | own) >> (SIGCONT - 1)) & 1;
}

/* The helper: ends with ptleak, or continues it. */
static void cont_watch(pid_t self, pid_t pid)
{
	for (;;) {
		usleep(10000);
		if (getppid() != self || kill(pid, 0))
			_exit(0);
		if (jobctl_cont_pending(pid)) {
			kill(self, SIGCONT);
			_exit(0);
		}
	}
}

void jobctl_stop_self(pid_t pid, int sig)
{
	pid_t self = getpid(), w = fork();

	if (w == 0)
		cont_watch(self, pid);
	kill(self, sig);	/* stops here until SIGCONT */
	if (w > 0) {
		kill(w, SIGKILL);
		waitpid(w, NULL, 0);
	}
}
