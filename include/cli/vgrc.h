/*
 * vgrc.h - the options valgrind reads before its command line, in its
 * order (coregrind/m_commandline.c): ~/.valgrindrc, $VALGRIND_OPTS,
 * ./.valgrindrc (unless it is ~/.valgrindrc).  A file is read only when
 * it is a regular file owned by the user and not writable by others, as
 * valgrind reads it; words are split at white space outside ' or "
 * quotes, which are dropped, as valgrind 3.19 splits them (no comments).  Read when the text is
 * valgrind's (options.c), so that meson's VALGRIND_OPTS=--error-exitcode=1
 * works as with valgrind.
 */
#ifndef PTLEAK_VGRC_H
#define PTLEAK_VGRC_H

#include <stddef.h>

/* Bounds: a file's bytes read, the words taken in all. */
#define VGRC_MAX_FILE (64 << 10)
#define VGRC_MAX_WORDS 1024

/*
 * The words, into *WORDS (malloc'd, NULL-terminated, pointing into *TEXT,
 * also malloc'd; both NULL when there is none): how many.  Never fails:
 * an unreadable file is no file, as for valgrind.  A word that is no
 * option is options.c's to refuse.
 */
size_t vgrc_read(char **text, char ***words);

#endif
