/*
 * h_family - every allocator glibc exports, successful and failing calls.
 *
 * One block leaks from each allocator, each with a distinct size, from a
 * marked line; a malloc'd block that a failed realloc left alive leaks too.
 * Failed calls (NULL results, EINVAL) must not count as allocations.
 * Self-checking: aborts if glibc does not behave as assumed.  Uses write(2)
 * rather than stdio so that no stdout buffer is allocated.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sizes behind volatile so that the compiler neither warns about nor folds
 * the failing calls. */
static volatile size_t huge = (size_t)-1 / 2;		/* PTRDIFF_MAX */
static volatile size_t too_big = (size_t)-1 - 4096;	/* > PTRDIFF_MAX */
static volatile size_t half = (size_t)1 << 40;		/* half * half overflows */

/* valgrind aborts at pvalloc: `h_family no-pvalloc` skips both pvalloc
 * calls so that valgrind can measure the rest (the pvalloc part is two
 * allocations of 4096 and 8192 bytes, one free). */
static int use_pvalloc = 1;

static void check(int ok)
{
	if (!ok)
		abort();
}

static void freed_calls(void)
{
	void *p, *q;
	int *a;

	/* malloc / free */
	p = malloc(10);
	check(p != NULL);
	free(p);
	free(NULL);

	/* calloc: counted as nmemb * size = 40 bytes */
	a = calloc(10, sizeof(int));
	check(a && a[9] == 0);
	free(a);

	/* realloc grow, shrink, then free */
	p = malloc(16);
	memset(p, 1, 16);
	p = realloc(p, 4000);
	check(p != NULL && ((char *)p)[15] == 1);
	p = realloc(p, 8);
	check(p != NULL && ((char *)p)[7] == 1);
	free(p);

	/* realloc(NULL, n) is malloc(n) */
	p = realloc(NULL, 20);
	check(p != NULL);
	free(p);

	/* realloc(p, 0) frees p and returns NULL in glibc */
	p = malloc(12);
	q = realloc(p, 0);
	check(q == NULL);

	/* reallocarray grow of a live block: one call, counted once */
	p = malloc(6);
	p = reallocarray(p, 7, 8);
	check(p != NULL);
	free(p);

	/* the aligned family, freed */
	check(posix_memalign(&p, 32, 48) == 0);
	free(p);
	p = aligned_alloc(64, 64);
	check(p != NULL);
	free(p);
	p = memalign(16, 17);
	check(p != NULL);
	free(p);
	p = valloc(18);
	check(p != NULL);
	free(p);
	if (use_pvalloc) {
		p = pvalloc(4096);
		check(p != NULL);
		free(p);
	}
}

static void failed_calls(void)
{
	void *p;

	/* none of these allocates anything */
	errno = 0;
	p = malloc(huge);
	check(p == NULL && errno == ENOMEM);
	p = calloc(half, half);
	check(p == NULL);
	p = (void *)1;
	check(posix_memalign(&p, 3, 10) == EINVAL);
	check(p == (void *)1);
	p = reallocarray(NULL, half, half);
	check(p == NULL && errno == ENOMEM);
}

/* A live block that realloc fails to grow: it stays live and leaks. */
static void failed_realloc(void)
{
	char *keep = malloc(55); /* @realloc_fail */
	char *r;

	memset(keep, 'k', 55);
	r = realloc(keep, too_big);
	check(r == NULL && keep[54] == 'k');
}

/* opaque to gcc, which folds a literal realloc(NULL, n) into malloc(n) */
static void *volatile null_ptr;

static void leaks(void)
{
	void *p;

	p = malloc(11); /* @malloc */
	p = calloc(3, 7); /* @calloc */
	p = realloc(null_ptr, 33); /* @realloc */
	p = malloc(8);
	p = reallocarray(p, 5, 9); /* @reallocarray */
	check(posix_memalign(&p, 64, 77) == 0); /* @posix_memalign */
	p = aligned_alloc(128, 256); /* @aligned_alloc */
	check(((uintptr_t)p & 127) == 0);
	p = memalign(32, 99); /* @memalign */
	check(((uintptr_t)p & 31) == 0);
	p = valloc(123); /* @valloc */
	check(((uintptr_t)p & 4095) == 0);
	if (use_pvalloc) {
		p = pvalloc(8192); /* @pvalloc */
		check(((uintptr_t)p & 4095) == 0);
	}
	p = NULL;
}

int main(int argc, char **argv)
{
	static const char msg[] = "h_family: ok\n";

	if (argc > 1 && strcmp(argv[1], "no-pvalloc") == 0)
		use_pvalloc = 0;
	freed_calls();
	failed_calls();
	failed_realloc(); /* @call_failed_realloc */
	leaks(); /* @call_leaks */
	if (write(1, msg, sizeof(msg) - 1) != (ssize_t)(sizeof(msg) - 1))
		return 2;
	return 0;
}
