/*
 * report_make.c - where a report is made: the tables, the reachability
 * scan of the stopped target, what could not be seen, and the symbolizer
 * gathered for report_write (report.h); at exit, on a signal, at a detach.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "output/events_log.h"
#include "breakpoints/fdprobe.h"
#include "output/folded.h"
#include "target/memio.h"
#include "output/pprof.h"
#include "output/report_digest.h"
#include "output/report_vgtext.h"
#include "output/report_xml.h"
#include "recorder/recorder.h"
#include "target/procstat.h"
#include "session/proctree.h"
#include "analysis/roots.h"
#include "session.h"
#include "symbols/symbols.h"
#include "base/util.h"

/* ptleak's CPU time, all its threads (the scan's figure on a loaded
 * machine, PTLEAK_DEBUG=stats). */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void namer(void *ctx, uint64_t pc, int caller, struct frame_info *out)
{
	if (ctx) {
		sym_lookup(ctx, pc, caller, out);
		return;
	}
	memset(out, 0, sizeof(*out));
	out->pc = pc;
}

/* The file NAME of an output option for the process being reported: the
 * first process's as given (%p: its pid), a child's (-f) with its pid in
 * place of %p or appended (outfile.h).  Malloc'd. */
static char *proc_file(struct session *S, const char *name)
{
	if (S->proc == S->first)
		return xstrdup(name);
	return outfile_pid_name(name, S->proc->pid, 1);
}

/*
 * --html: the run's samples (the timeline's, this report's last) and the
 * process's resources, into IN->html; F holds the series' arrays.
 */
static void html_sample(struct session *S, struct report_input *in,
			struct html_input *html, struct html_series *series,
			struct html_feed *f, struct html_resources *res,
			char **path)
{
	memset(res, 0, sizeof(*res));
	if (in->resources) {
		res->known = in->resources->known;
		res->user_s = in->resources->user_s;
		res->sys_s = in->resources->sys_s;
		res->max_rss_kb = in->resources->max_rss_kb;
	}
	/* the samples are the first process's (--timeline's) */
	html_feed_series(S->proc == S->first ? sampler_timeline(S) : NULL, series, f);
	html_feed_growth(S->proc == S->first ? sampler_timeline(S) : NULL,
			 in->growth, in->ngrowth, series, f);
	html->path = *path = proc_file(S, S->o->html);
	html->series = series;
	html->res = res;
	in->html = html;
}

/* What make_report needs to say what could not be seen (coverage.h);
 * memory read through thread VIA. */
static void coverage_view(struct session *S, pid_t via, int fd_err,
			  struct cov_view *v)
{
	struct proc *P = S->proc;
	uint64_t w;

	memset(v, 0, sizeof(*v));
	v->prog = P->argv && P->argv[0] ? P->argv[0] : "the program";
	v->pid = P->pid;
	v->is_static = !P->r_debug;
	v->malloc_bound = P->bound[AF_MALLOC];
	v->fd_planted = P->fdp ? fdprobe_planted(P->fdp) : 0;
	/* the scratch page is always there: can it still be read? */
	if (P->bps.trampoline &&
	    mem_read_all(via, P->bps.trampoline, &w, sizeof(w)))
		v->mem_err = errno;
	v->fd_err = fd_err;
}

/*
 * The report IN in every form asked for: text, JSON, and valgrind's world
 * (vgopts.h): its choices of what is listed, XML, pprof.  0 or -1.
 */
static int report_write_all(struct session *S, struct report_input *in,
			    struct symbolizer *sym, struct report_result *res)
{
	const struct options *o = S->o;
	struct proc *P = S->proc;
	struct report_sink xs, ts;
	const struct report_sink *sink0 = in->sink;
	struct vgxml *x = NULL;
	struct vgtext *t = NULL;
	FILE *text = P->text;
	char *name;
	int ret = 0;

