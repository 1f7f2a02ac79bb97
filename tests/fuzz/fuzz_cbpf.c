/*
 * fuzz_cbpf - the classic-BPF interpreter (cbpf.c) that runs the target's
 * seccomp filters before ptleak injects a system call.
 *
 * Input: 64 bytes of struct seccomp_data (fewer: zero-filled), then the
 * program, 8 bytes an instruction (at most 4,096, BPF_MAXINSNS).
 * Returns the program's return value, or -1 when cbpf_run refuses it
 * (the reason must then be a non-empty string).
 */
#include <linux/filter.h>

#include "fuzz.h"
#include "target/cbpf.h"

FUZZ(cbpf)
{
	struct sock_filter prog[BPF_MAXINSNS];
	uint8_t sd[64] = { 0 };
	char err[256];
	uint32_t ret = 0;
	size_t n;

	memcpy(sd, data, size < 64 ? size : 64);
	n = size > 64 ? (size - 64) / sizeof(prog[0]) : 0;
	if (n > BPF_MAXINSNS)
		n = BPF_MAXINSNS;
	if (n)
		memcpy(prog, data + 64, n * sizeof(prog[0]));
	err[0] = '\0';
	if (cbpf_run(prog, n, sd, sizeof(sd), &ret, err, sizeof(err)) < 0) {
		if (!err[0] || !memchr(err, '\0', sizeof(err)))
			abort();
		return -1;
	}
	return ret;
}
