/*
 * waitq.c - stops and deaths collected by waitpid but not handled yet
 * (session.h).  waitpid(-1) returns the first waiting tracee of the kernel's list, newest first: a
 * thread late in it waits as long as any earlier one has a stop to
 * report, and under the breakpoint engine busy threads always have one
 * (a thread calling malloc every 2 ms was not seen for 0.3 s).  So
 * everything waiting is collected at once and handled in that order
 * before waitpid is asked again: every thread that stopped is handled
 * once per round.  A collected stop stays valid: its thread waits for
 * ptleak (or is gone, and its death is still to be collected).
 */
#include <sys/types.h>

#include "target/seccomp.h"
#include "session.h"

#define QUEUE_MAX 256
static struct {
	pid_t tid;
	int status;
} queue[QUEUE_MAX];
static unsigned qhead, qlen;

void waitq_push(pid_t tid, int status)
{
	seccomp_forget();
	queue[(qhead + qlen) % QUEUE_MAX].tid = tid;
	queue[(qhead + qlen) % QUEUE_MAX].status = status;
	qlen++;
}

int waitq_take(pid_t tid, int *status)
{
	unsigned i, j;

	for (i = 0; i < qlen; i++) {
		if (queue[(qhead + i) % QUEUE_MAX].tid != tid)
			continue;
		*status = queue[(qhead + i) % QUEUE_MAX].status;
		for (j = i; j + 1 < qlen; j++)
			queue[(qhead + j) % QUEUE_MAX] = queue[(qhead + j + 1) % QUEUE_MAX];
		qlen--;
		return 1;
	}
	return 0;
}

void waitq_forget(pid_t tid)
{
	int status;

	while (waitq_take(tid, &status))
		;
}

int waitq_pop(pid_t *tid, int *status)
{
	if (!qlen)
		return 0;
	*tid = queue[qhead].tid;
	*status = queue[qhead].status;
	qhead = (qhead + 1) % QUEUE_MAX;
	qlen--;
	return 1;
}

int waitq_full(void)
{
	return qlen >= QUEUE_MAX;
}

int waitq_empty(void)
{
	return !qlen;
}
