/* test_vgsupp.c - valgrind's suppression files: parsing, matching as
 * valgrind matches, --gen-suppressions' text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analysis/scan.h"
#include "analysis/suppress.h"
#include "analysis/vgsupp.h"
#include "capture.h"

#define DEF SCAN_DEFINITELY_LOST
#define IND SCAN_INDIRECTLY_LOST
#define POS SCAN_POSSIBLY_LOST
#define REACH SCAN_STILL_REACHABLE

static void write_tmp(char *path, const char *text)
{
	size_t n = strlen(text);
	int fd;

	strcpy(path, "/tmp/test_vgsupp.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
}

static struct suppressions *load_text(const char *text)
{
	struct suppressions *s;
	char path[64];

	write_tmp(path, text);
	s = supp_load(path);
	unlink(path);
	return s;
}

/* Loading TEXT fails with exactly "ptleak: PATH:" + TAIL. */
static void check_malformed(const char *text, const char *tail)
{
	char path[64], expect[512], *err;
	struct suppressions *s;
	struct cap c;

	write_tmp(path, text);
	cap_begin(&c);
	s = supp_load(path);
	err = cap_end(&c);
	unlink(path);
	assert_null(s);
	snprintf(expect, sizeof(expect), "ptleak: %s:%s\n", path, tail);
	assert_string_equal(err, expect);
	free(err);
}

static struct frame_info fr(const char *fn, const char *sym, const char *file,
			    int line, const char *module)
{
	struct frame_info fi;

	memset(&fi, 0, sizeof(fi));
	fi.pc = 0x1000;
	fi.function = fn;
	fi.symbol = sym ? sym : fn;
	fi.file = file;
	fi.line = line;
	fi.module = module;
	return fi;
}

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBFOO "/usr/lib/libfoo.so.1"
#define APP "/home/u/app"

/* malloc <- make_node (node.c:12) <- libfoo's init <- main */
static const struct frame_info *stack4(void)
{
	static struct frame_info f[4];

	f[0] = fr("malloc", NULL, NULL, 0, LIBC);
	f[1] = fr("make_node", NULL, "node.c", 12, APP);
	f[2] = fr(NULL, NULL, NULL, 0, LIBFOO);
	f[3] = fr("main", NULL, "main.c", 40, APP);
	return f;
}

static const char two_blocks[] =
	"# valgrind's own comments\n"
	"{\n"
	"   node_leak\n"
	"   Memcheck:Leak\n"
	"   match-leak-kinds: definite,possible\n"
	"   fun:malloc\n"
	"   fun:make_*\n"
	"   ...\n"
	"   fun:main\n"
	"}\n"
	"\n"
	"{\n"
	"   cond_other_kind\n"
	"   Memcheck:Cond\n"
	"   fun:whatever\n"
	"}\n"
	"{\r\n"
	"\tfoo_any\r\n"
	"\tMemcheck:Leak\r\n"
	"\t...\r\n"
	"\tobj:*/libfoo.so*\r\n"
	"}\r\n";

static void test_parse(void **state)
{
	struct suppressions *s = load_text(two_blocks);

	assert_non_null(s);
	/* the Memcheck:Cond block is read, and kept out */
	assert_int_equal(s->n, 2);
	assert_int_equal(s->p[0].kind, SUPP_LEAK);
	assert_string_equal(s->p[0].glob, "node_leak");
	/* the line of its name, where valgrind -s says it is */
	assert_int_equal(s->p[0].line, 3);
	assert_non_null(s->p[0].vg);
	assert_string_equal(s->p[1].glob, "foo_any");
	assert_int_equal(s->p[1].line, 18);
	supp_free(s);
}

/* a block must be complete and say what valgrind's says */
static void test_malformed(void **state)
{
	check_malformed("{\n   a\n   Memcheck:Leak\n   fun:x\n",
			"4: the file ends inside the suppression started at "
			"line 1 (no '}')");
	check_malformed("{\n   a\n   Memcheck:Leak\n   fn:x\n}\n",
			"4: expected fun:PATTERN, obj:PATTERN, src:FILE, '...' "
			"or '}', got 'fn:x'");
	check_malformed("{\n   a\n   Leak\n   fun:x\n}\n",
			"3: expected TOOL:KIND such as Memcheck:Leak, got 'Leak'");
	check_malformed("{\n   a\n   Memcheck:Leak\n}\n",
			"4: suppression 'a' has no fun:, obj: or src: line");
	check_malformed("{\n   a\n   Memcheck:Leak\n   match-leak-kinds: lost\n"
			"   fun:x\n}\n",
			"4: match-leak-kinds: wants definite, indirect, possible, "
			"reachable (any of them), all or none, got ' lost'");
	check_malformed("{\n   a\n   Memcheck:Leak\n   fun:x\n}\nleak:y\n",
			"6: expected '{' to start a suppression, got 'leak:y'");
	check_malformed("{\n}\n",
			"2: expected the suppression's name, got '}'");
	check_malformed("{\n   a\n   Memcheck:Leak\n   src:a.c:x\n}\n",
			"4: src:FILE:LINE wants a line number, got 'src:a.c:x'");
}

