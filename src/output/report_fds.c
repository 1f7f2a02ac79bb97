/*
 * report_fds.c - the file-descriptor part of the report (report_fds.h).
 *
 * Listed: every open descriptor that is not inherited, older than
 * --min-age (unknown ones have no age: always), not suppressed, by fd.
 * Frame 0 of a traced record is the creating function's entry, named
 * after it; the JSON stack has the callers only, as the heap records'.
 * Descriptors are few: each listed record keeps its named frames.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/report_fds.h"
#include "tables/stacks.h"
#include "analysis/suppress.h"
#include "base/util.h"

/* Name the frames of REC into L. */
static void name_frames(const struct report_input *in, struct fd_listed *l)
{
	size_t alloc = 0;

	l->frames = NULL;
	l->nframes = report_stack_frames(in, l->rec->stack, l->rec->opened_by,
					 &l->frames, &alloc);
}

void fdrep_collect(struct fd_report *fr, const struct report_input *in)
{
	struct suppressions *supp = in->supp;
	int fd, limit = fds_limit(in->fds);
	unsigned i;

	memset(fr, 0, sizeof(*fr));
	fr->in = in;
	fds_count(in->fds, &fr->open, &fr->inherited);
	if (supp)
		for (i = 0; i < supp->n; i++)
			if (supp->p[i].kind == SUPP_FD)
				supp->p[i].count = supp->p[i].bytes = 0;
	for (fd = 0; fd < limit; fd++) {
		const struct fd_rec *rec = fds_get(in->fds, fd);
		struct fd_listed *l;
		int m;

		if (!rec || rec->origin == FD_INHERITED)
			continue;
		if (rec->time_ns && in->min_age_ns &&
		    in->now_ns - rec->time_ns < in->min_age_ns)
			continue;
		grow_array((void **)&fr->recs, &fr->alloc, fr->nrecs + 1,
			   sizeof(*fr->recs));
		l = &fr->recs[fr->nrecs];
		memset(l, 0, sizeof(*l));
		l->rec = rec;
		name_frames(in, l);
		m = supp_match(supp, SUPP_FD, l->frames, l->nframes);
		if (m >= 0) {
			supp->p[m].count++;
			fr->suppressed++;
			free(l->frames);
			continue;
		}
		fr->nrecs++;
	}
}

void fdrep_text(const struct fd_report *fr, FILE *f)
{
	int pid = (int)fr->in->pid;
	char *hold;
	size_t k;
	unsigned i;

	fprintf(f, "ptleak[%d]: FILE DESCRIPTORS: %" PRIu64 " open %s (%" PRIu64
		" inherited)\n", pid, fr->open, report_when(fr->in->reason),
		fr->inherited);
	if (fr->in->fds_untracked) {
		fprintf(f, "ptleak[%d]: file descriptors NOT tracked: %s\n", pid,
			text_safe(fr->in->fds_untracked, &hold));
		free(hold);
	}
	for (k = 0; k < fr->nrecs; k++) {
		const struct fd_listed *l = &fr->recs[k];
		const struct fd_rec *rec = l->rec;

		/* a file name is anything the target chose */
		fprintf(f, "ptleak[%d]: fd %d -> %s, opened by %s%s\n", pid,
			rec->fd, text_safe(rec->target ? rec->target : "?", &hold),
			rec->opened_by ? rec->opened_by : "unknown",
			rec->before_exec ? " before an exec" : "");
		free(hold);
		for (i = 0; i < l->nframes; i++)
			report_text_frame(f, fr->in->pid, i, &l->frames[i]);
		fprintf(f, "ptleak[%d]:\n", pid);
	}
}

void fdrep_json(const struct fd_report *fr, struct json *j)
{
	size_t k;
	unsigned i;

	json_object_begin(j);
	json_key(j, "open");
	json_uint(j, fr->open);
	json_key(j, "inherited");
	json_uint(j, fr->inherited);
	json_key(j, "records");
	json_array_begin(j);
	for (k = 0; k < fr->nrecs; k++) {
		const struct fd_listed *l = &fr->recs[k];
		const struct fd_rec *rec = l->rec;

		json_object_begin(j);
		json_key(j, "fd");
		json_int(j, rec->fd);
		json_key(j, "type");
		json_string(j, fd_type_name((enum fd_type)rec->type));
		json_key(j, "target");
		json_string(j, rec->target);
		json_key(j, "opened_by");
		json_string(j, rec->opened_by ? rec->opened_by : "unknown");
		/* the callers: frame 0 is "opened_by" */
		json_key(j, "stack");
		json_array_begin(j);
		for (i = 1; i < l->nframes; i++)
			report_json_frame(j, &l->frames[i]);
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	report_json_tracked(j, fr->in->fds_untracked);
	json_object_end(j);
}

void fdrep_free(struct fd_report *fr)
{
	size_t k;

	for (k = 0; k < fr->nrecs; k++)
		free(fr->recs[k].frames);
	free(fr->recs);
	memset(fr, 0, sizeof(*fr));
}
