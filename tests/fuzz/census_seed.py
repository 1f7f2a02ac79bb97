#!/usr/bin/env python3
"""Seeds for fuzz_census (its format: fuzz_census.c) from a real glibc
heap: test_census's child (tests/unit/test_census.c: blocks kept, freed
into tcache, fastbins and bins, mmapped chunks, a thread with its own
arena) in MODE, its maps and memory read from /proc while it waits.

    python3 tests/fuzz/census_seed.py BUILD OUT [MODE]

BUILD is the build directory (build/tests/test_census is run), OUT the
file written; MODE one of the child's (plain, fastbin-cycle,
tcache-cycle, corrupt-size; default plain), or types: plain, its first
live block made a C++ object (its first word a vtable of shop::Gadget in
an object's read-only data, a map added at 0x10000000).  Only what the census reads
is kept: libc's data, [heap], anonymous memory, libc's first map; each
map's bytes up to its last non-zero one."""
import os
import struct
import subprocess
import sys

KIND_ANON, KIND_LIBC_DATA, KIND_HEAP, KIND_OBJ_RO, KIND_LIBC_FIRST = 0, 1, 2, 4, 5
# types: the read-only map: a typeinfo at +0 (its name at +0x200), the
# vtable at +0x100 (the typeinfo's address just before it)
RO = 0x10000000


def ro_map():
    m = bytearray(4096)
    struct.pack_into("<2Q", m, 0, RO + 0x100, RO + 0x200)
    struct.pack_into("<2Q", m, 0xf8, RO, RO + 0x300)
    m[0x200:0x200 + 15] = b"N4shop6GadgetE\0"
    return bytes(m)
MAX_TOTAL = 8 << 20


def maps_of(pid):
    for line in open("/proc/%d/maps" % pid):
        f = line.split(None, 5)
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        path = f[5].strip() if len(f) > 5 else ""
        yield lo, hi, f[1], int(f[2], 16), path


def kind_of(perms, offset, path):
    base = os.path.basename(path)
    libc = base.startswith("libc.so") or base.startswith("libc-")
    if perms == "rw-p":
        if path == "[heap]":
            return KIND_HEAP
        if not path:
            return KIND_ANON
        if libc:
            return KIND_LIBC_DATA
    if libc and offset == 0:
        return KIND_LIBC_FIRST
    return None


def split(found, most=32):
    """Each map cut where a run of non-zero pages starts after zeros, the
    pieces adjacent (what the census reads is the same), each piece's
    bytes up to its last non-zero one; the smallest cuts undone until
    MOST maps are left."""
    cuts = []       # (zero bytes saved, map index, offset)
    for i, (lo, hi, kind, data) in enumerate(found):
        prev_zero = False
        for off in range(0, len(data), 4096):
            zero = not data[off:off + 4096].strip(b"\0")
            if prev_zero and not zero:
                cuts.append((off, i, off))
            prev_zero = zero
    keep = sorted(cuts, reverse=True)[:max(0, most - len(found))]
    at = {}
    for _, i, off in keep:
        at.setdefault(i, []).append(off)
    for i, (lo, hi, kind, data) in enumerate(found):
        edges = [0] + sorted(at.get(i, [])) + [hi - lo]
        for a, b in zip(edges, edges[1:]):
            yield lo + a, lo + b, kind, data[a:b].rstrip(b"\0")


def main():
    build, out = sys.argv[1], sys.argv[2]
    mode = sys.argv[3] if len(sys.argv) > 3 else "plain"
    types = mode == "types"
    if types:
        mode = "plain"
    r, w = os.pipe()
    # the child tells on its fd 3
    p = subprocess.Popen(["sh", "-c", 'exec 3>&%d %d>&-; exec "$0" --child "$1"' % (w, w),
                          os.path.join(build, "tests", "test_census"), mode],
                         stdin=subprocess.PIPE, pass_fds=(w,))
    os.close(w)
    rep = b""
    while len(rep) < 32:
        got = os.read(r, 4096)
        if not got:
            sys.exit("census_seed: the child said nothing")
        rep += got
    nthreads = struct.unpack_from("<Q", rep, 8)[0]
    tps = struct.unpack_from("<2Q", rep, 16)[:nthreads]
    while len(rep) < 40:
        rep += os.read(r, 4096)
    first = struct.unpack_from("<Q", rep, 32)[0]     # addr[0]
    found = []
    with open("/proc/%d/mem" % p.pid, "rb", buffering=0) as mem:
        for lo, hi, perms, offset, path in maps_of(p.pid):
            kind = kind_of(perms, offset, path)
            if kind is None:
                continue
            if hi - lo > MAX_TOTAL // 2:
                # a thread's stack: its top (the thread's TLS and TCB)
                tp = [t for t in tps if lo <= t < hi]
                if not tp:
                    continue
                lo = max(lo, (tp[0] & ~4095) - (64 << 10))
            data = b""
            if kind != KIND_LIBC_FIRST:
                mem.seek(lo)
                data = mem.read(hi - lo)
            if types and lo <= first < hi:
                data = data[:first - lo] + struct.pack("<Q", RO + 0x100) + \
                    data[first - lo + 8:]
            found.append((lo, hi, kind, data))
    if types:
        found.insert(0, (RO, RO + 4096, KIND_OBJ_RO, ro_map()))
    p.stdin.close()
    p.kill()
    p.wait()
    maps, blobs, total = [], [], 0
    for lo, hi, kind, data in split(found):
        if total + (hi - lo) > MAX_TOTAL:
            continue
        total += hi - lo
        maps.append(struct.pack("<QIIB", lo, hi - lo, len(data), kind))
        blobs.append(data)
    with open(out, "wb") as f:
        f.write(bytes([len(maps), len(tps)]))
        f.write(b"".join(maps))
        f.write(b"".join(struct.pack("<Q", t) for t in tps))
        f.write(b"".join(blobs))


if __name__ == "__main__":
    main()
