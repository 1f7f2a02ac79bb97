/*
 * unwtab.h - compact unwind tables compiled from an ELF object's CFI.
 *
 * The recorder's hooks (docs/recorder.md, piece 6) unwind the target's
 * stack in the target itself, with no libc and no DWARF interpreter: ptleak
 * compiles each loaded object's `.eh_frame` (or `.debug_frame` when there is
 * none) into the table below, writes it into memory the hooks can read, and
 * unwtab_walk.h walks the stack with it: a binary search and one to three
 * stack reads per frame.
 *
 * Table format, version 1.  Little-endian, explicit sizes, no pointers:
 * the same bytes work in ptleak, in a shared mapping and in the target.
 *
 *     struct unwtab_hdr     48 bytes, at offset 0
 *     struct unwtab_row     nrows x 8 bytes, at rows_off (8-aligned)
 *     uint32_t buckets      nbuckets x 4 bytes, at buckets_off
 *     struct unwtab_rule    nrules x 12 bytes, at rules_off (4-aligned)
 *
 * Rows are sorted by pc, strictly increasing.  A row covers the addresses
 * from its pc to the next row's pc; addresses before the first row are not
 * covered (STOP), and the last row is always a STOP row at the end of the
 * last range with CFI.  pc is an address as the object's file links it
 * (p_vaddr), so a running address is looked up as pc - load bias.  Adjacent
 * rows never have the same rule (they are merged).  Gaps between FDEs get a
 * STOP row.
 *
 * Buckets: an index that narrows the binary search to a few rows.  Bucket
 * b covers the pcs from lo + (b << bucket_shift) (1 KiB each as compiled);
 * buckets[b] is the index of the row covering that first pc, so the row of
 * a pc in bucket b is among rows buckets[b] .. buckets[b + 1] (the last
 * row for the last bucket).  nbuckets = ((hi - lo) >> bucket_shift) + 1.
 *
 * A rule says where the caller's registers are, from the frame's pc, sp
 * (rsp) and fp (rbp); CFA is the caller's sp:
 *
 *   STOP     no caller: no CFI here, or the outermost frame (_start, a
 *            clone child: CFI says the return address is undefined)
 *   INVALID  CFI the table cannot express (a general DWARF expression, a
 *            register saved in another register): the walk stops there
 *   CFA_SP   CFA = sp + cfa_off
 *   CFA_FP   CFA = fp + cfa_off
 *   PLT      a PLT entry (GCC's CFA expression):
 *            CFA = sp + cfa_off + ((pc & 15) >= plt_split ? 8 : 0)
 *   For these three: return address at CFA + ra_off (always -8 on
 *   x86-64), caller's fp at CFA + fp_off, or unchanged if fp_off is 0.
 *   SIGNAL   the signal trampoline (__restore_rt): sp points at the
 *            kernel's signal frame; the interrupted thread's pc, sp and fp
 *            are the 8-byte words at sp + ra_off, sp + cfa_off and
 *            sp + fp_off (its ucontext's mcontext).  The caller's pc is
 *            exact (not a return address): its row is looked up at pc, not
 *            pc - 1.
 */
#ifndef PTLEAK_UNWTAB_H
#define PTLEAK_UNWTAB_H

#include <stddef.h>
#include <stdint.h>

#define UNWTAB_MAGIC 0x31545755u	/* "UWT1" read as little-endian */
#define UNWTAB_VERSION 1

enum unwtab_kind {
	UNWTAB_STOP = 0,
	UNWTAB_INVALID = 1,
	UNWTAB_CFA_SP = 2,
	UNWTAB_CFA_FP = 3,
	UNWTAB_PLT = 4,
	UNWTAB_SIGNAL = 5,
};

struct unwtab_hdr {
	uint32_t magic;		/* UNWTAB_MAGIC */
	uint16_t version;	/* UNWTAB_VERSION */
	uint16_t nrules;
	uint32_t nrows;
	uint32_t rows_off;	/* from the header's first byte */
	uint32_t rules_off;
	uint32_t size;		/* header + rows + rules, bytes */
	uint32_t lo, hi;	/* first and last covered pc: rows[0].pc,
				 * rows[nrows - 1].pc (the final STOP) */
	uint32_t buckets_off;
	uint32_t nbuckets;
	uint8_t bucket_shift;	/* 0-31 */
	uint8_t reserved[7];	/* 0 */
};

