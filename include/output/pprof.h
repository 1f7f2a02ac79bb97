/*
 * pprof.h - the report as a pprof profile (--pprof FILE): profile.proto,
 * gzip-compressed (zlib), as Go's heap profiles: sample types
 * alloc_objects/count, alloc_space/bytes, inuse_objects/count and
 * inuse_space/bytes (the default), one sample per allocation stack,
 * locations with their function, file and line, mappings with the
 * objects' paths and build ids.  alloc_* count every allocation made at
 * the stack, freed or not (heap_stack_totals); inuse_* the live blocks.
 * Read by `go tool pprof`, speedscope, and the rest of pprof's world.
 */
#ifndef PTLEAK_PPROF_H
#define PTLEAK_PPROF_H

#include "output/report.h"
#include "symbols/symbols.h"

/* Write IN's heap to PATH (atomically: outfile.h), frames named with
 * IN's namer, mappings from SYM (NULL: no build ids).  0, or -1
 * (message). */
int pprof_write(const char *path, const struct report_input *in,
		struct symbolizer *sym);

#endif
