/* addrsym.c - dwfl_module_addrinfo's answer from a copy of the table
 * (addrsym.h). */
#include <stdlib.h>
#include <string.h>

#include "symbols/addrsym.h"
#include "base/util.h"

void addrsym_init(struct addrsym *t, Dwfl_Module *mod)
{
	size_t alloc = 0;
	int nsyms, first, k;
	GElf_Addr bias;
	Elf *elf;
	GElf_Ehdr eh;

	memset(t, 0, sizeof(*t));
	t->mod = mod;
	nsyms = dwfl_module_getsymtab(mod);
	first = nsyms >= 0 ? dwfl_module_getsymtab_first_global(mod) : -1;
	if (nsyms < 0 || first < 0) {
		t->none = 1;	/* libdw: NULL, whatever the address */
		return;
	}
	/* a relocatable object's values are relative to its sections; a
	 * table past ADDRSYM_MAX (the object's file says how big): libdw's
	 * search, ptleak's memory bounded */
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL ||
	    nsyms > ADDRSYM_MAX) {
		t->libdw = 1;
		return;
	}
	/* libdw searches [first or 1, nsyms), then [1, first) */
	if (first == 0)
		first = 1;
	for (k = 0; k < 2; k++) {
		int lo = k == 0 ? 1 : first, hi = k == 0 ? first : nsyms, i;

		if (k == 0 && first <= 1)
			continue;
		for (i = lo; i < hi; i++) {
			GElf_Sym sym;
			GElf_Addr value;
			const char *name = dwfl_module_getsym_info(mod, i, &sym, &value,
								   NULL, NULL, NULL);
			int type = GELF_ST_TYPE(sym.st_info);

			/* what libdw's search looks at, the address aside */
			if (!name || !name[0] || sym.st_shndx == SHN_UNDEF ||
			    type == STT_SECTION || type == STT_FILE || type == STT_TLS)
				continue;
			grow_array((void **)&t->e, &alloc, t->n + 1, sizeof(*t->e));
			t->e[t->n].value = value;
			t->e[t->n].name = name;
			t->e[t->n].sym = sym;
			t->n++;
		}
		if (k == 0)
			t->first_global = t->n;
	}
}

void addrsym_free(struct addrsym *t)
{
	free(t->e);
	free(t->by);
	free(t->end);
	memset(t, 0, sizeof(*t));
}

