/*
 * fuzz_dwline - the .debug_line reader (dwline.c) on an ELF file: the
 * input is the file.  Looks up 1,024 addresses 8 bytes apart from
 * 0x1000 (where a small PIE's code is linked) and 256 4 KiB apart, and
 * returns the sum of the lines found (each line's file name must be a
 * string), or -1 if the file has no line table it reads.  No disk
 * cache: each input is written at the same path, often within one tick
 * of the file system's clock, the same size: the same key to the cache.
 */
#include "fuzz.h"
#include "base/util.h"
#include "dwline_sum.h"

FUZZ(dwline)
{
	struct dwline *d;
	long sum;

	util_silent = 1;
	setenv("PTLEAK_CACHE_DIR", "", 1);
	d = dwline_open(fuzz_file(data, size));
	if (!d)
		return -1;
	sum = dwline_sum(d);
	dwline_close(d);
	return sum;
}
