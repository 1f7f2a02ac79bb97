/* memio.c - bulk reads and writes of a traced process's memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "target/memio.h"
#include "base/util.h"

#define PAGE 4096ull
#define MAX_IOV 64

ssize_t mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		struct iovec local, remote[MAX_IOV];
		uint64_t a = addr + done;
		size_t want = 0, n = 0;
		ssize_t got;

		/* one remote iovec per page: a short read at an unmapped page */
		while (n < MAX_IOV && done + want < len) {
			uint64_t p = a + want;
			size_t chunk = PAGE - (p & (PAGE - 1));

			if (chunk > len - done - want)
				chunk = len - done - want;
			remote[n].iov_base = (void *)(uintptr_t)p;
			remote[n].iov_len = chunk;
			want += chunk;
			n++;
		}
		local.iov_base = (char *)buf + done;
		local.iov_len = want;
		got = process_vm_readv(pid, &local, 1, remote, n, 0);
		if (got <= 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)got;
		if ((size_t)got < want)
			break;
	}
	return (ssize_t)done;
}

/* Bit 63 of a pagemap entry: present; bit 62: swapped; bit 61: a file
 * page or shared anonymous memory. */
#define PM_DATA (3ull << 62)
#define PM_FILE (1ull << 61)
#define PM_BATCH 512

ssize_t mem_read_resident(pid_t pid, int pagemap, uint64_t addr, void *buf,
			  size_t len)
{
	uint64_t pm[PM_BATCH], first = addr / PAGE;
	size_t done = 0;

	if (pagemap < 0)
		return mem_read(pid, addr, buf, len);
	while (done < len) {
		uint64_t a = addr + done, page = a / PAGE;
		size_t npages = (a + (len - done) - 1) / PAGE - page + 1, k, run;
		ssize_t got;

		if (npages > PM_BATCH)
			npages = PM_BATCH;
		if (pread(pagemap, pm, npages * 8, (off_t)(page * 8)) !=
		    (ssize_t)(npages * 8))
			return page == first ? mem_read(pid, addr, buf, len) :
			       (ssize_t)done;
		for (k = 0; k < npages && done < len; k += run) {
			int data = !!(pm[k] & PM_DATA);
			uint64_t from = addr + done, to;

			for (run = 1; k + run < npages &&
			     !!(pm[k + run] & PM_DATA) == data; run++)
				;
			to = (page + k + run) * PAGE;
			if (to > addr + len)
				to = addr + len;
			if (!data) {
				memset((char *)buf + done, 0, to - from);
				done += to - from;
				continue;
			}
			got = mem_read(pid, from, (char *)buf + done, to - from);
			if (got > 0)
				done += (size_t)got;
			if (got != (ssize_t)(to - from))
				return done ? (ssize_t)done : -1;
		}
	}
	return (ssize_t)done;
}

uint64_t mem_untouched(int pagemap, uint64_t addr, uint64_t len)
{
	uint64_t pm[PM_BATCH], page = addr / PAGE, end = addr + len;
	uint64_t n = -(addr % PAGE);	/* the first page counts from addr */
	size_t k;

	if (pagemap < 0)
		return 0;
	while (page * PAGE < end) {
		uint64_t left = (end - page * PAGE + PAGE - 1) / PAGE;
		size_t want = left > PM_BATCH ? PM_BATCH : (size_t)left;

		if (pread(pagemap, pm, want * 8, (off_t)(page * 8)) != (ssize_t)(want * 8))
			break;
		for (k = 0; k < want && !(pm[k] & PM_DATA); k++)
			n += PAGE;
		if (k < want)
			break;
		page += want;
	}
	if ((int64_t)n <= 0)
		return 0;
	return n > len ? len : n;
}

void mem_private_runs(int pagemap, uint64_t start, uint64_t end,
		      void (*fn)(void *ctx, uint64_t start, uint64_t end),
		      void *ctx)
{
	uint64_t pm[PM_BATCH], page = start / PAGE, run = 0;
	size_t k, want;

	if (pagemap < 0)
		return;
	for (; page * PAGE < end; page += want) {
		uint64_t left = (end - page * PAGE + PAGE - 1) / PAGE;

		want = left > PM_BATCH ? PM_BATCH : (size_t)left;
		if (pread(pagemap, pm, want * 8, (off_t)(page * 8)) != (ssize_t)(want * 8))
			break;
		for (k = 0; k < want; k++) {
			int priv = (pm[k] & PM_DATA) && !(pm[k] & PM_FILE);
			uint64_t a = (page + k) * PAGE;

			if (priv && !run)
				run = a;
			if (!priv && run) {
				fn(ctx, run, a);
				run = 0;
			}
		}
	}
	if (run)
		fn(ctx, run, page * PAGE < end ? page * PAGE : end);
}

int mem_read_all(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return mem_read(pid, addr, buf, len) == (ssize_t)len ? 0 : -1;
}

int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int mem_open(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return error("cannot open %s: %s", path, strerror(errno));
	return fd;
}

int mem_poke(int memfd, uint64_t addr, const void *buf, size_t len)
{
	return pwrite(memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}
