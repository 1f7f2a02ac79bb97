/*
 * g_stacks: 100,000 distinct allocation stacks (five levels of ten call
 * sites each), each allocating a block and freeing it, then "done".
 * ptleak's memory must stay bounded by the stacks (growth.h keeps a few
 * dozen bytes each), its samples must not walk them.
 */
#include <stdio.h>
#include <stdlib.h>

#define CALL(k) case k: level(depth - 1, v / 10); break;

static void level(int depth, unsigned v)
{
	if (!depth) {
		free(malloc(16 + v % 7));	/* @leaf */
		return;
	}
	switch (v % 10) {
	CALL(0) CALL(1) CALL(2) CALL(3) CALL(4)
	CALL(5) CALL(6) CALL(7) CALL(8) CALL(9)
	}
}

int main(void)
{
	unsigned v;

	for (v = 0; v < 100000; v++)
		level(5, v);
	printf("done\n");
	return 0;
}
