/* symbols.c - libdwfl lookups over a live process's objects. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/addrsym.h"
#include "symbols/debugfile.h"
#include "symbols/dwline.h"
#include "symbols/elfsyms.h"
#include "symbols/symbols.h"
#include "base/debug.h"
#include "base/util.h"

char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);
/* Longest mangled name demangled: heavy template code reaches a few KiB
 * (libstdc++'s longest exported name: 177 bytes); past that the
 * target's string is not worth the demangler's time. */
#define SYM_DEMANGLE_MAX 16384

struct name_cache {
	uint64_t pc;
	int caller;
	int used;
	struct frame_info fi;
};

/* A module's global function symbols by address, to pick among aliases. */
struct alias {
	uint64_t addr;
	const char *name;
};

/* What is read once of a module's symbol table: the copy its lookups
 * search (addrsym.h), its global functions by address. */
struct module_syms {
	struct addrsym syms;
	struct alias *a;
	size_t n;
};

/* How a module of the full session gets its lines: LINES (its separate
 * debug file's .debug_line, when that file's .debug_info is compressed),
 * else libdw. */
struct module_lines {
	Dwfl_Module *mod;
	struct dwline *lines;
};

/*
 * Two libdwfl sessions over the same maps, because libdwfl settles a
 * module's symbol table once: DWFL never opens a separate debug file
 * (the object's own .symtab, else its .dynsym: what set-up lookups and
 * frame 0, named after the allocator, need); FULL, made at the first
 * caller frame named, finds debug files (their .symtab, their DWARF for
 * lines), and libdw reads a module's DWARF only when a frame in it
 * asks for a line.
 */
struct symbolizer {
	pid_t pid;
	Dwfl *dwfl;		/* made at its first need (light()) */
	int dwfl_failed;
	struct elfsyms *es;	/* set-up lookups (sym_open_setup) */
	Dwfl *full;
	int full_failed;
	Dwfl *gone;		/* objects unloaded (sym_add_unloaded) */
	struct module_syms *mods;
	size_t nmods, amods;
	struct module_lines *mlines;
	size_t nmlines, amlines;
	/* strings handed out, freed at close */
	char **strs;
	size_t nstrs, astrs;
	/* lookups already made, open addressing by (pc, caller): reports
	 * name the same PCs many times */
	struct name_cache *cache;
	size_t ncache, capcache;
};

static char *debuginfo_path;

/*
 * libdwfl's dwfl_linux_proc_find_elf, the object's file opened by
 * open_untrusted(): libdwfl opens the path /proc/PID/maps names with a
 * plain open, which waits for ever on a FIFO the target put in its place.
 * Not a regular file: no ELF for that module.  Else (no such file, a
 * deleted one, the vDSO) libdwfl's own way.
 */
static int find_elf_untrusted(Dwfl_Module *mod, void **userdata,
			      const char *module_name, Dwarf_Addr base,
			      char **file_name, Elf **elfp)
{
	int fd;

	if (module_name[0] == '/') {
		fd = open_untrusted(module_name);
		if (fd >= 0) {
			*file_name = strdup(module_name);
			if (*file_name)
				return fd;
			close(fd);
			return -1;
		}
		if (errno == EINVAL) {
			if (util_first(module_name))
				warning("%s is not a regular file any more (replaced "
					"after it was mapped): its symbols are not read",
					module_name);
			return -1;
		}
	}
	return dwfl_linux_proc_find_elf(mod, userdata, module_name, base,
					file_name, elfp);
}

static const Dwfl_Callbacks light_callbacks = {
	.find_elf = find_elf_untrusted,
	.find_debuginfo = debugfile_none,
	.debuginfo_path = &debuginfo_path,
};

static const Dwfl_Callbacks full_callbacks = {
	.find_elf = find_elf_untrusted,
	.find_debuginfo = debugfile_find,
	.debuginfo_path = &debuginfo_path,
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = debugfile_find,
	.debuginfo_path = &debuginfo_path,
};

int sym_add_unloaded(struct symbolizer *s, const char *path, uint64_t bias)
{
	Dwfl_Module *mod;
	char *name;

	if (!s->gone && !(s->gone = dwfl_begin(&offline_callbacks)))
		return -1;
	if (asprintf(&name, "%s (unloaded)", path) < 0)
		die("out of memory");
	dwfl_report_begin_add(s->gone);
	mod = dwfl_report_elf(s->gone, name, path, -1, bias, false);
	dwfl_report_end(s->gone, NULL, NULL);
	free(name);
	return mod ? 0 : -1;
}

