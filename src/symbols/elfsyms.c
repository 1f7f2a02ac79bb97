/*
 * elfsyms.c - set-up symbol lookups without libdwfl (elfsyms.h): the
 * object holding an address from /proc/PID/maps, its file mapped, its
 * .dynsym (a library) or .symtab (an executable) read in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbols/elfsyms.h"
#include "target/maps.h"
#include "target/memio.h"
#include "base/util.h"

int symtab_name_is(const char *name, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(name, want, n) &&
	       (!name[n] || (name[n] == '@' && name[n + 1] == '@'));
}

/* Symbol I's name in V, or NULL if out of the string table. */
static const char *sym_name(const struct symtab_view *v, size_t i)
{
	size_t at = v->syms[i].st_name;

	if (at >= v->strsz || !memchr(v->str + at, '\0', v->strsz - at))
		return NULL;
	return v->str + at;
}

/* Symbol I of V is NAME, defined, global or weak, of the wanted kind, in
 * its default version (.gnu.version's hidden ones are compat versions). */
static int dynsym_is(const struct symtab_view *v, size_t i, const char *name,
		     int funcs)
{
	const Elf64_Sym *s = &v->syms[i];
	unsigned bind = ELF64_ST_BIND(s->st_info), type = ELF64_ST_TYPE(s->st_info);
	const char *sn;

	if (s->st_shndx == SHN_UNDEF || !s->st_value ||
	    (bind != STB_GLOBAL && bind != STB_WEAK) ||
	    (funcs ? type != STT_FUNC : type != STT_OBJECT))
		return 0;
	if (v->ver && (v->ver[i] & 0x8000))
		return 0;
	sn = sym_name(v, i);
	return sn && !strcmp(sn, name);
}

static uint32_t gnu_hash(const char *name)
{
	uint32_t h = 5381;

	while (*name)
		h = h * 33 + (uint8_t)*name++;
	return h;
}

/* NAME's index through V's .gnu.hash (the chain of its bucket holds every
 * symbol of its hash, in index order): the first one dynsym_is takes, 0
 * if none, -1 if the table is unusable (then scan). */
static long gnu_hash_find(const struct symtab_view *v, const char *name,
			  int funcs)
{
	const uint32_t *w = v->hash;
	size_t words = v->hashwords, nbuckets, symoff, bloom, i;
	const uint32_t *buckets, *chain;
	uint32_t h = gnu_hash(name), h2;

	if (words < 4)
		return -1;
	nbuckets = w[0];
	symoff = w[1];
	bloom = w[2];		/* 64-bit words on ELFCLASS64 */
	if (!nbuckets || 4 + 2 * bloom + nbuckets > words)
		return -1;
	buckets = w + 4 + 2 * bloom;
	chain = buckets + nbuckets;
	i = buckets[h % nbuckets];
	if (i < symoff)
		return 0;
	for (; i < v->nsyms && (size_t)(chain - w) + (i - symoff) < words; i++) {
		h2 = chain[i - symoff];
		if ((h | 1) == (h2 | 1) && dynsym_is(v, i, name, funcs))
			return (long)i;
		if (h2 & 1)
			break;
	}
	return 0;
}

int symtab_find_dynsym(const struct symtab_view *v, uint64_t bias,
		       const char *const *names, unsigned n, int funcs,
		       const char *module, struct sym_def *out)
{
	int found = 0;
	unsigned k;
	size_t i;
	long at;

	for (k = 0; k < n; k++) {
		if (out[k].addr)
			continue;
		at = v->hash ? gnu_hash_find(v, names[k], funcs) : -1;
		for (i = 1; at < 0 && i < v->nsyms; i++)
			if (dynsym_is(v, i, names[k], funcs))
				at = (long)i;
		if (at <= 0)
			continue;
		out[k].addr = bias + v->syms[at].st_value;
		out[k].size = v->syms[at].st_size;
		out[k].module = module;
		found++;
	}
	return found;
}

/* ---- objects and maps ---- */

struct object {
	char *path;
	dev_t dev;
	ino_t ino;
	void *map;
	size_t size;
	int copy;		/* MAP malloc'd (the vdso, read from the process) */
	int usable;		/* 0: ask libdwfl */
	int library;
	struct symtab_view tab;	/* .dynsym (library), else .symtab */
};

struct mapping {
	uint64_t start, end, offset;
	unsigned maj, min;
	uint64_t ino;
	char *path;		/* NULL: not a file */
	int vdso;		/* [vdso] */
};

