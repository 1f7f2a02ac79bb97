/*
 * fuzz_elfsyms - the in-place ELF symbol reader (elfsyms.c) on an object
 * the target maps: the input is the file, mapped read-only into this
 * process (its pages where /proc/self/maps says), looked up as ptleak
 * looks up a target's objects at a launch: malloc, free, calloc, main,
 * _r_debug.  Returns the names found times 16 plus 1 if the module's
 * range was answered, or -2 (ask libdwfl).
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "base/util.h"
#include "symbols/elfsyms.h"

FUZZ(elfsyms)
{
	static const char *const fns[] = { "malloc", "free", "calloc", "main" };
	static const char *const objs[] = { "_r_debug" };
	struct sym_def out[5];
	struct elfsyms *es;
	uint64_t lo, hi;
	long found;
	size_t len = size ? size : 1;
	void *m;
	int fd, n;

	util_silent = 1;
	fd = open(fuzz_file(data, size), O_RDONLY);
	if (fd < 0)
		abort();
	m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -3;
	es = elfsyms_open(getpid());
	memset(out, 0, sizeof(out));
	n = elfsyms_find(es, (uint64_t)m, fns, 4, 1, out);
	found = n < 0 ? n : 16 * (long)n;
	if (n >= 0 && (n = elfsyms_find(es, (uint64_t)m, objs, 1, 0, out + 4)) > 0)
		found += 16 * (long)n;
	if (found >= 0 && !elfsyms_module_range(es, (uint64_t)m, &lo, &hi)) {
		if (lo > (uint64_t)m || hi <= (uint64_t)m)
			abort();
		found++;
	}
	elfsyms_close(es);
	munmap(m, len);
	return found;
}
