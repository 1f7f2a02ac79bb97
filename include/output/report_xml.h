/*
 * report_xml.h - the report as valgrind's XML, protocol 4 (valgrind's
 * docs/internals/xml-output-protocol4.txt), for the tools that read
 * valgrind's XML: the preamble, an <error> per record listed (kind
 * Leak_DefinitelyLost ..., <xwhat> with leakedbytes/leakedblocks, the
 * <stack> from the allocator outward), <suppression> blocks with
 * --gen-suppressions=all, and <suppcounts>.  Written atomically at every
 * report (outfile.h), like the JSON.
 */
#ifndef PTLEAK_REPORT_XML_H
#define PTLEAK_REPORT_XML_H

#include "output/report.h"

struct vgxml;

/*
 * Open PATH for the report IN is about to make and write the preamble.
 * GEN_SUPP: a <suppression> in every <error>.  NULL after a message.
 * IN->sink is then to be set to vgxml_sink's.
 */
struct vgxml *vgxml_open(const char *path, const struct report_input *in,
			 int gen_supp);

/* The sink that writes an <error> per record (report_write). */
const struct report_sink *vgxml_sink(struct vgxml *x);

/* After report_write: <suppcounts> (SUPP's counts, NULL: none), the end,
 * the file renamed into place.  0, or -1 (message). */
int vgxml_close(struct vgxml *x, const struct suppressions *supp);

#endif