struct elfsyms {
	pid_t pid;
	struct mapping *maps;
	size_t nmaps;
	int maps_read;
	struct object *objs;
	size_t nobjs, aobjs;
};

struct elfsyms *elfsyms_open(pid_t pid)
{
	struct elfsyms *es = xcalloc(1, sizeof(*es));

	es->pid = pid;
	return es;
}

void elfsyms_close(struct elfsyms *es)
{
	size_t i;

	if (!es)
		return;
	for (i = 0; i < es->nmaps; i++)
		free(es->maps[i].path);
	free(es->maps);
	for (i = 0; i < es->nobjs; i++) {
		if (es->objs[i].copy)
			free(es->objs[i].map);
		else if (es->objs[i].map)
			munmap(es->objs[i].map, es->objs[i].size);
		free(es->objs[i].path);
	}
	free(es->objs);
	free(es);
}

/* /proc/PID/maps into ES->maps: 0, or -1. */
static int read_maps(struct elfsyms *es)
{
	char path[64], *buf = NULL, *line, *save = NULL;
	size_t len = 0, cap = 0, amaps = 0;
	ssize_t got;
	int fd;

	es->maps_read = 1;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)es->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do {
		if (cap - len < 4096)
			buf = xrealloc(buf, cap = cap ? 2 * cap : 16384);
		got = read(fd, buf + len, cap - len - 1);
		if (got > 0)
			len += (size_t)got;
	} while (got > 0 || (got < 0 && errno == EINTR));
	close(fd);
	if (got < 0) {
		free(buf);
		return -1;
	}
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct maps_entry me;
		struct mapping m;

		if (maps_parse(line, &me))
			continue;
		memset(&m, 0, sizeof(m));
		m.start = me.start, m.end = me.end, m.offset = me.offset, m.ino = me.inode;
		m.maj = me.maj, m.min = me.min;
		if (me.name[0] == '/')
			m.path = xstrdup(me.name);
		else if (!strcmp(me.name, "[vdso]")) {
			m.path = xstrdup("[vdso]");
			m.vdso = 1;
		}
		grow_array((void **)&es->maps, &amaps, es->nmaps + 1, sizeof(*es->maps));
		es->maps[es->nmaps++] = m;
	}
	free(buf);
	return 0;
}

/* The section header I of O, or NULL. */
static const Elf64_Shdr *shdr(const struct object *o, size_t i)
{
	const Elf64_Ehdr *eh = o->map;

	if (i >= eh->e_shnum)
		return NULL;
	return (const Elf64_Shdr *)((const char *)o->map + eh->e_shoff) + i;
}

/* Section SH's bytes in O, or NULL if they are not all in the file. */
static const void *sdata(const struct object *o, const Elf64_Shdr *sh)
{
	if (!sh || sh->sh_type == SHT_NOBITS || sh->sh_offset > o->size ||
	    sh->sh_size > o->size - sh->sh_offset)
		return NULL;
	return (const char *)o->map + sh->sh_offset;
}

int symtab_is_library(const Elf64_Ehdr *eh, const Elf64_Phdr *ph,
		      const Elf64_Dyn *dyn, size_t ndyn)
{
	int interp = 0, soname = 0;
	size_t i;

	if (eh->e_type != ET_DYN || !dyn)
		return 0;
	for (i = 0; ph && i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_INTERP)
			interp = 1;
	for (i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_FLAGS_1 && (dyn[i].d_un.d_val & DF_1_PIE))
			return 0;
		if (dyn[i].d_tag == DT_SONAME)
			soname = 1;
	}
	return !interp || soname;
}

/* O is a library (symtab_is_library; DYN its SHT_DYNAMIC section). */
static int is_library(const struct object *o, const Elf64_Shdr *dyn)
{
	const Elf64_Ehdr *eh = o->map;

	return symtab_is_library(eh, (const Elf64_Phdr *)((const char *)o->map +
							  eh->e_phoff),
				 sdata(o, dyn), dyn ? dyn->sh_size / sizeof(Elf64_Dyn) : 0);
}

