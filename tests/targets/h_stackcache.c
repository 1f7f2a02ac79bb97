/*
 * h_stackcache: stacks that a per-thread cache of the last walk could
 * get wrong (issue 30).  Every block is leaked with a size of its own,
 * so each record is one stack:
 *
 *   1xx  one call site reached through different callers, alternately
 *   2xx  a recursion whose depth changes from call to call (200 + depth)
 *   3xx  a frame that allocates, is interrupted by a signal whose
 *        handler allocates, and allocates again
 *   4xx  a longjmp out of frames that allocated, then other frames
 *        built over the same stack (403, 404: the same frames but for
 *        one return address)
 *   5xx  a thread, joined, then a new thread on its stack (glibc's
 *        stack cache hands it over) that allocates through other frames
 *   6xx  the same function of two libraries dlopen'ed one after the
 *        other (dlclose between) at the same place
 *   7xx  a coroutine (makecontext/swapcontext) on a stack inside main's
 *        frame, allocating between switches, main allocating too
 *
 * Each part runs its pattern three times (the first walk fills a cache,
 * the next ones would use it).  Argument: the directory of the libraries.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define NOINLINE __attribute__((noinline))

/* every block stays reachable from here: the records' kinds do not
 * depend on what dead stack still holds */
static void *kept[128];
static unsigned nkept;

static void keep(void *p)
{
	if (nkept < sizeof(kept) / sizeof(kept[0]))
		kept[nkept++] = p;
}

/* ---- 1: one site, different callers ---- */

static NOINLINE void leaf(size_t n)
{
	keep(malloc(n)); /* @sc_leaf */
}

static NOINLINE void via_a(size_t n)
{
	leaf(n); /* @sc_via_a */
}

static NOINLINE void via_b(size_t n)
{
	volatile char pad[64];

	pad[0] = 1;
	leaf(n); /* @sc_via_b */
	(void)pad[0];
}

/* ---- 2: recursion of changing depth ---- */

static NOINLINE void rec(int d, int depth)
{
	if (d < depth)
		rec(d + 1, depth); /* @sc_rec_self */
	else
		keep(malloc(200 + (size_t)depth)); /* @sc_rec_leaf */
}

/* ---- 3: a signal handler allocating between two calls ---- */

static NOINLINE void on_signal(int sig)
{
	(void)sig;
	keep(malloc(302)); /* @sc_handler */
}

static NOINLINE void interrupted(void)
{
	keep(malloc(301)); /* @sc_before_signal */
	raise(SIGUSR1); /* @sc_raise */
	keep(malloc(303)); /* @sc_after_signal */
}

/* ---- 4: longjmp ---- */

static jmp_buf env;

static NOINLINE void jump_deep(int d)
{
	if (d > 0) {
		jump_deep(d - 1); /* @sc_jump_self */
		return;
	}
	keep(malloc(401)); /* @sc_jump_leaf */
	longjmp(env, 1);
}

static NOINLINE void after_jump(int a)
{
	volatile char pad[48];

	pad[0] = (char)a;
	keep(malloc(402)); /* @sc_after_jump */
	(void)pad[0];
}

static NOINLINE void after_jump_outer(void)
{
	after_jump(1); /* @sc_after_jump_outer */
}

/* jleaf's and jmid's frames are at the same places under ja and jb:
 * only the word above jmid's frame (its return address) tells them
 * apart once ja's frames were left by longjmp */
static NOINLINE void jleaf(int how)
{
	keep(malloc(402 + (size_t)how)); /* @sc_jleaf */
	if (how == 1)
		longjmp(env, 1);
}

static NOINLINE void jmid(int how)
{
	jleaf(how); /* @sc_jmid */
}

static NOINLINE void ja(void)
{
	jmid(1); /* @sc_ja */
}

static NOINLINE void jb(void)
{
	jmid(2); /* @sc_jb */
}

/* ---- 5: a thread's stack reused ---- */

static NOINLINE void t1_leaf(void)
{
	keep(malloc(501)); /* @sc_t1_leaf */
}

static NOINLINE void t_common(size_t n)
{
	keep(malloc(n)); /* @sc_t_common */
}

static void *t1_main(void *arg)
{
	t1_leaf(); /* @sc_t1_main */
	t_common(503); /* @sc_t1_common */
	return arg;
}

static NOINLINE void t2_leaf(void)
{
	keep(malloc(502)); /* @sc_t2_leaf */
}

static NOINLINE void t2_mid(void)
{
	t2_leaf(); /* @sc_t2_mid */
}

static void *t2_main(void *arg)
{
	t2_mid(); /* @sc_t2_main */
	t_common(504); /* @sc_t2_common */
	return arg;
}

static void run_thread(void *(*fn)(void *))
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, NULL) || pthread_join(t, NULL))
		exit(2);
}

/* ---- 6: dlclose, dlopen ---- */

static NOINLINE void call_lib(const char *dir, const char *name, size_t n)
{
	char path[4096];
	void *(*fn)(size_t);
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	h = dlopen(path, RTLD_NOW);
	if (!h || !(fn = (void *(*)(size_t))dlsym(h, "sc_lib_alloc")))
		exit(3);
	keep(fn(n)); /* @sc_call_lib */
	dlclose(h);
}

/* ---- 7: a coroutine ---- */

static ucontext_t main_ctx, co_ctx;

static NOINLINE void co_leaf(size_t n)
{
	keep(malloc(n)); /* @sc_co_leaf */
}

static void co_main(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		co_leaf(701); /* @sc_co_first */
		swapcontext(&co_ctx, &main_ctx);
		co_leaf(702); /* @sc_co_second */
		swapcontext(&co_ctx, &main_ctx);
	}
}

static NOINLINE void main_leaf(void)
{
	keep(malloc(703)); /* @sc_main_leaf */
}

static NOINLINE void coroutine(void)
{
	char stack[64 << 10] __attribute__((aligned(16)));
	int i;

	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = sizeof(stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_main, 0);
	for (i = 0; i < 6; i++) {
		swapcontext(&main_ctx, &co_ctx);
		main_leaf(); /* @sc_main_between */
	}
}

int main(int argc, char **argv)
{
	static const int depths[] = { 3, 6, 1, 6 };
	static const char *const libs[] = { "sc_liba.so", "sc_libb.so" };
	const char *dir = argc > 1 ? argv[1] : ".";
	volatile int jumped = 0;
	int i;

	signal(SIGUSR1, on_signal);
	for (i = 0; i < 3; i++) {
		via_a(101); /* @sc_main_a */
		via_b(102); /* @sc_main_b */
		via_a(103); /* @sc_main_a2 */
	}
	for (i = 0; i < 12; i++)
		rec(0, depths[i % 4]); /* @sc_main_rec */
	for (i = 0; i < 3; i++)
		interrupted(); /* @sc_main_interrupted */
	for (i = 0; i < 3; i++) {
		jumped = 0;
		if (!setjmp(env))
			jump_deep(4); /* @sc_main_jump */
		else
			jumped++;
		after_jump_outer(); /* @sc_main_after_jump */
		if (!setjmp(env))
			ja(); /* @sc_main_ja */
		jb(); /* @sc_main_jb */
	}
	for (i = 0; i < 3; i++) {
		run_thread(t1_main);
		run_thread(t2_main);
	}
	for (i = 0; i < 6; i++)
		call_lib(dir, libs[i % 2], 601 + (size_t)(i % 2)); /* @sc_main_lib */
	coroutine(); /* @sc_main_coroutine */
	printf("done %d\n", jumped);
	return 0;
}
