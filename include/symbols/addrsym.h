/*
 * addrsym.h - the symbol of an address in a libdwfl module, as
 * dwfl_module_addrinfo names it, from a copy of the module's symbol
 * table read once.
 *
 * libdw's own search reads every entry of the table through libelf at
 * each lookup (section header included): ~50 us a lookup in perl's 2,200
 * dynamic symbols, most of a report's naming time.  This copy keeps the
 * entries that search can choose, in table order, and runs the same
 * rules over them (elfutils' __libdwfl_addrsym: global symbols first,
 * then local ones if none holds the address; the closest start, then
 * the binding; equal starts: the shorter, else the first), so that the
 * answer is libdw's by construction.  One case is left to libdw: a
 * symbol without a size that could be the answer (its section decides,
 * as libdw finds it); x86-64 only (libdw resolves no function
 * descriptor there).  test_symbols compares both on every symbol's
 * bounds of real objects.
 *
 * From a module's ADDRSYM_INDEX_AFTER-th lookup on, the sized symbols
 * that hold an address are found through an index by start (its entries
 * sorted, each with the furthest end up to it) instead of a pass over
 * the whole table; they alone decide the answer where there are any
 * (the rules above among them, in table order).  An address that no
 * sized symbol holds is searched as before.
 */
#ifndef PTLEAK_ADDRSYM_H
#define PTLEAK_ADDRSYM_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

/* Symbols copied at most (48 bytes each): a bigger table is searched by
 * libdw at each lookup. */
#define ADDRSYM_MAX	(1 << 21)

struct addrsym_entry {
	uint64_t value;		/* as dwfl_module_getsym_info gives it */
	const char *name;	/* libdw's: valid while its session is */
	GElf_Sym sym;
};

/* lookups of a module before its index is built (a pass over a table
 * costs less than sorting it, for a few lookups) */
#define ADDRSYM_INDEX_AFTER	8

struct addrsym {
	Dwfl_Module *mod;
	struct addrsym_entry *e;
	size_t n;
	size_t first_global;	/* e[0, first_global): local symbols */
	/* the index: e's positions by value (then position), and the
	 * furthest value + size among by[0..i] */
	uint32_t *by;
	uint64_t *end;
	size_t lookups;
	int none;		/* no table: every lookup finds nothing */
	int libdw;		/* every lookup left to libdw (ET_REL, too big) */
	size_t fallbacks;	/* lookups left to libdw (tests) */
	size_t indexed;		/* lookups the index named (tests) */
};

/* MOD's table into T (mod, e, n...); a module without one has none. */
void addrsym_init(struct addrsym *t, Dwfl_Module *mod);
void addrsym_free(struct addrsym *t);

/*
 * dwfl_module_addrinfo(t->mod, ADDR, OFF, SYM, NULL, NULL, NULL): the
 * name of ADDR's symbol (libdw's string), *OFF and *SYM, or NULL.
 */
const char *addrsym_find(struct addrsym *t, uint64_t addr, GElf_Off *off,
			 GElf_Sym *sym);

#endif