	in->show_kinds = o->show_kinds;
	in->error_kinds = o->error_kinds;
	in->leak_check = o->leak_check;
	in->gen_suppressions = o->gen_suppressions;
	if (o->xml) {	/* --fd-only too: no error, the rest */
		name = proc_file(S, o->xml_file);
		x = vgxml_open(name, in, o->gen_suppressions);
		free(name);
		if (!x) {
			ret = -1;
		} else {
			xs = *vgxml_sink(x);
			xs.next = in->sink;	/* a digest's (snapshot-check) */
			in->sink = &xs;
		}
	}
	/* valgrind's text says nothing of an image left by an exec, and its
	 * leaks are no errors: valgrind checks the image that exits */
	if (o->text == TEXT_VALGRIND && (in->reason == REPORT_EXEC || P->vg_silent))
		text = NULL;
	if (o->text == TEXT_VALGRIND && text) {
		struct vgtext_opts vo = {
			.verbosity = !o->quiet, .list_errors = o->list_errors,
			.banner = !P->vg_banner,	/* a child's, an exec's */
			.marker_begin = o->marker_begin, .marker_end = o->marker_end,
			.track_fds = o->track_fds_set && !o->heap_only,
			.log_file = o->output != NULL, .version = PTLEAK_VERSION,
		};

		P->vg_banner = 1;
		t = vgtext_open(text, in, &vo);
		ts = *vgtext_sink(t);
		ts.next = in->sink;
		in->sink = &ts;
		text = NULL;	/* memcheck's text only */
	}
	if (report_write(in, text, P->json, res))
		ret = -1;
	if (o->text == TEXT_VALGRIND && (in->reason == REPORT_EXEC || P->vg_silent))
		res->lost_bytes = res->lost_blocks = res->leaked_fds = 0;
	if (x && vgxml_close(x, in->supp))
		ret = -1;
	if (t) {
		/* memcheck's verdict: its errors, not descriptors (3.19 counts
		 * none); a lost block of 0 bytes is an error too */
		if (!vgtext_close(t))
			res->lost_bytes = res->lost_blocks = 0;
		else if (!res->lost_bytes)
			res->lost_bytes = 1;
		res->leaked_fds = 0;
		if (ferror(P->text))
			ret = error("cannot write the report: %s", strerror(EIO));
	}
	if (o->pprof && in->heap) {
		name = proc_file(S, o->pprof);
		if (pprof_write(name, in, sym))
			ret = -1;
		free(name);
	}
	in->sink = sink0;	/* not our locals' once we return */
	return ret;
}

void report_vg_banner(struct session *S, struct proc *P)
{
	const struct options *o = S->o;

	if (o->text != TEXT_VALGRIND || o->quiet || !P->text || P->vg_banner)
		return;
	vgtext_banner(P->text, P->pid, P->argv, o->output != NULL, PTLEAK_VERSION);
	P->vg_banner = 1;
}

void report_tree(struct session *S, struct proc *P)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (S->o->text != TEXT_VALGRIND) {
		proctree_print(S->tree, P->text, P->pid);
		return;
	}
	/* only -f (--trace-children=yes) asked for the tree */
	if (S->o->quiet || S->o->vg_exec_untraced ||
	    !(m = open_memstream(&buf, &len)))
		return;
	proctree_print(S->tree, m, P->pid);
	fclose(m);
	vgtext_relay(P->text, P->pid, buf);
	fflush(P->text);
	free(buf);
}

/*
 * The scan of S->proc's blocks for a report into *SCAN: NULL, or why
 * there is none.  Memory through VIA; REGS etc. as report_make.  Its
 * snapshot's scan (VIA its clone) leaves out the shared writable
 * mappings read while the threads were held (snap_shared.c).
 */
/*
 * In a report child, after the scan of snapshot CLONE: 1 if the copy was
 * whole for the whole scan (stopped now: a clone never comes back), 0 if
 * it died meanwhile (its reads failed: the scan is worthless).  Exits the
 * child quietly when ptleak itself is gone (its death killed the copy:
 * nothing is reported to anyone).
 */
static int snap_intact(const struct session *S, pid_t clone)
{
	if (getppid() != S->rep_parent)
		_exit(1);
	/* stopped for ever ('t'); dying or dead: anything else */
	return procstat_state(clone, clone) == 't';
}

static const char *make_scan(struct session *S, pid_t via,
			     const struct arch_regs *regs, unsigned nregs,
			     int reg_roots, struct scan_result *scan)
{
	struct proc *P = S->proc;
	struct scan_dead *dead;
	uint64_t t0 = now_ns(), c0 = cpu_ns();
	struct scan_stats st;
	int snap = P->snap_pid && via == P->snap_pid, r;
	size_t i;

	if (!nregs)
		return "the threads could not be stopped";
	dead = xcalloc(P->ndead + 1, sizeof(*dead));
	memset(&st, 0, sizeof(st));
	for (i = 0; i < P->ndead; i++)
		dead[i] = (struct scan_dead){ P->dead[i].exit_sp,
					      P->dead[i].exit_ns };
	r = scan_process(via, P->heap, regs, nregs, reg_roots, dead, P->ndead,
			 (P->glibc ? ROOTS_GLIBC : 0) |
			 (P->census && !P->census->exact ? ROOTS_OLDER_UNKNOWN : 0),
			 snap ? P->snap_shared : NULL, snap ? P->snap_nshared : 0,
			 scan, &st);
	free(dead);
	if (!r && snap && S->in_rep_child && !snap_intact(S, via)) {
		scan_result_free(scan);
		return "the snapshot died during the scan";
	}
	if (debug_stats) {
		double secs = (double)(now_ns() - t0) / 1e9;

		fprintf(stderr, "ptleak-debug: scan: %zu blocks, %llu bytes read "
			"in %.3f s (%.0f MB/s), %llu by its second thread, "
			"CPU %.3f s\n", scan->n,
			(unsigned long long)st.bytes_scanned, secs,
			secs > 0 ? (double)st.bytes_scanned / secs / 1e6 : 0.0,
			(unsigned long long)st.worker_bytes,
			(double)(cpu_ns() - c0) / 1e9);
	}
	return r ? "the reachability scan failed" : NULL;
}

