/*
 * proctree.c - the tree summary of -f (proctree.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "session/proctree.h"
#include "base/util.h"

enum { ST_RUNNING, ST_EXITED, ST_LET_GO };

struct row {
	pid_t pid, ppid;
	char *cmd;		/* at most PROCTREE_CMD_MAX bytes */
	int state, status;
	uint64_t lost, fds;
};

struct proctree {
	struct row *rows;
	size_t n, alloc;
	/* past PROCTREE_MAX */
	unsigned more;
	uint64_t more_lost, more_fds;
};

struct proctree *proctree_new(void)
{
	return xcalloc(1, sizeof(struct proctree));
}

void proctree_free(struct proctree *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free(t->rows[i].cmd);
	free(t->rows);
	free(t);
}

void proctree_argv(struct proctree *t, int row, char *const *argv)
{
	char *cmd = xmalloc(PROCTREE_CMD_MAX + 2);
	size_t len = 0, i, k;
	struct row *r;

	if (row < 0) {
		free(cmd);
		return;
	}
	r = &t->rows[row];
	/* one byte more than fits: whether it was cut */
	for (i = 0; argv && argv[i] && len <= PROCTREE_CMD_MAX; i++) {
		if (i)
			cmd[len++] = ' ';
		for (k = 0; argv[i][k] && len <= PROCTREE_CMD_MAX; k++)
			/* one line per process: no control characters */
			cmd[len++] = (unsigned char)argv[i][k] < ' ' ? '?' : argv[i][k];
	}
	if (len > PROCTREE_CMD_MAX) {
		/* cut between two characters (never inside UTF-8's), "..." */
		len = PROCTREE_CMD_MAX - 3;
		while (len && ((unsigned char)cmd[len] & 0xc0) == 0x80)
			len--;
		memcpy(cmd + len, "...", 3);
		len += 3;
	}
	cmd[len] = '\0';
	free(r->cmd);
	r->cmd = xrealloc(cmd, len + 1);
}

int proctree_add(struct proctree *t, pid_t pid, pid_t ppid, char *const *argv)
{
	if (t->n >= PROCTREE_MAX) {
		t->more++;
		return -1;
	}
	grow_array((void **)&t->rows, &t->alloc, t->n + 1, sizeof(*t->rows));
	memset(&t->rows[t->n], 0, sizeof(t->rows[t->n]));
	t->rows[t->n].pid = pid;
	t->rows[t->n].ppid = ppid;
	proctree_argv(t, (int)t->n, argv);
	return (int)t->n++;
}

void proctree_leaks(struct proctree *t, int row, uint64_t lost, uint64_t fds)
{
	if (row < 0) {
		t->more_lost += lost;
		t->more_fds += fds;
		return;
	}
	t->rows[row].lost = lost;
	t->rows[row].fds = fds;
}

void proctree_exit(struct proctree *t, int row, int status)
{
	if (row < 0)
		return;
	t->rows[row].state = status < 0 ? ST_LET_GO : ST_EXITED;
	t->rows[row].status = status;
}

static void status_text(const struct row *r, char *buf, size_t len)
{
	if (r->state == ST_RUNNING)
		snprintf(buf, len, "running");
	else if (r->state == ST_LET_GO)
		snprintf(buf, len, "let go");
	else if (WIFSIGNALED(r->status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(r->status));
	else
		snprintf(buf, len, "exit %d", WEXITSTATUS(r->status));
}

static void print_row(const struct proctree *t, size_t k, unsigned depth,
		      FILE *f, pid_t first)
{
	const struct row *r = &t->rows[k];
	char st[64], b1[32];
	size_t c;

	status_text(r, st, sizeof(st));
	fprintf(f, "ptleak[%d]:   %*s%d %s: %s, lost %s bytes, %llu fd%s\n",
		(int)first, (int)(depth < 16 ? depth * 2 : 32), "", (int)r->pid, r->cmd, st,
		fmt_thousands(b1, r->lost), (unsigned long long)r->fds,
		r->fds == 1 ? "" : "s");
	/* a child's row comes after its parent's; a pid reused later is
	 * another row: only rows after this one can be its children */
	for (c = k + 1; c < t->n; c++) {
		if (t->rows[c].ppid != r->pid)
			continue;
		print_row(t, c, depth + 1, f, first);
	}
}

void proctree_print(const struct proctree *t, FILE *f, pid_t first)
{
	size_t k, j;

	fprintf(f, "ptleak[%d]:\nptleak[%d]: PROCESS TREE: %zu process%s\n",
		(int)first, (int)first, t->n + t->more,
		t->n + t->more == 1 ? "" : "es");
	for (k = 0; k < t->n; k++) {
		/* roots: the first process, and those whose parent has no row */
		for (j = 0; j < k; j++)
			if (t->rows[j].pid == t->rows[k].ppid)
				break;
		if (j == k)
			print_row(t, k, 0, f, first);
	}
	if (t->more)
		fprintf(f, "ptleak[%d]:   %u more processes (not listed): lost "
			"%llu bytes, %llu fds\n", (int)first, t->more,
			(unsigned long long)t->more_lost,
			(unsigned long long)t->more_fds);
	fflush(f);
}
