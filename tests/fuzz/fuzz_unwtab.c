/*
 * fuzz_unwtab - the unwind-table compiler (unwtab.c, unwtab_fast.c, with
 * cfi.c's interpreter) on an ELF file the target maps: the input is the
 * file.  A table it compiles must pass unwtab_check (else abort).
 * Returns the table's rows, or -1 if the file was refused.
 */
#include "fuzz.h"
#include "base/util.h"
#include "recorder/unwtab.h"

FUZZ(unwtab)
{
	struct unwtab_hdr *tab = NULL;
	long rows;

	util_silent = 1;
	if (unwtab_compile_file(fuzz_file(data, size), &tab, NULL) < 0)
		return -1;
	if (unwtab_check(tab, tab->size) < 0)
		abort();
	rows = tab->nrows;
	free(tab);
	return rows;
}
