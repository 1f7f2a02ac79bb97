/*
 * vgrc.c - valgrind's ~/.valgrindrc, $VALGRIND_OPTS, ./.valgrindrc
 * (vgrc.h).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "cli/vgrc.h"

struct words {
	char *text;		/* every source, NUL-separated words */
	size_t len, alloc;
	size_t n;		/* words */
};

/*
 * The words of S (LEN bytes) appended to W, split as valgrind's
 * add_args_from_string splits them: at white space outside quotes; a '
 * or " quotes up to the next of its kind, and is dropped.  No comments
 * (valgrind 3.19 takes "#" for an option).
 */
static void split(struct words *w, const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && w->n < VGRC_MAX_WORDS) {
		char quote = 0;

		while (i < len && (strchr(" \t\r\n\v\f", s[i]) || !s[i]))
			i++;
		if (i == len)
			break;
		for (; i < len && s[i] && (quote || !strchr(" \t\r\n\v\f", s[i])); i++) {
			if (!quote && (s[i] == '\'' || s[i] == '"')) {
				quote = s[i];
				continue;
			}
			if (quote && s[i] == quote) {
				quote = 0;
				continue;
			}
			grow_array((void **)&w->text, &w->alloc, w->len + 2, 1);
			w->text[w->len++] = s[i];
		}
		grow_array((void **)&w->text, &w->alloc, w->len + 1, 1);
		w->text[w->len++] = '\0';
		w->n++;
	}
}

/* PATH's words, if it is a regular file of ours that others cannot
 * write (valgrind's rule); its dev and inode into *ST. */
static void read_file(struct words *w, const char *path, struct stat *st)
{
	char *buf;
	ssize_t got;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_uid != geteuid() ||
	    (st->st_mode & S_IWOTH)) {
		close(fd);
		return;
	}
	buf = xmalloc(VGRC_MAX_FILE);
	while (n < VGRC_MAX_FILE &&
	       (got = read(fd, buf + n, VGRC_MAX_FILE - n)) > 0)
		n += (size_t)got;
	close(fd);
	split(w, buf, n);
	free(buf);
}

size_t vgrc_read(char **text, char ***words)
{
	struct words w = { NULL, 0, 0, 0 };
	struct stat home_st, here_st;
	const char *home = getenv("HOME"), *env = getenv("VALGRIND_OPTS");
	size_t i, off;

	memset(&home_st, 0, sizeof(home_st));
	if (home && *home) {
		char *p = xmalloc(strlen(home) + sizeof("/.valgrindrc"));

		strcpy(p, home);
		strcat(p, "/.valgrindrc");
		read_file(&w, p, &home_st);
		free(p);
	}
	if (env)
		split(&w, env, strlen(env));
	/* ./.valgrindrc, unless it is the same file as ~/.valgrindrc */
	if (stat(".valgrindrc", &here_st) ||
	    here_st.st_dev != home_st.st_dev || here_st.st_ino != home_st.st_ino)
		read_file(&w, ".valgrindrc", &here_st);
	*text = NULL;
	*words = NULL;
	if (!w.n) {
		free(w.text);
		return 0;
	}
	*text = w.text;
	*words = xcalloc(w.n + 1, sizeof(**words));
	for (i = 0, off = 0; i < w.n; i++) {
		(*words)[i] = w.text + off;
		off += strlen(w.text + off) + 1;
	}
	return w.n;
}