/* The old blocks of S->proc's reallocs in flight, put back for a report
 * (heap_holds_put): the recorder's and the breakpoints'. */
struct holds {
	struct heap_block *b;
	uint8_t *put;
	size_t n;
};

/* S->proc's reallocs in flight (a thread inside realloc: its old block
 * is still allocated) put back in its table into *H, for one report. */
static void holds_put(struct session *S, struct holds *h)
{
	struct proc *P = S->proc;
	size_t a = rec_held(P->rec, NULL, 0), k;
	struct task *t;
	unsigned i;

	memset(h, 0, sizeof(*h));
	h->b = a ? xmalloc(a * sizeof(*h->b)) : NULL;
	h->n = a ? rec_held(P->rec, h->b, a) : 0;
	for_each_task(S, i, t) {
		if (t->proc != P)
			continue;
		for (k = 0; k < t->npend; k++) {
			if (!t->pend[k].held_live)
				continue;
			if (h->n == a) {
				a = a ? 2 * a : 16;
				h->b = xrealloc(h->b, a * sizeof(*h->b));
			}
			h->b[h->n++] = t->pend[k].held;
		}
	}
	if (!h->n)
		return;
	h->put = xcalloc(h->n, 1);
	heap_holds_put(P->heap, h->b, h->n, h->put);
}

/* After the report: holds_put's blocks out of the table again. */
static void holds_take(struct session *S, struct holds *h)
{
	if (h->n)
		heap_holds_take(S->proc->heap, h->b, h->n, h->put);
	free(h->b);
	free(h->put);
}

/*
 * Make a report.  REGS[0..NREGS-1]: the registers of the stopped threads
 * (the exiting one at exit; every thread, held, for a live report, whose
 * register values are then roots too).  NREGS 0: no scan is possible.
 * Memory, /proc/PID/maps and /proc/PID/fd are read through thread VIA,
 * which stays stopped meanwhile: at an exit_group the other threads
 * (P->mem_pid among them) are being killed while the report is made.
 */
