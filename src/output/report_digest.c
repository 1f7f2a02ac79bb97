/* report_digest.c - two reports of one instant compared (report_digest.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/report_digest.h"
#include "analysis/scan.h"
#include "base/util.h"

static void d_begin(void *ctx, const struct report_totals *t)
{
	struct report_digest *d = ctx;

	d->n = 0;
	memcpy(d->cls_bytes, t->cls_bytes, sizeof(d->cls_bytes));
	memcpy(d->cls_blocks, t->cls_blocks, sizeof(d->cls_blocks));
	d->supp_bytes = t->supp_bytes;
	d->supp_blocks = t->supp_blocks;
}

static void d_record(void *ctx, const struct report_record *r)
{
	struct report_digest *d = ctx;
	struct digest_rec *x;

	grow_array((void **)&d->recs, &d->alloc, d->n + 1, sizeof(*d->recs));
	x = &d->recs[d->n++];
	memset(x, 0, sizeof(*x));
	x->stack = r->stack;
	x->fn = r->fn;
	x->before = r->before;
	x->type = r->type;
	x->cls = r->cls;
	x->each = r->each;
	x->bytes = r->bytes;
	x->indirect = r->indirect;
	x->blocks = r->blocks;
}

const struct report_sink *digest_sink(struct report_digest *d)
{
	memset(&d->sink, 0, sizeof(d->sink));
	d->n = 0;
	d->sink.begin = d_begin;
	d->sink.record = d_record;
	d->sink.ctx = d;
	d->sink.flags = REPORT_SINK_ALL | REPORT_SINK_KEYS;
	return &d->sink;
}

#define CMP(f) if (a->f != b->f) return a->f < b->f ? -1 : 1

/* By every field: the records of one report are distinct by their keys. */
static int cmp_rec(const void *pa, const void *pb)
{
	const struct digest_rec *a = pa, *b = pb;

	CMP(stack);
	CMP(fn);
	CMP(before);
	CMP(type);
	CMP(each);
	CMP(cls);
	CMP(bytes);
	CMP(indirect);
	CMP(blocks);
	return 0;
}

static const char *cls_name(int cls)
{
	return cls >= 0 && cls <= SCAN_STILL_REACHABLE ? scan_class_words(cls) :
	       "unclassified";
}

static void say_rec(char *buf, size_t len, const struct digest_rec *r)
{
	if (!r) {
		snprintf(buf, len, "none");
		return;
	}
	snprintf(buf, len, "stack %u%s: %s, %llu bytes (%llu indirect) in %llu "
		 "blocks", r->stack, r->before ? " (before attach)" : "",
		 cls_name(r->cls), (unsigned long long)r->bytes,
		 (unsigned long long)r->indirect, (unsigned long long)r->blocks);
}

int digest_diff(struct report_digest *a, struct report_digest *b,
		char *why, size_t len)
{
	char sa[160], sb[160];
	size_t i;
	int c;

	why[0] = 0;
	for (c = 0; c < 5; c++)
		if (a->cls_bytes[c] != b->cls_bytes[c] ||
		    a->cls_blocks[c] != b->cls_blocks[c]) {
			snprintf(why, len, "%s: %llu bytes in %llu blocks, held "
				 "%llu bytes in %llu blocks", cls_name(c < 4 ? c : -1),
				 (unsigned long long)a->cls_bytes[c],
				 (unsigned long long)a->cls_blocks[c],
				 (unsigned long long)b->cls_bytes[c],
				 (unsigned long long)b->cls_blocks[c]);
			return 1;
		}
	if (a->supp_bytes != b->supp_bytes || a->supp_blocks != b->supp_blocks) {
		snprintf(why, len, "suppressed: %llu bytes in %llu blocks, held "
			 "%llu bytes in %llu blocks",
			 (unsigned long long)a->supp_bytes,
			 (unsigned long long)a->supp_blocks,
			 (unsigned long long)b->supp_bytes,
			 (unsigned long long)b->supp_blocks);
		return 1;
	}
	if (a->n > 1)
		qsort(a->recs, a->n, sizeof(*a->recs), cmp_rec);
	if (b->n > 1)
		qsort(b->recs, b->n, sizeof(*b->recs), cmp_rec);
	for (i = 0; i < a->n || i < b->n; i++) {
		const struct digest_rec *x = i < a->n ? &a->recs[i] : NULL;
		const struct digest_rec *y = i < b->n ? &b->recs[i] : NULL;

		if (x && y && !cmp_rec(x, y))
			continue;
		say_rec(sa, sizeof(sa), x);
		say_rec(sb, sizeof(sb), y);
		snprintf(why, len, "%zu records, held %zu; record %zu: %s, held %s",
			 a->n, b->n, i + 1, sa, sb);
		return 1;
	}
	return 0;
}

void digest_free(struct report_digest *d)
{
	free(d->recs);
	d->recs = NULL;
	d->n = d->alloc = 0;
}
