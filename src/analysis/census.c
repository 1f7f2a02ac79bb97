/*
 * census.c - what every census shares: the maps, which allocator a
 * process uses, the result.  glibc's census is census_glibc.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/census.h"
#include "base/util.h"

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
