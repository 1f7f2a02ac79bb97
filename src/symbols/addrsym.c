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
		search_range(&st, t->e + t->first_global, t->n - t->first_global);
		/* the local symbols are searched unless a sizeless global
		 * one at the address is in the address's section */
		if (!st.closest && !st.sizeless_at)
			search_range(&st, t->e, t->first_global);
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
