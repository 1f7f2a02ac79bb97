/*
 * h_stackcache_cxx: a C++ exception thrown out of frames that allocated,
 * then other frames built over the same stack (issue 30: a per-thread
 * cache of the last walk must not take them for the old ones).  Blocks
 * are kept reachable, each stack with a size of its own: 801 at the
 * throw, 802 after the catch, 803 in the handler, 804 and 805 the same
 * frames but for one return address (804's left by the exception).
 */
#include <cstdio>
#include <cstdlib>

#define NOINLINE __attribute__((noinline))

static void *kept[64];
static unsigned nkept;

static void keep(void *p)
{
	if (nkept < sizeof(kept) / sizeof(kept[0]))
		kept[nkept++] = p;
}

static NOINLINE void thrower(int d)
{
	if (d > 0) {
		thrower(d - 1); /* @scx_self */
		return;
	}
	keep(malloc(801)); /* @scx_leaf */
	throw d;
}

static NOINLINE void after_catch(int a)
{
	volatile char pad[80];

	pad[0] = (char)a;
	keep(malloc(802)); /* @scx_after */
	(void)pad[0];
}

/* tleaf's and tmid's frames are at the same places under ta and tb:
 * only the word above tmid's frame tells them apart once the exception
 * left ta's frames */
static NOINLINE void tleaf(int how)
{
	keep(malloc(803 + (size_t)how)); /* @scx_tleaf */
	if (how == 1)
		throw how;
}

static NOINLINE void tmid(int how)
{
	tleaf(how); /* @scx_tmid */
}

static NOINLINE void ta(void)
{
	tmid(1); /* @scx_ta */
}

static NOINLINE void tb(void)
{
	tmid(2); /* @scx_tb */
}

static NOINLINE void in_handler(void)
{
	keep(malloc(803)); /* @scx_handler */
}

int main()
{
	int caught = 0;

	for (int i = 0; i < 3; i++) {
		try {
			thrower(3); /* @scx_main_throw */
		} catch (int) {
			in_handler(); /* @scx_main_handler */
			caught++;
		}
		after_catch(i); /* @scx_main_after */
		try {
			ta(); /* @scx_main_ta */
		} catch (int) {
		}
		tb(); /* @scx_main_tb */
	}
	printf("caught %d\n", caught);
	return 0;
}
