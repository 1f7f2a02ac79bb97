/*
 * addrset.c - a set of addresses (addrset.h).
 */
#include <stdlib.h>

#include "tables/addrset.h"
#include "base/util.h"

struct addrset {
	uint64_t *keys;		/* 0: empty */
	size_t mask, count;
};

static size_t slot(const struct addrset *s, uint64_t a)
{
	return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 20) & s->mask;
}

struct addrset *addrset_new(void)
{
	struct addrset *s = xcalloc(1, sizeof(*s));

	s->mask = 63;
	s->keys = xcalloc(s->mask + 1, sizeof(*s->keys));
	return s;
}

void addrset_free(struct addrset *s)
{
	if (!s)
		return;
	free(s->keys);
	free(s);
}

static void grow(struct addrset *s)
{
	uint64_t *old = s->keys;
	size_t n = s->mask + 1, i;

	s->mask = 2 * n - 1;
	s->keys = xcalloc(2 * n, sizeof(*s->keys));
	for (i = 0; i < n; i++)
		if (old[i]) {
			size_t k = slot(s, old[i]);

			while (s->keys[k])
				k = (k + 1) & s->mask;
			s->keys[k] = old[i];
		}
	free(old);
}

int addrset_add(struct addrset *s, uint64_t a)
{
	size_t k;

	if (!a)
		return 0;
	if (2 * (s->count + 1) > s->mask + 1)
		grow(s);
	for (k = slot(s, a); s->keys[k]; k = (k + 1) & s->mask)
		if (s->keys[k] == a)
			return 0;
	s->keys[k] = a;
	s->count++;
	return 1;
}

int addrset_remove(struct addrset *s, uint64_t a)
{
	size_t k, j;

	if (!a)
		return 0;
	for (k = slot(s, a); s->keys[k] != a; k = (k + 1) & s->mask)
		if (!s->keys[k])
			return 0;
	/* backward shift: every later key of the run that may sit in K */
	for (j = (k + 1) & s->mask; s->keys[j]; j = (j + 1) & s->mask) {
		size_t home = slot(s, s->keys[j]);

		/* J's key may move to K if K lies cyclically in [home, j) */
		if (((j - home) & s->mask) >= ((j - k) & s->mask)) {
			s->keys[k] = s->keys[j];
			k = j;
		}
	}
	s->keys[k] = 0;
	s->count--;
	return 1;
}

size_t addrset_count(const struct addrset *s)
{
	return s->count;
}
