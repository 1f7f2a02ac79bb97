/*
 * report_growth.c - the report's GROWTH section and "heap.growth"
 * (report_priv.h): the stacks whose memory in use grew steadily while
 * they were traced (growth.h decides which), fastest first, each with its
 * frames.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/json.h"
#include "output/report.h"
#include "output/report_fds.h"
#include "report_priv.h"
#include "base/util.h"

void rgrowth_collect(struct rep *r, struct report_result *res)
{
	const struct report_input *in = r->in;
	struct suppressions *supp = in->supp;
	size_t i;

	if (res)
		res->growing = 0;
	if (!in->ngrowth)
		return;
	r->growth = xcalloc(in->ngrowth, sizeof(*r->growth));
	for (i = 0; i < in->ngrowth; i++) {
		const struct growth_entry *e = &in->growth[i];

		if (supp && supp->n) {
			unsigned n = rep_name_stack(r, e->stack, -1);

			if (supp_match_leak(supp, -1, r->frames, n) >= 0)
				continue;
		}
		r->growth[r->ngrowth++] = *e;
		if (res && in->errors_for_growth > 0 &&
		    e->bytes_per_s >= in->errors_for_growth)
			res->growing++;
	}
}

/* "64,000 bytes/s" */
static char *fmt_rate(char *buf, double v)
{
	return fmt_thousands(buf, v > 0 ? (uint64_t)(v + 0.5) : 0);
}

void rgrowth_text(struct rep *r)
{
	const struct report_input *in = r->in;
	char b1[32], b2[32], b3[32];
	size_t i;

	if (!r->ngrowth)
		return;
	fprintf(r->text, "ptleak[%d]:\n", (int)in->pid);
	fprintf(r->text, "ptleak[%d]: GROWTH: %zu %s whose memory in use grew "
		"steadily, fastest first:\n", (int)in->pid, r->ngrowth,
		r->ngrowth == 1 ? "stack" : "stacks");
	for (i = 0; i < r->ngrowth; i++) {
		const struct growth_entry *e = &r->growth[i];
		unsigned n = rep_name_stack(r, e->stack, -1), k;
		double secs = (double)(e->last_ns - e->first_ns) / 1e9;

		fprintf(r->text, "ptleak[%d]: +%s bytes/s (%.1f blocks/s) over "
			"%.1f s: %s bytes in %s blocks in use\n", (int)in->pid,
			fmt_rate(b1, e->bytes_per_s), e->blocks_per_s, secs,
			fmt_thousands(b2, e->in_use_bytes),
			fmt_thousands(b3, e->in_use_blocks));
		for (k = 0; k < n; k++)
			report_text_frame(r->text, in->pid, k, &r->frames[k]);
	}
}

void rgrowth_json(struct rep *r)
{
	struct json *j = &r->j;
	size_t i;

	json_key(j, "growth");
	json_array_begin(j);
	for (i = 0; i < r->ngrowth; i++) {
		const struct growth_entry *e = &r->growth[i];
		unsigned n = rep_name_stack(r, e->stack, -1), k;

		json_object_begin(j);
		json_key(j, "bytes_per_s");
		json_double(j, e->bytes_per_s);
		json_key(j, "blocks_per_s");
		json_double(j, e->blocks_per_s);
		json_key(j, "in_use_bytes");
		json_uint(j, e->in_use_bytes);
		json_key(j, "in_use_blocks");
		json_uint(j, e->in_use_blocks);
		json_key(j, "stack");
		json_array_begin(j);
		for (k = 0; k < n; k++)
			report_json_frame(j, &r->frames[k]);
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
}
