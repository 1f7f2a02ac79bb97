/*
 * report_common.c - what the report's writers share (report_priv.h,
 * report_fds.h): a frame as a text line or a JSON object, "at exit" or
 * "now", a record's JSON kind and age, a stack's frames named.  Below report.c, report_json.c,
 * report_fds.c and report_html_doc.c; it calls none of them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/json.h"
#include "output/report.h"
#include "output/report_fds.h"
#include "report_priv.h"
#include "base/util.h"

const char *report_when(enum report_reason reason)
{
	switch (reason) {
	case REPORT_SIGNAL:
		return "now";
	case REPORT_DETACH:
		return "at detach";
	case REPORT_EXEC:
		return "at exec";
	case REPORT_EXIT:
	default:
		return "at exit";
	}
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

void report_text_frame(FILE *f, pid_t pid, unsigned i,
		       const struct frame_info *fi)
{
	const char *verb = i ? "by" : "at";
	char *h1, *h2, *h3;	/* names from debug info: no terminal codes */
	const char *fn = text_safe(fi->function ? fi->function : "???", &h1);
	const char *file = text_safe(fi->file, &h2);
	const char *mod = text_safe(fi->module ? base_name(fi->module) : NULL,
				    &h3);

	fprintf(f, "ptleak[%d]: ", (int)pid);
	if (file && fi->line > 0)
		fprintf(f, "   %s 0x%" PRIx64 ": %s (%s:%d)\n", verb, fi->pc, fn,
			file, fi->line);
	else if (mod && fi->function)
		fprintf(f, "   %s 0x%" PRIx64 ": %s (%s)\n", verb, fi->pc, fn, mod);
	else if (mod)
		fprintf(f, "   %s 0x%" PRIx64 ": %s (%s+0x%" PRIx64 ")\n", verb,
			fi->pc, fn, mod, fi->module_offset);
	else
		fprintf(f, "   %s 0x%" PRIx64 ": %s\n", verb, fi->pc, fn);
	free(h1);
	free(h2);
	free(h3);
}

const char *rep_kind_key(uint8_t cls)
{
	if (cls == CLS_UNCLASSIFIED)
		return "unclassified";
	return scan_class_key((enum scan_class)cls);
}

/* Seconds since allocation time T. */
double rep_age_of(const struct rep *r, uint64_t t)
{
	return r->in->now_ns > t ? (double)(r->in->now_ns - t) / 1e9 : 0.0;
}

void report_json_tracked(struct json *j, const char *why)
{
	json_key(j, "tracked");
	json_bool(j, !why);
	json_key(j, "why");
	json_string(j, why);
}

void report_json_frame(struct json *j, const struct frame_info *fi)
{
	char pc[32];

	json_object_begin(j);
	snprintf(pc, sizeof(pc), "0x%" PRIx64, fi->pc);
	json_key(j, "pc");
	json_string(j, pc);
	json_key(j, "function");
	json_string(j, fi->function);
	json_key(j, "file");
	json_string(j, fi->file);
	json_key(j, "line");
	if (fi->line > 0)
		json_int(j, fi->line);
	else
		json_null(j);
	json_key(j, "module");
	json_string(j, fi->module);
	json_object_end(j);
}

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

unsigned report_stack_frames(const struct report_input *in, uint32_t stack,
			    const char *first, struct frame_info **frames,
			    size_t *alloc)
{
	const uint64_t *pcs = NULL;
	unsigned n = 0, i;

	if (in->stacks)
		n = stacks_get(in->stacks, stack, &pcs);
	if (n > in->depth)
		n = in->depth;
	grow_array((void **)frames, alloc, n, sizeof(**frames));
	for (i = 0; i < n; i++) {
		struct frame_info *fi = &(*frames)[i];

		memset(fi, 0, sizeof(*fi));
		if (in->namer)
			in->namer(in->namer_ctx, pcs[i], i != 0, fi);
		fi->pc = pcs[i];
		fi->function = nonempty(fi->function);
		fi->file = nonempty(fi->file);
		fi->module = nonempty(fi->module);
		if (i == 0 && first)
			fi->function = first;
		if (fi->function && !strcmp(fi->function, "main"))
			return i + 1;
	}
	return n;
}

unsigned rep_name_stack(struct rep *r, uint32_t stack, int fn)
{
	const char *a = fn >= 0 ? alloc_fn_name((enum alloc_fn)fn) : NULL;
	unsigned n = report_stack_frames(r->in, stack, a, &r->frames,
					 &r->frames_alloc);

	if (n && a)
		r->frames[0].symbol = a;
	return n;
}

const char *rep_type_name(const struct rep *r, const struct record *rec)
{
	const struct census *c = r->in->census;

	return rec->type && c && rec->type <= c->ntypes ? c->types[rec->type - 1] : NULL;
}
