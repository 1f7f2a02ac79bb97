/* folded.c - --folded FILE (folded.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/folded.h"
#include "output/outfile.h"
#include "base/util.h"

/* The group of the blocks made before an attach (the census's). */
#define FN_BEFORE 0xff

/* In-use bytes per (stack, allocator), an open-addressing table. */
struct group {
	uint32_t stack;
	uint8_t fn;
	uint64_t bytes;
};

struct groups {
	struct group *g;
	size_t cap, n;		/* cap: a power of two; g[i].bytes 0: empty */
};

static size_t home(const struct groups *gs, uint32_t stack, uint8_t fn)
{
	return (size_t)hash64((uint64_t)stack << 8 | fn) & (gs->cap - 1);
}

static void put(struct groups *gs, uint32_t stack, uint8_t fn, uint64_t bytes)
{
	size_t i;

	if ((gs->n + 1) * 2 > gs->cap) {
		struct groups old = *gs;
		size_t k;

		gs->cap = gs->cap ? 2 * gs->cap : 1024;
		gs->g = xcalloc(gs->cap, sizeof(*gs->g));
		gs->n = 0;
		for (k = 0; k < old.cap; k++)
			if (old.g[k].bytes)
				put(gs, old.g[k].stack, old.g[k].fn, old.g[k].bytes);
		free(old.g);
	}
	for (i = home(gs, stack, fn); gs->g[i].bytes; i = (i + 1) & (gs->cap - 1))
		if (gs->g[i].stack == stack && gs->g[i].fn == fn) {
			gs->g[i].bytes += bytes;
			return;
		}
	gs->g[i] = (struct group){ stack, fn, bytes };
	gs->n++;
}

static int add_block(const struct heap_block *b, void *ctx)
{
	/* a 0-byte block holds no bytes: nothing to draw; one made
	 * before the attach is drawn as [before attach] */
	if (b->size)
		put(ctx, b->stack, b->before ? FN_BEFORE : b->fn, b->size);
	return 0;
}

/* FI's name as a frame of a collapsed stack. */
static void frame(FILE *f, const struct frame_info *fi)
{
	const char *s;

	if (fi->function && *fi->function) {
		for (s = fi->function; *s; s++)
			putc(*s == ';' ? ':' : *s == '\n' ? ' ' : *s, f);
	} else if (fi->module && *fi->module) {
		s = strrchr(fi->module, '/');
		fprintf(f, "%s+0x%" PRIx64, s ? s + 1 : fi->module,
			fi->module_offset);
	} else {
		fprintf(f, "0x%" PRIx64, fi->pc);
	}
}

static void line(FILE *f, const struct group *g, const struct stacks *stacks,
		 unsigned depth, report_namer namer, void *ctx)
{
	struct frame_info fi[256];
	const uint64_t *pcs;
	unsigned n = g->fn == FN_BEFORE ? 0 : stacks_get(stacks, g->stack, &pcs),
		 i, k;
	const char *a = g->fn == FN_BEFORE ? REPORT_BEFORE_FRAME :
			alloc_fn_name((enum alloc_fn)g->fn);

	if (n > depth)
		n = depth;
	if (n > 256)
		n = 256;
	for (k = 0; k < n; k++) {
		memset(&fi[k], 0, sizeof(fi[k]));
		if (namer)
			namer(ctx, pcs[k], k != 0, &fi[k]);
		fi[k].pc = pcs[k];
		/* frame 0 is the allocator's entry, named after it */
		if (!k && a)
			fi[k].function = a;
		if (fi[k].function && !strcmp(fi[k].function, "main")) {
			k++;
			break;
		}
	}
	for (i = k; i > 0; i--) {
		frame(f, &fi[i - 1]);
		if (i > 1)
			putc(';', f);
	}
	if (!k)
		fputs(a ? a : "???", f);
	fprintf(f, " %" PRIu64 "\n", g->bytes);
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	return (int)a->fn - (int)b->fn;
}

int folded_write(const char *path, const struct heap *h,
		 const struct stacks *stacks, unsigned depth,
		 report_namer namer, void *ctx)
{
	struct groups gs = { NULL, 0, 0 };
	struct outfile of;
	size_t i, k = 0;
	int ret = 0;

	if (outfile_open(&of, path))
		return -1;
	heap_foreach(h, add_block, &gs);
	/* largest first: the file reads as the report does */
	for (i = 0; i < gs.cap; i++)
		if (gs.g[i].bytes)
			gs.g[k++] = gs.g[i];
	if (k)
		qsort(gs.g, k, sizeof(*gs.g), cmp_group);
	for (i = 0; i < k; i++)
		line(of.f, &gs.g[i], stacks, depth, namer, ctx);
	free(gs.g);
	if (outfile_commit(&of))
		ret = -1;
	return ret;
}
