/*
 * fuzz_dwlcache - a line table read back from the disk cache (dwline.c,
 * lines_cached): the input is a cache file's data, written with a right
 * header and checksum (dc_write) for a key file in a directory of the
 * harness's own, then opened as that file's line table.  Looks up the
 * addresses fuzz_dwline does; returns the sum of the lines found (each
 * file name a string), or -1 if the data was refused (the key file, not
 * an ELF file, then gives no table).
 */
#include <sys/stat.h>

#include "fuzz.h"
#include "base/diskcache.h"
#include "base/util.h"
#include "dwline_sum.h"

static char dwl_dir[64], dwl_key[96];

static void dwl_clean(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dwl_dir);
	if (system(cmd))
		return;
}

FUZZ(dwlcache)
{
	struct dc_key k;
	struct dwline *d;
	long sum;

	util_silent = 1;
	if (!dwl_dir[0]) {
		const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
		FILE *f;

		snprintf(dwl_dir, sizeof(dwl_dir), "%.40s/ptleak-dwl.XXXXXX", t);
		if (!mkdtemp(dwl_dir))
			abort();
		atexit(dwl_clean);
		snprintf(dwl_key, sizeof(dwl_key), "%s/key", dwl_dir);
		f = fopen(dwl_key, "w");
		if (!f || fputs("not an ELF file\n", f) < 0 || fclose(f))
			abort();
	}
	setenv("PTLEAK_CACHE_DIR", dwl_dir, 1);
	if (dc_key_of(dwl_key, &k))
		abort();
	dc_write(&dwline_cache_kind, &k, data, size);
	d = dwline_open(dwl_key);
	if (!d)
		return -1;
	if (!dwline_cached(d))
		abort();	/* the key file has no line table */
	sum = dwline_sum(d);
	dwline_close(d);
	return sum;
}