/* GELF_ST_BIND as higher-is-better, as libdw ranks it. */
static int binding_value(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

struct search {
	uint64_t addr;
	const struct addrsym_entry *closest;
	uint64_t min_label;
	/* a sizeless symbol could be the answer (its section decides, as
	 * libdw finds it): one at all, one at the address */
	int sizeless, sizeless_at;
};

/* libdw's try_sym_value for an entry at or below the address. */
static void try_entry(struct search *st, const struct addrsym_entry *e)
{
	uint64_t size = e->sym.st_size;
	const struct addrsym_entry *c = st->closest;

	if (e->value + size > st->min_label)
		st->min_label = e->value + size;
	if (size != 0 && st->addr - e->value >= size)
		return;
	if (!c || c->value < e->value ||
	    binding_value(&c->sym) < binding_value(&e->sym)) {
		if (size != 0)
			st->closest = e;
		else if (!c && e->value >= st->min_label) {
			st->sizeless = 1;
			st->sizeless_at |= e->value == st->addr;
		}
	} else if (size != 0 && c->value == e->value &&
		   ((c->sym.st_size > size &&
		     binding_value(&c->sym) <= binding_value(&e->sym)) ||
		    (c->sym.st_size >= size &&
		     binding_value(&c->sym) < binding_value(&e->sym)))) {
		st->closest = e;
	}
}

static void search_range(struct search *st, const struct addrsym_entry *e,
			 size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (e[i].value <= st->addr)
			try_entry(st, &e[i]);
}

static int cmp_by_value(const void *x, const void *y, void *ctx)
{
	const struct addrsym_entry *e = ctx;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	uint64_t va = e[a].value, vb = e[b].value;

	return va < vb ? -1 : va > vb ? 1 : a < b ? -1 : a > b;
}

/* T's index (addrsym.h); without memory, none (the passes stay). */
static void build_index(struct addrsym *t)
{
	uint64_t far = 0, e;
	size_t i;

	t->by = malloc(t->n * sizeof(*t->by));
	t->end = malloc(t->n * sizeof(*t->end));
	if (!t->by || !t->end) {
		free(t->by);
		free(t->end);
		t->by = NULL;
		t->end = NULL;
		return;
	}
	for (i = 0; i < t->n; i++)
		t->by[i] = (uint32_t)i;
	qsort_r(t->by, t->n, sizeof(*t->by), cmp_by_value, t->e);
	for (i = 0; i < t->n; i++) {
		e = t->e[t->by[i]].value + t->e[t->by[i]].sym.st_size;
		if (e > far)
			far = e;
		t->end[i] = far;
	}
}

/* The first place in the index whose symbol starts past V (t->n: none). */
static size_t first_above(const struct addrsym *t, uint64_t v)
{
	size_t a = 0, b = t->n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (t->e[t->by[m]].value <= v)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* the most sized symbols holding one address a lookup gathers (more:
 * the passes, as before) */
#define HOLDERS 64

/*
 * The positions of the sized symbols holding ADDR, ascending, into H:
 * those at [LO, HI) of the table only.  Their number; -1 if more than
 * HOLDERS.
 */
static int holders(const struct addrsym *t, uint64_t addr, size_t lo,
		   size_t hi, uint32_t *h)
{
	size_t i;
	int n = 0, k;
	uint32_t x;

	for (i = first_above(t, addr); i-- > 0 && t->end[i] > addr;) {
		const struct addrsym_entry *e = &t->e[t->by[i]];

		if (t->by[i] < lo || t->by[i] >= hi || !e->sym.st_size ||
		    addr - e->value >= e->sym.st_size)
			continue;
		if (n == HOLDERS)
			return -1;
		/* insertion: ascending positions */
		x = t->by[i];
		for (k = n++; k > 0 && h[k - 1] > x; k--)
			h[k] = h[k - 1];
		h[k] = x;
	}
	return n;
}

/* A sized symbol at [LO, HI) of the table holds ADDR: *ST's closest as the
 * pass over [LO, HI) would make it (the holders alone decide it).  1;
 * 0 if none holds it; -1 if too many do (the pass then). */
static int closest_holder(const struct addrsym *t, struct search *st,
			  size_t lo, size_t hi)
{
	uint32_t h[HOLDERS];
	int n = holders(t, st->addr, lo, hi, h), i;

	for (i = 0; i < n; i++)
		try_entry(st, &t->e[h[i]]);
	return n < 0 ? -1 : n > 0;
}

/* A sizeless global symbol starts at ADDR. */
static int sizeless_global_at(const struct addrsym *t, uint64_t addr)
{
	size_t a = addr ? first_above(t, addr - 1) : 0;

	for (; a < t->n && t->e[t->by[a]].value == addr; a++)
		if (!t->e[t->by[a]].sym.st_size && t->by[a] >= t->first_global)
			return 1;
	return 0;
}

/*
 * The index's answer for ADDR into *ST: 1 if it decided (st->closest
 * the answer, or NULL and st->sizeless to leave it to libdw), 0 if the
 * passes must (no sized symbol holds it, or too many do).  Where no
 * sized global holds ADDR the pass over the globals cannot have seen a
 * closest, and its min_label is at most ADDR: it stops before the local
 * symbols exactly where a sizeless global starts at ADDR.
 */
static int by_index(struct addrsym *t, struct search *st)
{
	int got = closest_holder(t, st, t->first_global, t->n);

	if (!got && sizeless_global_at(t, st->addr)) {
		st->sizeless = 1;	/* libdw's, as the pass leaves it */
		return 1;
	}
	if (!got)
		got = closest_holder(t, st, 0, t->first_global);
	t->indexed += got > 0;
	return got > 0;
}

const char *addrsym_find(struct addrsym *t, uint64_t addr, GElf_Off *off,
			 GElf_Sym *sym)
{
	struct search st;

	if (t->none)
		return NULL;
	if (!t->libdw) {
		/* a sizeless candidate is taken only if no sized symbol
		 * holds the address: libdw's sized answer does not
		 * depend on it */
		memset(&st, 0, sizeof(st));
		st.addr = addr;
		if (++t->lookups == ADDRSYM_INDEX_AFTER && t->n)
			build_index(t);
		if (!t->by || !by_index(t, &st)) {
			memset(&st, 0, sizeof(st));
			st.addr = addr;
			search_range(&st, t->e + t->first_global,
				     t->n - t->first_global);
			/* the local symbols are searched unless a sizeless
			 * global one at the address is in the address's
			 * section */
			if (!st.closest && !st.sizeless_at)
				search_range(&st, t->e, t->first_global);
		}
		if (st.closest) {
			*off = addr - st.closest->value;
			*sym = st.closest->sym;
			return st.closest->name;
		}
		if (!st.sizeless)
			return NULL;
	}
	t->fallbacks++;
	return dwfl_module_addrinfo(t->mod, addr, off, sym, NULL, NULL, NULL);
}
