/*
 * compute [ROUNDS] - arithmetic only: a few hundred milliseconds natively
 * (ROUNDS defaults to 200000000) and no allocation of its own, so that
 * ptleak's cost on it is only its start-up and the C runtime's handful
 * of allocations.  Prints one checksum line; exits 0.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200000000L;
	unsigned long x = 88172645463325252UL, acc = 0;
	double f = 1.0;
	long i;

	for (i = 0; i < rounds; i++) {
		/* xorshift64 plus a dependent floating-point chain */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		acc += x >> 59;
		f = f * 0.999999 + (double)(x & 0xff) * 1e-9;
	}
	printf("compute %ld: checksum %lu %.6f\n", rounds, acc, f);
	return 0;
}
