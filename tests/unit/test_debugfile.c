/*
 * test_debugfile.c - debugfile_find (debugfile.h) on an object whose
 * .gnu_debuglink names a file beside it that is a FIFO (the target
 * chose the object, and so the name): never opened for reading, which
 * would wait for a writer, with or without DEBUGINFOD_URLS (libdwfl's
 * standard finder, which debuginfod goes through, opens the places
 * beside the object with a plain open).  The lookup runs in a child with
 * an alarm: a hang is a failure, not a stuck test.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbols/debugfile.h"

static char dir[] = "/tmp/ptleak-debugfile.XXXXXX";
static char obj[64], dbg[64];

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* DIR/obj: a copy of /bin/true, no build-id, its debuglink to
 * DIR/obj.debug, then a FIFO in that file's place. */
static int setup(void **state)
{
	char cmd[512];

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(obj, sizeof(obj), "%s/obj", dir);
	snprintf(dbg, sizeof(dbg), "%s/obj.debug", dir);
	snprintf(cmd, sizeof(cmd), "cd %s && objcopy --only-keep-debug /bin/true "
		 "obj.debug && objcopy --remove-section=.note.gnu.build-id "
		 "--remove-section=.gnu_debuglink /bin/true obj0 && objcopy "
		 "--add-gnu-debuglink=obj.debug obj0 obj && rm obj0", dir);
	if (run(cmd) || unlink(dbg) || mkfifo(dbg, 0600))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(obj);
	unlink(dbg);
	rmdir(dir);
	return 0;
}

/* The debug file of DIR/obj in a child (10 s at most): 0 if none was
 * found, 1 if one was, 2 if the child hung or died. */
static int lookup(void)
{
	static char *path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = debugfile_find,
		.debuginfo_path = &path,
	};
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (!pid) {
		Dwfl *d = dwfl_begin(&cb);
		Dwfl_Module *mod = d ? dwfl_report_offline(d, "obj", obj, -1) : NULL;
		const char *file = NULL;
		Dwarf_Addr bias;

		alarm(10);
		if (!mod)
			_exit(3);
		dwfl_report_end(d, NULL, NULL);
		dwfl_module_getdwarf(mod, &bias);
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &file);
		_exit(file ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) && WEXITSTATUS(st) < 2 ? WEXITSTATUS(st) : 2;
}

static void test_fifo_debuglink(void **state)
{
	(void)state;
	unsetenv("DEBUGINFOD_URLS");
	assert_int_equal(lookup(), 0);
}

/* debuginfod asked for (a server that is not there): the same. */
static void test_fifo_debuglink_debuginfod(void **state)
{
	char cache[80], cmd[96];

	(void)state;
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9/", 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_TIMEOUT", "2", 1);
	assert_int_equal(lookup(), 0);
	unsetenv("DEBUGINFOD_URLS");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cache);
	(void)!system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_debuglink),
		cmocka_unit_test(test_fifo_debuglink_debuginfod),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
