/*
 * r_scribble - a hostile program: once traced, it writes random words
 * over every writable shared mapping in /proc/self/maps (ptleak's
 * memfd:ptleak-ring among them, under the recorder) while allocating.
 *
 *   r_scribble launch      runs at once (ptleak launched it)
 *   r_scribble attach      says "ready" and waits for a line on stdin
 *                          (exit 5 if it is not traced then)
 *   ... ring               then also waits until a mapping whose name
 *                          holds "ptleak-ring" is in /proc/self/maps
 *                          (the recorder injected it)
 *   ... ... KIB            writes KIB KiB whole at the start of each
 *                          mapping instead of 128
 *   SCRIBBLE_SEED=N        the random words' seed (default fixed)
 *
 * It maps one shared page of its own (so that it scribbles something
 * under every engine), then makes 200 rounds of malloc(100) + free and
 * fopen + fclose of /dev/null, keeps 5 blocks of 48 bytes (@kept) and
 * loses them at the end; before rounds 0, 50, 100 and 150 it reads
 * /proc/self/maps with raw system calls and writes over each writable
 * shared mapping (xorshift64 words): its first 128 KiB whole, then 1,024
 * words at random offsets.  Nothing allocates or opens a file between
 * reading the list and the last write.  Its own recorder hooks then read
 * garbage (its own doing): SIGSEGV, SIGBUS, SIGILL and SIGFPE end it
 * with exit_group(0), so its exit status is a native run's; it prints
 * "scribbled" before the first write and "done" at the end, which its
 * own hooks may keep it from reaching under the recorder.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SCRIBBLE_HEAD	(128u << 10)
#define SCRIBBLE_WORDS	1024

void *volatile sink;
static void *kept[5];
static char maps[1 << 16];
static uint64_t rnd = 0x9e3779b97f4a7c15ull;
static unsigned long head = SCRIBBLE_HEAD;	/* bytes written whole */

static uint64_t next(void)
{
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	return rnd;
}

static void out(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(2);
}

static void on_fault(int sig)
{
	(void)sig;
	syscall(SYS_exit_group, 0);
}

/* /proc/self/maps into maps[] with raw system calls (open and read may
 * be hooked by ptleak's recorder: not once the scribbling started). */
static size_t read_maps(void)
{
	size_t n = 0;
	long got;
	int fd = (int)syscall(SYS_open, "/proc/self/maps", 0);

	if (fd < 0)
		_exit(3);
	while (n < sizeof(maps) - 1 &&
	       (got = syscall(SYS_read, fd, maps + n, sizeof(maps) - 1 - n)) > 0)
		n += (size_t)got;
	syscall(SYS_close, fd);
	maps[n] = '\0';
	return n;
}

static int traced(void)
{
	char buf[4096], *p;
	long n;
	int fd = (int)syscall(SYS_open, "/proc/self/status", 0);

	if (fd < 0)
		_exit(3);
	n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		_exit(3);
	buf[n] = '\0';
	p = strstr(buf, "TracerPid:");
	return p && strtol(p + 10, NULL, 10) != 0;
}

static void scribble(void)
{
	char *line = maps, *nl;

	read_maps();
	for (; *line; line = nl + 1) {
		unsigned long lo, hi;
		char *p;
		uint64_t *w, n, i;

		nl = strchr(line, '\n');
		if (!nl)
			break;
		/* "lo-hi rw-s ...": strtoul allocates nothing */
		lo = strtoul(line, &p, 16);
		hi = strtoul(p + 1, &p, 16);
		if (*p != ' ' || p[2] != 'w' || p[4] != 's' || hi <= lo)
			continue;
		w = (uint64_t *)lo;
		n = (hi - lo) / 8;
		for (i = 0; i < n && i < head / 8; i++)
			w[i] = next();
		for (i = 0; i < SCRIBBLE_WORDS; i++)
			w[next() % n] = next();
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "launch";
	int want_ring = argc > 2 && !strcmp(argv[2], "ring");
	const char *seed = getenv("SCRIBBLE_SEED");
	struct sigaction sa;
	char line[16];
	FILE *f;
	int i;

	if (argc > 3)
		head = strtoul(argv[3], NULL, 0) << 10;
	if (seed)
		rnd = strtoull(seed, NULL, 0) | 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0) == MAP_FAILED)
		return 4;
	if (!strcmp(mode, "attach")) {
		/* a line once ptleak is attached (TracerPid says it
		 * seized, not that its breakpoints are in) */
		out("ready\n");
		if (read(0, line, sizeof(line)) <= 0 || !traced())
			return 5;
	}
	while (want_ring) {
		read_maps();
		if (strstr(maps, "ptleak-ring"))
			break;
		usleep(1000);
	}
	out("scribbled\n");
	for (i = 0; i < 200; i++) {
		if (i % 50 == 0)
			scribble();
		sink = malloc(100);
		free(sink);
		f = fopen("/dev/null", "r");
		if (f)
			fclose(f);
		if (i % 40 == 0)
			kept[i / 40] = malloc(48);	/* @kept */
	}
	memset(kept, 0, sizeof(kept));
	out("done\n");
	return 0;
}
