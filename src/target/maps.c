/*
 * maps.c - /proc/PID/maps, one mapping at a time (maps.h).
 */
#include "target/maps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

struct maps_file {
	FILE *f;
	char line[MAPS_LINE_MAX + 2];	/* the line, its newline, a NUL */
};

int maps_parse(char *line, struct maps_entry *e)
{
	char *name, *nl;
	int n = 0;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n",
		   &e->start, &e->end, e->perms, &e->offset, &e->maj, &e->min,
		   &e->inode, &n) != 7 || n <= 0)
		return -1;
	/* one blank at least between the inode and a name */
	if (line[n] && line[n] != ' ' && line[n] != '\t' && line[n] != '\n')
		return -1;
	name = line + n + strspn(line + n, " \t");
	nl = strchr(name, '\n');
	if (nl)
		*nl = '\0';
	e->name = name;
	return 0;
}

struct maps_file *maps_open_path(const char *path)
{
	struct maps_file *m;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	m = xmalloc(sizeof(*m));
	m->f = f;
	return m;
}

struct maps_file *maps_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	return maps_open_path(path);
}

int maps_next(struct maps_file *m, struct maps_entry *e)
{
	while (fgets(m->line, sizeof(m->line), m->f)) {
		size_t len = strlen(m->line);

		if (len && m->line[len - 1] != '\n' && !feof(m->f)) {
			/* longer than MAPS_LINE_MAX: skip the rest of it */
			int c;

			while ((c = getc(m->f)) != EOF && c != '\n')
				;
			continue;
		}
		if (!maps_parse(m->line, e))
			return 1;
	}
	return 0;
}

void maps_close(struct maps_file *m)
{
	if (!m)
		return;
	fclose(m->f);
	free(m);
}
