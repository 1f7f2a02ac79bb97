/*
 * report.c - the leak report: grouping, the text (valgrind-like) and the
 * driver that writes the text and the JSON (report_json.c) in one pass.
 *
 * Live blocks are grouped into records by (allocation stack, allocator,
 * class) with an open-addressing table, sorted largest first and numbered
 * 1..M (all records, listed or not).  A block's class and indirect bytes
 * come from the scan's verdicts (in->scan, by heap entry: the table is
 * walked in entry order, its verdicts beside it, no lookup per block; or
 * in->classes, sorted by addr, made verdicts by entry first); without a
 * scan every block is "unclassified".
 *
 * With suppressions, every record's stack is named once first to decide
 * whether it is suppressed (the JSON summary, written before the records,
 * needs the totals); listed records are named again when written.  The
 * text and the JSON are then written in one pass over the records, so
 * only one stack's frames are held at a time (a million one-block records
 * must not cost a million stacks' worth of frame_info), and records that
 * are not listed (still reachable without --show-reachable, suppressed)
 * are never named unless suppressions must be matched.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tables/heap.h"
#include "output/json.h"
#include "output/outfile.h"
#include "output/report.h"
#include "report_priv.h"
#include "output/report_fds.h"
#include "output/report_html.h"
#include "output/report_threads.h"
#include "analysis/scan.h"
#include "tables/stacks.h"
#include "analysis/suppress.h"
#include "base/util.h"
#include "analysis/vgsupp.h"

#define GROUP_MIN_SLOTS 1024	/* power of two */
#define LABEL_WIDTH 18		/* "  total heap usage" */

struct grouping {
	const struct report_input *in;
	struct record *recs;
	size_t nrecs, recs_alloc;
	uint32_t *slots;	/* record index + 1, 0 = empty */
	size_t nslots;		/* power of two */
	size_t mask;
};

/* ---- grouping ---- */

/* Census blocks (made before the attach, no stack) are grouped by class
 * and type, else size: EACH is their size if untyped, 0 for the others. */
static size_t group_home(const struct grouping *g, uint32_t stack, uint8_t fn,
			 uint8_t cls, uint64_t each, uint16_t type)
{
	return (size_t)hash64((((uint64_t)type << 48) | ((uint64_t)stack << 16) |
			       ((uint64_t)fn << 8) | cls) ^
			      (each * 0x9e3779b97f4a7c15ull)) & g->mask;
}

