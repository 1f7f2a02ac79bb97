/*
 * recblob.h - the hook blob: the recorder's code as one flat image that
 * ptleak copies into a target (docs/recorder.md, piece 1).
 *
 * Built from recorder/ (freestanding, no relocation, no undefined symbol:
 * the build refuses anything else).  Use: copy rec_blob to an address A
 * (16-byte aligned), store the context pointer (a struct rec_conf,
 * rechook.h) in
 * the 8-byte word at A + RECBLOB_OFF_rec_ctx, make it executable (never
 * writable and executable at once), then call an entry at
 * A + RECBLOB_OFF_<entry>.  The entries:
 *
 *   int rec_record(uint64_t type, uint64_t a0, uint64_t a1, uint64_t a2)
 *       one ring record of type TYPE with words A0, A1, A2; 0, or -1 if
 *       none was made (no context yet; else counted by the ring).
 *   rec_stub
 *       the common stub of the patched functions, entered by their
 *       trampolines only (arch_patch.h, rechook.h).
 *
 * rec_blob_unwtab is the image's own unwind table (unwtab.h, compiled
 * from its CFI at build time), pcs as offsets in the image: as a struct
 * unwtab_obj { A, A + rec_blob_size, A, table } among the tables the
 * hooks walk with (rechook.h's struct rec_objs), a walk from a signal
 * handler that interrupted a patched call goes on through the stub's
 * frame (or a hook's) into the call's caller.  The rest of a code page
 * (trampolines, relocated prologues) has no rules: a walk stops there.
 */
#ifndef PTLEAK_RECBLOB_H
#define PTLEAK_RECBLOB_H

#include <stddef.h>
#include <stdint.h>

#include "recblob_offsets.h"	/* generated: RECBLOB_OFF_<name>, RECBLOB_SIZE */

extern const unsigned char rec_blob[];
extern const size_t rec_blob_size;
extern const unsigned char rec_blob_unwtab[];	/* 8-aligned */
extern const size_t rec_blob_unwtab_size;

typedef int (*rec_record_fn)(uint64_t type, uint64_t a0, uint64_t a1,
			     uint64_t a2);

#endif
