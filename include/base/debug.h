/*
 * debug.h - PTLEAK_DEBUG: ptleak's own tracing on stderr, for its
 * developers and tests.  A comma- or space-separated list of words:
 *
 *   events         every heap event
 *   stops          every wait status, signals of faults with their pc
 *   stats          timings and counts ("ptleak-debug: time T ms: WHAT")
 *   times          the phase times alone (stats prints them too): no
 *                  counts, whose gathering takes time of its own
 *   die-on-report  a fatal error at the first report (tests that ptleak
 *                  detaches before it dies)
 *   snapshot-check each live report made from a snapshot is compared
 *                  with the same report made with the threads held at
 *                  the same instant (records, classes, totals); a
 *                  difference: "ptleak: debug: snapshot report differs
 *                  from the held one: WHAT", ptleak's exit status not 0
 *   snapshot-perturb  (tests of that check) the snapshot's report turns
 *                  its first block's class over: reachable <-> lost
 *   no-snapshot    (snapshot.c) every live report made held
 *
 * The flags are read once (debug_init) and are plain ints: tested on hot
 * paths without a call.
 */
#ifndef PTLEAK_DEBUG_H
#define PTLEAK_DEBUG_H

extern int debug_events, debug_stops, debug_stats, debug_times;
extern int debug_die_on_report;
extern int debug_snapshot_check, debug_snapshot_perturb;

/* The flags from $PTLEAK_DEBUG (all 0 when it is unset). */
void debug_init(void);

/* With debug_times: "ptleak-debug: time T ms: WHAT", T since the first
 * call. */
void debug_time(const char *what);

#endif