static int cmp_indirect(const void *x, const void *y)
{
	const struct scan_indirect *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * in->classes (an array by address) as verdicts by heap entry into *OUT
 * (an entry missing from it, which should not happen: definitely lost,
 * 0 indirect).  0, or -1 (no memory).
 */
static int classes_by_entry(const struct report_input *in,
			    struct scan_result *out)
{
	struct heap_entries e;
	size_t i;

	heap_entries(in->heap, &e);
	memset(out, 0, sizeof(*out));
	out->n = e.n;
	out->cls = xcalloc(e.n + 1, 1);	/* SCAN_DEFINITELY_LOST is 0 */
	out->ind = xcalloc(in->nclasses + 1, sizeof(*out->ind));
	for (i = 0; i < in->nclasses; i++) {
		long k = heap_index_of(in->heap, in->classes[i].addr);

		if (k < 0)
			continue;
		out->cls[k] = (uint8_t)in->classes[i].cls;
		if (in->classes[i].indirect) {
			out->ind[out->nind].id = (uint64_t)k;
			out->ind[out->nind++].bytes = in->classes[i].indirect;
		}
	}
	if (out->nind > 1)
		qsort(out->ind, out->nind, sizeof(*out->ind), cmp_indirect);
	return 0;
}

static void group_grow(struct grouping *g)
{
	size_t n = g->nslots ? g->nslots * 2 : GROUP_MIN_SLOTS;
	size_t i;

	free(g->slots);
	g->slots = xcalloc(n, sizeof(*g->slots));
	g->nslots = n;
	g->mask = n - 1;
	for (i = 0; i < g->nrecs; i++) {
		size_t k = group_home(g, g->recs[i].stack, g->recs[i].fn,
				      g->recs[i].cls, g->recs[i].each,
				      g->recs[i].type);

		while (g->slots[k])
			k = (k + 1) & g->mask;
		g->slots[k] = (uint32_t)(i + 1);
	}
}

/* Block B (CLS, INDIRECT bytes through it) into its record. */
static void group_block(struct grouping *g, const struct heap_block *b,
			uint8_t cls, uint64_t indirect)
{
	struct record *r;
	uint64_t each;
	size_t k;

	/* too young to be reported; a block made before the attach has no
	 * birth time (0), and is kept, older than the attach (usage.md) */
	if (g->in->min_age_ns && !b->before &&
	    g->in->now_ns - b->time_ns < g->in->min_age_ns)
		return;
	each = b->before && !b->type ? b->size : 0;
	k = group_home(g, b->stack, b->fn, cls, each, b->type);
	for (;;) {
		uint32_t s = g->slots[k];

		if (!s)
			break;
		r = &g->recs[s - 1];
		if (r->stack == b->stack && r->fn == b->fn && r->cls == cls &&
		    r->before == b->before && r->each == each &&
		    r->type == b->type) {
			if (b->time_ns > r->youngest)
				r->youngest = b->time_ns;
			if (b->time_ns < r->oldest)
				r->oldest = b->time_ns;
			r->bytes += b->size;
			r->indirect += indirect;
			r->blocks++;
			return;
		}
		k = (k + 1) & g->mask;
	}
	grow_array((void **)&g->recs, &g->recs_alloc, g->nrecs + 1,
		   sizeof(*g->recs));
	r = &g->recs[g->nrecs++];
	r->stack = b->stack;
	r->fn = b->fn;
	r->cls = cls;
	r->suppressed = 0;
	r->supp = -1;
	r->bytes = b->size;
	r->indirect = indirect;
	r->blocks = 1;
	r->before = b->before;
	r->type = b->type;
	r->each = each;
	r->youngest = r->oldest = b->time_ns;
	if (g->nrecs * 4 > g->nslots * 3)
		group_grow(g);	/* re-inserts every record, the new one too */
	else
		g->slots[k] = (uint32_t)g->nrecs;
}

/* Every live block into its record, in the table's entry order, with
 * the verdicts by entry (SCAN, NULL: unclassified). */
static void group_all(struct grouping *g, const struct scan_result *scan)
{
	struct heap_entries e;
	struct heap_block b;
	size_t i, j = 0;

	heap_entries(g->in->heap, &e);
	for (i = 0; i < e.n; i++) {
		uint8_t cls = CLS_UNCLASSIFIED;
		uint64_t indirect = 0;

		if (i + 8 < e.n)
			__builtin_prefetch(heap_entry(&e, i + 8));
		heap_entry_block(&e, heap_entry(&e, i), &b);
		if (scan) {
			cls = i < scan->n ? scan->cls[i] : SCAN_DEFINITELY_LOST;
			while (j < scan->nind && scan->ind[j].id < i)
				j++;
			if (j < scan->nind && scan->ind[j].id == i)
				indirect = scan->ind[j].bytes;
		}
		group_block(g, &b, cls, indirect);
	}
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_record(const void *pa, const void *pb)
{
	const struct record *a = pa, *b = pb;
	int c;

	if ((c = cmp_u64_desc(a->bytes + a->indirect, b->bytes + b->indirect)))
		return c;
	if ((c = cmp_u64_desc(a->blocks, b->blocks)))
		return c;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	if (a->fn != b->fn)
		return a->fn < b->fn ? -1 : 1;
	if (a->before != b->before)
		return a->before < b->before ? -1 : 1;
	if ((c = cmp_u64_desc(a->each, b->each)))
		return c;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	return (a->cls > b->cls) - (a->cls < b->cls);
}

/* memcheck's Reachedness: Reachable 0, Possible 1, IndirectLeak 2,
 * Unreached 3 (mc_include.h); unclassified last */
static int memcheck_state(uint8_t cls)
{
	switch (cls) {
	case SCAN_STILL_REACHABLE:
		return 0;
	case SCAN_POSSIBLY_LOST:
		return 1;
	case SCAN_INDIRECTLY_LOST:
		return 2;
	case SCAN_DEFINITELY_LOST:
		return 3;
	default:
		return 4;
	}
}

/* memcheck's cmp_LossRecords: total bytes, state, blocks ascending, then
 * the allocation context (its ExeContext's address, roughly the order
 * stacks were first seen: here the stack's id).  PA, PB: indices into
 * the records RECS. */
static int cmp_memcheck(const void *pa, const void *pb, void *recs)
{
	const struct record *a = (const struct record *)recs + *(const size_t *)pa;
	const struct record *b = (const struct record *)recs + *(const size_t *)pb;
	int c;

	if ((c = -cmp_u64_desc(a->bytes + a->indirect, b->bytes + b->indirect)))
		return c;
	if ((c = memcheck_state(a->cls) - memcheck_state(b->cls)))
		return c;
	if ((c = -cmp_u64_desc(a->blocks, b->blocks)))
		return c;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	return (a->fn > b->fn) - (a->fn < b->fn);
}

static void collect_records(struct rep *r)
{
	struct scan_result byent;
	struct grouping g;

	memset(&g, 0, sizeof(g));
	g.in = r->in;
	group_grow(&g);
	if (r->in->scan) {
		group_all(&g, r->in->scan);
	} else if (r->in->classes) {
		classes_by_entry(r->in, &byent);
		group_all(&g, &byent);
		scan_result_free(&byent);
	} else {
		group_all(&g, NULL);
	}
	free(g.slots);
	if (g.nrecs > 1)
		qsort(g.recs, g.nrecs, sizeof(*g.recs), cmp_record);
	r->recs = g.recs;
	r->nrecs = g.nrecs;
}

/* The kinds listed, or counted as errors: MASK, 0 for the default. */
static unsigned kinds_of(const struct report_input *in, unsigned mask)
{
	if (!mask)
		mask = REPORT_KIND(SCAN_DEFINITELY_LOST) |
		       REPORT_KIND(SCAN_INDIRECTLY_LOST) |
		       REPORT_KIND(SCAN_POSSIBLY_LOST);
	return mask;
}

/* Is REC written out (text and JSON)? */
static int listed(const struct rep *r, const struct record *rec)
{
	unsigned shown = kinds_of(r->in, r->in->show_kinds);

	if (r->in->show_reachable)
		shown |= REPORT_KIND(SCAN_STILL_REACHABLE);
	return !rec->suppressed && r->in->leak_check == LEAK_CHECK_FULL &&
	       (rec->cls == CLS_UNCLASSIFIED || (shown & REPORT_KIND(rec->cls)));
}

/* ---- frames ---- */

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

static unsigned name_frames(struct rep *r, const struct record *rec)
{
	if (rec->before) {
		/* made before the attach: no stack, one pseudo-frame in the
		 * allocator's place, its type if known (valgrind's XML,
		 * leak: patterns) */
		grow_array((void **)&r->frames, &r->frames_alloc, 1,
			   sizeof(*r->frames));
		memset(&r->frames[0], 0, sizeof(r->frames[0]));
		r->frames[0].function = r->frames[0].symbol =
			rep_type_name(r, rec) ? rep_type_name(r, rec) : REPORT_BEFORE_FRAME;
		return 1;
	}
	return rep_name_stack(r, rec->stack, rec->fn);
}

/*
 * Mark the records that match a leak: pattern (by the frames shown) and
 * count them in their pattern; then the summary of what is left.  Each
 * report counts afresh: the leak patterns' counts are reset first.
 */
static void suppress_and_sum(struct rep *r)
{
	struct suppressions *supp = r->in->supp;
	size_t k;
	unsigned i;

	if (supp)
		for (i = 0; i < supp->n; i++)
			if (supp->p[i].kind == SUPP_LEAK || supp->p[i].kind == SUPP_TYPE)
				supp->p[i].count = supp->p[i].bytes = 0;
	for (k = 0; k < r->nrecs; k++) {
		struct record *rec = &r->recs[k];

		if (supp && supp->n) {
			unsigned n = name_frames(r, rec);
			int m = supp_match_leak(supp, rec->cls == CLS_UNCLASSIFIED ?
						-1 : rec->cls, r->frames, n);

			if (m < 0 && rec->before)
				m = supp_match_type(supp, rep_type_name(r, rec));

			if (m >= 0) {
				rec->suppressed = 1;
				rec->supp = m;
				supp->p[m].count++;
				/* direct bytes, as summary.suppressed: an
				 * indirect block has its own record */
				supp->p[m].bytes += rec->bytes;
				r->supp_bytes += rec->bytes;
				r->supp_blocks += rec->blocks;
				continue;
			}
		}
		r->cls_bytes[rec->cls] += rec->bytes;
		r->cls_blocks[rec->cls] += rec->blocks;
	}
}

/* ---- text ---- */

static void line(struct rep *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line(struct rep *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(r->text, "ptleak[%d]: ", (int)r->in->pid);
	va_start(ap, fmt);
	vfprintf(r->text, fmt, ap);
	va_end(ap);
	putc('\n', r->text);
}

static void blank(struct rep *r)
{
	fprintf(r->text, "ptleak[%d]:\n", (int)r->in->pid);
}

static const char *blocks_word(uint64_t n)
{
	return n == 1 ? "block" : "blocks";
}

/* "   LABEL: B bytes in N blocks", LABEL right-aligned like valgrind. */
static void text_count(struct rep *r, const char *label, uint64_t bytes,
		       uint64_t blocks, const char *why)
{
	char b1[32], b2[32];

	line(r, "%*s: %s bytes in %s %s%s%s%s", LABEL_WIDTH, label,
	     fmt_thousands(b1, bytes), fmt_thousands(b2, blocks),
	     blocks_word(blocks), why ? " (" : "", why ? why : "",
	     why ? ")" : "");
}

/* "report 2 on signal, 2026-11-22 14:03:12, 12.345 s after tracing
 * started[, blocks younger than 5 s left out]" */
static void text_banner(struct rep *r)
{
	const struct report_input *in = r->in;
	char when[64] = "", young[64] = "";
	struct tm tm;

	if (!in->number)
		return;
	if (localtime_r(&in->wall, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	if (in->min_age_ns)
		snprintf(young, sizeof(young), ", blocks younger than %g s left out",
			 (double)in->min_age_ns / 1e9);
	line(r, "report %u %s, %s, %.3f s after tracing started%s", in->number,
	     in->reason == REPORT_SIGNAL ? "on signal" : report_when(in->reason),
	     when, (double)in->elapsed_ns / 1e9, young);
	if (in->snapshot_why)
		line(r, "no snapshot of the process (%s): its threads were held "
		     "for the whole scan (%.1f ms)", in->snapshot_why, in->pause_ms);
}

/* -p: what the census at the attach found (census.h). */
static void text_census(struct rep *r)
{
	const struct census *c = r->in->census;
	char b1[32], b2[32];
	char *hold;

	if (!c)
		return;
	if (c->exact) {
		line(r, "  made before ptleak attached: %s bytes in %s blocks "
		     "(census of %s's heap)", fmt_thousands(b1, c->bytes),
		     fmt_thousands(b2, c->nblocks),
		     census_allocator_name(c->allocator));
		return;
	}
	line(r, "  blocks made before ptleak attached are NOT known: %s; the "
	     "memory of %s is scanned as roots",
	     text_safe(c->why, &hold), census_allocator_name(c->allocator));
	free(hold);
}

static void text_head(struct rep *r)
{
	const struct heap_stats *st = heap_stats(r->in->heap);
	char b1[32], b2[32], b3[32], label[32];

	snprintf(label, sizeof(label), "in use %s", report_when(r->in->reason));
	line(r, "HEAP SUMMARY:");
	text_count(r, label, st->in_use_bytes,
		   st->in_use_blocks, NULL);
	line(r, "  total heap usage: %s allocs, %s frees, %s bytes allocated",
	     fmt_thousands(b1, st->allocs), fmt_thousands(b2, st->frees),
	     fmt_thousands(b3, st->bytes_allocated));
	line(r, "  peak: %s bytes in use", fmt_thousands(b1, st->peak_bytes));
	text_census(r);
	blank(r);
	/* never "no leaks are possible" about what could not be seen */
	if (r->in->heap_untracked) {
		char *hold;

		line(r, "heap NOT tracked: %s",
		     text_safe(r->in->heap_untracked, &hold));
		free(hold);
	} else if (!r->nrecs && st->in_use_blocks && r->in->min_age_ns)
		line(r, "No block is older than %g s (--min-age)",
		     (double)r->in->min_age_ns / 1e9);
	else if (!r->nrecs)
		line(r, "All heap blocks were freed -- no leaks are possible");
}

static void text_frame(struct rep *r, unsigned i, const struct frame_info *fi)
{
	report_text_frame(r->text, r->in->pid, i, fi);
}

static const char *kind_words(uint8_t cls)
{
	const char *w = scan_class_words(cls);

	return w ? w : "unclassified";
}

static void text_record(struct rep *r, size_t k, const struct record *rec,
			unsigned nframes)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], age[64] = "";
	unsigned i;

	/* a live process's records say how old their blocks are (made
	 * before the attach: older than the tracing) */
	if (rec->before)
		snprintf(age, sizeof(age), " (age over %.3f s)",
			 (double)r->in->elapsed_ns / 1e9);
	else if (r->in->reason != REPORT_EXIT)
		snprintf(age, sizeof(age), " (age %.3f to %.3f s)",
			 rep_age_of(r, rec->youngest), rep_age_of(r, rec->oldest));
	if (rec->indirect)
		line(r, "%s (%s direct, %s indirect) bytes in %s %s are %s in "
		     "loss record %s of %s%s",
		     fmt_thousands(b1, rec->bytes + rec->indirect),
		     fmt_thousands(b5, rec->bytes),
		     fmt_thousands(b6, rec->indirect),
		     fmt_thousands(b2, rec->blocks), blocks_word(rec->blocks),
		     kind_words(rec->cls), fmt_thousands(b3, k + 1),
		     fmt_thousands(b4, r->nrecs), age);
	else
		line(r, "%s bytes in %s %s are %s in loss record %s of %s%s",
		     fmt_thousands(b1, rec->bytes),
		     fmt_thousands(b2, rec->blocks), blocks_word(rec->blocks),
		     kind_words(rec->cls), fmt_thousands(b3, k + 1),
		     fmt_thousands(b4, r->nrecs), age);
	if (rec->before) {
		const char *type = rep_type_name(r, rec);

		line(r, "   made before ptleak attached");
		if (type) {
			char *hold;

			line(r, "   type: %s", text_safe(type, &hold));
			free(hold);
		}
	} else
		for (i = 0; i < nframes; i++)
			text_frame(r, i, &r->frames[i]);
	blank(r);
	if (r->in->gen_suppressions)
		vgsupp_print(r->text, rec->cls == CLS_UNCLASSIFIED ? -1 : rec->cls,
			     r->frames, nframes);
}

static void text_tail(struct rep *r)
{
	if (!r->nrecs || r->in->leak_check == LEAK_CHECK_NO)
		return;
	struct suppressions *supp = r->in->supp;
	int c;

	line(r, "LEAK SUMMARY:");
	for (c = SCAN_DEFINITELY_LOST; c <= SCAN_STILL_REACHABLE; c++)
		text_count(r, kind_words((uint8_t)c), r->cls_bytes[c],
			   r->cls_blocks[c], NULL);
	if (r->in->scan || r->in->classes || supp)
		text_count(r, "suppressed", r->supp_bytes, r->supp_blocks,
			   NULL);
	if (!r->in->scan && !r->in->classes)
		text_count(r, "unclassified", r->cls_bytes[CLS_UNCLASSIFIED],
			   r->cls_blocks[CLS_UNCLASSIFIED],
			   nonempty(r->in->unclassified_why));
}

/* The patterns that suppressed something (leak: and fd:), after both
 * parts of the report. */
static void text_suppressions_used(struct rep *r)
{
	struct suppressions *supp = r->in->supp;
	unsigned i, used = 0;

	for (i = 0; supp && i < supp->n; i++)
		used += supp->p[i].count > 0;
	if (!used)
		return;
	blank(r);
	line(r, "Suppressions used:");
	line(r, "  count      bytes template");
	for (i = 0; i < supp->n; i++) {
		char *hold;

		if (!supp->p[i].count)
			continue;
		line(r, "%7llu %10llu %s", (unsigned long long)supp->p[i].count,
		     (unsigned long long)supp->p[i].bytes,
		     text_safe(supp->p[i].glob, &hold));
		free(hold);
	}
}

/* ---- driver ---- */

static void sink_record(struct rep *r, const struct report_sink *sk, size_t k,
			const struct record *rec, unsigned nframes,
			int is_listed)
{
	struct report_record rr = {
		.cls = rec->cls == CLS_UNCLASSIFIED ? -1 : rec->cls,
		.bytes = rec->bytes, .indirect = rec->indirect,
		.blocks = rec->blocks, .number = k + 1, .total = r->nrecs,
		.frames = r->frames, .nframes = nframes,
		.listed = is_listed, .supp = rec->supp,
		.stack = rec->stack, .fn = rec->fn, .before = rec->before,
		.type = rec->type, .each = rec->each,
	};

	sk->record(sk->ctx, &rr);
}

static void sink_growth_text(const struct report_totals *t, FILE *f)
{
	struct rep *r = t->priv;
	FILE *text = r->text;

	r->text = f;
	rgrowth_text(r);
	r->text = text;
}

static void sink_totals(struct rep *r, struct report_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->in = r->in;
	t->nrecs = r->nrecs;
	memcpy(t->cls_bytes, r->cls_bytes, sizeof(t->cls_bytes));
	memcpy(t->cls_blocks, r->cls_blocks, sizeof(t->cls_blocks));
	t->supp_bytes = r->supp_bytes;
	t->supp_blocks = r->supp_blocks;
	t->fds = r->in->fds ? &r->fds : NULL;
	if (r->ngrowth) {
		t->growth_text = sink_growth_text;
		t->priv = r;
	}
}

/* A REPORT_SINK_ALL sink: every record in memcheck's order, numbered in
 * it; the listed ones with their frames. */
static void sink_all(struct rep *r, const struct report_sink *sk)
{
	size_t *ord = r->nrecs ? xcalloc(r->nrecs, sizeof(*ord)) : NULL, k;

	for (k = 0; k < r->nrecs; k++)
		ord[k] = k;
	if (r->nrecs > 1)
		qsort_r(ord, r->nrecs, sizeof(*ord), cmp_memcheck, r->recs);
	for (k = 0; k < r->nrecs; k++) {
		const struct record *rec = &r->recs[ord[k]];
		int is_listed = listed(r, rec);

		sink_record(r, sk, k, rec, is_listed &&
			    !(sk->flags & REPORT_SINK_KEYS) ? name_frames(r, rec) : 0,
			    is_listed);
	}
	free(ord);
}

int report_write(const struct report_input *in, FILE *text,
		 const char *json_path, struct report_result *res)
{
	struct report_input html_in;	/* in, its frames' lines noted */
	struct html_sink jout;
	struct report_totals totals;
	const struct report_sink *sk;
	int ptleak_sink = 0;
	struct rep r;
	int ret = 0;
	size_t k;

	memset(&r, 0, sizeof(r));
	if (in->html) {
		html_in = *in;
		if (html_sink_open(&jout, json_path, in->html, &html_in))
			ret = -1;
		else
			in = &html_in;
	}
	r.in = in;
	r.text = text;
	if (in->heap) {
		collect_records(&r);
		suppress_and_sum(&r);
		rgrowth_collect(&r, res);
		/* the page's growing stacks: those listed */
		if (in == &html_in) {
			html_in.growth = r.growth;
			html_in.ngrowth = r.ngrowth;
		}
	}
	if (res) {
		unsigned errs = kinds_of(in, in->error_kinds);
		int c;

		res->lost_bytes = res->lost_blocks = 0;
		for (c = SCAN_DEFINITELY_LOST; c <= SCAN_STILL_REACHABLE; c++) {
			if (!(errs & REPORT_KIND(c)))
				continue;
			res->lost_bytes += r.cls_bytes[c];
			res->lost_blocks += r.cls_blocks[c];
		}
	}
	if (in->fds) {
		fdrep_collect(&r.fds, in);
		if (res)
			res->leaked_fds = r.fds.nrecs;
	}
	if (res)
		res->untracked = (in->heap && in->heap_untracked) ||
				 (in->fds && in->fds_untracked);

	if (in == &html_in ||
	    (json_path && !html_sink_open(&jout, json_path, NULL, NULL))) {
		r.jf = jout.f;
		json_init(&r.j, r.jf);
		rep_json_head(&r);
	} else if (json_path) {
		ret = -1;
	}

	sink_totals(&r, &totals);
	for (sk = in->sink; sk; sk = sk->next) {
		ptleak_sink |= !(sk->flags & REPORT_SINK_ALL);
		if (sk->begin)
			sk->begin(sk->ctx, &totals);
	}
	if (r.text)
		text_banner(&r);
	if (r.text && in->heap)
		text_head(&r);
	for (k = 0; k < r.nrecs && (r.text || r.jf || ptleak_sink); k++) {
		unsigned n;

		if (!listed(&r, &r.recs[k]))
			continue;
		n = name_frames(&r, &r.recs[k]);

		if (r.text)
			text_record(&r, k, &r.recs[k], n);
		if (r.jf)
			rep_json_record(&r, &r.recs[k], n);
		for (sk = in->sink; sk; sk = sk->next)
			if (!(sk->flags & REPORT_SINK_ALL))
				sink_record(&r, sk, k, &r.recs[k], n, 1);
	}
	for (sk = in->sink; sk; sk = sk->next) {
		if (sk->flags & REPORT_SINK_ALL)
			sink_all(&r, sk);
		if (sk->end)
			sk->end(sk->ctx, &totals);
	}
	if (r.text && in->heap) {
		text_tail(&r);
		rgrowth_text(&r);
	}
	if (r.text && in->heap && in->threads)
		rthreads_text(in, r.text);
	if (r.text && in->fds) {
		if (in->heap)
			blank(&r);
		fdrep_text(&r.fds, r.text);
	}
	if (r.text)
		text_suppressions_used(&r);
	if (r.text)
		rresources_text(in, r.text);
	if (r.jf) {
		rep_json_tail(&r);
		if (html_sink_commit(&jout, in))
			ret = -1;
	}
	if (r.text) {
		errno = 0;
		if (fflush(r.text) || ferror(r.text))
			ret = error("cannot write the report: %s",
				    strerror(errno ? errno : EIO));
	}

	free(r.frames);
	free(r.recs);
	free(r.growth);
	fdrep_free(&r.fds);
	return ret;
}