int report_make(struct session *S, enum report_reason reason, pid_t via,
		const struct arch_regs *regs, unsigned nregs, int reg_roots)
{
	struct proc *P = S->proc;
	struct symbolizer *s = sym_open(via);
	struct scan_result scan = { 0 };
	struct report_result res = { 0 };
	struct report_input in;
	struct proc_resources rsc;
	char hwhy[512], fwhy[512];
	struct html_resources hres;
	struct html_series series;
	struct html_feed feed = { 0 };
	char *html_path = NULL;
	struct html_input html;
	struct cov_view cv;
	struct growth_entry growth[GROWTH_MAX];
	struct report_digest snapd;
	/* PTLEAK_DEBUG=snapshot-check: the held report's digest, made by
	 * the tracer at the snapshot's instant (snap_reports) */
	int check = S->in_rep_child && P->check && !P->no_heap;
	int ret, fd_err = 0;
	struct holds holds = { 0 };

	if (s)
		unloaded_name(P->unloaded, s);
	debug_time("report: begins");
	/* exact up to now (a report child's snapshot: up to it, drained by
	 * the tracer, which alone may take from the ring) */
	if (S->in_rep_child)
		;
	else if (reason == REPORT_EXIT)
		recs_drain_final(S);
	else
		recs_drain(S);
	if (!P->no_heap)
		holds_put(S, &holds);
	/* the timeline's last row equals the report's figures */
	if (!S->in_rep_child)
		sampler_report(S, reason != REPORT_SIGNAL);

	memset(&in, 0, sizeof(in));
	in.pid = P->pid;
	in.argv = P->argv;
	in.reason = reason;
	in.number = ++P->nreports;
	in.wall = time(NULL);
	/* the check compares at the held report's ages */
	in.now_ns = check ? P->check_now : now_ns();
	in.elapsed_ns = in.now_ns - S->start_ns;
	in.min_age_ns = (uint64_t)(S->o->min_age * 1e9);
	in.exited = P->exit_known;
	in.exit_code = P->exit_code;
	in.exit_signal = P->exit_signal;
	in.heap = P->no_heap ? NULL : P->heap;
	in.census = P->no_heap ? NULL : P->census;
	in.threads = 1;
	if (!procstat_resources(P->pid, via, (double)in.elapsed_ns / 1e9, &rsc))
		in.resources = &rsc;
	if (P->fdp) {
		if (fdprobe_sync(P->fdp, via))
			fd_err = errno;
		in.fds = fdprobe_table(P->fdp);
	}
	coverage_view(S, via, fd_err, &cv);
	if (in.heap)
		in.heap_untracked = cov_heap_why(&S->proc->cov, &cv, hwhy, sizeof(hwhy));
	if (in.fds)
		in.fds_untracked = cov_fds_why(&S->proc->cov, &cv, fwhy, sizeof(fwhy));
	in.stacks = P->stacks;
	in.depth = S->o->depth;
	in.namer = namer;
	in.namer_ctx = s;
	in.show_reachable = S->o->show_reachable;
	in.supp = S->supp;
	debug_time("report: drained");
	if (!in.heap) {
		/* --fd-only */
	} else if (S->o->no_scan) {
		in.unclassified_why = "--no-scan";
	} else if (!(in.unclassified_why = make_scan(S, via, regs, nregs,
						       reg_roots, &scan))) {
		in.scan = &scan;
		/* a test of the check: the snapshot's report is wrong */
		if (check && debug_snapshot_perturb && scan.n)
			scan.cls[0] = scan.cls[0] == SCAN_STILL_REACHABLE ?
				      SCAN_DEFINITELY_LOST : SCAN_STILL_REACHABLE;
	}
	debug_time("report: scanned");
	if (debug_stats)
		fprintf(stderr, "ptleak-debug: stacks: %u interned, %u with a "
			"block, %zu bytes of growth history each\n",
			stacks_count(P->stacks), in.heap ? heap_stack_max(P->heap) : 0,
			growth_stack_bytes());
	if (!s)
		warning("stacks are shown as addresses only");
	if (debug_die_on_report)
		die("debug: a fatal error in the report (PTLEAK_DEBUG=die-on-report)");
	if (in.heap && in.elapsed_ns >= GROWTH_MIN_WINDOW_NS) {
		in.ngrowth = growth_list(heap_growth(P->heap), in.now_ns, growth,
					 GROWTH_MAX);
		in.growth = growth;
	}
	in.errors_for_growth = S->o->errors_for_growth;
	in.snapshot = S->pause_ns != 0;
	in.snapshot_why = S->snap_why;
	in.pause_ms = (double)(S->pause_ns ? S->pause_ns :
			       S->hold_t0 ? now_ns() - S->hold_t0 : 0) / 1e6;
	if (S->o->html)
		html_sample(S, &in, &html, &series, &feed, &hres, &html_path);
	memset(&snapd, 0, sizeof(snapd));
	/* no scan of the snapshot (it is gone: ptleak killed meanwhile, or
	 * unreadable): its report says so, nothing to compare */
	if (!in.scan)
		check = 0;
	if (check)
		in.sink = digest_sink(&snapd);
	debug_time("report: writing");
	ret = report_write_all(S, &in, s, &res);
	debug_time("report: written");
	if (check) {
		char why[512];

		if (digest_diff(&snapd, P->check, why, sizeof(why)))
			ret = error("debug: snapshot report differs from the "
				    "held one: %s", why);
		else if (debug_stats)
			fprintf(stderr, "ptleak-debug: snapshot check: %zu "
				"records equal\n", snapd.n);
		digest_free(&snapd);
	}
	if (in.heap && S->o->folded) {
		char *fo = proc_file(S, S->o->folded);

		if (folded_write(fo, P->heap, P->stacks, S->o->depth, namer, s))
			ret = -1;
		free(fo);
	}
	/* the last report: every event is in the log, the maps still there
	 * (--events follows the first process) */
	if (S->evlog && P == S->first && reason != REPORT_SIGNAL &&
	    reason != REPORT_EXEC && evlog_finish(S->evlog, namer, s))
		ret = -1;
	html_feed_free(&feed);
	free(html_path);
	holds_take(S, &holds);
	S->last_result = res;
	report_result_take(S, P, reason, &res, ret);
	scan_result_free(&scan);
	sym_close(s);
	return ret;
}

