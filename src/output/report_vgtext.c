/*
 * report_vgtext.c - the text report as memcheck writes it
 * (report_vgtext.h).
 *
 * The wording is memcheck's (memcheck/mc_leakcheck.c, mc_errors.c,
 * coregrind/m_errormgr.c, m_main.c) as valgrind 3.19 prints it: "1
 * blocks", numbers with thousands separators, blank lines "==PID== "
 * with the space.  Leak records count as errors as memcheck counts them:
 * with --leak-check=full, each record of a kind in
 * --errors-for-leak-kinds is one error and one context, or one
 * suppressed error and context when a suppression matched it.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/report_fds.h"
#include "output/report_threads.h"
#include "output/report_vgtext.h"
#include "base/util.h"
#include "analysis/vgsupp.h"

struct used {			/* a suppression's use, for -s */
	unsigned long count;
	uint64_t bytes, blocks;
};

struct vgtext {
	FILE *f;
	const struct report_input *in;
	struct vgtext_opts o;
	int pid;
	unsigned long errors, contexts, supp_errors, supp_contexts;
	struct used *used;	/* [in->supp->n] */
	struct report_sink sink;
};

static void say(struct vgtext *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "==PID== " FMT "\n" */
static void say(struct vgtext *v, const char *fmt, ...)
{
	va_list ap;

	fprintf(v->f, "==%d== ", v->pid);
	va_start(ap, fmt);
	vfprintf(v->f, fmt, ap);
	va_end(ap);
	putc('\n', v->f);
}

static void blank(struct vgtext *v)
{
	fprintf(v->f, "==%d== \n", v->pid);
}

static const char *kind_words(int cls)
{
	const char *w = scan_class_words(cls);

	return w ? w : "unclassified (no scan)";
}

/* The kinds of MASK, 0 for memcheck's default (definite, possible). */
static unsigned kinds_or_default(unsigned mask)
{
	return mask ? mask : REPORT_KIND(SCAN_DEFINITELY_LOST) |
			     REPORT_KIND(SCAN_POSSIBLY_LOST);
}

/* "   at 0x4A1B2C: fn (file.c:12)", "(in /path/obj)", "???" as memcheck's
 * m_stacktrace.c prints a frame. */
static void frame(struct vgtext *v, unsigned i, const struct frame_info *fi)
{
	const char *verb = i ? "by" : "at";
	char *h1, *h2, *h3;	/* names from debug info: no terminal codes */
	const char *fn = text_safe(fi->function ? fi->function : "???", &h1);
	const char *file = text_safe(fi->file, &h2);
	const char *mod = text_safe(fi->module, &h3);

	if (file && fi->line > 0)
		say(v, "   %s 0x%" PRIX64 ": %s (%s:%d)", verb, fi->pc, fn, file,
		    fi->line);
	else if (mod)
		say(v, "   %s 0x%" PRIX64 ": %s (in %s)", verb, fi->pc, fn, mod);
	else
		say(v, "   %s 0x%" PRIX64 ": %s", verb, fi->pc, fn);
	free(h1);
	free(h2);
	free(h3);
}

void vgtext_banner(FILE *f, pid_t pid, char *const *argv, int log_file,
		   const char *version)
{
	char *const *a;

	fprintf(f, "==%d== Memcheck, a memory error detector\n", (int)pid);
	fprintf(f, "==%d== ptleak's leak check in memcheck's words, from outside "
		"the process\n", (int)pid);
	fprintf(f, "==%d== Using ptleak-%s, not Valgrind; rerun with -h for help\n",
		(int)pid, version ? version : "?");
	fprintf(f, "==%d== Command:", (int)pid);
	for (a = argv; a && *a; a++) {
		const unsigned char *c;

		/* as valgrind writes them: a blank or a backslash escaped
		 * with a backslash, a control character as '_' */
		putc(' ', f);
		for (c = (const unsigned char *)*a; *c; c++) {
			if (*c == ' ' || *c == '\\')
				putc('\\', f);
			putc(*c < 0x20 || *c == 0x7f ? '_' : *c, f);
		}
	}
	putc('\n', f);
	if (log_file) {
		unsigned long long ppid = 0;

		/* valgrind's: the parent of the process that ran the command,
		 * which is ptleak's when ptleak launched it */
		if (proc_status_field(pid, "PPid:", 10, &ppid) ||
		    ppid == (unsigned long long)getpid())
			ppid = (unsigned long long)getppid();
		fprintf(f, "==%d== Parent PID: %llu\n", (int)pid, ppid);
	}
	fprintf(f, "==%d== \n", (int)pid);
	fflush(f);
}

/* valgrind's name of a descriptor: a path, else none (a pipe, a socket) */
static void fd_header(struct vgtext *v, const struct fd_rec *rec)
{
	char *hold = NULL;

	if (rec->target && rec->target[0] == '/')
		say(v, "Open file descriptor %d: %s", rec->fd,
		    text_safe(rec->target, &hold));
	else
		say(v, "Open file descriptor %d:", rec->fd);
	free(hold);
}

static int cmp_newest(const void *pa, const void *pb)
{
	const struct fd_rec *a = ((const struct fd_listed *)pa)->rec;
	const struct fd_rec *b = ((const struct fd_listed *)pb)->rec;

	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	return b->fd - a->fd;
}

/*
 * memcheck's --track-fds=yes listing (coregrind/m_syswrap/
 * syswrap-generic.c): newest first, as valgrind's list of descriptors is
 * kept, then those inherited (not the standard three), which valgrind
 * recorded first, highest first.
 */
static void descriptors(struct vgtext *v, const struct fd_report *fr)
{
	struct fd_listed *l = xcalloc(fr->nrecs + 1, sizeof(*l));
	int fd, limit = fds_limit(fr->in->fds);
	unsigned std = 0, i;
	size_t k;

	for (fd = 0; fd < 3; fd++)
		std += fds_get(fr->in->fds, fd) != NULL;
	say(v, "FILE DESCRIPTORS: %" PRIu64 " open (%u std) %s.", fr->open, std,
	    report_when(fr->in->reason));
	if (fr->in->fds_untracked) {
		char *hold;

		say(v, "file descriptors NOT tracked: %s",
		    text_safe(fr->in->fds_untracked, &hold));
		free(hold);
	}
	if (fr->nrecs)
		memcpy(l, fr->recs, fr->nrecs * sizeof(*l));
	qsort(l, fr->nrecs, sizeof(*l), cmp_newest);
	for (k = 0; k < fr->nrecs; k++) {
		fd_header(v, l[k].rec);
		for (i = 0; i < l[k].nframes; i++)
			frame(v, i, &l[k].frames[i]);
		blank(v);
	}
	free(l);
	for (fd = limit - 1; fd >= 3; fd--) {
		const struct fd_rec *rec = fds_get(fr->in->fds, fd);

		if (!rec || rec->origin != FD_INHERITED)
			continue;
		fd_header(v, rec);
		say(v, "   <inherited from parent>");
		blank(v);
	}
	blank(v);
}

static void count_line(struct vgtext *v, const char *label, uint64_t bytes,
		       uint64_t blocks)
{
	char b1[32], b2[32];

	say(v, "%18s: %s bytes in %s blocks", label, fmt_thousands(b1, bytes),
	    fmt_thousands(b2, blocks));
}

static void begin(void *ctx, const struct report_totals *t)
{
	struct vgtext *v = ctx;
	const struct report_input *in = v->in;
	const struct heap_stats *st;
	char b1[32], b2[32], b3[32];

	if (v->o.verbosity > 0 && v->o.banner)
		vgtext_banner(v->f, in->pid, in->argv, v->o.log_file, v->o.version);
	if (v->o.verbosity > 0 && in->exited && in->exit_signal) {
		const char *abbrev = sigabbrev_np(in->exit_signal);

		blank(v);
		say(v, "Process terminating with default action of signal %d "
		    "(SIG%s)", in->exit_signal, abbrev ? abbrev : "?");
	}
	if (v->o.verbosity > 0)
		blank(v);
	if (t->fds && v->o.track_fds)
		descriptors(v, t->fds);
	if (!in->heap || v->o.verbosity < 1)
		return;
	st = heap_stats(in->heap);
	say(v, "HEAP SUMMARY:");
	say(v, "    in use %s: %s bytes in %s blocks", report_when(in->reason),
	    fmt_thousands(b1, st->in_use_bytes), fmt_thousands(b2, st->in_use_blocks));
	say(v, "  total heap usage: %s allocs, %s frees, %s bytes allocated",
	    fmt_thousands(b1, st->allocs), fmt_thousands(b2, st->frees),
	    fmt_thousands(b3, st->bytes_allocated));
	blank(v);
	/* never "no leaks are possible" about what could not be seen */
	if (in->heap_untracked) {
		char *hold;

		say(v, "heap NOT tracked: %s", text_safe(in->heap_untracked, &hold));
		free(hold);
		blank(v);
	} else if (!t->nrecs && in->leak_check != LEAK_CHECK_NO) {
		say(v, "All heap blocks were freed -- no leaks are possible");
		blank(v);
	}
}

static void record(void *ctx, const struct report_record *rec)
{
	struct vgtext *v = ctx;
	const struct report_input *in = v->in;
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	/* a C++ stack starts at operator new, which memcheck replaces */
	unsigned i = vgsupp_first_frame(rec->frames, rec->nframes), k;

	/* a record no scan classified may be lost: an error if definitely
	 * lost ones are (never a pass that could not look) */
	if (in->leak_check == LEAK_CHECK_FULL &&
	    (kinds_or_default(in->error_kinds) &
	     REPORT_KIND(rec->cls >= 0 ? rec->cls : SCAN_DEFINITELY_LOST))) {
		if (rec->supp >= 0) {
			v->supp_errors++;
			v->supp_contexts++;
		} else {
			v->errors++;
			v->contexts++;
		}
	}
	if (rec->supp >= 0 && v->used && in->supp &&
	    (unsigned)rec->supp < in->supp->n) {
		v->used[rec->supp].count++;
		/* with the indirect bytes, as valgrind -s (the LEAK SUMMARY's
		 * suppressed line has the direct ones) */
		v->used[rec->supp].bytes += rec->bytes + rec->indirect;
		v->used[rec->supp].blocks += rec->blocks;
	}
	if (!rec->listed)
		return;
	if (v->o.marker_begin)
		say(v, "%s", v->o.marker_begin);
	if (rec->indirect)
		say(v, "%s (%s direct, %s indirect) bytes in %s blocks are %s in "
		    "loss record %s of %s",
		    fmt_thousands(b1, rec->bytes + rec->indirect),
		    fmt_thousands(b5, rec->bytes), fmt_thousands(b6, rec->indirect),
		    fmt_thousands(b2, rec->blocks), kind_words(rec->cls),
		    fmt_thousands(b3, rec->number), fmt_thousands(b4, rec->total));
	else
		say(v, "%s bytes in %s blocks are %s in loss record %s of %s",
		    fmt_thousands(b1, rec->bytes), fmt_thousands(b2, rec->blocks),
		    kind_words(rec->cls), fmt_thousands(b3, rec->number),
		    fmt_thousands(b4, rec->total));
	for (k = 0; i < rec->nframes; i++, k++)
		frame(v, k, &rec->frames[i]);
	/* a record without frames (made before ptleak attached) says so */
	if (!rec->nframes)
		say(v, "   (no allocation stack)");
	blank(v);
	if (v->o.marker_end)
		say(v, "%s", v->o.marker_end);
	/* --gen-suppressions=all: after the error, unprefixed, as valgrind */
	if (in->gen_suppressions)
		vgsupp_print(v->f, rec->cls, rec->frames, rec->nframes);
}

static void leak_summary(struct vgtext *v, const struct report_totals *t)
{
	const struct report_input *in = v->in;
	uint64_t shown_blocks = 0;
	int c;

	say(v, "LEAK SUMMARY:");
	for (c = SCAN_DEFINITELY_LOST; c <= SCAN_STILL_REACHABLE; c++) {
		count_line(v, kind_words(c), t->cls_bytes[c], t->cls_blocks[c]);
		shown_blocks += t->cls_blocks[c];
	}
	count_line(v, "suppressed", t->supp_bytes, t->supp_blocks);
	if (t->cls_blocks[4])
		count_line(v, "unclassified", t->cls_bytes[4], t->cls_blocks[4]);
	if (in->leak_check != LEAK_CHECK_FULL && shown_blocks)
		say(v, "Rerun with --leak-check=full to see details of leaked memory");
	if (in->leak_check == LEAK_CHECK_FULL &&
	    t->cls_blocks[SCAN_STILL_REACHABLE] && !in->show_reachable &&
	    !(in->show_kinds & REPORT_KIND(SCAN_STILL_REACHABLE))) {
		say(v, "Reachable blocks (those to which a pointer was found) are "
		    "not shown.");
		say(v, "To see them, rerun with: --leak-check=full "
		    "--show-leak-kinds=all");
	}
	blank(v);
}

static void error_summary(struct vgtext *v)
{
	say(v, "ERROR SUMMARY: %lu errors from %lu contexts (suppressed: %lu from "
	    "%lu)", v->errors, v->contexts, v->supp_errors, v->supp_contexts);
}

/* -s: the suppressions used, as valgrind lists them ("--PID-- ") */
static void used_suppressions(struct vgtext *v)
{
	const struct suppressions *s = v->in->supp;
	char b1[32], b2[32];
	unsigned i, n = 0;

	for (i = 0; v->used && s && i < s->n; i++)
		n += v->used[i].count > 0;
	if (!n)
		return;
	fprintf(v->f, "--%d-- \n", v->pid);
	for (i = 0; i < s->n; i++) {
		const struct supp_pattern *p = &s->p[i];
		char *hold;

		if (!v->used[i].count)
			continue;
		fprintf(v->f, "--%d-- used_suppression: %6lu %s %s:%d suppressed: "
			"%s bytes in %s blocks\n", v->pid, v->used[i].count,
			text_safe(p->glob, &hold), p->file ? p->file : "?",
			p->line, fmt_thousands(b1, v->used[i].bytes),
			fmt_thousands(b2, v->used[i].blocks));
		free(hold);
	}
	blank(v);
	error_summary(v);
}

void vgtext_relay(FILE *f, pid_t pid, char *text)
{
	char *line, *next, pre[32];
	size_t n = (size_t)snprintf(pre, sizeof(pre), "ptleak[%d]:", (int)pid);

	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, pre, n))
			line += n + (line[n] == ' ');
		fprintf(f, "==%d== %s\n", (int)pid, line);
	}
}

