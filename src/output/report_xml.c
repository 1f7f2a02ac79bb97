/*
 * report_xml.c - the report as valgrind's XML, protocol 4 (report_xml.h).
 *
 * Laid out as valgrind 3.19 lays it out, so that a reader that looks at
 * more than the elements (a diff, a line-based script) sees the same
 * shape: <status> RUNNING, then FINISHED, then the leak errors (in
 * memcheck's order, smallest first, and its numbers), an empty
 * <errorcounts> (leaks are not counted there) and <suppcounts>.  Text
 * from the target (names, paths, argv) goes through text_safe (no
 * control characters, valid UTF-8) and is escaped.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/outfile.h"
#include "output/report_xml.h"
#include "base/util.h"
#include "analysis/vgsupp.h"

struct vgxml {
	struct outfile of;
	FILE *f;
	int gen_supp;
	unsigned unique;
	struct report_sink sink;
};

static const char *const kinds[] = {
	[SCAN_DEFINITELY_LOST] = "Leak_DefinitelyLost",
	[SCAN_INDIRECTLY_LOST] = "Leak_IndirectlyLost",
	[SCAN_POSSIBLY_LOST] = "Leak_PossiblyLost",
	[SCAN_STILL_REACHABLE] = "Leak_StillReachable",
};

static const char *const words[] = {
	[SCAN_DEFINITELY_LOST] = "definitely lost",
	[SCAN_INDIRECTLY_LOST] = "indirectly lost",
	[SCAN_POSSIBLY_LOST] = "possibly lost",
	[SCAN_STILL_REACHABLE] = "still reachable",
};

/* S escaped for XML text. */
static void put_text(FILE *f, const char *s)
{
	char *hold;

	for (s = text_safe(s, &hold); s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		default:
			putc(*s, f);
		}
	}
	free(hold);
}

/* <TAG>S</TAG> on a line of its own, INDENT spaces in */
static void elem(FILE *f, int indent, const char *tag, const char *s)
{
	fprintf(f, "%*s<%s>", indent, "", tag);
	put_text(f, s);
	fprintf(f, "</%s>\n", tag);
}

/* "00:00:00:01.234 ": valgrind's days:hours:minutes:seconds */
static void put_time(FILE *f, uint64_t ns)
{
	uint64_t ms = ns / 1000000, s = ms / 1000;

	fprintf(f, "  <time>%02u:%02u:%02u:%02u.%03u </time>\n",
		(unsigned)(s / 86400), (unsigned)(s / 3600 % 24),
		(unsigned)(s / 60 % 60), (unsigned)(s % 60), (unsigned)(ms % 1000));
}

/*
 * ptleak's own command line, as valgrind gives its own in <vargv>: its
 * /proc/self/cmdline less the program's ARGV at its end (a launch).
 */
