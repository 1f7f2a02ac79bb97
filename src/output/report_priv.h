/*
 * report_priv.h - what the report's writers share (report.c: grouping,
 * text and the driver; report_json.c: the JSON document).  Internal to
 * the report module; its API is include/report.h.
 */
#ifndef PTLEAK_REPORT_PRIV_H
#define PTLEAK_REPORT_PRIV_H

#include <stdint.h>
#include <stdio.h>

#include "output/json.h"
#include "output/report.h"
#include "output/report_fds.h"

/* record.cls beyond enum scan_class: no scan */
#define CLS_UNCLASSIFIED 4
#define NCLS 5

struct record {
	uint64_t youngest, oldest;	/* allocation times (now_ns) */
	uint64_t bytes;		/* direct: the sum of the blocks' sizes */
	uint64_t indirect;	/* the sum of the blocks' indirect bytes */
	uint64_t blocks;
	uint32_t stack;
	uint8_t fn;
	uint8_t cls;		/* enum scan_class or CLS_UNCLASSIFIED */
	uint8_t suppressed;
	uint8_t before;		/* census blocks (heap_block.before), grouped
				 * by type (TYPE, heap_block.type), else by
				 * size: EACH bytes each */
	uint16_t type;
	uint64_t each;
};



struct rep {
	const struct report_input *in;
	FILE *text;		/* NULL: no text */
	FILE *jf;		/* NULL: no JSON */
	struct json j;
	struct record *recs;
	size_t nrecs;
	/* summary, direct bytes, suppressed records not included */
	uint64_t cls_bytes[NCLS], cls_blocks[NCLS];
	uint64_t supp_bytes, supp_blocks;
	struct frame_info *frames;
	size_t frames_alloc;
	struct fd_report fds;	/* in->fds: the descriptors' part */
};

/* A census record's C++ class, or NULL. */
const char *rep_type_name(const struct rep *r, const struct record *rec);

/* "definitely_lost", ..., "unclassified": a record's JSON kind. */
const char *rep_kind_key(uint8_t cls);

/* Seconds between allocation time T and the report. */
double rep_age_of(const struct rep *r, uint64_t t);

/* The JSON document: head (target, heap, summary, opens "records"), one
 * call per listed record (r->frames holds its NFRAMES named frames), tail
 * (closes the heap, descriptors and threads). */
void rep_json_head(struct rep *r);
void rep_json_record(struct rep *r, const struct record *rec,
		     unsigned nframes);
void rep_json_tail(struct rep *r);

#endif
