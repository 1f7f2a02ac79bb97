/*
 * report_priv.h - what the report's writers share (report.c: grouping,
 * text and the driver; report_json.c: the JSON document; report_common.c:
 * what both use).  Internal to the report module; its API is
 * include/output/report.h.
 */
#ifndef PTLEAK_REPORT_PRIV_H
#define PTLEAK_REPORT_PRIV_H

#include <stdint.h>
#include <stdio.h>

#include "output/json.h"
#include "output/report.h"
#include "output/report_fds.h"
#include "tables/growth.h"

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
	int supp;		/* the pattern that suppressed it, -1: none */
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
	/* in->growth less what leak: patterns suppress (report_growth.c) */
	struct growth_entry *growth;
	size_t ngrowth;
};

/* ---- report_common.c ---- */

/*
 * Name the frames of STACK into r->frames; returns how many to show: at
 * most in->depth, and none below the first "main".  Frame 0 (the
 * allocator's entry) is named after allocator FN (enum alloc_fn; -1: as
 * its symbol is called) whatever the symbol there is (__libc_malloc and
 * other aliases).
 */
unsigned rep_name_stack(struct rep *r, uint32_t stack, int fn);

/* A census record's C++ class, or NULL. */
const char *rep_type_name(const struct rep *r, const struct record *rec);

/* "definitely_lost", ..., "unclassified": a record's JSON kind. */
const char *rep_kind_key(uint8_t cls);

/* Seconds between allocation time T and the report. */
double rep_age_of(const struct rep *r, uint64_t t);

/* ---- report_growth.c ---- */

/* in->growth into r->growth, less the entries a leak: pattern matches
 * (named and matched by the frames shown, as records are; not counted in
 * the patterns' counts); RES->growing counts what is left at or above
 * in->errors_for_growth. */
void rgrowth_collect(struct rep *r, struct report_result *res);
/* The GROWTH section (nothing when no stack grows). */
void rgrowth_text(struct rep *r);
/* "growth": [...] in the heap object. */
void rgrowth_json(struct rep *r);

/* ---- report_json.c ---- */

/* The JSON document: head (target, heap, summary, opens "records"), one
 * call per listed record (r->frames holds its NFRAMES named frames), tail
 * (closes the heap, descriptors and threads). */
void rep_json_head(struct rep *r);
void rep_json_record(struct rep *r, const struct record *rec,
		     unsigned nframes);
void rep_json_tail(struct rep *r);

#endif
