/*
 * memio.h - reading and writing a traced process's memory in bulk.
 *
 * Reads use process_vm_readv with one iovec per page, so a range running
 * past the end of a mapping is read partially instead of failing whole.
 * Code (read-only text) is written through /proc/PID/mem, which a ptrace
 * tracer may write into private read-only mappings; process_vm_writev
 * cannot.
 */
#ifndef PTLEAK_MEMIO_H
#define PTLEAK_MEMIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read up to LEN bytes at ADDR of PID into BUF.  Returns the number of
 * bytes read from the start of the range (short at an unmapped page), or
 * -1 if not even the first byte could be read. */
ssize_t mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/*
 * The same, but pages that hold nothing yet (neither present nor swapped
 * out, per PAGEMAP, an fd of /proc/PID/pagemap) read as zeros without
 * being touched: reading an untouched page of anonymous memory through
 * process_vm_readv makes the kernel allocate it in the target (a scan of
 * 1,000 idle 8 MiB thread stacks grew the target by 8 GB).  Only for
 * anonymous memory: an untouched page of a file mapping holds the file's
 * bytes.  Unmapped pages read as zeros too.
 */
ssize_t mem_read_resident(pid_t pid, int pagemap, uint64_t addr, void *buf,
			  size_t len);

/* How many bytes from ADDR (at most LEN, whole pages) are neither present
 * nor swapped per PAGEMAP: zeros without reading them.  0 if unknown. */
uint64_t mem_untouched(int pagemap, uint64_t addr, uint64_t len);

/*
 * Call FN(CTX, start, end) for each run of pages of [START, END) the
 * process wrote to in a private file mapping: present or swapped and not
 * file pages (private copies), per PAGEMAP.  In a read-only mapping of an
 * object these are its RELRO data, written by relocation and start-up
 * before being made read-only.
 */
void mem_private_runs(int pagemap, uint64_t start, uint64_t end,
		      void (*fn)(void *ctx, uint64_t start, uint64_t end),
		      void *ctx);

/* Read exactly LEN bytes: 0, or -1. */
int mem_read_all(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Write LEN bytes to writable memory (stacks, data): 0 or -1. */
int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* Open /proc/PID/mem read-write; returns the fd or -1 (message printed). */
int mem_open(pid_t pid);

/* Write LEN bytes through an fd from mem_open (works on text): 0 or -1. */
int mem_poke(int memfd, uint64_t addr, const void *buf, size_t len);

#endif
