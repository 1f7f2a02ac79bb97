/*
 * vgsupp.c - valgrind's suppression files (vgsupp.h): a block's lines
 * parsed one at a time, matched as valgrind's errormgr matches them, and
 * written as --gen-suppressions=all writes them.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/scan.h"
#include "base/util.h"
#include "analysis/vgsupp.h"

/* Frames of a block at most (valgrind's limit is 24). */
#define VG_MAX_FRAMES 256

enum vgframe_type { VF_FUN, VF_OBJ, VF_SRC, VF_DOTS };

struct vgframe {
	enum vgframe_type type;
	char *pat;		/* VF_SRC: the file's pattern */
	int line;		/* VF_SRC: 0, or the line */
};

struct vgsupp {
	char *name;
	int leak;		/* Memcheck:Leak (others never match) */
	unsigned kinds;		/* match-leak-kinds: bits 1 << cls; 0: any */
	struct vgframe *f;
	unsigned n;
	size_t alloc;
};

/* where in a block the next line is */
enum { ST_NAME = 1, ST_KIND, ST_AUX, ST_FRAMES, ST_OTHER };

static const char *const kind_words[] = {
	[SCAN_DEFINITELY_LOST] = "definite",
	[SCAN_INDIRECTLY_LOST] = "indirect",
	[SCAN_POSSIBLY_LOST] = "possible",
	[SCAN_STILL_REACHABLE] = "reachable",
};

const char *vgsupp_kind_word(int cls)
{
	if (cls < 0 || (unsigned)cls >= ARRAY_SIZE(kind_words))
		return "definite";
	return kind_words[cls];
}

int vgsupp_is_start(const char *text)
{
	return text[0] == '{' && !text[1];
}

void vgsupp_free(struct vgsupp *v)
{
	unsigned i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++)
		free(v->f[i].pat);
	free(v->f);
	free(v->name);
	free(v);
}

/* "definite,possible", "all", "none" (after "match-leak-kinds:") */
static int parse_kinds(const char *p, unsigned *mask)
{
	while (*p == ' ' || *p == '\t')
		p++;
	*mask = 0;
	if (!strcmp(p, "all")) {
		*mask = (1u << ARRAY_SIZE(kind_words)) - 1;
		return 0;
	}
	if (!strcmp(p, "none"))
		return 0;	/* matches nothing, as valgrind */
	while (*p) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < ARRAY_SIZE(kind_words); i++)
			if (strlen(kind_words[i]) == n &&
			    !strncmp(p, kind_words[i], n))
				break;
		if (i == ARRAY_SIZE(kind_words))
			return -1;
		*mask |= 1u << i;
		p += n;
		if (*p == ',' && !*++p)
			return -1;
	}
	return *mask ? 0 : -1;
}

static int add_frame(struct vgsupp *v, const char *text, const char *path,
		     int lineno)
{
	struct vgframe fr = { VF_DOTS, NULL, 0 };

	if (!strcmp(text, "...")) {
		;
	} else if (!strncmp(text, "fun:", 4) && text[4]) {
		fr.type = VF_FUN;
		fr.pat = xstrdup(text + 4);
	} else if (!strncmp(text, "obj:", 4) && text[4]) {
		fr.type = VF_OBJ;
		fr.pat = xstrdup(text + 4);
	} else if (!strncmp(text, "src:", 4) && text[4]) {
		char *colon;

		fr.type = VF_SRC;
		fr.pat = xstrdup(text + 4);
		colon = strrchr(fr.pat, ':');
		if (colon) {
			char *end;
			long l = strtol(colon + 1, &end, 10);

			if (colon[1] < '0' || colon[1] > '9' || *end || l < 1) {
				free(fr.pat);
				return error("%s:%d: src:FILE:LINE wants a line number, "
					     "got '%s'", path, lineno, text);
			}
			*colon = '\0';
			fr.line = (int)l;
		}
	} else {
		return error("%s:%d: expected fun:PATTERN, obj:PATTERN, src:FILE, "
			     "'...' or '}', got '%s'", path, lineno, text);
	}
	if (v->n == VG_MAX_FRAMES) {
		free(fr.pat);
		return error("%s:%d: more than %d frames in a suppression", path,
			     lineno, VG_MAX_FRAMES);
	}
	grow_array((void **)&v->f, &v->alloc, v->n + 1, sizeof(*v->f));
	v->f[v->n++] = fr;
	return 0;
}

/* The block is complete: into S. */
static int finish(struct vgparse *st, struct suppressions *s, const char *path,
		  int lineno)
{
	struct vgsupp *v = st->cur;
	struct supp_pattern *p;

	if (v->leak && !v->n)
		return error("%s:%d: suppression '%s' has no fun:, obj: or src: line",
			     path, lineno, v->name);
	st->cur = NULL;
	st->state = 0;
	if (!v->leak) {		/* another tool's: read, never matches */
		vgsupp_free(v);
		return 0;
	}
	grow_array((void **)&s->p, &s->alloc, (size_t)s->n + 1, sizeof(*s->p));
	p = &s->p[s->n++];
	memset(p, 0, sizeof(*p));
	p->kind = SUPP_LEAK;
	p->glob = xstrdup(v->name);
	p->vg = v;
	p->line = st->name_line;	/* where valgrind -s says it is */
	return 0;
}

