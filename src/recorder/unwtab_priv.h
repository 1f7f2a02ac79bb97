/*
 * unwtab_priv.h - what the unwind-table compiler's halves share
 * (unwtab.c: enumeration, libdw's rows, layout; unwtab_fast.c: where the
 * one-pass interpreter of cfi.h may run, and running it; unwtab_rules.c:
 * the rules and ranges both add, FDE address encodings).  Internal to the
 * module; its API is include/unwtab.h.
 */
#ifndef PTLEAK_UNWTAB_PRIV_H
#define PTLEAK_UNWTAB_PRIV_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "recorder/cfi.h"
#include "recorder/unwtab.h"

/* [start, end) of code with one rule (below 4 GiB: compile_cfi checks) */
struct range {
	uint32_t start, end;
	uint32_t rule;
};

/* An interned CIE: what its FDEs need to decode their address range. */
struct cie {
	Dwarf_Off off;
	uint8_t enc;		/* DW_EH_PE_* of the FDE addresses */
	bool sized;		/* 'z': FDEs have an augmentation length */
	struct cfi_cie fast;	/* fast.ok: the interpreter runs its FDEs */
};

/* One FDE's rows from the interpreter, interned only once all are run. */
struct pending {
	uint64_t start, end;
	struct unwtab_rule r;
};

struct compiler {
	const char *path;
	Elf *elf;
	Elf_Data *data;		/* the CFI section */
	uint64_t sec_addr;	/* its sh_addr (pc-relative pointers) */
	int eh;			/* .eh_frame, not .debug_frame */
	int addr_size;
	Dwarf_CFI *cfi;
	struct cie *cies;
	size_t ncies, acies, last_cie;
	struct range *ranges;
	size_t nranges, aranges;
	struct unwtab_rule *rules;
	size_t nrules, arules;
	uint32_t *rule_hash;	/* rule index + 1, 0 = empty */
	size_t hash_size;	/* power of two */
	struct unwtab_stats st;

	bool slow;		/* every row from libdw (unwtab_compile_slow) */
	bool fast;		/* the interpreter may run (unwtab_fast.c) */
	struct cfi_hdr hdr;	/* libdw's FDE search, when .table */
	Elf_Scn *hdr_scn;	/* .eh_frame_hdr as libdw picks it */
	struct pending *pend;
	size_t npend, apend;
	bool pend_refused;
	uint64_t fde_hi;	/* the end of the FDE being run */
};

/* ---- unwtab_rules.c ---- */

/* Read a pointer encoded as ENC (DW_EH_PE_*, the encodings of FDE
 * addresses) at *P (up to END), advancing it: 0, or -1. */
int read_encoded(const struct compiler *c, uint8_t enc, const uint8_t **p,
		 const uint8_t *end, uint64_t *v);
/* The index of rule R in the table, added if new; -1 past 65,535
 * distinct rules.  (The table's hash: c->hash_size slots, a power of
 * two, allocated by the caller.) */
int64_t intern_rule(struct compiler *c, const struct unwtab_rule *r);
/* The FDE address encoding of the CIE E: 'R' in its augmentation. */
uint8_t cie_fde_encoding(const struct compiler *c, const Dwarf_CIE *e);
/* Rule R over [START, END) added to the table (interned; the stats):
 * 0, or -1 past 65,535 distinct rules (message). */
int add_rule(struct compiler *c, uint64_t start, uint64_t end,
	     const struct unwtab_rule *r);

/* ---- unwtab_fast.c ---- */

/*
 * Whether the interpreter may run in this object (c->fast): every FDE
 * libdw would find for a pc is the one being compiled (no two FDEs
 * overlap, its .eh_frame_hdr table is one followed here, or without one
 * every entry reads), and every CIE's augmentation is one libdw and
 * cie_encoding read alike.
 */
void fast_plan(struct compiler *c);

/* The interpreter's view of the CIE E (augmentation, initial rules). */
void fast_cie(struct compiler *c, struct cie *cie, const Dwarf_CIE *e);

/*
 * The rows of the FDE at OFF covering [START, END), whose instructions
 * follow its address range at P (up to FEND), by the interpreter: 0,
 * 1 if libdw must compile it (nothing was added), -1 on error.
 */
int fast_fde(struct compiler *c, Dwarf_Off off, const struct cie *cie,
	     uint64_t start, uint64_t end, const uint8_t *p,
	     const uint8_t *fend);

#endif