void report_result_take(struct session *S, struct proc *P,
			enum report_reason reason,
			const struct report_result *r, int failed)
{
	struct report_result res = *r;

	if (failed)
		S->report_failed = 1;
	if (reason == REPORT_EXEC) {
		/* the old image's, for good */
		P->exec_lost_bytes += res.lost_bytes;
		P->exec_leaked_fds += res.leaked_fds;
		P->exec_growing += res.growing;
		P->lost_bytes = P->leaked_fds = P->growing = 0;
		S->untracked_any |= res.untracked;
	} else {
		P->lost_bytes = res.lost_bytes;
		P->leaked_fds = res.leaked_fds;
		P->growing = res.growing;
		P->untracked = res.untracked;
	}
	if (P == S->first) {
		S->first_lost = P->lost_bytes + P->exec_lost_bytes;
		S->first_untracked = P->untracked;
	}
	if (S->tree)
		proctree_leaks(S->tree, P->row, P->lost_bytes + P->exec_lost_bytes,
			       P->leaked_fds + P->exec_leaked_fds);
}

/* The report at exit: THREAD is stopped at its exit event. */
int report_make_exit(struct session *S, const struct task *thread)
{
	struct arch_regs r;
	int ret;

	debug_time("exit report starts");
	S->hold_t0 = now_ns();
	S->snap_why = NULL;
	if (!thread || arch_get_regs(thread->tid, &r))
		ret = report_make(S, REPORT_EXIT, S->proc->mem_pid, NULL, 0, 0);
	else
		ret = report_make(S, REPORT_EXIT, thread->tid, &r, 1, 0);
	S->hold_t0 = 0;
	debug_time("exit report written");
	return ret;
}

/* A report while every thread is held (events_stop_all): their registers. */
int report_make_live(struct session *S, enum report_reason reason)
{
	struct arch_regs *regs = xcalloc(S->ntasks + 1, sizeof(*regs));
	unsigned n = 0, i;
	const struct task *t;
	int ret;

	recs_settle(S);		/* no record half written */
	if (S->proc->reported || S->proc->done) {
		/* a thread let go to finish its record took a fatal signal:
		 * the exit was reported */
		free(regs);
		return 0;
	}
	for_each_proc_task(S, i, t)
		if (t->role == ROLE_THREAD && t->held &&
		    !arch_get_regs(t->tid, &regs[n]))
			n++;
	ret = report_make(S, reason, S->proc->mem_pid, regs, n, 1);
	free(regs);
	return ret;
}

int report_digest_held(struct session *S, const struct arch_regs *regs,
		       unsigned nregs, uint64_t now, struct report_digest *d)
{
	struct proc *P = S->proc;
	struct suppressions *supp = S->supp;
	struct supp_pattern *saved = NULL;
	struct scan_result scan = { 0 };
	struct symbolizer *s = NULL;
	struct report_input in;
	struct holds holds;
	int ret;

	memset(d, 0, sizeof(*d));
	if (P->no_heap)
		return 0;
	/* names only to match suppressions, as the report does */
	if (supp && supp->n) {
		if ((s = sym_open(P->mem_pid)))
			unloaded_name(P->unloaded, s);
		/* their counts are the reports' (a pattern used) */
		saved = xcalloc(supp->n, sizeof(*saved));
		memcpy(saved, supp->p, supp->n * sizeof(*saved));
	}
	memset(&in, 0, sizeof(in));
	in.pid = P->pid;
	in.argv = P->argv;
	in.reason = REPORT_SIGNAL;
	in.now_ns = now;
	in.elapsed_ns = now - S->start_ns;
	in.min_age_ns = (uint64_t)(S->o->min_age * 1e9);
	in.heap = P->heap;
	in.census = P->census;
	in.stacks = P->stacks;
	in.depth = S->o->depth;
	in.namer = namer;
	in.namer_ctx = s;
	in.supp = supp;
	in.show_kinds = S->o->show_kinds;
	in.error_kinds = S->o->error_kinds;
	in.leak_check = S->o->leak_check;
	in.sink = digest_sink(d);
	holds_put(S, &holds);	/* as report_make */
	if (S->o->no_scan)
		in.unclassified_why = "--no-scan";
	else if (!(in.unclassified_why = make_scan(S, P->mem_pid, regs, nregs,
						     1, &scan)))
		in.scan = &scan;
	ret = report_write(&in, NULL, NULL, NULL);
	holds_take(S, &holds);
	if (saved) {
		memcpy(supp->p, saved, supp->n * sizeof(*saved));
		free(saved);
	}
	scan_result_free(&scan);
	sym_close(s);
	return ret;
}
