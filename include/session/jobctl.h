/*
 * jobctl.h - job control of a launched program seen by ptleak's parent.
 *
 * A shell waits for ptleak, not for the program: when the program stops
 * (SIGTSTP, SIGTTIN, SIGTTOU, SIGSTOP), ptleak stops itself with the same
 * signal so that the shell sees the job stop as without ptleak.
 */
#ifndef PTLEAK_JOBCTL_H
#define PTLEAK_JOBCTL_H

#include <sys/types.h>

/* Is SIGCONT pending for process PID (sent, not delivered yet)? */
int jobctl_cont_pending(pid_t pid);

/*
 * Stop ptleak with SIG until it is continued.  Meanwhile a helper process
 * polls PID every 10 ms: continued alone (kill -CONT PID), the program
 * would wait for its stopped tracer, so the helper continues ptleak.
 */
void jobctl_stop_self(pid_t pid, int sig);

#endif
