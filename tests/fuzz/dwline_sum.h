/* dwline_sum.h - what fuzz_dwline and fuzz_dwlcache ask of a line
 * table: 1,024 addresses 8 bytes apart from 0x1000 (where a small PIE's
 * code is linked) and 256 4 KiB apart; the sum of the lines found, each
 * line's file name a string (else abort). */
#ifndef PTLEAK_FUZZ_DWLINE_SUM_H
#define PTLEAK_FUZZ_DWLINE_SUM_H

#include "symbols/dwline.h"

static inline long dwline_sum(const struct dwline *d)
{
	const char *file;
	uint64_t a;
	long sum = 0;
	int line;

	for (a = 0x1000; a < 0x3000 + 0x100000; a += a < 0x3000 ? 8 : 0x1000)
		if (!dwline_find(d, a, &file, &line)) {
			if (!file || strlen(file) > (1u << 20))
				abort();
			sum += line;
		}
	return sum;
}

#endif