static void put_vargv(FILE *f, char *const *argv)
{
	char exe[PATH_MAX], buf[8192], *args[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *c = fopen("/proc/self/cmdline", "re");
	size_t len = c ? fread(buf, 1, sizeof(buf) - 1, c) : 0, i;
	unsigned na = 0, k = 0, end;

	if (c)
		fclose(c);
	exe[n > 0 ? n : 0] = '\0';
	buf[len] = '\0';
	for (i = 0; i < len && na < ARRAY_SIZE(args); i += strlen(buf + i) + 1)
		args[na++] = buf + i;
	while (argv && argv[k])
		k++;
	end = na;
	if (k && k < na) {
		for (i = 0; i < k && !strcmp(args[na - k + i], argv[i]); i++)
			;
		if (i == k)
			end = na - k;
	}
	fputs("  <vargv>\n", f);
	elem(f, 4, "exe", n > 0 ? exe : "ptleak");
	for (i = 1; i < end; i++)
		elem(f, 4, "arg", args[i]);
	fputs("  </vargv>\n", f);
}

static void put_preamble(FILE *f, const struct report_input *in)
{
	unsigned long long ppid = 0;
	char *const *a;
	int k;

	fputs("<?xml version=\"1.0\"?>\n\n<valgrindoutput>\n\n"
	      "<protocolversion>4</protocolversion>\n"
	      "<protocoltool>memcheck</protocoltool>\n\n<preamble>\n", f);
	elem(f, 2, "line", "ptleak, a leak check of memcheck's kinds, from "
	     "outside the process");
	fputs("  <line>Command:", f);
	for (a = in->argv; a && *a; a++) {
		putc(' ', f);
		put_text(f, *a);
	}
	fputs("</line>\n</preamble>\n\n", f);
	if (proc_status_field(in->pid, "PPid:", 10, &ppid))
		ppid = (unsigned long long)getpid();	/* gone: it was ours */
	fprintf(f, "<pid>%d</pid>\n<ppid>%llu</ppid>\n<tool>memcheck</tool>\n\n",
		(int)in->pid, ppid);
	fputs("<args>\n", f);
	put_vargv(f, in->argv);
	fputs("  <argv>\n", f);
	for (a = in->argv, k = 0; a && *a; a++, k++)
		elem(f, 4, k ? "arg" : "exe", *a);
	fputs("  </argv>\n</args>\n\n<status>\n  <state>RUNNING</state>\n", f);
	put_time(f, 0);
	fputs("</status>\n\n\n<status>\n  <state>FINISHED</state>\n", f);
	put_time(f, in->elapsed_ns);
	fputs("</status>\n\n", f);
}

static void put_frame(FILE *f, const struct frame_info *fi)
{
	fprintf(f, "    <frame>\n      <ip>0x%" PRIX64 "</ip>\n", fi->pc);
	if (fi->module)
		elem(f, 6, "obj", fi->module);
	if (fi->function)
		elem(f, 6, "fn", fi->function);
	if (fi->file)
		elem(f, 6, "file", fi->file);
	if (fi->file && fi->line > 0)
		fprintf(f, "      <line>%d</line>\n", fi->line);
	fputs("    </frame>\n", f);
}

/* S as CDATA, split where it holds "]]>" (the protocol's rule) */
static void put_cdata(FILE *f, const char *s)
{
	const char *end;

	fputs("<![CDATA[\n", f);
	while ((end = strstr(s, "]]>"))) {
		fwrite(s, 1, (size_t)(end - s) + 2, f);
		fputs("]]><![CDATA[", f);
		s = end + 2;
	}
	fputs(s, f);
	fputs("]]>\n", f);
}

static void put_suppression(FILE *f, const struct report_record *rec)
{
	unsigned i = vgsupp_first_frame(rec->frames, rec->nframes);
	char line[1024], *raw = NULL;
	size_t rawlen = 0;
	FILE *m;

	fputs("  <suppression>\n"
	      "    <sname>insert_a_suppression_name_here</sname>\n"
	      "    <skind>Memcheck:Leak</skind>\n", f);
	fprintf(f, "    <skaux>match-leak-kinds: %s</skaux>\n",
		vgsupp_kind_word(rec->cls));
	for (; i < rec->nframes; i++) {
		vgsupp_frame_line(&rec->frames[i], line, sizeof(line));
		line[3] = '\0';		/* "fun" or "obj" */
		fprintf(f, "    <sframe> <%s>", line);
		put_text(f, line + 4);
		fprintf(f, "</%s> </sframe>\n", line);
	}
	fputs("    <rawtext>\n", f);
	m = open_memstream(&raw, &rawlen);
	if (!m)
		die("out of memory");
	vgsupp_print(m, rec->cls, rec->frames, rec->nframes);
	fclose(m);
	put_cdata(f, raw);
	free(raw);
	fputs("    </rawtext>\n  </suppression>\n", f);
}

static void put_error(void *ctx, const struct report_record *rec)
{
	struct vgxml *x = ctx;
	FILE *f = x->f;
	int cls = rec->cls < 0 ? SCAN_DEFINITELY_LOST : rec->cls;
	unsigned i = vgsupp_first_frame(rec->frames, rec->nframes);
	char b[3][32];

	if (!rec->listed)
		return;		/* counted by memcheck, not shown */
	fprintf(f, "<error>\n  <unique>0x%x</unique>\n  <tid>1</tid>\n",
		x->unique++);
	fprintf(f, "  <kind>%s</kind>\n  <xwhat>\n    <text>", kinds[cls]);
	if (rec->indirect)
		fprintf(f, "%s (%s direct, %s indirect) bytes",
			fmt_thousands(b[0], rec->bytes + rec->indirect),
			fmt_thousands(b[1], rec->bytes),
			fmt_thousands(b[2], rec->indirect));
	else
		fprintf(f, "%s bytes", fmt_thousands(b[0], rec->bytes));
	fprintf(f, " in %s blocks are %s in loss record ",
		fmt_thousands(b[1], rec->blocks),
		rec->cls < 0 ? "unclassified (no scan)" : words[cls]);
	fprintf(f, "%s of ", fmt_thousands(b[0], rec->number));
	fprintf(f, "%s</text>\n", fmt_thousands(b[0], rec->total));
	fprintf(f, "    <leakedbytes>%" PRIu64 "</leakedbytes>\n"
		"    <leakedblocks>%" PRIu64 "</leakedblocks>\n  </xwhat>\n",
		rec->bytes + rec->indirect, rec->blocks);
	fputs("  <stack>\n", f);
	for (; i < rec->nframes; i++)
		put_frame(f, &rec->frames[i]);
	fputs("  </stack>\n", f);
	if (x->gen_supp)
		put_suppression(f, rec);
	fputs("</error>\n\n", f);
}

struct vgxml *vgxml_open(const char *path, const struct report_input *in,
			 int gen_supp)
{
	struct vgxml *x = xcalloc(1, sizeof(*x));

	if (outfile_open(&x->of, path)) {
		free(x);
		return NULL;
	}
	x->f = x->of.f;
	x->gen_supp = gen_supp;
	x->sink.record = put_error;
	x->sink.ctx = x;
	x->sink.flags = REPORT_SINK_ALL;	/* memcheck's order and numbers */
	put_preamble(x->f, in);
	return x;
}

const struct report_sink *vgxml_sink(struct vgxml *x)
{
	return &x->sink;
}

int vgxml_close(struct vgxml *x, const struct suppressions *supp)
{
	unsigned i;
	int ret;

	fputs("<errorcounts>\n</errorcounts>\n\n<suppcounts>\n", x->f);
	for (i = 0; supp && i < supp->n; i++) {
		if (!supp->p[i].count)
			continue;
		fprintf(x->f, "  <pair>\n    <count>%" PRIu64 "</count>\n",
			supp->p[i].count);
		elem(x->f, 4, "name", supp->p[i].glob);
		fputs("  </pair>\n", x->f);
	}
	fputs("</suppcounts>\n\n</valgrindoutput>\n\n", x->f);
	ret = outfile_commit(&x->of);
	free(x);
	return ret;
}
