/*
 * tracer.h - a tracing session: launch a program under ptrace, run the
 * event loop until it exits, report.
 *
 * See docs/design.md for the event loop and the per-thread state machine.
 */
#ifndef PTLEAK_TRACER_H
#define PTLEAK_TRACER_H

#include "session/options.h"

/*
 * Launch O->argv under ptrace and trace it until it exits.  Returns the
 * exit status ptleak should exit with (the target's own, 128+N if it died
 * of signal N), or -1 after printing one "ptleak: ..." line when ptleak
 * itself failed (cannot execute, cannot trace, ...).
 */
int tracer_run(const struct options *o);

#endif
