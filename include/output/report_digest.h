/*
 * report_digest.h - what a heap report found, kept to compare two reports
 * of the same instant (PTLEAK_DEBUG=snapshot-check: the report made from
 * a snapshot against the one made with the threads held; design.md "Live
 * reports from a snapshot").
 *
 * A digest is a report_sink (REPORT_SINK_ALL | REPORT_SINK_KEYS: every
 * record, no frame named) that keeps each record's keys (stack, allocator,
 * census type or size, class) and figures (bytes, indirect bytes, blocks)
 * and the totals by class.  Two digests are equal when they hold the same
 * records, in any order, and the same totals.
 */
#ifndef PTLEAK_REPORT_DIGEST_H
#define PTLEAK_REPORT_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "output/report.h"

struct digest_rec {
	uint32_t stack;
	uint8_t fn, before;
	uint16_t type;
	int cls;			/* enum scan_class, -1: unclassified */
	uint64_t each, bytes, indirect, blocks;
};

struct report_digest {
	struct digest_rec *recs;
	size_t n, alloc;
	/* report_totals' (not suppressed), [4]: unclassified */
	uint64_t cls_bytes[5], cls_blocks[5];
	uint64_t supp_bytes, supp_blocks;
	struct report_sink sink;
};

/* D emptied, its sink ready: &D->sink (next NULL; chain it). */
const struct report_sink *digest_sink(struct report_digest *d);

/* A and B compared (both sorted here): 0 equal; 1 with the first
 * difference said in WHY (LEN bytes; A is the snapshot's, B the held
 * report's). */
int digest_diff(struct report_digest *a, struct report_digest *b,
		char *why, size_t len);

void digest_free(struct report_digest *d);

#endif
