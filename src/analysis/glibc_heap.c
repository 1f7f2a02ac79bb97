/* glibc_heap.c - glibc malloc's own memory around a live block. */
#include "analysis/glibc_heap.h"

int glibc_owner(glibc_read_fn read, void *ctx, uint64_t addr,
		uint64_t map_start, uint64_t map_end, uint64_t *start,
		uint64_t *end)
{
	uint64_t hdr[2], info[3], chunk = addr - 16, base, size;

	if (addr < map_start + 16 || read(ctx, chunk, hdr, 2))
		return -1;
	size = hdr[1] & ~GLIBC_SIZE_FLAGS;
	if (hdr[1] & GLIBC_IS_MMAPPED) {
		/* its own mapping (perhaps merged with neighbours) */
		if (hdr[0] > chunk - map_start || size > map_end - chunk ||
		    size < 32)
			return -1;
		*start = chunk - hdr[0];
		*end = chunk + size;
		return 0;
	}
	base = addr & ~(GLIBC_HEAP_MAX_SIZE - 1);
	if (base < map_start || read(ctx, base, info, 3))
		return -1;
	/* heap_info: ar_ptr, prev, size (a thread arena's heap) */
	if (info[2] > GLIBC_HEAP_MAX_SIZE || info[2] <= addr - base ||
	    info[2] > map_end - base)
		return -1;
	*start = base;
	*end = base + info[2];
	return 0;
}
