/*
 * census.c - what every census shares: the maps, which allocator a
 * process uses, the result.  glibc's census is census_glibc.c.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/census.h"
#include "census_priv.h"
#include "base/util.h"

/* libstdc++'s (ptleak is linked with it) */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

int census_rd(const struct census_input *in, uint64_t addr, void *buf, size_t len)
{
	return in->read(in->ctx, addr, buf, len) == (long)len ? 0 : -1;
}

const struct census_map *census_map_at(const struct census_input *in, uint64_t a)
{
	size_t lo = 0, hi = in->nmaps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (in->maps[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < in->nmaps && in->maps[lo].start <= a ? &in->maps[lo] : NULL;
}

const char *census_allocator_name(int allocator)
{
	static const char *const names[] = {
		"glibc", "jemalloc", "tcmalloc", "mimalloc", "other",
	};

	return allocator >= 0 && allocator <= CENSUS_OTHER ? names[allocator]
							   : "other";
}

int census_maps_read(pid_t pid, struct census_map **maps, size_t *n)
{
	char path[64], line[4096 + 256];
	size_t alloc = 0;
	FILE *f;

	*maps = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return error("cannot read %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct census_map m;
		int name = 0;

		memset(&m, 0, sizeof(m));
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64
			   " %*s %" SCNu64 " %n", &m.start, &m.end, m.perms,
			   &m.offset, &m.inode, &name) < 5)
			continue;
		line[strcspn(line, "\n")] = '\0';
		m.path = xstrdup(name > 0 ? line + name : "");
		grow_array((void **)maps, &alloc, *n + 1, sizeof(**maps));
		(*maps)[(*n)++] = m;
	}
	fclose(f);
	return 0;
}

void census_maps_free(struct census_map *maps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

int census_allocator_of(const char *module)
{
	const char *base;

	if (!module || !*module)
		return CENSUS_GLIBC;	/* a static executable: glibc's, most likely */
	base = strrchr(module, '/');
	base = base ? base + 1 : module;
	if (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5))
		return CENSUS_GLIBC;
	if (strstr(base, "jemalloc"))
		return CENSUS_JEMALLOC;
	if (strstr(base, "tcmalloc"))
		return CENSUS_TCMALLOC;
	if (strstr(base, "mimalloc"))
		return CENSUS_MIMALLOC;
	return CENSUS_OTHER;
}

void census_unsupported(struct census *c, int allocator)
{
	memset(c, 0, sizeof(*c));
	c->allocator = allocator;
	c->exact = 0;
	if (allocator == CENSUS_OTHER)
		snprintf(c->why, sizeof(c->why), "the program's own allocator "
			 "cannot be enumerated from outside");
	else
		snprintf(c->why, sizeof(c->why), "%s keeps no list of its blocks "
			 "that can be read from outside",
			 census_allocator_name(allocator));
}

void census_free(struct census *c)
{
	free(c->blocks);
	c->blocks = NULL;
}

void census_release(struct census *c)
{
	unsigned i;

	census_free(c);
	for (i = 0; i < c->ntypes; i++)
		free(c->types[i]);
	free(c->types);
	c->types = NULL;
	c->ntypes = 0;
	c->atypes = 0;
}

/* ---- C++ types ---- */

/* A is in an object's read-only data (a file's mapping, not writable). */
static int rodata(const struct census_input *in, uint64_t a)
{
	const struct census_map *m = census_map_at(in, a);

	return m && m->inode && m->perms[0] == 'r' && m->perms[1] != 'w';
}

/* The demangled name of the class whose vtable V points into, or NULL. */
static char *vtable_type(const struct census_input *in, uint64_t v)
{
	uint64_t ti, w[2];
	char name[256], *dem;
	int status = -1;
	size_t k;
	long got;

	if ((v & 7) || !rodata(in, v) || census_rd(in, v - 8, &ti, 8) ||
	    (ti & 7) || !rodata(in, ti) || census_rd(in, ti, w, sizeof(w)) ||
	    !rodata(in, w[0]) || !rodata(in, w[1]))
		return NULL;
	got = in->read(in->ctx, w[1], name, sizeof(name) - 1);
	if (got <= 0)
		return NULL;
	name[got] = '\0';
	if (strlen(name) == (size_t)got)
		return NULL;	/* not terminated within the bound */
	/* a type name: letters, digits, '_' ('*' first: local linkage) */
	k = name[0] == '*';
	if (!name[k])
		return NULL;
	for (size_t i = k; name[i]; i++)
		if (!(isalnum((unsigned char)name[i]) || name[i] == '_'))
			return NULL;
	dem = __cxa_demangle(name + k, NULL, NULL, &status);
	if (status || !dem) {
		free(dem);
		return NULL;
	}
	return dem;
}

struct vt_slot {
	uint64_t v;
	uint16_t type;		/* 0: not a vtable */
	uint8_t used;
};

void census_types(const struct census_input *in, struct census *c)
{
	size_t cap = 1024, nused = 0, i;
	struct vt_slot *tab = xcalloc(cap, sizeof(*tab));

	for (i = 0; i < c->nblocks; i++) {
		uint64_t v = c->blocks[i].word0;
		size_t k;

		if (!v || (v & 7)) {
			c->blocks[i].type = 0;
			continue;
		}
		if (nused * 2 >= cap) {
			struct vt_slot *old = tab;
			size_t j, ocap = cap;

			cap *= 2;
			tab = xcalloc(cap, sizeof(*tab));
			for (j = 0; j < ocap; j++)
				if (old[j].used) {
					for (k = hash64(old[j].v) & (cap - 1); tab[k].used;
					     k = (k + 1) & (cap - 1))
						;
					tab[k] = old[j];
				}
			free(old);
		}
		for (k = hash64(v) & (cap - 1); tab[k].used && tab[k].v != v;
		     k = (k + 1) & (cap - 1))
			;
		if (!tab[k].used) {
			char *name = c->ntypes < CENSUS_MAX_TYPES ? vtable_type(in, v) : NULL;

			tab[k].used = 1;
			tab[k].v = v;
			tab[k].type = 0;
			nused++;
			if (name) {
				grow_array((void **)&c->types, &c->atypes,
					   c->ntypes + 1, sizeof(*c->types));
				c->types[c->ntypes++] = name;
				tab[k].type = (uint16_t)c->ntypes;
			}
		}
		c->blocks[i].type = tab[k].type;
	}
	free(tab);
}

int census_libc_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5);
}
