/*
 * r_forge - a program that forges one record in ptleak's ring, as a
 * producer would (reserve by fetch_add on head, body, header committed
 * last), but with more return addresses (npcs 5) than words (1): the
 * consumer must count it and skip it, and go on.
 *
 * Without a ring in its maps (no recorder) it says "no ring"; else it
 * allocates 24 bytes it keeps (@keep, lost), forges the record, frees
 * nothing and says "forged".  Exit 0.  The layout is ptleak's
 * (include/recorder/ring.h, src/recorder/rec_priv.h): the ring's header
 * 64 KiB into the area, data 256 bytes after it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void *volatile keep;

static void out(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(2);
}

/* The start of the mapping named *ptleak-ring, or 0. */
static unsigned long ring_area(void)
{
	static char maps[1 << 16];
	long n = 0, got;
	int fd = (int)syscall(SYS_open, "/proc/self/maps", 0);
	char *hit, *line;

	if (fd < 0)
		return 0;
	while (n < (long)sizeof(maps) - 1 &&
	       (got = read(fd, maps + n, sizeof(maps) - 1 - (size_t)n)) > 0)
		n += got;
	close(fd);
	maps[n] = '\0';
	hit = strstr(maps, "ptleak-ring");
	if (!hit)
		return 0;
	for (line = hit; line > maps && line[-1] != '\n'; line--)
		;
	return strtoul(line, NULL, 16);
}

int main(void)
{
	unsigned long area = ring_area();
	volatile uint64_t *hdr, *w;
	uint64_t size, mask, pos;

	if (!area) {
		out("no ring\n");
		return 0;
	}
	keep = malloc(24);	/* @keep */
	hdr = (volatile uint64_t *)(area + (64 << 10));
	size = 1ull << (uint32_t)hdr[1];	/* size_log2, after magic, version */
	mask = size - 1;
	w = (volatile uint64_t *)(area + (64 << 10) + 256);
	pos = __atomic_fetch_add(&hdr[8], 16, __ATOMIC_RELAXED);	/* head */
	while (pos + 16 - __atomic_load_n(&hdr[16], __ATOMIC_ACQUIRE) > size)
		;						/* tail */
	w[((pos + 8) & mask) / 8] = 0x1234;
	/* len 16, COMMITTED, type REC_FREE (17), npcs 5 */
	__atomic_store_n(&w[(pos & mask) / 8],
			 16 | 2ull << 32 | 17ull << 40 | 5ull << 48, __ATOMIC_RELEASE);
	out("forged\n");
	return 0;
}
