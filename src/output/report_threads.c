/*
 * report_threads.c - the report's threads and the process's resources
 * (report_threads.h).  The figures are the heap table's (heap.h): a free
 * is the freeing thread's, bytes in use their allocating thread's, so
 * the threads add up to the HEAP SUMMARY.
 */
#include <stdlib.h>
#include <string.h>

#include "output/report_threads.h"
#include "output/report.h"
#include "target/procstat.h"
#include "base/util.h"

/* Threads that did something, most bytes in use first. */
static int cmp_thread(const void *pa, const void *pb)
{
	const struct heap_thread *a = *(const struct heap_thread *const *)pa;
	const struct heap_thread *b = *(const struct heap_thread *const *)pb;

	if (a->in_use_bytes != b->in_use_bytes)
		return a->in_use_bytes > b->in_use_bytes ? -1 : 1;
	if (a->bytes_allocated != b->bytes_allocated)
		return a->bytes_allocated > b->bytes_allocated ? -1 : 1;
	/* tid 0 (the threads beyond the table) last */
	if (!a->tid || !b->tid)
		return !a->tid - !b->tid;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* The threads of IN's heap that allocated or freed, sorted: the array
 * (freed by the caller) and its length. */
static size_t sorted(const struct report_input *in,
		     const struct heap_thread ***out)
{
	const struct heap_thread *t, **v;
	size_t n, i, k = 0;

	*out = NULL;
	if (!in->heap || !in->threads)
		return 0;
	n = heap_threads(in->heap, &t);
	v = xcalloc(n + 1, sizeof(*v));
	/* (tid 0 also holds the census's blocks, made before an attach:
	 * in use, no allocation) */
	for (i = 0; i < n; i++)
		if (t[i].allocs || t[i].frees || t[i].in_use_bytes)
			v[k++] = &t[i];
	qsort(v, k, sizeof(*v), cmp_thread);
	*out = v;
	return k;
}

static void counts_text(FILE *f, uint64_t allocs, uint64_t frees,
			uint64_t allocated, uint64_t in_use)
{
	char b1[32], b2[32], b3[32], b4[32];

	fprintf(f, "%s allocs, %s frees, %s bytes allocated, %s bytes in use\n",
		fmt_thousands(b1, allocs), fmt_thousands(b2, frees),
		fmt_thousands(b3, allocated), fmt_thousands(b4, in_use));
}

void rthreads_text(const struct report_input *in, FILE *text)
{
	const struct heap_thread **v;
	size_t n = sorted(in, &v), i;
	int pid = (int)in->pid;

	if (n) {
		fprintf(text, "ptleak[%d]:\nptleak[%d]: THREADS: %zu thread%s used the heap\n",
			pid,
			pid, n, n == 1 ? "" : "s");
		for (i = 0; i < n && i < RTHREADS_TOP; i++) {
			char *hold;

			if (v[i]->tid)
				fprintf(text, "ptleak[%d]:   thread %d (%s): ", pid,
					(int)v[i]->tid, text_safe(v[i]->name, &hold));
			else
				fprintf(text, "ptleak[%d]:   %sthreads beyond %d: ",
					pid, in->census ? "made before ptleak "
					"attached, or by " : "", HEAP_MAX_THREADS);
			if (v[i]->tid)
				free(hold);
			counts_text(text, v[i]->allocs, v[i]->frees,
				    v[i]->bytes_allocated, v[i]->in_use_bytes);
		}
		if (n > RTHREADS_TOP) {
			uint64_t a = 0, f = 0, b = 0, u = 0;

			for (; i < n; i++) {
				a += v[i]->allocs;
				f += v[i]->frees;
				b += v[i]->bytes_allocated;
				u += v[i]->in_use_bytes;
			}
			fprintf(text, "ptleak[%d]:   %zu other threads: ", pid,
				n - RTHREADS_TOP);
			counts_text(text, a, f, b, u);
		}
	}
	free(v);
}

void rthreads_json(const struct report_input *in, struct json *j)
{
	const struct heap_thread **v;
	size_t n = sorted(in, &v), i;

	json_array_begin(j);
	for (i = 0; i < n; i++) {
		json_object_begin(j);
		json_key(j, "tid");
		json_int(j, v[i]->tid);
		json_key(j, "name");
		json_string(j, v[i]->tid && v[i]->name[0] ? v[i]->name : NULL);
		json_key(j, "allocs");
		json_uint(j, v[i]->allocs);
		json_key(j, "frees");
		json_uint(j, v[i]->frees);
		json_key(j, "bytes_allocated");
		json_uint(j, v[i]->bytes_allocated);
		json_key(j, "in_use_bytes");
		json_uint(j, v[i]->in_use_bytes);
		json_object_end(j);
	}
	json_array_end(j);
	free(v);
}

void rresources_text(const struct report_input *in, FILE *text)
{
	const struct proc_resources *r = in->resources;
	char b[32];

	if (!r || !r->known)
		return;
	fprintf(text, "ptleak[%d]:\nptleak[%d]: RESOURCES: %.2f s user, %.2f s system, "
		"%.2f s wall, max RSS %s KiB\n", (int)in->pid, (int)in->pid, r->user_s,
		r->sys_s, r->wall_s, fmt_thousands(b, r->max_rss_kb));
}

void rresources_json(const struct report_input *in, struct json *j)
{
	const struct proc_resources *r = in->resources;

	if (!r || !r->known) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_key(j, "user_s");
	json_seconds(j, r->user_s);
	json_key(j, "sys_s");
	json_seconds(j, r->sys_s);
	json_key(j, "wall_s");
	json_seconds(j, r->wall_s);
	json_key(j, "max_rss_kb");
	json_uint(j, r->max_rss_kb);
	json_object_end(j);
}
