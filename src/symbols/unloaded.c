/*
 * unloaded.c - objects unloaded (dlclose) before a report: what naming
 * their frames needs is kept (path and load bias), so that a stack that
 * went through an object gone since is still named, from the file, its
 * module marked "(unloaded)".
 *
 * The dynamic linker's rendezvous says RT_DELETE while the objects to
 * unload are still in the link map, then RT_CONSISTENT once they are
 * gone: the link map is read at both, an entry in the first and not in
 * the second was unloaded.
 */
#include <stdlib.h>
#include <string.h>

#include "target/memio.h"
#include "symbols/symbols.h"
#include "symbols/unloaded.h"
#include "base/util.h"

/* Objects kept per process at most: a program that loads and unloads
 * objects forever keeps ptleak's memory bounded (older ones named by
 * address only). */
#define UNLOADED_MAX 64
/* Link-map entries read at most. */
#define LM_MAX 1024

#define RT_DELETE 2

/* struct link_map on LP64 */
#define LM_ADDR 0
#define LM_NAME 8
#define LM_NEXT 24

struct lm_entry {
	char *name;
	uint64_t bias;
};

struct unloaded {
	struct lm_entry *snap;	/* the link map at RT_DELETE */
	size_t nsnap;
	struct lm_entry gone[UNLOADED_MAX];
	size_t ngone;
};

static void free_entries(struct lm_entry *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(e[i].name);
}

/* The link map from MAP: its named entries (the executable and the vdso
 * have no name), in *OUT. */
static size_t read_link_map(pid_t tid, uint64_t map, struct lm_entry **out)
{
	struct lm_entry *v = NULL;
	size_t n = 0, alloc = 0, k;
	char name[4096];

	for (k = 0; map && k < LM_MAX; k++) {
		uint64_t lm[4];
		ssize_t got;

		if (mem_read_all(tid, map, lm, sizeof(lm)))
			break;
		got = mem_read(tid, lm[LM_NAME / 8], name, sizeof(name) - 1);
		name[got > 0 ? got : 0] = '\0';
		name[strnlen(name, sizeof(name) - 1)] = '\0';
		if (name[0] == '/') {
			grow_array((void **)&v, &alloc, n + 1, sizeof(*v));
			v[n].name = xstrdup(name);
			v[n].bias = lm[LM_ADDR / 8];
			n++;
		}
		map = lm[LM_NEXT / 8];
	}
	*out = v;
	return n;
}

static int in_list(const struct lm_entry *v, size_t n, const struct lm_entry *e)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].bias == e->bias && !strcmp(v[i].name, e->name))
			return 1;
	return 0;
}

void unloaded_rendezvous(struct unloaded **up, pid_t tid, int32_t state,
			 uint64_t map)
{
	struct unloaded *u = *up;
	struct lm_entry *now;
	size_t n, i;

	if (!u)
		u = *up = xcalloc(1, sizeof(*u));
	if (state == RT_DELETE) {
		free_entries(u->snap, u->nsnap);
		free(u->snap);
		u->nsnap = read_link_map(tid, map, &u->snap);
		return;
	}
	if (state != 0 || !u->snap)
		return;
	n = read_link_map(tid, map, &now);
	for (i = 0; i < u->nsnap; i++) {
		struct lm_entry *e = &u->snap[i];

		if (in_list(now, n, e) || in_list(u->gone, u->ngone, e))
			continue;
		if (u->ngone == UNLOADED_MAX) {
			/* the oldest goes */
			free(u->gone[0].name);
			memmove(u->gone, u->gone + 1, (UNLOADED_MAX - 1) * sizeof(*u->gone));
			u->ngone--;
		}
		u->gone[u->ngone++] = *e;
		e->name = NULL;
	}
	free_entries(now, n);
	free(now);
	free_entries(u->snap, u->nsnap);
	free(u->snap);
	u->snap = NULL;
	u->nsnap = 0;
}

void unloaded_name(const struct unloaded *u, struct symbolizer *s)
{
	size_t i;

	/* the newest first: an address reused by a later object is its */
	for (i = u ? u->ngone : 0; i > 0; i--)
		sym_add_unloaded(s, u->gone[i - 1].name, u->gone[i - 1].bias);
}

void unloaded_free(struct unloaded **up)
{
	struct unloaded *u = *up;

	if (!u)
		return;
	free_entries(u->snap, u->nsnap);
	free(u->snap);
	free_entries(u->gone, u->ngone);
	free(u);
	*up = NULL;
}
