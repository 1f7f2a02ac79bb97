/*
 * guard.c - the guardian process (guard.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "target/guard.h"
#include "target/memio.h"
#include "base/util.h"

#define NCODE	4096
#define NRET	4096	/* power of two */

/* What ptleak changed, in memory it shares with the guardian. */
struct shared {
	uint32_t ncode;
	struct code {
		uint64_t addr;
		uint8_t len, live;
		uint8_t orig[16];
	} code[NCODE];
	struct ret {
		uint64_t slot, tramp, real;
	} ret[NRET];
};

struct guard {
	struct shared *sh;
	int wfd;		/* the pipe: its end closes when ptleak dies */
	pid_t child;
};

static void restore(const struct shared *sh, int memfd)
{
	unsigned i;

	for (i = 0; i < NRET; i++) {
		const struct ret *r = &sh->ret[i];
		uint64_t v;

		/* still hijacked (the slot not reused since) */
		if (r->slot && r->real &&
		    pread(memfd, &v, 8, (off_t)r->slot) == 8 && v == r->tramp)
			if (pwrite(memfd, &r->real, 8, (off_t)r->slot) != 8)
				continue;
	}
	for (i = 0; i < sh->ncode && i < NCODE; i++) {
		const struct code *c = &sh->code[i];

		if (c->live && pwrite(memfd, c->orig, c->len, (off_t)c->addr) != c->len)
			continue;
	}
}

/* The guardian's life: wait for ptleak's word or its death. */
static void __attribute__((noreturn)) guardian(const struct shared *sh,
					       int rfd, int memfd)
{
	static const int ignored[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE,
				       SIGUSR1, SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU };
	unsigned i;
	ssize_t n;
	char c;
	int fd;

	/* what a terminal sends ptleak's process group is ptleak's business */
	for (i = 0; i < ARRAY_SIZE(ignored); i++)
		signal(ignored[i], SIG_IGN);
	for (fd = 0; fd < 1024; fd++)
		if (fd != rfd && fd != memfd)
			close(fd);
	prctl(PR_SET_NAME, "ptleak-guard", 0, 0, 0);
	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		restore(sh, memfd);
	_exit(0);
}

struct guard *guard_start(pid_t pid)
{
	struct guard *g;
	int p[2], memfd;

	memfd = mem_open(pid);
	if (memfd < 0)
		return NULL;
	g = xcalloc(1, sizeof(*g));
	g->sh = mmap(NULL, sizeof(*g->sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g->sh == MAP_FAILED || pipe2(p, O_CLOEXEC)) {
		warning("no guardian for process %d (%s): if ptleak is killed, "
			"its breakpoints stay", (int)pid, strerror(errno));
		if (g->sh != MAP_FAILED)
			munmap(g->sh, sizeof(*g->sh));
		close(memfd);
		free(g);
		return NULL;
	}
	fflush(NULL);
	g->child = fork();
	if (g->child == 0)
		guardian(g->sh, p[0], memfd);
	close(p[0]);
	close(memfd);
	if (g->child < 0) {
		warning("no guardian for process %d (fork: %s): if ptleak is "
			"killed, its breakpoints stay", (int)pid, strerror(errno));
		close(p[1]);
		munmap(g->sh, sizeof(*g->sh));
		free(g);
		return NULL;
	}
	g->wfd = p[1];
	return g;
}

void guard_code(struct guard *g, uint64_t addr, const uint8_t *orig, size_t len)
{
	struct code *c;
	unsigned i;

	if (!g || len > sizeof(c->orig))
		return;
	for (i = 0; i < g->sh->ncode; i++)
		if (g->sh->code[i].addr == addr && g->sh->code[i].live)
			return;
	if (g->sh->ncode == NCODE)
		return;
	c = &g->sh->code[g->sh->ncode];
	c->addr = addr;
	c->len = (uint8_t)len;
	memcpy(c->orig, orig, len);
	c->live = 1;
	g->sh->ncode++;
}

void guard_code_done(struct guard *g, uint64_t addr)
{
	unsigned i;

	for (i = 0; g && i < g->sh->ncode; i++)
		if (g->sh->code[i].addr == addr)
			g->sh->code[i].live = 0;
}

void guard_ret(struct guard *g, uint64_t slot, uint64_t tramp, uint64_t real)
{
	unsigned i, n, given = NRET;

	if (!g || !slot)
		return;
	for (i = (unsigned)(slot >> 3) & (NRET - 1), n = 0; n < NRET;
	     i = (i + 1) & (NRET - 1), n++) {
		struct ret *r = &g->sh->ret[i];

		if (r->slot == slot) {
			r->tramp = tramp;
			r->real = real;
			return;
		}
		if (!r->slot)
			break;
		if (!r->real && given == NRET)
			given = i;
	}
	if (!real)
		return;
	if (given == NRET)
		given = n < NRET ? i : NRET;
	if (given == NRET)
		return;
	g->sh->ret[given] = (struct ret){ slot, tramp, real };
}

void guard_stop(struct guard *g)
{
	if (!g)
		return;
	if (write(g->wfd, "D", 1) != 1)
		warning("cannot tell ptleak's guardian to go: %s", strerror(errno));
	close(g->wfd);
	munmap(g->sh, sizeof(*g->sh));
	free(g);
}

void guard_forget_all(struct guard *g)
{
	if (!g)
		return;
	g->sh->ncode = 0;
	memset(g->sh->ret, 0, sizeof(g->sh->ret));
}
