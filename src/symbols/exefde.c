/*
 * exefde.c - an FDE of the executable from its file (exefde.h): main's
 * range in a stripped executable without libunwind, whose address space
 * and every object's table cost 0.3-0.7 ms (at the exit of a short
 * program, while it waits).  The answer libunwind's
 * dwarf_search_unwind_table gives: the .eh_frame_hdr table searched for
 * the FDE of M, which must start at M, its pc_begin and pc_range decoded
 * with its CIE's 'R' encoding.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exefde.h"
#include "base/util.h"

#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_PCREL 0x10

struct exe {
	int fd;
	Elf64_Phdr ph[64];
	unsigned nph;
};

/* LEN bytes at the file's address VADDR (in a PT_LOAD's file part). */
static int read_at(const struct exe *x, uint64_t vaddr, void *buf, size_t len)
{
	unsigned i;

	for (i = 0; i < x->nph; i++) {
		const Elf64_Phdr *p = &x->ph[i];

		if (p->p_type == PT_LOAD && vaddr >= p->p_vaddr &&
		    vaddr - p->p_vaddr + len <= p->p_filesz)
			return pread(x->fd, buf, len, (off_t)(p->p_offset + vaddr -
							       p->p_vaddr)) ==
			       (ssize_t)len ? 0 : -1;
	}
	return -1;
}

static int32_t s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* A LEB128 at *P (below END), advanced past. */
static int leb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* The size of a pointer encoded ENC (absptr, (s|u)data2/4/8), 0: other. */
static unsigned enc_size(uint8_t enc)
{
	switch (enc & PE_FORMAT) {
	case 0x00: case 0x04: case 0x0c: return 8;
	case 0x03: case 0x0b: return 4;
	case 0x02: case 0x0a: return 2;
	default: return 0;
	}
}

/* The value at P encoded ENC (format only). */
static uint64_t enc_value(const uint8_t *p, uint8_t enc)
{
	uint64_t v = 0;
	int16_t h;

	switch (enc & PE_FORMAT) {
	case 0x0b: return (uint64_t)(int64_t)s32(p);
	case 0x0a: memcpy(&h, p, 2); return (uint64_t)(int64_t)h;
	default: memcpy(&v, p, enc_size(enc)); return v;
	}
}

/* The FDE pointer encoding of the CIE at VADDR: 0, or -1. */
static int cie_fde_enc(const struct exe *x, uint64_t vaddr, uint8_t *enc)
{
	uint8_t b[256];
	const uint8_t *p = b + 9, *end;
	const char *aug = (const char *)b + 9;
	uint32_t len;
	uint64_t v;
	size_t i;

	if (read_at(x, vaddr, b, 4))
		return -1;
	memcpy(&len, b, 4);
	if (len < 10 || len > sizeof(b) - 4 || read_at(x, vaddr, b, len + 4) ||
	    s32(b + 4) != 0 || (b[8] != 1 && b[8] != 3))
		return -1;
	end = b + 4 + len;
	p = memchr(p, 0, (size_t)(end - p));
	if (!p || aug[0] != 'z')
		return -1;
	p++;
	if (leb(&p, end, &v) || leb(&p, end, &v))	/* code, data align */
		return -1;
	if (b[8] == 1)
		p++;					/* return address column */
	else if (leb(&p, end, &v))
		return -1;
	if (leb(&p, end, &v))				/* augmentation length */
		return -1;
	*enc = 0;	/* absptr without 'R' */
	for (i = 1; aug[i]; i++) {
		if (p >= end)
			return -1;
		if (aug[i] == 'R') {
			*enc = *p++;
		} else if (aug[i] == 'L') {
			p++;
		} else if (aug[i] == 'P') {
			unsigned n = enc_size(*p);

			if (!n || (*p & PE_APPLY & ~PE_PCREL))
				return -1;
			p += 1 + n;
		} else if (aug[i] != 'S' && aug[i] != 'B') {
			return -1;
		}
	}
	return 0;
}

/* The FDE of the table entry for PC (in the file's addresses): its end. */
static int fde_end(const struct exe *x, const Elf64_Phdr *hp, uint64_t pc,
		   uint64_t *hi)
{
	uint8_t h[12], e[8 + 16];
	uint64_t lo_i = 0, hi_i, fde, begin, range;
	uint32_t count, len;
	uint8_t enc;
	unsigned n;

	/* eh_frame_ptr pcrel sdata4, fde_count udata4, table datarel sdata4 */
	if (read_at(x, hp->p_vaddr, h, 12) || h[0] != 1 || h[1] != 0x1b ||
	    h[2] != 0x03 || h[3] != 0x3b)
		return -1;
	memcpy(&count, h + 8, 4);
	hi_i = count;
	while (lo_i < hi_i) {
		uint64_t mid = (lo_i + hi_i) / 2, start;
		uint8_t ent[8];

		if (read_at(x, hp->p_vaddr + 12 + 8 * mid, ent, 8))
			return -1;
		start = hp->p_vaddr + (uint64_t)(int64_t)s32(ent);
		if (start == pc) {
			fde = hp->p_vaddr + (uint64_t)(int64_t)s32(ent + 4);
			goto found;
		}
		if (start < pc)
			lo_i = mid + 1;
		else
			hi_i = mid;
	}
	return -1;
found:
	if (read_at(x, fde, e, 8))
		return -1;
	memcpy(&len, e, 4);
	if (len < 8 || len == 0xffffffffu || s32(e + 4) <= 0 ||
	    cie_fde_enc(x, fde + 4 - (uint64_t)(uint32_t)s32(e + 4), &enc) ||
	    enc == PE_OMIT || (enc & PE_APPLY & ~PE_PCREL) || !(n = enc_size(enc)) ||
	    read_at(x, fde + 8, e + 8, 2 * n))
		return -1;
	begin = enc_value(e + 8, enc) + ((enc & PE_PCREL) ? fde + 8 : 0);
	range = enc_value(e + 8 + n, enc);
	if (begin != pc || !range || pc + range < pc)
		return -1;
	*hi = pc + range;
	return 0;
}

int exe_fde_end(pid_t pid, uint64_t entry, uint64_t m, uint64_t *hi)
{
	struct exe x = { .fd = -1 };
	const Elf64_Phdr *hp = NULL;
	Elf64_Ehdr eh;
	char path[64];
	uint64_t bias;
	unsigned i;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	x.fd = open_untrusted(path);
	if (x.fd < 0)
		return -1;
	if (pread(x.fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum ||
	    eh.e_phnum > ARRAY_SIZE(x.ph) ||
	    pread(x.fd, x.ph, eh.e_phnum * sizeof(Elf64_Phdr), (off_t)eh.e_phoff) !=
	    (ssize_t)(eh.e_phnum * sizeof(Elf64_Phdr)))
		goto out;
	x.nph = eh.e_phnum;
	for (i = 0; i < x.nph; i++)
		if (x.ph[i].p_type == PT_GNU_EH_FRAME)
			hp = &x.ph[i];
	bias = entry - eh.e_entry;
	if (hp && !fde_end(&x, hp, m - bias, hi)) {
		*hi += bias;
		ret = 0;
	}
out:
	close(x.fd);
	return ret;
}
