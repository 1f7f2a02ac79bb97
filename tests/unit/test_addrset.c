/* test_addrset.c - the set of addresses (addrset.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tables/addrset.h"

static void test_add_remove(void **state)
{
	struct addrset *s = addrset_new();

	(void)state;
	assert_int_equal(addrset_add(s, 0), 0);
	assert_int_equal(addrset_add(s, 0x1000), 1);
	assert_int_equal(addrset_add(s, 0x1000), 0);
	assert_int_equal(addrset_count(s), 1);
	assert_int_equal(addrset_remove(s, 0x2000), 0);
	assert_int_equal(addrset_remove(s, 0x1000), 1);
	assert_int_equal(addrset_remove(s, 0x1000), 0);
	assert_int_equal(addrset_count(s), 0);
	addrset_free(s);
}

/* A model (a sorted array) against the set through 200,000 random adds
 * and removes among 5,000 addresses: growth and backward shifts inside
 * long runs (addresses 16 apart collide in runs). */
static void test_random(void **state)
{
	struct addrset *s = addrset_new();
	static unsigned char in[5000];
	size_t i, n = 0;
	unsigned r = 12345;

	(void)state;
	for (i = 0; i < 200000; i++) {
		unsigned k;
		uint64_t a;

		r = r * 1103515245u + 12345u;
		k = (r >> 8) % 5000;
		a = 0x7f0000000000ull + 16ull * k;
		if ((r >> 4) & 1) {
			assert_int_equal(addrset_add(s, a), !in[k]);
			n += !in[k];
			in[k] = 1;
		} else {
			assert_int_equal(addrset_remove(s, a), in[k]);
			n -= in[k];
			in[k] = 0;
		}
		assert_int_equal(addrset_count(s), n);
	}
	for (i = 0; i < 5000; i++)
		assert_int_equal(addrset_remove(s, 0x7f0000000000ull + 16ull * i), in[i]);
	assert_int_equal(addrset_count(s), 0);
	addrset_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_remove),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
