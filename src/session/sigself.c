/*
 * sigself.c - signals to ptleak itself: SIGUSR1 asks for a report, the
 * signals that would end ptleak ask for a detach (and --duration's alarm);
 * the handlers set a flag the main loop (tracer.c) reads, and wake it.
 */
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/time.h>

#include "session.h"
#include "base/util.h"

volatile sig_atomic_t report_requested, detach_requested;
/* while the event loop waits: a thread to interrupt so that waitpid
 * returns and the request is seen (0: none) */
volatile sig_atomic_t wake_tid;

static void wake_loop(void)
{
	pid_t tid = (pid_t)wake_tid;

	if (tid > 0)
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
}

static void on_report_signal(int sig)
{
	report_requested = 1;
	wake_loop();
}

static void on_detach_signal(int sig)
{
	detach_requested = sig;
	wake_loop();
}

static void catch_signal(int sig, void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigfillset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/*
 * SIGUSR1 makes a report.  SIGTERM and SIGHUP (and SIGINT and SIGQUIT when
 * attached, the end of --duration, and any other signal that would end
 * ptleak) make a final report and detach.  Launched,
 * the terminal's SIGINT and SIGQUIT are for the target: ptleak reports
 * when it exits.  No SA_RESTART: a signal interrupts waitpid, and if it
 * comes just before, the handler interrupts a thread so waitpid returns.
 */
void sigself_catch(const struct session *S)
{
	/* every other signal whose default action ends ptleak: dying would
	 * leave breakpoints in the target, detaching does not */
	static const int ending[] = {
		SIGTERM, SIGHUP, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
		SIGXFSZ, SIGIO, SIGPWR,
	};
	unsigned i;

	catch_signal(SIGUSR1, on_report_signal);
	for (i = 0; i < ARRAY_SIZE(ending); i++)
		catch_signal(ending[i], on_detach_signal);
	if (S->attached) {
		catch_signal(SIGINT, on_detach_signal);
		catch_signal(SIGQUIT, on_detach_signal);
	} else {
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
	}
}

/* --duration's alarm, from now: when tracing has begun (an attach to a
 * busy program on a loaded machine can take longer than the duration). */
void sigself_duration(const struct session *S)
{
	if (S->o->duration > 0) {
		struct itimerval it;
		double whole = (double)(long)S->o->duration;

		memset(&it, 0, sizeof(it));
		it.it_value.tv_sec = (long)whole;
		it.it_value.tv_usec = (long)((S->o->duration - whole) * 1e6);
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		catch_signal(SIGALRM, on_detach_signal);
		setitimer(ITIMER_REAL, &it, NULL);
	}
}
