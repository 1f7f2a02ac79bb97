/*
 * test_dwline.c - .debug_line alone gives libdw's lines: every function of
 * glibc's debug file (libc6-dbg), at its start and in its middle, looked
 * up both ways (skipped without the debug file).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/diskcache.h"
#include "symbols/dwline.h"

/* The disk cache this test writes in: a directory of its own, made by
 * main, emptied at the end. */
static char cache_dir[64];

static void cache_empty(void)
{
	DIR *dp = opendir(cache_dir);
	struct dirent *e;

	if (!dp)
		return;
	while ((e = readdir(dp)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(dp), e->d_name, 0);
	closedir(dp);
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The debug file of the libc this test runs on, by build-id. */
static int libc_debug_file(char *path, size_t len)
{
	int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY);
	Elf *elf;
	const unsigned char *id = NULL;
	ssize_t n, i;
	size_t o;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = elf ? dwelf_elf_gnu_build_id(elf, (const void **)&id) : -1;
	if (n < 2) {
		elf_end(elf);
		close(fd);
		return -1;
	}
	o = (size_t)snprintf(path, len, "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (i = 1; i < n && o + 3 < len; i++)
		o += (size_t)snprintf(path + o, len - o, "%02x", id[i]);
	snprintf(path + o, len - o, ".debug");
	elf_end(elf);
	close(fd);
	return access(path, R_OK);
}

/* The start and middle of every function of PATH's .symtab into *AT
 * (malloc'd): their number. */
static size_t func_addrs(const char *path, uint64_t **at)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t n = 0, a = 0;

	assert_non_null(elf);
	*at = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			if (n + 2 > a) {
				a = a ? 2 * a : 1024;
				*at = realloc(*at, a * sizeof(**at));
				assert_non_null(*at);
			}
			(*at)[n++] = sym.st_value;
			(*at)[n++] = sym.st_value + sym.st_size / 2;
		}
	}
	elf_end(elf);
	close(fd);
	return n;
}

static void test_libc_lines_as_libdw(void **state)
{
	char path[512];
	struct dwline *d;
	Dwarf *dw;
	uint64_t *at;
	size_t n, i;
	int fd, compared = 0, found = 0;

	if (libc_debug_file(path, sizeof(path))) {
		skip();
		return;
	}
	d = dwline_open(path);
	assert_non_null(d);
	fd = open(path, O_RDONLY);
	dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	n = func_addrs(path, &at);
	for (i = 0; i < n; i++) {
		Dwarf_Die cu;
		Dwarf_Line *l;
		const char *want = NULL, *got = NULL;
		int wline = 0, gline = 0;

		if (dwarf_addrdie(dw, at[i], &cu) &&
		    (l = dwarf_getsrc_die(&cu, at[i])) &&
		    dwarf_lineno(l, &wline) == 0 && wline > 0)
			want = dwarf_linesrc(l, NULL, NULL);
		if (dwline_find(d, at[i], &got, &gline))
			got = NULL;
		compared++;
		if (!want)
			continue;	/* libdw has none: ours may */
		found++;
		/* reports print the base name; libdw joins the directory */
		if (!got || strcmp(base(got), base(want)) || gline != wline)
			fail_msg("%#llx: libdw %s:%d, dwline %s:%d",
				 (unsigned long long)at[i], want, wline,
				 got ? got : "(none)", gline);
	}
	print_message("%d addresses, %d with a line, all equal\n", compared, found);
	assert_true(found > 1000);
	free(at);
	dwarf_end(dw);
	close(fd);
	dwline_close(d);
}

/* Each function's start and middle in D and E: the same line, or none
 * in both; the number of lines. */
