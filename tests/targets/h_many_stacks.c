/*
 * h_many_stacks: 4,096 distinct allocation stacks (four levels of eight
 * call sites each), every one reached once in each of three passes, each
 * block kept (a global array).  Under the recorder the stack set grows
 * past its first table (2^12 hashes, doubled at half full) while the
 * program runs, and the passes after the first send hashes alone.  The
 * block of combination V has 16 + V bytes: each loss record is one stack
 * of 3 blocks, its sites V's octal digits.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define COMBOS 4096

static void *kept[3 * COMBOS];
static unsigned nkept;

static NOINLINE void leaf(size_t n)
{
	kept[nkept++] = malloc(n); /* @ms_leaf */
}

static NOINLINE void level(int depth, unsigned v, size_t n)
{
	if (!depth) {
		leaf(n); /* @ms_bottom */
		return;
	}
	switch (v & 7) {
	case 0: level(depth - 1, v >> 3, n); break; /* @ms_0 */
	case 1: level(depth - 1, v >> 3, n); break; /* @ms_1 */
	case 2: level(depth - 1, v >> 3, n); break; /* @ms_2 */
	case 3: level(depth - 1, v >> 3, n); break; /* @ms_3 */
	case 4: level(depth - 1, v >> 3, n); break; /* @ms_4 */
	case 5: level(depth - 1, v >> 3, n); break; /* @ms_5 */
	case 6: level(depth - 1, v >> 3, n); break; /* @ms_6 */
	case 7: level(depth - 1, v >> 3, n); break; /* @ms_7 */
	}
}

int main(void)
{
	unsigned pass, v;

	for (pass = 0; pass < 3; pass++)
		for (v = 0; v < COMBOS; v++)
			level(4, v, 16 + v); /* @ms_main */
	printf("%u blocks\n", nkept);
	return 0;
}