struct unwtab_row {
	uint32_t pc;		/* link-time address (file's p_vaddr space) */
	uint16_t rule;		/* index into the rules */
	uint16_t reserved;	/* 0 */
};

struct unwtab_rule {
	uint8_t kind;		/* enum unwtab_kind */
	uint8_t plt_split;	/* PLT only */
	int16_t fp_off;
	int32_t cfa_off;
	int32_t ra_off;
};

_Static_assert(sizeof(struct unwtab_hdr) == 48, "unwtab_hdr size");
_Static_assert(sizeof(struct unwtab_row) == 8, "unwtab_row size");
_Static_assert(sizeof(struct unwtab_rule) == 12, "unwtab_rule size");

/* What one compilation found, for the numbers in docs and benchmarks. */
struct unwtab_stats {
	unsigned fdes;		/* FDEs compiled */
	unsigned ranges;	/* CFI rows seen (before merging) */
	unsigned invalid;	/* of those, INVALID */
	unsigned refused;	/* FDEs whose rows libdw refused from some pc
				 * on (INVALID there) */
	unsigned plt, signal, stop;	/* PLT, SIGNAL and outermost rows */
	int debug_frame;	/* the CFI came from .debug_frame */
	unsigned libdw_fdes;	/* of the FDEs, those whose rows were asked
				 * of libdw, not run by cfi.h's interpreter */
};

/*
 * Compile the CFI of the ELF file at PATH into a table: *TAB (malloc'd,
 * (*TAB)->size bytes, free() it).  An object without CFI gives a table
 * with no rows but the final STOP.  STATS may be NULL.  Returns 0, or -1
 * with a message (not an ELF file, corrupt CFI, more than 65,535 rules,
 * addresses past 4 GiB).  No cache (unwtab_cache.c).
 */
int unwtab_compile_file(const char *path, struct unwtab_hdr **tab,
			struct unwtab_stats *stats);

/*
 * unwtab_compile_file's table, kept by file (device, inode, size and
 * modification time): in memory (16 tables at most, the least recently
 * used replaced) and on disk (unwtab_cache.c: $PTLEAK_CACHE_DIR, else
 * $XDG_CACHE_HOME/ptleak/unwind, else ~/.cache/ptleak/unwind; 256
 * tables at most; PTLEAK_CACHE_DIR set empty: no disk cache).  A file
 * compiled before is not compiled again.  With STATS it always compiles
 * and keeps nothing.  *TAB is the caller's copy.
 */
int unwtab_compile(const char *path, struct unwtab_hdr **tab,
		   struct unwtab_stats *stats);

/*
 * The same without a copy: USE(CTX, table) is called with the kept table
 * (valid during the call only) and its result returned; -1 if the file
 * cannot be compiled (with a message).
 */
int unwtab_compile_use(const char *path,
		       int (*use)(void *ctx, const struct unwtab_hdr *tab),
		       void *ctx);

/*
 * The same, every row asked of libdw, none run by cfi.h's interpreter
 * (nor any cache): the reference the interpreter's tables must equal
 * byte for byte (tests), 5-10 times slower.
 */
int unwtab_compile_slow(const char *path, struct unwtab_hdr **tab,
			struct unwtab_stats *stats);

/* 0 if the SIZE bytes at TAB are a well-formed table (header, offsets,
 * sorted rows, buckets, rule indexes and kinds in range), else -1 with a
 * message. */
int unwtab_check(const void *tab, size_t size);

static inline const struct unwtab_row *unwtab_rows(const struct unwtab_hdr *h)
{
	return (const struct unwtab_row *)((const char *)h + h->rows_off);
}

static inline const uint32_t *unwtab_buckets(const struct unwtab_hdr *h)
{
	return (const uint32_t *)((const char *)h + h->buckets_off);
}

static inline const struct unwtab_rule *unwtab_rules(const struct unwtab_hdr *h)
{
	return (const struct unwtab_rule *)((const char *)h + h->rules_off);
}

#endif
