/*
 * unwtab_rules.c - what both halves of the unwind-table compiler
 * (unwtab.c, unwtab_fast.c) build with and read with (unwtab_priv.h):
 * rules interned and ranges added to the table being compiled; FDE
 * addresses decoded (DW_EH_PE_*, a CIE's 'R' augmentation).  Calls
 * neither half.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/unwtab.h"
#include "unwtab_priv.h"
#include "base/util.h"

#define MAX_RULES 65535u
static uint64_t rule_key(const struct unwtab_rule *r)
{
	uint64_t k = r->kind | (uint64_t)r->plt_split << 8 |
		     (uint64_t)(uint16_t)r->fp_off << 16 |
		     (uint64_t)(uint32_t)r->cfa_off << 32;

	return hash64(k ^ hash64((uint32_t)r->ra_off));
}

static void hash_insert(struct compiler *c, uint32_t idx)
{
	size_t i = rule_key(&c->rules[idx]) & (c->hash_size - 1);

	while (c->rule_hash[i])
		i = (i + 1) & (c->hash_size - 1);
	c->rule_hash[i] = idx + 1;
}

int64_t intern_rule(struct compiler *c, const struct unwtab_rule *r)
{
	size_t i = rule_key(r) & (c->hash_size - 1), j;
	uint32_t e;

	while ((e = c->rule_hash[i])) {
		if (!memcmp(&c->rules[e - 1], r, sizeof(*r)))
			return e - 1;
		i = (i + 1) & (c->hash_size - 1);
	}
	if (c->nrules == MAX_RULES)
		return -1;
	grow_array((void **)&c->rules, &c->arules, c->nrules + 1, sizeof(*r));
	c->rules[c->nrules++] = *r;
	if (c->nrules * 2 > c->hash_size) {
		free(c->rule_hash);
		c->hash_size *= 2;
		c->rule_hash = xcalloc(c->hash_size, sizeof(*c->rule_hash));
		for (j = 0; j < c->nrules; j++)
			hash_insert(c, j);
	} else {
		c->rule_hash[i] = c->nrules;
	}
	return c->nrules - 1;
}

/*
 * Read a pointer encoded as ENC (DW_EH_PE_*) at *P, advancing it.  Only
 * the encodings of FDE addresses (absolute, pc-relative).  -1 if ENC is
 * not one of them or the bytes end.
 */
int read_encoded(const struct compiler *c, uint8_t enc, const uint8_t **p,
		 const uint8_t *end, uint64_t *v)
{
	uint64_t where = c->sec_addr +
		(uint64_t)(*p - (const uint8_t *)c->data->d_buf);
	size_t n;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: n = c->addr_size; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: n = 2; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: n = 4; break;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: n = 8; break;
	default: return -1;
	}
	if ((size_t)(end - *p) < n)
		return -1;
	*v = 0;
	memcpy(v, *p, n);	/* little-endian only: checked at open */
	if ((enc & 0x08) && n < 8 && (*v >> (8 * n - 1)))
		*v |= ~0ull << (8 * n);
	*p += n;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: break;
	case DW_EH_PE_pcrel: *v += where; break;
	default: return -1;
	}
	return 0;
}

/* The FDE address encoding of the CIE E: 'R' in its augmentation. */
uint8_t cie_fde_encoding(const struct compiler *c, const Dwarf_CIE *e)
{
	const uint8_t *p = e->augmentation_data;
	const uint8_t *end = p + e->augmentation_data_size;
	const char *a = e->augmentation;
	uint64_t skip;

	if (!a || *a != 'z')
		a = "";
	else
		a++;
	for (; *a; a++) {
		if (*a == 'R' && p < end) {
			return *p;
		} else if (*a == 'L' && p < end) {
			p++;
		} else if (*a == 'P' && p < end) {
			uint8_t penc = *p++;

			if (read_encoded(c, penc & 0x7f, &p, end, &skip) < 0)
				break;
		} else if (*a != 'S' && *a != 'B') {
			break;
		}
	}
	return DW_EH_PE_absptr;
}

/* Account for rule R over [START, END): the range, and the stats. */
int add_rule(struct compiler *c, uint64_t start, uint64_t end,
	     const struct unwtab_rule *r)
{
	int64_t idx = intern_rule(c, r);

	if (idx < 0)
		return error("%s: more than %u distinct unwind rules",
			     c->path, MAX_RULES);
	c->st.ranges++;
	c->st.invalid += r->kind == UNWTAB_INVALID;
	c->st.plt += r->kind == UNWTAB_PLT;
	c->st.signal += r->kind == UNWTAB_SIGNAL;
	c->st.stop += r->kind == UNWTAB_STOP;
	if (c->nranges == c->aranges)
		grow_array((void **)&c->ranges, &c->aranges, c->nranges + 1,
			   sizeof(*c->ranges));
	c->ranges[c->nranges++] = (struct range){ (uint32_t)start, (uint32_t)end,
						   (uint32_t)idx };
	return 0;
}