/* ptleak's own sections, written for ptleak's text, in memcheck's prefix */
static void extras(struct vgtext *v, const struct report_totals *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return;
	if (t->growth_text)
		t->growth_text(t, m);
	if (v->in->heap && v->in->threads)
		rthreads_text(v->in, m);
	rresources_text(v->in, m);
	fclose(m);
	vgtext_relay(v->f, v->pid, buf);
	free(buf);
}

static void end(void *ctx, const struct report_totals *t)
{
	struct vgtext *v = ctx;
	const struct report_input *in = v->in;

	if (v->o.verbosity > 0 && in->heap && !in->heap_untracked) {
		if (in->leak_check == LEAK_CHECK_NO) {
			say(v, "For a detailed leak analysis, rerun with: "
			    "--leak-check=full");
			blank(v);
		} else if (t->nrecs) {
			leak_summary(v, t);
		}
	}
	if (v->o.verbosity > 0 && !v->o.list_errors)
		say(v, "For lists of detected and suppressed errors, rerun with: -s");
	if (v->o.verbosity > 0 || v->o.list_errors)
		error_summary(v);
	if (v->o.list_errors)
		used_suppressions(v);
	if (v->o.verbosity > 0)
		extras(v, t);
}

struct vgtext *vgtext_open(FILE *f, const struct report_input *in,
			   const struct vgtext_opts *o)
{
	struct vgtext *v = xcalloc(1, sizeof(*v));

	v->f = f;
	v->in = in;
	v->o = *o;
	v->pid = (int)in->pid;
	if (in->supp && in->supp->n)
		v->used = xcalloc(in->supp->n, sizeof(*v->used));
	v->sink.begin = begin;
	v->sink.record = record;
	v->sink.end = end;
	v->sink.ctx = v;
	v->sink.flags = REPORT_SINK_ALL;
	return v;
}

const struct report_sink *vgtext_sink(struct vgtext *v)
{
	return &v->sink;
}

unsigned long vgtext_close(struct vgtext *v)
{
	unsigned long errors = v->errors;

	fflush(v->f);
	free(v->used);
	free(v);
	return errors;
}