static Dwfl *proc_session(pid_t pid, const Dwfl_Callbacks *cb)
{
	Dwfl *dwfl = dwfl_begin(cb);
	int ret;

	if (!dwfl) {
		error("libdw: dwfl_begin: %s", dwfl_errmsg(-1));
		return NULL;
	}
	dwfl_report_begin(dwfl);
	ret = dwfl_linux_proc_report(dwfl, pid);
	dwfl_report_end(dwfl, NULL, NULL);
	if (ret) {
		error("cannot read the objects mapped by process %d: %s", (int)pid,
		      ret > 0 ? strerror(ret) : dwfl_errmsg(-1));
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

/* 0 if PID's /proc/PID/NAME can be opened (or is not there), else its
 * errno. */
static int proc_readable(pid_t pid, const char *name)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT && !strcmp(name, "auxv") ? 0 : errno;
	close(fd);
	return 0;
}

/*
 * Its session made at the first need (a report that names no frame
 * reads no maps: ~0.1 ms of every exit report of a small heap); what
 * would keep the session from being made is said now, as the session
 * would (dwfl_linux_proc_report reads the auxv, then the maps).
 */
struct symbolizer *sym_open(pid_t pid)
{
	struct symbolizer *s;
	int e = proc_readable(pid, "auxv");

	if (!e)
		e = proc_readable(pid, "maps");
	if (e) {
		error("cannot read the objects mapped by process %d: %s", (int)pid,
		      strerror(e));
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->pid = pid;
	return s;
}

int sym_setup_libdwfl;

struct symbolizer *sym_open_setup(pid_t pid)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	s->pid = pid;
	s->es = elfsyms_open(pid);
	return s;
}

/* The light session, NULL if it cannot be made (a set-up symbolizer's
 * at its first need). */
static Dwfl *light(struct symbolizer *s)
{
	if (!s->dwfl && !s->dwfl_failed) {
		s->dwfl = proc_session(s->pid, &light_callbacks);
		s->dwfl_failed = !s->dwfl;
	}
	return s->dwfl;
}

/* The session with debug files, NULL if it cannot be made. */
static Dwfl *full_session(struct symbolizer *s)
{
	if (!s->full && !s->full_failed) {
		s->full = proc_session(s->pid, &full_callbacks);
		s->full_failed = !s->full;
	}
	return s->full;
}

int sym_failed(const struct symbolizer *s)
{
	return s->dwfl_failed;
}

int sym_module_range(struct symbolizer *s, uint64_t addr, uint64_t *lo,
		     uint64_t *hi)
{
	Dwfl_Module *mod;
	Dwarf_Addr l, h;

	if (s->es && !sym_setup_libdwfl && !elfsyms_module_range(s->es, addr, lo, hi))
		return 0;
	mod = light(s) ? dwfl_addrmodule(s->dwfl, addr) : NULL;
	if (!mod || !dwfl_module_info(mod, NULL, &l, &h, NULL, NULL, NULL, NULL))
		return -1;
	*lo = l;
	*hi = h;
	return 0;
}

Dwfl *sym_dwfl(struct symbolizer *s)
{
	return light(s);
}

void sym_close(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	if (debug_stats && s->ncache) {
		size_t fb = 0;

		for (i = 0; i < s->nmods; i++)
			fb += s->mods[i].syms.fallbacks;
		fprintf(stderr, "ptleak-debug: symbols: %zu addresses named in "
			"%zu modules, %zu by libdw's search\n", s->ncache,
			s->nmods, fb);
	}
	if (s->dwfl)
		dwfl_end(s->dwfl);
	elfsyms_close(s->es);
	if (s->full)
		dwfl_end(s->full);
	if (s->gone)
		dwfl_end(s->gone);
	for (i = 0; i < s->nmods; i++) {
		addrsym_free(&s->mods[i].syms);
		free(s->mods[i].a);
	}
	free(s->mods);
	for (i = 0; i < s->nmlines; i++)
		dwline_close(s->mlines[i].lines);
	free(s->mlines);
	for (i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	free(s->strs);
	free(s->cache);
	free(s);
}

static const char *keep(struct symbolizer *s, char *str)
{
	grow_array((void **)&s->strs, &s->astrs, s->nstrs + 1, sizeof(*s->strs));
	s->strs[s->nstrs++] = str;
	return str;
}

static const char *module_path(Dwfl_Module *mod, uint64_t *start)
{
	Dwarf_Addr lo;
	const char *name = dwfl_module_info(mod, NULL, &lo, NULL, NULL, NULL,
					    NULL, NULL);
	if (start)
		*start = lo;
	return name;
}

/*
 * The defined global or weak symbols NAMES of E's .dynsym (their default
 * version), at BIAS + st_value, into OUT (module MODULE): elfsyms.c's
 * lookup on the sections libelf gives.  Returns the number found.
 */
static int dynsym_find(Elf *e, uint64_t bias, const char *const *names,
		       unsigned n, int funcs, const char *module,
		       struct sym_def *out)
{
	struct symtab_view v;
	Elf_Data *syms = NULL, *ver = NULL, *hash = NULL, *str = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (gelf_getclass(e) != ELFCLASS64)
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM && sh.sh_entsize == sizeof(Elf64_Sym)) {
			syms = elf_getdata(scn, NULL);
			str = elf_getdata(elf_getscn(e, sh.sh_link), NULL);
		} else if (sh.sh_type == SHT_GNU_versym) {
			ver = elf_getdata(scn, NULL);
		} else if (sh.sh_type == SHT_GNU_HASH) {
			hash = elf_getdata(scn, NULL);
		}
	}
	if (!syms || !syms->d_buf || !str || !str->d_buf)
		return 0;
	memset(&v, 0, sizeof(v));
	v.syms = syms->d_buf;
	v.nsyms = syms->d_size / sizeof(Elf64_Sym);
	v.str = str->d_buf;
	v.strsz = str->d_size;
	if (ver && ver->d_buf && ver->d_size >= v.nsyms * sizeof(uint16_t))
		v.ver = ver->d_buf;
	if (hash && hash->d_buf) {
		v.hash = hash->d_buf;
		v.hashwords = hash->d_size / 4;
	}
	return symtab_find_dynsym(&v, bias, names, n, funcs, module, out);
}

