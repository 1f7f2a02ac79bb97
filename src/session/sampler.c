/*
 * sampler.c - memory over time: every --interval the loop takes a sample
 * of the process without stopping it (the heap figures from ptleak's
 * tables, RSS and VM from /proc/PID/statm, fds from the descriptor table,
 * threads from the task table), keeps it in the timeline (timeline.h),
 * writes it to --timeline's CSV and shows --live's line.  A sample is
 * also taken at every report: the final report's is the CSV's last row.
 *
 * The timer's signal (SIGRTMIN+2) is blocked but while waitpid waits
 * (sampler_waiting), like the recorder's drain timer: it interrupts the
 * wait, never a write or a read of ptleak's.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breakpoints/fdprobe.h"
#include "output/live.h"
#include "output/outfile.h"
#include "target/procstat.h"
#include "session.h"
#include "output/timeline.h"
#include "tables/growth.h"
#include "base/util.h"

#define SAMPLE_SIG (SIGRTMIN + 2)
#define LIVE_MIN_MS 250

volatile sig_atomic_t sample_due;
static struct sampler *the_sampler;	/* for sampler_waiting */

struct sampler {
	struct timeline *tl;
	FILE *csv;		/* --timeline, NULL: none (or not yet) */
	char *csv_path;		/* its name, %p and %q{VAR} expanded */
	int csv_late;		/* named after a launched pid: opened at start */
	int csv_failed;		/* said once */
	uint64_t calls;		/* allocator calls at the last sample */
	int live_on;
	struct live live;
	uint64_t live_every_ns, live_next_ns;
	size_t named;		/* threads of the heap table named so far */
	timer_t timer;
	int timer_on;
	sigset_t set;
};

static void on_sample_timer(int sig)
{
	(void)sig;
	sample_due = 1;
}

static int open_csv(struct sampler *m)
{
	m->csv = fopen(m->csv_path, "we");
	if (!m->csv)
		return error("cannot write %s: %s", m->csv_path, strerror(errno));
	fputs("ms,heap_bytes,heap_blocks,rss_kb,vm_kb,fds,threads\n", m->csv);
	fflush(m->csv);
	return 0;
}

int sampler_open(struct session *S)
{
	struct sampler *m = xcalloc(1, sizeof(*m));
	const char *path = S->o->timeline;

	S->smp = m;
	the_sampler = m;
	m->tl = timeline_new();
	if (path) {
		/* a %p of a program not launched yet: checked as pid 0 */
		if (!(m->csv_path = outfile_expand(path, S->o->pid)) ||
		    outfile_check_name(m->csv_path))
			return -1;
		m->csv_late = outfile_has_pid(path) && !S->o->pid;
		if (!m->csv_late && open_csv(m))
			return -1;
	}
	if (S->o->live) {
		m->live_on = 1;
		live_init(&m->live, stderr);
		m->live_every_ns = (uint64_t)(S->o->interval_ms > LIVE_MIN_MS ?
					      S->o->interval_ms : LIVE_MIN_MS) * 1000000ull;
	}
	return 0;
}

