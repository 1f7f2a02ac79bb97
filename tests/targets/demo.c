/*
 * demo - the bundled leaky example (`make demo`).
 *
 * A little "word list" program with the usual kinds of leaks: a string
 * built by a helper and never freed, a buffer grown with realloc, a
 * calloc'd table and a strdup'd name, next to work that frees what it
 * allocates.  Prints one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Returns a new string "Hello, NAME!": the caller forgets to free it. */
static char *make_greeting(const char *name)
{
	size_t n = strlen(name) + 9;
	char *s = malloc(n); /* @greeting */

	snprintf(s, n, "Hello, %s!", name);
	return s;
}

/* Appends WORD to a growing, space-separated buffer. */
static char *append_word(char *buf, size_t *len, const char *word)
{
	size_t w = strlen(word);

	buf = realloc(buf, *len + w + 2); /* @append */
	memcpy(buf + *len, word, w);
	buf[*len + w] = ' ';
	buf[*len + w + 1] = '\0';
	*len += w + 1;
	return buf;
}

/* Counts letters in a temporary table that is freed: no leak here. */
static int count_letters(const char *s)
{
	int *counts = calloc(26, sizeof(int));
	int i, distinct = 0;

	for (; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			counts[*s - 'a']++;
	for (i = 0; i < 26; i++)
		distinct += counts[i] != 0;
	free(counts);
	return distinct;
}

int main(void)
{
	static const char *words[] = {"leaks", "are", "found", "from", "outside"};
	char *greeting, *list = NULL, *owner;
	double *table;
	size_t len = 0;
	unsigned i;
	int letters = 0;

	greeting = make_greeting("world"); /* @call_greeting */
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		list = append_word(list, &len, words[i]); /* @call_append */
	table = calloc(16, sizeof(double)); /* @table */
	table[0] = 1.0;
	owner = strdup("demo-owner"); /* @owner */
	for (i = 0; i < 100; i++) {
		char *tmp = malloc(32 + i);
		snprintf(tmp, 32 + i, "%s-%u", owner, i);
		letters += count_letters(tmp);
		free(tmp);
	}
	printf("%s %zu bytes of words, %d letters counted\n", greeting, len, letters); /* @stdout_buf */
	greeting = list = owner = NULL;
	table = NULL;
	return 0;
}