static void test_match(void **state)
{
	struct suppressions *s = load_text(two_blocks);
	const struct frame_info *f = stack4();

	assert_non_null(s);
	/* kinds: node_leak only for definite and possible */
	assert_int_equal(supp_match_leak(s, DEF, f, 4), 0);
	assert_int_equal(supp_match_leak(s, POS, f, 4), 0);
	/* an indirect leak there: only foo_any (libfoo, frame 2) */
	assert_int_equal(supp_match_leak(s, IND, f, 4), 1);
	/* the stack cut before main: node_leak's fun:main has no frame */
	assert_int_equal(supp_match_leak(s, DEF, f, 2), -1);
	/* valgrind blocks never match descriptors */
	assert_int_equal(supp_match(s, SUPP_FD, f, 4), -1);
	assert_int_equal(supp_match(s, SUPP_LEAK, f, 4), -1);
	supp_free(s);
}

/* Does the one block TEXT (frames only) match leak CLS at F[0..N-1]? */
static int block_matches(const char *frames, int cls,
			 const struct frame_info *f, unsigned n)
{
	char text[1024];
	struct suppressions *s;
	int m;

	snprintf(text, sizeof(text), "{\n x\n Memcheck:Leak\n%s}\n", frames);
	s = load_text(text);
	assert_non_null(s);
	m = supp_match_leak(s, cls, f, n);
	supp_free(s);
	return m == 0;
}

static void test_frames(void **state)
{
	const struct frame_info *f = stack4();
	struct frame_info cxx[3];

	/* from the allocator outward: frame 0 first */
	assert_true(block_matches("fun:malloc\n", DEF, f, 4));
	assert_false(block_matches("fun:make_node\n", DEF, f, 4));
	assert_true(block_matches("...\nfun:make_node\n", DEF, f, 4));
	assert_true(block_matches("fun:m?lloc\nfun:*\nobj:" LIBFOO "\n", DEF, f, 4));
	assert_false(block_matches("fun:m?lloc\nfun:*\nobj:libfoo.so.1\n", DEF, f, 4));
	/* an unknown function is "???" */
	assert_true(block_matches("...\nfun:???\nfun:main\n", DEF, f, 4));
	/* the pattern may not go past the stack, but "..." may end it */
	assert_false(block_matches("fun:malloc\nfun:make_node\nobj:*\nfun:main\n"
				   "fun:x\n", DEF, f, 4));
	assert_true(block_matches("fun:malloc\nfun:make_node\nobj:*\nfun:main\n"
				  "...\n", DEF, f, 4));
	/* src: the basename, and the line when given */
	assert_true(block_matches("...\nsrc:node.c:12\n", DEF, f, 4));
	assert_false(block_matches("...\nsrc:node.c:13\n", DEF, f, 4));
	assert_true(block_matches("...\nsrc:n*.c\n", DEF, f, 4));
	/* no match-leak-kinds: any class, unclassified too */
	assert_true(block_matches("fun:malloc\n", -1, f, 4));
	assert_true(block_matches("fun:malloc\n", REACH, f, 4));

	/* C++: valgrind's stack starts at operator new, matched mangled or
	 * demangled */
	cxx[0] = fr("malloc", NULL, NULL, 0, LIBC);
	cxx[1] = fr("operator new(unsigned long)", "_Znwm", NULL, 0, "libstdc++.so.6");
	cxx[2] = fr("main", NULL, "m.cc", 3, APP);
	assert_true(block_matches("fun:_Znwm\nfun:main\n", DEF, cxx, 3));
	assert_true(block_matches("fun:operator new*\nfun:main\n", DEF, cxx, 3));
	assert_false(block_matches("fun:malloc\nfun:_Znwm\n", DEF, cxx, 3));
	assert_int_equal(vgsupp_first_frame(cxx, 3), 1);
	assert_int_equal(vgsupp_first_frame(f, 4), 0);
}

/* --gen-suppressions=all: valgrind's text, ready to paste (and read back) */
static void test_print(void **state)
{
	const struct frame_info *f = stack4();
	struct suppressions *s;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	vgsupp_print(m, POS, f, 4);
	fclose(m);
	assert_string_equal(buf,
		"{\n"
		"   <insert_a_suppression_name_here>\n"
		"   Memcheck:Leak\n"
		"   match-leak-kinds: possible\n"
		"   fun:malloc\n"
		"   fun:make_node\n"
		"   obj:" LIBFOO "\n"
		"   fun:main\n"
		"}\n");
	s = load_text(buf);
	assert_non_null(s);
	assert_int_equal(supp_match_leak(s, POS, f, 4), 0);
	assert_int_equal(supp_match_leak(s, DEF, f, 4), -1);
	supp_free(s);
	free(buf);
}

/* both kinds of file in one set (--suppressions given twice) */
static void test_both_kinds(void **state)
{
	char p1[64], p2[64];
	const char *paths[] = { p1, p2, NULL };
	const struct frame_info *f = stack4();
	struct suppressions *s;

	write_tmp(p1, "leak:make_node\nfd:open_log\n");
	write_tmp(p2, two_blocks);
	s = supp_load_all(paths);
	unlink(p1);
	unlink(p2);
	assert_non_null(s);
	assert_int_equal(s->n, 4);
	assert_null(s->p[0].vg);
	assert_non_null(s->p[2].vg);
	assert_int_equal(supp_match_leak(s, REACH, f, 4), 0);	/* leak:make_node */
	assert_string_equal(s->p[3].glob, "foo_any");
	supp_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_both_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