int vgsupp_line(struct vgparse *st, struct suppressions *s, const char *text,
		const char *path, int lineno)
{
	struct vgsupp *v = st->cur;

	if (!*text || text[0] == '#')
		return 0;
	switch (st->state) {
	case 0:
		if (!vgsupp_is_start(text))
			return error("%s:%d: expected '{' to start a suppression, "
				     "got '%s'", path, lineno, text);
		st->cur = xcalloc(1, sizeof(*st->cur));
		st->state = ST_NAME;
		st->start = lineno;
		return 0;
	case ST_NAME:
		if (text[0] == '{' || text[0] == '}')
			return error("%s:%d: expected the suppression's name, got '%s'",
				     path, lineno, text);
		v->name = xstrdup(text);
		st->name_line = lineno;
		st->state = ST_KIND;
		return 0;
	case ST_KIND: {
		const char *colon = strchr(text, ':');

		if (!colon || colon == text || !colon[1] || strchr(text, ' '))
			return error("%s:%d: expected TOOL:KIND such as Memcheck:Leak, "
				     "got '%s'", path, lineno, text);
		v->leak = !strcmp(colon + 1, "Leak") &&
			  strstr(text, "Memcheck") && strstr(text, "Memcheck") < colon;
		st->state = v->leak ? ST_AUX : ST_OTHER;
		return 0;
	}
	case ST_AUX:
		st->state = ST_FRAMES;
		if (!strncmp(text, "match-leak-kinds:", 17)) {
			if (parse_kinds(text + 17, &v->kinds))
				return error("%s:%d: match-leak-kinds: wants definite, "
					     "indirect, possible, reachable (any of "
					     "them), all or none, got '%s'", path,
					     lineno, text + 17);
			if (!v->kinds)
				v->kinds = 1u << 30;	/* "none": no class has it */
			return 0;
		}
		/* a frame already */
		__attribute__((fallthrough));
	case ST_FRAMES:
		if (!strcmp(text, "}"))
			return finish(st, s, path, lineno);
		return add_frame(v, text, path, lineno);
	case ST_OTHER:
		if (!strcmp(text, "}"))
			return finish(st, s, path, lineno);
		return 0;
	}
	return 0;
}

int vgsupp_end(struct vgparse *st, const char *path, int lineno)
{
	if (!st->cur)
		return 0;
	error("%s:%d: the file ends inside the suppression started at line %d "
	      "(no '}')", path, lineno, st->start);
	vgsupp_free(st->cur);
	st->cur = NULL;
	return -1;
}

/* valgrind's wildcards: '*' any string, '?' any one character */
static int wild_match(const char *pat, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*pat == '*') {
			star = pat++;
			resume = s;
		} else if (*pat == '?' || *pat == *s) {
			pat++;
			s++;
		} else if (star) {
			pat = star + 1;
			s = ++resume;
		} else {
			return 0;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int frame_matches(const struct vgframe *p, const struct frame_info *fi)
{
	switch (p->type) {
	case VF_FUN:
		if (!fi->function)	/* valgrind names it "???" */
			return wild_match(p->pat, "???");
		return (fi->symbol && wild_match(p->pat, fi->symbol)) ||
		       wild_match(p->pat, fi->function);
	case VF_OBJ:
		return wild_match(p->pat, fi->module ? fi->module : "???");
	case VF_SRC:
		return fi->file && wild_match(p->pat, base_name(fi->file)) &&
		       (!p->line || p->line == fi->line);
	case VF_DOTS:
		break;
	}
	return 1;
}

/* Pattern frames P[0..NP-1] against stack frames F[0..NF-1] (prefix). */
static int frames_match(const struct vgframe *p, unsigned np,
			const struct frame_info *f, unsigned nf)
{
	unsigned k;

	if (!np)
		return 1;
	if (p->type == VF_DOTS) {
		for (k = 0; k <= nf; k++)	/* zero or more frames */
			if (frames_match(p + 1, np - 1, f + k, nf - k))
				return 1;
		return 0;
	}
	return nf && frame_matches(p, f) &&
	       frames_match(p + 1, np - 1, f + 1, nf - 1);
}

unsigned vgsupp_first_frame(const struct frame_info *frames, unsigned n)
{
	const char *s;

	if (n < 2)
		return 0;
	s = frames[1].symbol ? frames[1].symbol : "";
	return !strncmp(s, "_Znw", 4) || !strncmp(s, "_Zna", 4);
}

int vgsupp_match(const struct vgsupp *v, int cls, const struct frame_info *frames,
		 unsigned n)
{
	unsigned first = vgsupp_first_frame(frames, n);

	if (!v->leak)
		return 0;
	if (v->kinds && (cls < 0 || !(v->kinds & (1u << cls))))
		return 0;
	return frames_match(v->f, v->n, frames + first, n - first);
}

const char *vgsupp_frame_line(const struct frame_info *fi, char *buf,
			      size_t len)
{
	if (fi->function)
		snprintf(buf, len, "fun:%s", fi->symbol ? fi->symbol : fi->function);
	else if (fi->module)
		snprintf(buf, len, "obj:%s", fi->module);
	else
		snprintf(buf, len, "obj:*");
	return buf;
}

void vgsupp_print(FILE *f, int cls, const struct frame_info *frames,
		  unsigned n)
{
	unsigned i = vgsupp_first_frame(frames, n);
	char buf[1024], *hold;

	fputs("{\n   <insert_a_suppression_name_here>\n   Memcheck:Leak\n", f);
	fprintf(f, "   match-leak-kinds: %s\n", vgsupp_kind_word(cls));
	for (; i < n; i++) {
		/* names from debug info: no terminal codes, no newline */
		fprintf(f, "   %s\n", text_safe(vgsupp_frame_line(&frames[i], buf,
							     sizeof(buf)), &hold));
		free(hold);
	}
	fputs("}\n", f);
}