static int same_lines(struct dwline *d, struct dwline *e, const char *path)
{
	uint64_t *at;
	size_t n = func_addrs(path, &at), i;
	int lines = 0;

	for (i = 0; i < n; i++) {
		const char *f1 = NULL, *f2 = NULL;
		int l1 = 0, l2 = 0;
		int r1 = dwline_find(d, at[i], &f1, &l1);
		int r2 = dwline_find(e, at[i], &f2, &l2);

		assert_int_equal(r1, r2);
		if (r1)
			continue;
		if (strcmp(f1, f2) || l1 != l2)
			fail_msg("%#llx: %s:%d, from the cache %s:%d",
				 (unsigned long long)at[i], f1, l1, f2, l2);
		lines++;
	}
	free(at);
	return lines;
}

/* The cache file of libc's lines (the only .dwl in cache_dir). */
static void dwl_file(char *out, size_t len)
{
	DIR *dp = opendir(cache_dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(dp);
	while ((e = readdir(dp)))
		if (strlen(e->d_name) == 20 && !strcmp(e->d_name + 16, ".dwl")) {
			snprintf(out, len, "%s/%s", cache_dir, e->d_name);
			n++;
		}
	closedir(dp);
	assert_int_equal(n, 1);
}

/* The second open of libc's lines comes from the disk cache the first
 * wrote, and answers as it; a copy damaged (its checksum right) or
 * someone else's is not used. */
static void test_cache(void **state)
{
	char path[512], dwl[512];
	struct dwline *d, *e;
	struct dc_hdr h;
	struct stat st;
	uint8_t *buf;
	FILE *f;
	int n;

	(void)state;
	if (libc_debug_file(path, sizeof(path))) {
		skip();
		return;
	}
	cache_empty();
	d = dwline_open(path);
	assert_non_null(d);
	assert_false(dwline_cached(d));
	e = dwline_open(path);
	assert_non_null(e);
	assert_true(dwline_cached(e));
	n = same_lines(d, e, path);
	print_message("%d lines equal from the cache\n", n);
	assert_true(n > 1000);
	dwline_close(e);

	/* the last sequence's unit made one past the end, the checksum
	 * made right: read, refused, read from the debug file again */
	dwl_file(dwl, sizeof(dwl));
	assert_int_equal(stat(dwl, &st), 0);
	buf = malloc((size_t)st.st_size);
	f = fopen(dwl, "rb");
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	{
		uint64_t hdr[5], nnames, off, unit;

		memcpy(hdr, buf + sizeof(h), sizeof(hdr));
		nnames = hdr[4];
		/* the sequences end where the names (8 bytes each) start */
		off = (uint64_t)st.st_size - nnames * 8 - 32 + 24;
		memcpy(&unit, buf + off, 8);
		assert_true(unit < hdr[2]);
		unit = hdr[2];
		memcpy(buf + off, &unit, 8);
	}
	memcpy(&h, buf, sizeof(h));
	h.sum = dc_sum(buf + sizeof(h), (size_t)st.st_size - sizeof(h));
	memcpy(buf, &h, sizeof(h));
	f = fopen(dwl, "wb");
	assert_int_equal(fwrite(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	e = dwline_open(path);
	assert_non_null(e);
	assert_false(dwline_cached(e));
	assert_int_equal(same_lines(d, e, path), n);
	dwline_close(e);
	/* written again whole by that open: good, unless writable by others */
	e = dwline_open(path);
	assert_true(dwline_cached(e));
	dwline_close(e);
	dwl_file(dwl, sizeof(dwl));
	assert_int_equal(chmod(dwl, 0622), 0);
	e = dwline_open(path);
	assert_false(dwline_cached(e));
	dwline_close(e);
	free(buf);
	dwline_close(d);
}

static void test_no_file(void **state)
{
	assert_null(dwline_open("/nonexistent/ptleak-test"));
	/* an ELF file without .debug_line */
	assert_null(dwline_open("/bin/true"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc_lines_as_libdw),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_no_file),
	};

	int rc;

	snprintf(cache_dir, sizeof(cache_dir), "/tmp/ptleak-test-dwline-XXXXXX");
	if (!mkdtemp(cache_dir))
		return 1;
	setenv("PTLEAK_CACHE_DIR", cache_dir, 1);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	cache_empty();
	rmdir(cache_dir);
	return rc;
}