void sampler_start(struct session *S)
{
	struct sampler *m = S->smp;
	struct sigevent ev;
	struct itimerspec its;
	struct sigaction sa;
	uint64_t ns = (uint64_t)S->o->interval_ms * 1000000ull;

	if (!m || m->timer_on)
		return;
	if (m->csv_late && S->first) {
		/* --timeline's name has the launched program's pid */
		free(m->csv_path);
		m->csv_path = outfile_expand(S->o->timeline, S->first->pid);
		m->csv_late = 0;
		if (!m->csv_path || open_csv(m))
			warning("no timeline written");
	}
	sigemptyset(&m->set);
	sigaddset(&m->set, SAMPLE_SIG);
	sigprocmask(SIG_BLOCK, &m->set, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sample_timer;	/* no SA_RESTART: waitpid returns */
	sigfillset(&sa.sa_mask);
	sigaction(SAMPLE_SIG, &sa, NULL);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SAMPLE_SIG;
	if (timer_create(CLOCK_MONOTONIC, &ev, &m->timer)) {
		warning("no samples over time: timer_create: %s", strerror(errno));
		return;
	}
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = its.it_interval.tv_sec = (time_t)(ns / 1000000000ull);
	its.it_value.tv_nsec = its.it_interval.tv_nsec = (long)(ns % 1000000000ull);
	timer_settime(m->timer, 0, &its, NULL);
	m->timer_on = 1;
	m->live_next_ns = now_ns() + m->live_every_ns;
}

void sampler_waiting(int waiting)
{
	if (the_sampler && the_sampler->timer_on)
		sigprocmask(waiting ? SIG_UNBLOCK : SIG_BLOCK, &the_sampler->set, NULL);
}

/* Names for the threads of P's heap table that have none yet (ALL: for
 * every live one, as it calls itself now).  Where the last pass ended is
 * kept for the first process, the sampled one. */
static void name_threads(struct session *S, struct proc *P, int all)
{
	struct sampler *m = S->smp;
	const struct heap_thread *t;
	size_t n, i, from = 0;
	char name[16];

	n = heap_threads(P->heap, &t);
	if (P == S->first) {
		if (n < m->named)
			m->named = 0;	/* an exec reset the table */
		from = m->named;
	}
	for (i = all ? 0 : from; i < n; i++) {
		if (t[i].tid <= 0 || (!all && t[i].name[0]) ||
		    (all && !task_find(S, t[i].tid)))
			continue;
		if (!procstat_comm(P->pid, t[i].tid, name, sizeof(name)))
			heap_thread_name(P->heap, t[i].tid, name);
	}
	if (P == S->first)
		m->named = n;
}

void sampler_thread_exit(struct session *S, pid_t tid)
{
	char name[16];

	if (S->smp && !procstat_comm(S->proc->pid, tid, name, sizeof(name)))
		heap_thread_name(S->proc->heap, tid, name);
}

/* The first process (the launched or attached one: the timeline is its)
 * now, as sample *SM. */
static void take(struct session *S, struct tl_sample *sm)
{
	struct proc *P = S->first;
	const struct heap_stats *st = heap_stats(P->heap);
	uint64_t open, inherited;

	memset(sm, 0, sizeof(*sm));
	sm->ms = (now_ns() - S->start_ns) / 1000000ull;
	if (P->no_heap) {
		sm->heap_bytes = sm->heap_blocks = TL_UNKNOWN;
	} else {
		sm->heap_bytes = st->in_use_bytes;
		sm->heap_blocks = st->in_use_blocks;
		sm->ntop = heap_stack_top(P->heap, TL_TOP, sm->top_stack,
					  sm->top_bytes);
		sm->nhot = growth_hot(heap_growth(P->heap), sm->hot_stack,
				      sm->hot_bytes, TL_HOT);
		if (S->start_ns + GROWTH_MIN_WINDOW_NS <= now_ns()) {
			struct growth_entry e;

			if (growth_fastest(heap_growth(P->heap), now_ns(), &e)) {
				sm->grow_stack = e.stack;
				sm->grow_bps = e.bytes_per_s;
				sm->grow_bytes = e.in_use_bytes;
			}
		}
	}
	if (procstat_mem(P->mem_pid ? P->mem_pid : P->pid, &sm->rss_kb, &sm->vm_kb))
		sm->rss_kb = sm->vm_kb = TL_UNKNOWN;
	if (P->fdp) {
		fds_count(fdprobe_table(P->fdp), &open, &inherited);
		sm->fds = open;
	} else {
		sm->fds = TL_UNKNOWN;
	}
	sm->threads = P->nalive;
}

static void csv_field(FILE *f, uint64_t v, char sep)
{
	if (v != TL_UNKNOWN)
		fprintf(f, "%llu", (unsigned long long)v);
	putc(sep, f);
}

static void csv_row(struct sampler *m, const struct tl_sample *sm)
{
	if (!m->csv || m->csv_failed)
		return;
	csv_field(m->csv, sm->ms, ',');
	csv_field(m->csv, sm->heap_bytes, ',');
	csv_field(m->csv, sm->heap_blocks, ',');
	csv_field(m->csv, sm->rss_kb, ',');
	csv_field(m->csv, sm->vm_kb, ',');
	csv_field(m->csv, sm->fds, ',');
	csv_field(m->csv, sm->threads, '\n');
	/* read (and plotted) while the program runs */
	if (fflush(m->csv) || ferror(m->csv)) {
		m->csv_failed = 1;
		warning("cannot write %s: %s", m->csv_path,
			strerror(errno ? errno : EIO));
	}
}

/* A sample into the timeline and the CSV; LAST: the final report's. */
static void sample(struct session *S, int last, struct tl_sample *sm)
{
	struct sampler *m = S->smp;
	struct proc *P = S->first;

	take(S, sm);
	/* the report at exit is made at the last thread's exit event (or
	 * exit_group's): that thread is no longer in nalive, but alive */
	if (last && P->reported && P->exit_known)
		sm->threads++;
	timeline_add(m->tl, sm, last);
	if (!P->no_heap && timeline_above_peak(m->tl, sm->heap_bytes)) {
		uint32_t ids[TL_PEAK_TOP];
		uint64_t bytes[TL_PEAK_TOP];
		unsigned n = heap_stack_top(P->heap, TL_PEAK_TOP, ids, bytes);

		timeline_set_peak(m->tl, sm->ms, sm->heap_bytes, ids, bytes, n);
	}
	csv_row(m, sm);
	name_threads(S, P, 0);
}

static uint64_t calls_of(const struct heap *h)
{
	const struct heap_stats *st = heap_stats(h);

	return st->allocs + st->frees + st->unknown_frees;
}

void sampler_tick(struct session *S)
{
	struct sampler *m = S->smp;
	struct tl_sample sm;
	uint64_t now;

	sample_due = 0;
	if (!m || !S->start_ns || !S->first || S->first->reported)
		return;
	/* the census of an attach still being read (census_attach.c): the
	 * table holds only the blocks made since, not the heap */
	if (S->first->cjob)
		return;
	sample(S, 0, &sm);
	now = now_ns();
	if (m->live_on && now >= m->live_next_ns) {
		live_show(&m->live, &sm, calls_of(S->first->heap));
		m->live_next_ns += m->live_every_ns;
		if (m->live_next_ns < now)
			m->live_next_ns = now + m->live_every_ns;
	}
}

void sampler_report(struct session *S, int final)
{
	struct sampler *m = S->smp;
	struct tl_sample sm;

	if (!m)
		return;
	if (m->live_on)
		live_erase(&m->live);
	name_threads(S, S->proc, 1);
	/* the timeline is the first process's (-f: a child's reports add
	 * no sample) */
	if (S->start_ns && S->proc == S->first)
		sample(S, final, &sm);
}

const struct timeline *sampler_timeline(const struct session *S)
{
	return S->smp ? S->smp->tl : NULL;
}

void sampler_free(struct session *S)
{
	struct sampler *m = S->smp;

	if (!m)
		return;
	if (m->timer_on)
		timer_delete(m->timer);
	if (m->live_on)
		live_erase(&m->live);
	if (m->csv)
		fclose(m->csv);
	free(m->csv_path);
	timeline_delete(m->tl);
	if (the_sampler == m)
		the_sampler = NULL;
	free(m);
	S->smp = NULL;
}
