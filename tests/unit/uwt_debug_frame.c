/*
 * uwt_debug_frame.c - built into a shared object whose only CFI is
 * .debug_frame (-fno-asynchronous-unwind-tables, no start files), for
 * test_unwtab.
 */
int uwt_leaf(int x);
int uwt_framed(int n);

int uwt_leaf(int x)
{
	return x * 3;
}

int uwt_framed(int n)
{
	volatile char b[64];

	b[0] = (char)n;
	return uwt_leaf(b[0]) + b[0];
}
