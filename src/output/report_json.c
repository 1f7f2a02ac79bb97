/*
 * report_json.c - the report as the JSON document of SPEC.md, written
 * record by record in the same pass as the text (report.c drives it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "tables/heap.h"
#include "output/json.h"
#include "report_priv.h"
#include "output/report_threads.h"
#include "analysis/scan.h"
#include "tables/stacks.h"

static const char *reason_name(enum report_reason reason)
{
	switch (reason) {
	case REPORT_SIGNAL:
		return "signal";
	case REPORT_DETACH:
		return "detach";
	case REPORT_EXEC:
		return "exec";
	case REPORT_EXIT:
	default:
		return "exit";
	}
}

static void json_count(struct json *j, const char *key, uint64_t bytes,
		       uint64_t blocks)
{
	json_key(j, key);
	json_object_begin(j);
	json_key(j, "bytes");
	json_uint(j, bytes);
	json_key(j, "blocks");
	json_uint(j, blocks);
	json_object_end(j);
}

void rep_json_head(struct rep *r)
{
	const struct report_input *in = r->in;
	struct json *j = &r->j;
	char *const *a;

	json_object_begin(j);
	json_key(j, "version");
	json_int(j, 1);
	json_key(j, "tool");
	json_string(j, "ptleak");
	json_key(j, "reason");
	json_string(j, reason_name(in->reason));
	if (in->number) {
		char when[64] = "";
		struct tm tm;

		if (gmtime_r(&in->wall, &tm))
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		json_key(j, "report");
		json_object_begin(j);
		json_key(j, "number");
		json_uint(j, in->number);
		json_key(j, "time");
		json_string(j, when);
		json_key(j, "elapsed_s");
		json_seconds(j, (double)in->elapsed_ns / 1e9);
		json_key(j, "min_age_s");
		json_seconds(j, (double)in->min_age_ns / 1e9);
		json_key(j, "pause_ms");
		json_seconds(j, in->pause_ms);
		json_key(j, "snapshot");
		json_bool(j, in->snapshot);
		json_object_end(j);
	}
	json_key(j, "target");
	json_object_begin(j);
	json_key(j, "pid");
	json_int(j, in->pid);
	json_key(j, "argv");
	json_array_begin(j);
	for (a = in->argv; a && *a; a++)
		json_string(j, *a);
	json_array_end(j);
	json_key(j, "exit");
	if (!in->exited) {
		json_null(j);
	} else {
		json_object_begin(j);
		if (in->exit_signal) {
			json_key(j, "signal");
			json_int(j, in->exit_signal);
		} else {
			json_key(j, "code");
			json_int(j, in->exit_code);
		}
		json_object_end(j);
	}
	json_key(j, "resources");
	rresources_json(in, j);
	json_object_end(j);

	json_key(j, "heap");
	if (!in->heap) {
		json_null(j);
		return;
	}
	{
		const struct heap_stats *st = heap_stats(in->heap);

		json_object_begin(j);
		json_count(j, "in_use", st->in_use_bytes, st->in_use_blocks);
		json_key(j, "totals");
		json_object_begin(j);
		json_key(j, "allocs");
		json_uint(j, st->allocs);
		json_key(j, "frees");
		json_uint(j, st->frees);
		json_key(j, "bytes_allocated");
		json_uint(j, st->bytes_allocated);
		json_key(j, "unknown_frees");
		json_uint(j, st->unknown_frees);
		json_object_end(j);
		json_key(j, "peak");
		json_object_begin(j);
		json_key(j, "bytes");
		json_uint(j, st->peak_bytes);
		json_object_end(j);
	}
	json_key(j, "census");
	if (!in->census) {
		json_null(j);
	} else {
		const struct census *c = in->census;

		json_object_begin(j);
		json_key(j, "allocator");
		json_string(j, census_allocator_name(c->allocator));
		json_key(j, "exact");
		json_bool(j, c->exact);
		json_key(j, "blocks");
		json_uint(j, c->nblocks);
		json_key(j, "bytes");
		json_uint(j, c->bytes);
		json_key(j, "why");
		if (c->exact)
			json_null(j);
		else
			json_string(j, c->why);
		json_object_end(j);
	}
	json_key(j, "summary");
	json_object_begin(j);
	{
		int c;

		for (c = SCAN_DEFINITELY_LOST; c <= SCAN_STILL_REACHABLE; c++)
			json_count(j, rep_kind_key((uint8_t)c), r->cls_bytes[c],
				   r->cls_blocks[c]);
	}
	json_count(j, "suppressed", r->supp_bytes, r->supp_blocks);
	json_count(j, "unclassified", r->cls_bytes[CLS_UNCLASSIFIED],
		   r->cls_blocks[CLS_UNCLASSIFIED]);
	json_object_end(j);
	json_key(j, "records");
	json_array_begin(j);
}

void rep_json_record(struct rep *r, const struct record *rec,
		     unsigned nframes)
{
	struct json *j = &r->j;
	unsigned i;

	json_object_begin(j);
	json_key(j, "kind");
	json_string(j, rep_kind_key(rec->cls));
	json_key(j, "bytes");
	json_uint(j, rec->bytes + rec->indirect);
	json_key(j, "blocks");
	json_uint(j, rec->blocks);
	json_key(j, "direct_bytes");
	json_uint(j, rec->bytes);
	json_key(j, "indirect_bytes");
	json_uint(j, rec->indirect);
	json_key(j, "before_attach");
	json_bool(j, rec->before);
	json_key(j, "type");
	if (rep_type_name(r, rec))
		json_string(j, rep_type_name(r, rec));
	else
		json_null(j);
	json_key(j, "allocator");
	if (rec->before)
		json_null(j);	/* which call made it is not known */
	else
		json_string(j, alloc_fn_name((enum alloc_fn)rec->fn));
	/* as SPEC.md's example: the callers; the allocator is "allocator" */
	json_key(j, "stack");
	json_array_begin(j);
	for (i = 1; i < nframes; i++)
		report_json_frame(j, &r->frames[i]);
	json_array_end(j);
	/* a live process's records say how old their blocks are */
	if (r->in->reason != REPORT_EXIT) {
		json_key(j, "age_s");
		json_object_begin(j);
		/* made before the attach: older than the tracing */
		double elapsed = (double)r->in->elapsed_ns / 1e9;

		json_key(j, "youngest");
		json_seconds(j, rec->before ? elapsed : rep_age_of(r, rec->youngest));
		json_key(j, "oldest");
		json_seconds(j, rec->before ? elapsed : rep_age_of(r, rec->oldest));
		json_object_end(j);
	}
	json_object_end(j);
}

void rep_json_tail(struct rep *r)
{
	struct json *j = &r->j;

	if (r->in->heap) {
		json_array_end(j);	/* records */
		rgrowth_json(r);
		report_json_tracked(j, r->in->heap_untracked);
		json_object_end(j);	/* heap */
	}
	json_key(j, "fds");
	if (r->in->fds)
		fdrep_json(&r->fds, j);
	else
		json_null(j);
	json_key(j, "threads");
	rthreads_json(r->in, j);
	json_object_end(j);
}
