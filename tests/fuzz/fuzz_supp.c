/*
 * fuzz_supp - suppression files (suppress.c, and vgsupp.c for valgrind's
 * format), which --suppressions reads: the input is the file.  Returns
 * the patterns loaded, or -1 if the file was refused (one message).
 */
#include "fuzz.h"
#include "base/util.h"
#include "analysis/suppress.h"

FUZZ(supp)
{
	struct suppressions *s;
	long n;

	util_silent = 1;
	s = supp_load(fuzz_file(data, size));
	if (!s)
		return -1;
	n = s->n;
	supp_free(s);
	return n;
}