/* E is a shared library (symtab_is_library, on what libelf gives). */
static int is_library(Elf *e)
{
	const Elf64_Ehdr *eh = elf64_getehdr(e);
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	GElf_Shdr sh;

	if (!eh)
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		d = elf_getdata(scn, NULL);
		return d && d->d_buf &&
		       symtab_is_library(eh, elf64_getphdr(e), d->d_buf,
					 d->d_size / sizeof(Elf64_Dyn));
	}
	return 0;
}

int sym_find_in_module(struct symbolizer *s, uint64_t in_module,
		       const char *const *names, unsigned n, int funcs,
		       struct sym_def *out)
{
	Dwfl_Module *mod;
	int nsyms, i, found = 0;
	const char *path;
	GElf_Addr bias;
	Elf *elf;

	if (s->es && !sym_setup_libdwfl) {
		found = elfsyms_find(s->es, in_module, names, n, funcs, out);
		if (found != -2)
			return found;
		found = 0;
	}
	mod = light(s) ? dwfl_addrmodule(s->dwfl, in_module) : NULL;
	if (!mod)
		return -1;
	path = module_path(mod, NULL);
	/* a library: its .dynsym (libdwfl's symbol table would be its
	 * separate debug file's, loaded for this: ~1 ms for libc) */
	elf = dwfl_module_getelf(mod, &bias);
	if (elf && is_library(elf))
		return dynsym_find(elf, bias, names, n, funcs, path, out);
	nsyms = dwfl_module_getsymtab(mod);
	for (i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   &shndx, NULL, NULL);
		int type, bind;
		unsigned k;

		if (!name || sym.st_shndx == SHN_UNDEF || !addr)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if (bind != STB_GLOBAL && bind != STB_WEAK)
			continue;
		if (funcs ? type != STT_FUNC : type != STT_OBJECT)
			continue;
		for (k = 0; k < n; k++) {
			if (out[k].addr || !symtab_name_is(name, names[k]))
				continue;
			out[k].addr = addr;
			out[k].size = sym.st_size;
			out[k].module = path;
			found++;
		}
	}
	return found;
}

