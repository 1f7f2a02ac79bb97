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

#include "symbols/dwline.h"

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

static void test_libc_lines_as_libdw(void **state)
{
	char path[512];
	struct dwline *d;
	Dwarf *dw;
	Elf *elf;
	Elf_Scn *scn = NULL;
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
	elf = dwarf_getelf(dw);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			uint64_t at[2];
			int k;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			at[0] = sym.st_value;
			at[1] = sym.st_value + sym.st_size / 2;
			for (k = 0; k < 2; k++) {
				Dwarf_Die cu;
				Dwarf_Line *l;
				const char *want = NULL, *got = NULL;
				int wline = 0, gline = 0;

				if (dwarf_addrdie(dw, at[k], &cu) &&
				    (l = dwarf_getsrc_die(&cu, at[k])) &&
				    dwarf_lineno(l, &wline) == 0 && wline > 0)
					want = dwarf_linesrc(l, NULL, NULL);
				if (dwline_find(d, at[k], &got, &gline))
					got = NULL;
				compared++;
				if (!want) {
					continue;	/* libdw has none: ours may */
				}
				found++;
				/* reports print the base name; libdw joins the
				 * directory */
				if (!got || strcmp(base(got), base(want)) || gline != wline)
					fail_msg("%#llx: libdw %s:%d, dwline %s:%d",
						 (unsigned long long)at[k], want, wline,
						 got ? got : "(none)", gline);
			}
		}
	}
	print_message("%d addresses, %d with a line, all equal\n", compared, found);
	assert_true(found > 1000);
	dwarf_end(dw);
	close(fd);
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
		cmocka_unit_test(test_no_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
