/*
 * unloaded.h - objects unloaded (dlclose) before a report, kept so that
 * frames in them are still named (unloaded.c).  One list per process,
 * created at its first rendezvous; at most 64 objects (the oldest go).
 */
#ifndef PTLEAK_UNLOADED_H
#define PTLEAK_UNLOADED_H

#include <stdint.h>
#include <sys/types.h>

struct unloaded;
struct symbolizer;

/* The dynamic linker's rendezvous (thread TID stopped) in STATE (RT_ADD
 * 1, RT_DELETE 2, RT_CONSISTENT 0), the link map at MAP: objects
 * unloaded noted in *UP (created if NULL). */
void unloaded_rendezvous(struct unloaded **up, pid_t tid, int32_t state,
			 uint64_t map);
/* Tell symbolizer S the objects of U (NULL: none), to name frames in
 * them. */
void unloaded_name(const struct unloaded *u, struct symbolizer *s);
/* Forget them (the process's exec, or its end); *UP becomes NULL. */
void unloaded_free(struct unloaded **up);

#endif