static int cmp_alias(const void *x, const void *y)
{
	const struct alias *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* SYM, named NAME at ADDR, among M's global functions if it is one. */
static void alias_add(struct module_syms *m, size_t *alloc, uint64_t addr,
		      const char *name, const GElf_Sym *sym)
{
	int bind;

	if (!name || !*name || sym->st_shndx == SHN_UNDEF ||
	    GELF_ST_TYPE(sym->st_info) != STT_FUNC)
		return;
	bind = GELF_ST_BIND(sym->st_info);
	if (bind != STB_GLOBAL && bind != STB_WEAK)
		return;
	grow_array((void **)&m->a, alloc, m->n + 1, sizeof(*m->a));
	m->a[m->n].addr = addr;
	m->a[m->n].name = name;
	m->n++;
}

static struct module_syms *module_of(struct symbolizer *s, Dwfl_Module *mod)
{
	struct module_syms *m;
	size_t i, alloc = 0;
	int k, nsyms;

	for (i = 0; i < s->nmods; i++)
		if (s->mods[i].syms.mod == mod)
			return &s->mods[i];
	grow_array((void **)&s->mods, &s->amods, s->nmods + 1, sizeof(*s->mods));
	m = &s->mods[s->nmods++];
	memset(m, 0, sizeof(*m));
	addrsym_init(&m->syms, mod);
	for (i = 0; i < m->syms.n; i++)
		alias_add(m, &alloc, m->syms.e[i].value, m->syms.e[i].name,
			  &m->syms.e[i].sym);
	/* no copy (a table left to libdw's search): the aliases from
	 * libdw's table itself */
	nsyms = m->syms.libdw ? dwfl_module_getsymtab(mod) : 0;
	for (k = 1; k < nsyms; k++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, k, &sym, &addr,
							   NULL, NULL, NULL);

		alias_add(m, &alloc, addr, name, &sym);
	}
	if (m->n)
		qsort(m->a, m->n, sizeof(*m->a), cmp_alias);
	return m;
}

/* FILE of LINE's table as a path: relative names are relative to the
 * compilation's directory. */
static char *source_path(Dwfl_Line *line, const char *file)
{
	const char *dir = file[0] != '/' ? dwfl_line_comp_dir(line) : NULL;
	char *path;

	if (!dir || !*dir)
		return xstrdup(file);
	if (asprintf(&path, "%s/%s", dir, file) < 0)
		die("out of memory");
	return path;
}

/* MOD's line rows from its separate debug file when that file's DWARF
 * is compressed (libdw would inflate all of it), else NULL: libdw. */
static struct dwline *lines_of(struct symbolizer *s, Dwfl_Module *mod)
{
	struct module_lines *m;
	const char *debugfile = NULL;
	size_t i;
	int fd;

	for (i = 0; i < s->nmlines; i++)
		if (s->mlines[i].mod == mod)
			return s->mlines[i].lines;
	grow_array((void **)&s->mlines, &s->amlines, s->nmlines + 1,
		   sizeof(*s->mlines));
	m = &s->mlines[s->nmlines++];
	m->mod = mod;
	m->lines = NULL;
	/* the name lookup has already looked for the debug file */
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	fd = debugfile ? open_untrusted(debugfile) : -1;
	if (fd >= 0) {
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		int compressed = elf && dwline_info_compressed(elf);

		elf_end(elf);
		close(fd);
		if (compressed)
			m->lines = dwline_open(debugfile);
	}
	return m->lines;
}

static size_t underscores(const char *name)
{
	return strspn(name, "_");
}

/*
 * Among the global names of the function at START, the one a person
 * writes: fewest leading underscores, then the shortest (printf rather
 * than _IO_printf, strdup rather than __strdup), then the first in
 * strcmp order (a C++ constructor's C1 rather than its C2 alias, as
 * valgrind names it in suppressions).  NAME if none is better.
 */
static const char *best_alias(struct symbolizer *s, Dwfl_Module *mod,
			      uint64_t start, const char *name)
{
	const struct module_syms *m = module_of(s, mod);
	size_t lo = 0, hi = m->n;
	const char *best = name;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->a[mid].addr < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < m->n && m->a[lo].addr == start; lo++) {
		const char *c = m->a[lo].name;

		if (strchr(c, '@'))
			continue;
		if (underscores(c) < underscores(best) ||
		    (underscores(c) == underscores(best) &&
		     (strlen(c) < strlen(best) ||
		      (strlen(c) == strlen(best) && strcmp(c, best) < 0))))
			best = c;
	}
	return best;
}