/* O's table: 0, or -1 (then libdwfl decides). */
static int load_tables(struct object *o)
{
	const Elf64_Ehdr *eh = o->map;
	const Elf64_Shdr *dynsym = NULL, *symtab = NULL, *ver = NULL, *hash = NULL,
			 *dyn = NULL, *tab, *str, *names;
	const char *shstr;
	int debugdata = 0;
	size_t i;

	if (o->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || !eh->e_shnum ||
	    eh->e_shoff > o->size ||
	    (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > o->size - eh->e_shoff ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > o->size ||
	    (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > o->size - eh->e_phoff ||
	    eh->e_shstrndx >= eh->e_shnum || (eh->e_shoff & 7) || (eh->e_phoff & 7))
		return -1;
	names = shdr(o, eh->e_shstrndx);
	shstr = sdata(o, names);
	if (!shstr)
		return -1;
	for (i = 1; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = shdr(o, i);

		if (sh->sh_name < names->sh_size &&
		    !strncmp(shstr + sh->sh_name, ".gnu_debugdata",
			     names->sh_size - sh->sh_name))
			debugdata = 1;
		switch (sh->sh_type) {
		case SHT_DYNSYM: dynsym = sh; break;
		case SHT_SYMTAB: symtab = sh; break;
		case SHT_GNU_versym: ver = sh; break;
		case SHT_GNU_HASH: hash = sh; break;
		case SHT_DYNAMIC: dyn = sh; break;
		}
	}
	if (dyn && (dyn->sh_offset & 7))
		return -1;
	o->library = is_library(o, dyn);
	/* an executable's MiniDebugInfo table libdwfl would read too */
	if (!o->library && debugdata)
		return -1;
	tab = o->library || !symtab ? dynsym : symtab;
	if (!tab || tab->sh_entsize != sizeof(Elf64_Sym) || !sdata(o, tab) ||
	    (tab->sh_offset & 7))
		return -1;
	str = shdr(o, tab->sh_link);
	if (!sdata(o, str))
		return -1;
	o->tab.syms = sdata(o, tab);
	o->tab.nsyms = tab->sh_size / sizeof(Elf64_Sym);
	o->tab.str = sdata(o, str);
	o->tab.strsz = str->sh_size;
	if (o->library && ver && sdata(o, ver) && !(ver->sh_offset & 1) &&
	    ver->sh_size >= o->tab.nsyms * sizeof(uint16_t))
		o->tab.ver = sdata(o, ver);
	if (o->library && hash && sdata(o, hash) && !(hash->sh_offset & 3)) {
		o->tab.hash = sdata(o, hash);
		o->tab.hashwords = hash->sh_size / 4;
	}
	return 0;
}

/* The object file M maps, opened and checked once (usable or not). */
static struct object *object_of(struct elfsyms *es, const struct mapping *m)
{
	struct object *o;
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < es->nobjs; i++)
		if (es->objs[i].ino == m->ino &&
		    (m->vdso ? es->objs[i].copy : !strcmp(es->objs[i].path, m->path)))
			return &es->objs[i];
	grow_array((void **)&es->objs, &es->aobjs, es->nobjs + 1, sizeof(*es->objs));
	o = &es->objs[es->nobjs++];
	memset(o, 0, sizeof(*o));
	o->path = xstrdup(m->path);
	o->ino = m->ino;
	if (m->vdso) {
		char name[64];

		/* libdwfl's name for it */
		snprintf(name, sizeof(name), "[vdso: %d]", (int)es->pid);
		free(o->path);
		o->path = xstrdup(name);
		/* its image, read from the process (a page or two) */
		o->size = (size_t)(m->end - m->start);
		o->map = xmalloc(o->size);
		o->copy = 1;
		if (mem_read(es->pid, m->start, o->map, o->size) != (ssize_t)o->size)
			return o;
		o->usable = !load_tables(o);
		return o;
	}
	fd = open_untrusted(m->path);
	if (fd < 0)
		return o;
	/* the file mapped, not another one under its name since */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_ino != m->ino ||
	    major(st.st_dev) != m->maj || minor(st.st_dev) != m->min ||
	    st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return o;
	}
	o->size = (size_t)st.st_size;
	o->map = mmap(NULL, o->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (o->map == MAP_FAILED) {
		o->map = NULL;
		return o;
	}
	o->usable = !load_tables(o);
	return o;
}

static long same_file(const struct elfsyms *es, size_t i, int dir);

/* The load bias of the object whose mapping I holds: its lowest PT_LOAD
 * at the start of its first mapping (offset 0, same file, just before).
 * 0, or -1. */
static int bias_of(const struct elfsyms *es, size_t i, const struct object *o,
		   uint64_t *bias)
{
	const Elf64_Ehdr *eh = o->map;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)o->map + eh->e_phoff);
	const Elf64_Phdr *first = NULL;
	size_t p;
	long k;


	while (es->maps[i].offset && !es->maps[i].vdso &&
	       (k = same_file(es, i, -1)) >= 0)
		i = (size_t)k;
	if (es->maps[i].offset)
		return -1;
	/* libdwfl's rule: the first PT_LOAD (header order), p_vaddr &
	 * -p_align, from the first line of the object's mappings; else
	 * (unusual layouts) libdwfl decides */
	if (same_file(es, i, -1) >= 0)
		return -1;
	for (p = 0; p < eh->e_phnum; p++)
		if (ph[p].p_type == PT_LOAD) {
			if (!first)
				first = &ph[p];
			else if (ph[p].p_vaddr < first->p_vaddr)
				return -1;
		}
	if (!first || (first->p_offset & ~(uint64_t)4095) || first->p_align < 4096 ||
	    (first->p_align & (first->p_align - 1)) ||
	    (first->p_vaddr & -first->p_align) != (first->p_vaddr & ~(uint64_t)4095))
		return -1;
	*bias = es->maps[i].start - (first->p_vaddr & ~(uint64_t)4095);
	return 0;
}

