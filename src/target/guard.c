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
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/arch.h"

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
	/* the injection under way (arch_inject): live last written */
	struct inj {
		uint32_t live;
		int32_t tid;
		uint64_t mask, code_lo, code_hi, code_at;
		uint32_t code_len;
		uint8_t code[8];
		struct arch_regs regs;
	} inj;
};

struct guard {
	struct shared *sh;
	int wfd;		/* the pipe: its end closes when ptleak dies */
	pid_t child;
};

/*
 * Thread TID, left in an injection, stopped with the guardian as its
 * tracer: 1; 0 if it cannot be (gone, or traced by another).  ptleak's
 * pipe closes before the kernel lets its tracees go: EPERM for a while.
 * A signal met on the way is held in *SIG (given at the detach).
 */
static int seize(pid_t tid, int *sig)
{
	int st, i;

	for (i = 0; ptrace(PTRACE_SEIZE, tid, NULL, NULL) == -1; i++) {
		if (errno != EPERM || i == 2000)
			return 0;
		usleep(1000);
	}
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) == -1) {
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return 0;
	}
	for (;;) {
		if (waitpid(tid, &st, __WALL) == -1) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return 0;
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == PTRACE_EVENT_STOP)
			return 1;
		if ((st >> 16) == 0 && !*sig) {
			*sig = WSTOPSIG(st);
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
		}
		ptrace(PTRACE_CONT, tid, NULL, NULL);
	}
}

/* The thread of injection IN, stopped: its registers back if it is
 * still in the injection's code (its call, or a spin after it), its
 * signal mask if it is still the injection's. */
static void give_back(const struct inj *in)
{
	struct arch_regs r;
	uint64_t all = ~(1ULL << (SIGTRAP - 1)), now;

	if (!arch_get_regs(in->tid, &r) && arch_pc(&r) >= in->code_lo &&
	    arch_pc(&r) < in->code_hi)
		arch_set_regs(in->tid, &in->regs);
	/* the mask ptleak set for the injection: the thread's own back */
	/* (the kernel keeps SIGKILL and SIGSTOP out of any mask) */
	if (ptrace(PTRACE_GETSIGMASK, in->tid, (void *)sizeof(now), &now) == 0 &&
	    (now | 1ULL << (SIGKILL - 1) | 1ULL << (SIGSTOP - 1)) == all)
		ptrace(PTRACE_SETSIGMASK, in->tid, (void *)sizeof(in->mask),
		       &in->mask);
}

static void restore(const struct shared *sh, int memfd)
{
	struct inj in = sh->inj;
	int held = 0, stopped = 0;
	unsigned i;

	/* the int3s and returns first: the other threads run now */
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
	/* the injection's thread stopped before its code goes back: it
	 * must not run on from the middle of the bytes */
	if (in.live)
		stopped = seize(in.tid, &held);
	if (in.live && in.code_len)
		mem_poke(memfd, in.code_at, in.code, in.code_len);
	if (stopped) {
		give_back(&in);
		/* (a signal given at the detach from the interrupt's stop
		 * is dropped: queued again) */
		ptrace(PTRACE_DETACH, in.tid, NULL, NULL);
		if (held)
			syscall(SYS_tkill, in.tid, held);
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

void guard_inject(struct guard *g, pid_t tid, const struct arch_inject_note *n)
{
	struct inj *in;

	if (!g)
		return;
	in = &g->sh->inj;
	in->live = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!n)
		return;
	in->tid = tid;
	in->mask = n->mask;
	in->code_lo = n->code_lo;
	in->code_hi = n->code_hi;
	in->code_at = n->code_at;
	in->code_len = n->code_len <= sizeof(in->code) ? (uint32_t)n->code_len : 0;
	memcpy(in->code, n->code, in->code_len);
	in->regs = *n->saved;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	in->live = 1;
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
	g->sh->inj.live = 0;
}