/* The slot of (PC, CALLER): its entry, or the free one to fill; the table
 * is kept at most half full. */
static struct name_cache *cache_slot(struct symbolizer *s, uint64_t pc,
				     int caller)
{
	size_t i, mask;

	if ((s->ncache + 1) * 2 > s->capcache) {
		struct name_cache *old = s->cache;
		size_t oldcap = s->capcache;

		s->capcache = oldcap ? oldcap * 2 : 256;
		s->cache = xcalloc(s->capcache, sizeof(*s->cache));
		for (i = 0; i < oldcap; i++) {
			if (old[i].used) {
				size_t j = hash64(old[i].pc * 2 + (uint64_t)old[i].caller) &
					   (s->capcache - 1);

				while (s->cache[j].used)
					j = (j + 1) & (s->capcache - 1);
				s->cache[j] = old[i];
			}
		}
		free(old);
	}
	mask = s->capcache - 1;
	for (i = hash64(pc * 2 + (uint64_t)caller) & mask; s->cache[i].used;
	     i = (i + 1) & mask)
		if (s->cache[i].pc == pc && s->cache[i].caller == caller)
			break;
	return &s->cache[i];
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void sym_lookup(struct symbolizer *s, uint64_t pc, int caller,
		struct frame_info *out)
{
	Dwfl_Module *mod;
	uint64_t addr = caller && pc ? pc - 1 : pc;
	struct name_cache *slot = cache_slot(s, pc, caller);
	Dwfl *dwfl = caller ? full_session(s) : NULL;

	if (slot->used) {
		*out = slot->fi;
		return;
	}

	memset(out, 0, sizeof(*out));
	out->pc = pc;
	mod = dwfl ? dwfl_addrmodule(dwfl, addr) :
	      light(s) ? dwfl_addrmodule(s->dwfl, addr) : NULL;
	if (!mod && s->gone && caller)
		mod = dwfl_addrmodule(s->gone, addr);
	if (mod) {
		GElf_Off off;
		GElf_Sym sym;
		uint64_t start;
		const char *name;
		Dwfl_Line *line;
		struct dwline *lines;

		out->module = module_path(mod, &start);
		out->module_offset = pc - start;
		name = addrsym_find(&module_of(s, mod)->syms, addr, &off, &sym);
		if (name && GELF_ST_BIND(sym.st_info) != STB_LOCAL)
			name = best_alias(s, mod, addr - off, name);
		if (name) {
			int status = -1;
			char *dem = NULL;

			/* the target's string: a longer one
			 * is shown mangled, the demangler's work bounded */
			if (name[0] == '_' && name[1] == 'Z' &&
			    strnlen(name, SYM_DEMANGLE_MAX + 1) <= SYM_DEMANGLE_MAX)
				dem = __cxa_demangle(name, NULL, NULL, &status);
			if (status == 0 && dem) {
				out->function = keep(s, dem);
			} else {
				/* "_IO_file_overflow@@GLIBC_2.2.5": no version */
				char *plain = xstrdup(name);

				plain[strcspn(plain, "@")] = '\0';
				out->function = keep(s, plain);
			}
			/* valgrind's suppressions name functions so */
			out->symbol = status == 0 && dem ? name : out->function;
			if (status != 0)
				free(dem);
		}
		/* frame 0 is the entry of a function named after its probe:
		 * no line, no debug file */
		lines = dwfl ? lines_of(s, mod) : NULL;
		line = dwfl && !lines ? dwfl_module_getsrc(mod, addr) : NULL;
		if (lines) {
			const char *file;
			int lineno;
			Dwarf_Addr bias = 0;

			dwfl_module_getelf(mod, &bias);
			if (!dwline_find(lines, addr - bias, &file, &lineno) &&
			    lineno > 0) {
				out->file = keep(s, xstrdup(base_name(file)));
				out->path = keep(s, xstrdup(file));
				out->line = lineno;
			}
		} else if (line) {
			int lineno = 0;
			const char *file = dwfl_lineinfo(line, NULL, &lineno,
							 NULL, NULL, NULL);
			if (file && lineno > 0) {
				out->file = keep(s, xstrdup(base_name(file)));
				out->path = keep(s, source_path(line, file));
				out->line = lineno;
			}
		}
	}
	slot->used = 1;
	slot->pc = pc;
	slot->caller = caller;
	slot->fi = *out;
	s->ncache++;
}