/* The index of the file mapping holding ADDR, or -1 (-2: no maps). */
static long mapping_at(struct elfsyms *es, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!es->maps_read && read_maps(es))
		return -2;
	hi = es->nmaps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (es->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < es->nmaps && es->maps[lo].start <= addr && es->maps[lo].path)
		return (long)lo;
	return -1;
}

/* The file mapping next to I in direction DIR (+1, -1) if it is of I's
 * file, else -1.  Lines that map no file are passed over, as libdwfl's
 * dwfl_linux_proc_report does (a module runs to its file's last line). */
static long same_file(const struct elfsyms *es, size_t i, int dir)
{
	const struct mapping *m = &es->maps[i];
	long k;

	for (k = (long)i + dir; k >= 0 && (size_t)k < es->nmaps; k += dir) {
		const struct mapping *o = &es->maps[k];

		if (!o->path || o->vdso)
			continue;
		return o->ino == m->ino && !strcmp(o->path, m->path) ? k : -1;
	}
	return -1;
}

int elfsyms_module_range(struct elfsyms *es, uint64_t addr, uint64_t *lo,
			 uint64_t *hi)
{
	long at = mapping_at(es, addr), i, j, k;

	if (at < 0 || es->maps[at].vdso)
		return -2;
	for (i = at; (k = same_file(es, (size_t)i, -1)) >= 0; i = k)
		;
	for (j = at; (k = same_file(es, (size_t)j, 1)) >= 0; j = k)
		;
	*lo = es->maps[i].start;
	*hi = es->maps[j].end;
	return 0;
}

int elfsyms_find(struct elfsyms *es, uint64_t in_module,
		 const char *const *names, unsigned n, int funcs,
		 struct sym_def *out)
{
	const struct mapping *m = NULL;
	const Elf64_Ehdr *eh;
	struct sym_def *keep;
	struct object *o;
	uint64_t bias;
	int found = 0;
	size_t i;
	unsigned k;

	long at = mapping_at(es, in_module);

	if (at < 0)
		return -2;	/* no maps, no file: libdwfl's */
	m = &es->maps[at];
	o = object_of(es, m);
	if (!o->usable || bias_of(es, (size_t)at, o, &bias))
		return -2;
	if (o->library)
		return symtab_find_dynsym(&o->tab, bias, names, n, funcs, o->path, out);
	/* an executable: its whole table, the first of each name (libdwfl's
	 * order), as libdwfl gives them */
	eh = o->map;
	keep = xmalloc(n * sizeof(*keep));
	memcpy(keep, out, n * sizeof(*keep));
	for (i = 1; i < o->tab.nsyms; i++) {
		const Elf64_Sym *s = &o->tab.syms[i];
		unsigned bind = ELF64_ST_BIND(s->st_info), type = ELF64_ST_TYPE(s->st_info);
		const char *name;

		if (s->st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
		    (funcs ? type != STT_FUNC : type != STT_OBJECT))
			continue;
		name = sym_name(&o->tab, i);
		if (!name)
			continue;
		for (k = 0; k < n; k++) {
			if (out[k].addr || !symtab_name_is(name, names[k]))
				continue;
			if (s->st_shndx >= SHN_LORESERVE || s->st_shndx >= eh->e_shnum ||
			    !(shdr(o, s->st_shndx)->sh_flags & SHF_ALLOC)) {
				/* absolute, or not loaded: libdwfl's rules */
				memcpy(out, keep, n * sizeof(*keep));
				free(keep);
				return -2;
			}
			if (!(bias + s->st_value))
				continue;
			out[k].addr = bias + s->st_value;
			out[k].size = s->st_size;
			out[k].module = o->path;
			found++;
		}
	}
	free(keep);
	return found;
}
