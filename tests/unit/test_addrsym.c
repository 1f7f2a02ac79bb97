/*
 * test_addrsym.c - addrsym_find against dwfl_module_addrinfo: the same
 * name, offset and symbol at the bounds of symbols (start - 1, start,
 * start + 1, middle, end - 1, end) in real objects: this process's own
 * (libc through its separate debug file when libc6-dbg is there: 10,000
 * symbols, locals, sizeless ones), perl's and libstdc++'s dynamic
 * tables, and in a table made to hold every case of libdw's rules.
 */
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbols/addrsym.h"

/* Symbols tried in each module at most (evenly spread over the table,
 * sizeless ones all): libdw's search reads the whole table each time. */
#define PER_MODULE	700

struct tally {
	unsigned long lookups, fallbacks, named, modules;
	unsigned long held;	/* named by a sized symbol holding the address */
	unsigned long indexed;	/* struct addrsym's */
};

static void same(struct addrsym *t, uint64_t addr, struct tally *n)
{
	GElf_Off oa = 0, ob = 0;
	GElf_Sym sa, sb;
	const char *a, *b;

	memset(&sa, 0, sizeof(sa));
	memset(&sb, 0, sizeof(sb));
	a = addrsym_find(t, addr, &oa, &sa);
	b = dwfl_module_addrinfo(t->mod, addr, &ob, &sb, NULL, NULL, NULL);
	n->lookups++;
	if (a != b)
		fail_msg("%#lx: \"%s\", libdw \"%s\"", (unsigned long)addr,
			 a ? a : "(none)", b ? b : "(none)");
	if (!a)
		return;
	n->named++;
	n->held += sa.st_size && oa < sa.st_size;
	assert_int_equal(oa, ob);
	assert_memory_equal(&sa, &sb, sizeof(sa));
}

static void module_tried(Dwfl_Module *mod, struct tally *n)
{
	struct addrsym t;
	unsigned long before = n->lookups;
	int nsyms = dwfl_module_getsymtab(mod), i, step;

	addrsym_init(&t, mod);
	step = nsyms > PER_MODULE ? nsyms / PER_MODULE : 1;
	for (i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr v;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &v, NULL,
							   NULL, NULL);

		if (!name || (sym.st_size && i % step))
			continue;
		same(&t, v - 1, n);
		same(&t, v, n);
		same(&t, v + 1, n);
		if (sym.st_size) {
			same(&t, v + sym.st_size / 2, n);
			same(&t, v + sym.st_size - 1, n);
			same(&t, v + sym.st_size, n);
		}
	}
	if (n->lookups > before)
		n->modules++;
	n->fallbacks += t.fallbacks;
	n->indexed += t.indexed;
	addrsym_free(&t);
}

static int each_module(Dwfl_Module *mod, void **ud, const char *name,
		       Dwarf_Addr start, void *arg)
{
	GElf_Addr bias;

	(void)ud, (void)name, (void)start;
	/* the full table: the debug file's when there is one */
	dwfl_module_getelf(mod, &bias);
	module_tried(mod, arg);
	return DWARF_CB_OK;
}

static char *debuginfo_path;
static const Dwfl_Callbacks proc_cb = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};
static const Dwfl_Callbacks offline_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static void test_as_libdw(void **state)
{
	static const char *const files[] = {
		"/usr/bin/perl", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	};
	struct tally n = { 0, 0, 0, 0, 0, 0 };
	Dwfl *d = dwfl_begin(&proc_cb);
	unsigned i;

	(void)state;
	assert_non_null(d);
	assert_int_equal(dwfl_linux_proc_report(d, getpid()), 0);
	assert_int_equal(dwfl_report_end(d, NULL, NULL), 0);
	dwfl_getmodules(d, each_module, &n, 0);
	dwfl_end(d);
	d = dwfl_begin(&offline_cb);
	assert_non_null(d);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!access(files[i], R_OK))
			assert_non_null(dwfl_report_offline(d, files[i], files[i], -1));
	assert_int_equal(dwfl_report_end(d, NULL, NULL), 0);
	dwfl_getmodules(d, each_module, &n, 0);
	dwfl_end(d);
	printf("# %lu lookups in %lu modules, %lu named, %lu left to libdw, "
	       "%lu by the index\n", n.lookups, n.modules, n.named, n.fallbacks,
	       n.indexed);
	/* libc, ld.so, cmocka, libdw, libelf, the test: the real thing */
	assert_true(n.modules >= 6);
	assert_true(n.named > n.lookups / 2);
	/* the index names every address a sized symbol holds, but a
	 * module's first few */
	assert_true(n.indexed <= n.held);
	assert_true(n.indexed + ADDRSYM_INDEX_AFTER * n.modules >= n.held);
	assert_true(n.indexed > n.held / 2);
	/* the copy answers; libdw where no sized symbol holds the address
	 * and a sizeless one could (gaps between functions: a third of
	 * the addresses tried are start - 1 or end) */
	assert_true(n.fallbacks < n.lookups / 4);
}

/* libaddrsym_cases.so (addrsym_cases.S) and its stripped copy (.dynsym
 * alone: no local symbols), next to this test: every byte of the module
 * and 16 past it. */
static void test_every_case(void **state)
{
	static const char *const names[] = {
		"libaddrsym_cases.so", "libaddrsym_cases_stripped.so",
	};
	char path[4096];
	unsigned i;

	(void)state;
	for (i = 0; i < 2; i++) {
		struct tally n = { 0, 0, 0, 0, 0, 0 };
		ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 64);
		Dwfl *d = dwfl_begin(&offline_cb);
		Dwfl_Module *mod;
		struct addrsym t;
		Dwarf_Addr lo, hi, a;
		char *slash;

		assert_true(len > 0);
		path[len] = '\0';
		slash = strrchr(path, '/');
		strcpy(slash + 1, names[i]);
		assert_non_null(d);
		mod = dwfl_report_offline(d, names[i], path, -1);
		assert_non_null(mod);
		assert_int_equal(dwfl_report_end(d, NULL, NULL), 0);
		dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
		addrsym_init(&t, mod);
		/* .symtab: 5 locals of the source and _DYNAMIC, then 16
		 * globals (no file symbol); .dynsym: the 16 */
		assert_int_equal(t.n, i ? 16 : 22);
		assert_int_equal(t.first_global, i ? 0 : 6);
		for (a = lo; a < hi + 16; a++)
			same(&t, a, &n);
		printf("# %s: %lu addresses, %lu named, %lu left to libdw, "
		       "%lu by the index\n", names[i], n.lookups, n.named,
		       (unsigned long)t.fallbacks, (unsigned long)t.indexed);
		/* every one a sized symbol holds found through the index,
		 * but the first lookups' (it is built at the
		 * ADDRSYM_INDEX_AFTER-th) */
		assert_true(t.indexed <= n.held);
		assert_true(t.indexed + ADDRSYM_INDEX_AFTER >= n.held);
		assert_true(t.indexed > 0);
		/* the labels' gaps only: as_label_first's 2 bytes, the 7
		 * after as_f1, as_label_mid's 4, the 16 after as_over2,
		 * as_data_label's 8 and the rest of the data's page... */
		assert_true(t.fallbacks > 0 && t.fallbacks < n.lookups);
		addrsym_free(&t);
		dwfl_end(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_libdw),
		cmocka_unit_test(test_every_case),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
