/* debugfile.c - separate debug files in the usual places, no debuginfod. */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/debugfile.h"
#include "base/util.h"

#define DEBUG_ROOT "/usr/lib/debug"

/* The CRC-32 of .gnu_debuglink (zlib's crc32, reflected 0xedb88320). */
static uint32_t crc32_buf(uint32_t crc, const unsigned char *p, size_t n)
{
	static uint32_t table[256];
	size_t i;

	if (!table[1]) {
		for (i = 0; i < 256; i++) {
			uint32_t c = (uint32_t)i;
			int k;

			for (k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	}
	crc = ~crc;
	for (i = 0; i < n; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static int crc_matches(int fd, uint32_t want)
{
	struct stat st;
	void *map;
	uint32_t crc;

	if (fstat(fd, &st) || !st.st_size)
		return 0;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return 0;
	crc = crc32_buf(0, map, (size_t)st.st_size);
	munmap(map, (size_t)st.st_size);
	return crc == want;
}

/* Does the ELF file FD carry build-id BITS[0..LEN-1]? */
static int build_id_matches(int fd, const unsigned char *bits, int len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id = NULL;
	ssize_t n;
	int ok;

	if (!elf)
		return 0;
	n = dwelf_elf_gnu_build_id(elf, &id);
	ok = n == len && !memcmp(id, bits, (size_t)len);
	elf_end(elf);
	return ok;
}

/* Open PATH if it is the debug file wanted (same build-id, else CRC). */
static int try_file(const char *path, const unsigned char *bits, int len,
		    int check_crc, uint32_t crc, char **name)
{
	int fd = open_untrusted(path);

	if (fd < 0)
		return -1;
	if (len > 0 ? build_id_matches(fd, bits, len) :
	    check_crc && crc_matches(fd, crc)) {
		*name = xstrdup(path);
		return fd;
	}
	close(fd);
	return -1;
}

static int by_build_id(const unsigned char *bits, int len, char **name)
{
	char path[sizeof(DEBUG_ROOT) + 16 + 2 * 64 + 8];
	char *p = path;
	int i;

	if (len < 2 || len > 64)
		return -1;
	p += sprintf(p, "%s/.build-id/%02x/", DEBUG_ROOT, bits[0]);
	for (i = 1; i < len; i++)
		p += sprintf(p, "%02x", bits[i]);
	strcpy(p, ".debug");
	return try_file(path, bits, len, 0, 0, name);
}

/* gdb's places for a debuglink LINK of FILE: its directory, .debug/ in
 * it, the same directory under /usr/lib/debug. */
static int by_debuglink(const char *file, const char *link, uint32_t crc,
			const unsigned char *bits, int len, char **name)
{
	const char *slash = strrchr(file, '/');
	int dirlen = slash ? (int)(slash - file) : 0;
	static const char *const fmts[] = { "%.*s/%s", "%.*s/.debug/%s",
					    DEBUG_ROOT "%.*s/%s" };
	unsigned i;

	if (!slash || strchr(link, '/'))
		return -1;
	for (i = 0; i < ARRAY_SIZE(fmts); i++) {
		char *path;
		int fd;

		if (asprintf(&path, fmts[i], dirlen, file, link) < 0)
			return -1;
		/* the object itself, when the link names its own file */
		fd = strcmp(path, file) ? try_file(path, bits, len, 1, crc, name) : -1;
		free(path);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

int debugfile_find(Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name,
		   const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	int len, fd = -1, refused = 0;

	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len > 0) {
		errno = 0;
		fd = by_build_id(bits, len, debuginfo_file_name);
		refused = fd < 0 && errno == EINVAL;
	}
	if (fd < 0 && debuglink_file && file_name)
		fd = by_debuglink(file_name, debuglink_file, debuglink_crc,
				  bits, len, debuginfo_file_name);
	/*
	 * debuginfod when asked for: libdwfl's standard finder without the
	 * object's name and link, so that it does not search beside the
	 * object again with a plain open (a FIFO the target put there
	 * blocked it), only by build-id under /usr/lib/debug (not if that
	 * file was refused here), then its client.
	 */
	if (fd < 0 && urls && *urls && !refused)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base,
						    NULL, NULL, 0,
						    debuginfo_file_name);
	if (fd < 0)
		errno = ENOENT;
	return fd;
}

int debugfile_none(Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name,
		   const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name)
{
	errno = ENOENT;
	return -1;
}
