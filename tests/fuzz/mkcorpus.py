#!/usr/bin/env python3
"""Write the hand-made inputs of the fuzzers' regression corpus
(tests/fuzz/corpus/NAME/hand-*) and their expected results into each
NAME/EXPECT (the lines of other files are kept).  The values come from
the harnesses' comments and ring.h/rechook.h; run it again after a
change of the harness formats:  python3 tests/fuzz/mkcorpus.py"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# ring.h, rechook.h, heap.h
COMMITTED, WRITING, OPEN, AMENDING, AMENDED = 2, 1, 4, 5, 6
REC_ALLOC, REC_FREE, REC_REALLOC_BEGIN, REC_REALLOC_END, REC_MEMALIGN, \
    REC_FD_OPEN, REC_FD_CLOSE = range(16, 23)
AF_MALLOC, AF_REALLOC = 0, 2
KIND_MALLOC, KIND_REALLOC, KIND_FD_RET = 1, 3, 32


def fn(kind, tag):
    """REC_FN_TAGGED(kind, 1, tag): fuzz_ring.c's object 1."""
    return kind | 1 << 8 | tag << 16


def rec(rtype, words, npcs=0, state=COMMITTED, length=None):
    if length is None:
        length = 8 * (len(words) + 1)
    hdr = length | state << 32 | (rtype & 0xff) << 40 | (npcs & 0xffff) << 48
    return struct.pack("<%dQ" % (len(words) + 1), hdr, *words)


def ft(f, tid=7):
    """A record's first word: fn, tid in the high half."""
    return f | tid << 32


def alloc(addr, size, t=1):
    # fn|tid time result a0 a1 hash, one pc (the caller, in main)
    return rec(REC_ALLOC, [ft(fn(KIND_MALLOC, AF_MALLOC)), t, addr, size, 0,
                           0x1234 + addr, 0x400100], npcs=1)


def free(addr, t):
    return rec(REC_FREE, [ft(fn(4, 4)), t, addr])


def ring_inputs():
    big = 0x7fffffff
    yield "hand-alloc", alloc(0x10000, 100), 1
    yield "hand-npcs-over-words", rec(REC_ALLOC, [ft(fn(KIND_MALLOC, AF_MALLOC)), 1, 0x10000],
                                      npcs=9), 1001
    yield "hand-unknown-type", rec(99, [ft(fn(KIND_MALLOC, AF_MALLOC)), 1, 0x10000]), 1001
    yield "hand-unknown-fn", rec(REC_FREE, [ft(0xdead), 1, 0x10000]), 1001
    yield "hand-short-alloc", rec(REC_ALLOC, [ft(fn(KIND_MALLOC, AF_MALLOC)), 1, 0x10000]), 1001
    yield "hand-len-12", rec(REC_FREE, [ft(fn(4, 4)), 1], length=12), -1
    yield "hand-len-8192", rec(REC_FREE, [ft(fn(4, 4)), 1], length=8192), -1
    # the header's tail (word 16) scribbled: ring stopped, nothing taken
    yield "hand-tail-scribbled", bytes([0x80 | 16]) + struct.pack("<Q", 24) + \
        alloc(0x10000, 100), -1
    # head (word 8) beyond the ring plus its slack
    yield "hand-head-scribbled", bytes([0x80 | 8]) + struct.pack("<Q", 1 << 40) + \
        alloc(0x10000, 100), -1
    # the lost count (word 25): as many records as 8-byte steps of the
    # head (8 in one 64-byte record) taken, more: the ring written over
    yield "hand-lost-8", bytes([0x80 | 25]) + struct.pack("<Q", 8) + \
        alloc(0x10000, 100), 1
    yield "hand-lost-scribbled", bytes([0x80 | 25]) + struct.pack("<Q", 9) + \
        alloc(0x10000, 100), -1
    yield "hand-magic-scribbled", bytes([0x80 | 0]) + struct.pack("<Q", 0) + \
        alloc(0x10000, 100), -1
    # a descriptor the kernel cannot give (the 120 GB table of issue 28)
    yield "hand-fd-intmax", rec(REC_FD_OPEN, [ft(fn(KIND_FD_RET, 0)), 1, 0, 0, big, big, big,
                                              0x99, 0x400100], npcs=1), 1
    # a hole given up (WRITING), then a record
    yield "hand-hole", rec(REC_FREE, [ft(fn(4, 4)), 1, 0x10000], state=WRITING) + \
        alloc(0x20000, 10), 1
    # an allocation amended by its free (rechook.h, REC_OPEN_HDR; the
    # free's time last, after the pcs), one open and not amended, one
    # being amended (its amendment given up: taken alone), an open record of another type
    # and one with no word for the amendment (both bad)
    base = [ft(fn(KIND_MALLOC, AF_MALLOC)), 1, 0x10000, 100, 0, 0x5678, 0x400100]
    yield "hand-amended", rec(REC_ALLOC, base + [5], npcs=1, state=AMENDED), 1
    yield "hand-open", rec(REC_ALLOC, base + [0], npcs=1, state=OPEN), 1
    yield "hand-amending-hole", rec(REC_ALLOC, base + [0], npcs=1, state=AMENDING) + \
        alloc(0x20000, 10), 2
    yield "hand-open-free", rec(REC_FREE, [ft(fn(4, 4)), 1, 0x10000, 0], state=OPEN), 1001
    yield "hand-open-no-word", rec(REC_ALLOC, base, npcs=1, state=OPEN), 1001
    # 5,000 reallocs begun, none ended: 4,096 kept, 904 counted bad
    yield "hand-realloc-begins", b"".join(
        rec(REC_REALLOC_BEGIN, [ft(fn(KIND_REALLOC, AF_REALLOC)), 1 + i, 0x10000 + 16 * i])
        for i in range(5000)), 5000 + 904 * 1000
    # two lanes (byte 0: 0xc0 | word 31, a pad word of the header): lane
    # 1 (the first half) makes A at time 10 and leaves a hole; lane 0
    # frees A at 20 and makes it again at 30.  Three records taken.
    lane1 = alloc(0x10000, 100, 10) + bytes(32)
    lane0 = free(0x10000, 20) + alloc(0x10000, 200, 30)
    assert len(lane1) == len(lane0)
    yield "hand-two-lanes", bytes([0xc0 | 31]) + bytes(8) + lane1 + lane0, 3
    # the same with lane 0's times garbage (0 and 2^64 - 1): taken all
    lane0 = free(0x10000, 0) + alloc(0x10000, 200, (1 << 64) - 1)
    yield "hand-two-lanes-times", bytes([0xc0 | 31]) + bytes(8) + lane1 + lane0, 3


def cbpf_inputs():
    sd = struct.pack("<iIQ6Q", 39, 0xc000003e, 0, 0, 0, 0, 0, 0, 0)  # getpid
    ret = lambda k: struct.pack("<HBBI", 0x06, 0, 0, k)             # BPF_RET|BPF_K
    ld_nr = struct.pack("<HBBI", 0x20, 0, 0, 0)                      # BPF_LD|W|ABS nr
    jeq = lambda k, jt, jf: struct.pack("<HBBI", 0x15, jt, jf, k)   # BPF_JMP|JEQ|K
    yield "hand-allow", sd + ret(0x7fff0000), 0x7fff0000
    yield "hand-getpid-errno", sd + ld_nr + jeq(39, 0, 1) + ret(0x50001) + ret(0x7fff0000), 0x50001
    yield "hand-no-ret", sd + ld_nr, -1
    yield "hand-jump-out", sd + ld_nr + jeq(39, 200, 0) + ret(0), -1
    yield "hand-load-misaligned", sd + struct.pack("<HBBI", 0x20, 0, 0, 2) + ret(0), -1
    yield "hand-load-past", sd + struct.pack("<HBBI", 0x20, 0, 0, 64) + ret(0), -1
    yield "hand-empty", sd, -1


def fastdec_inputs():
    yield "hand-push-r12", bytes([0x41, 0x54]), 2
    yield "hand-test-je32", bytes([0x48, 0x85, 0xff, 0x0f, 0x84, 0, 1, 0, 0]), 3
    yield "hand-je32", bytes([0x0f, 0x84, 0, 1, 0, 0]), 6
    yield "hand-cmpb-rip", bytes([0x80, 0x3d, 0x10, 0, 0, 0, 0]), 7
    yield "hand-call", bytes([0xe8, 0, 0, 0, 0]), 0
    yield "hand-truncated-jcc", bytes([0x0f, 0x84, 0]), 0


def cfi_inputs():
    # odd: caf 1, daf -8, CIE: def_cfa rsp+8, offset r16 at cfa-8; FDE:
    # advance 1, def_cfa_offset 16, advance 4, def_cfa_offset 8
    cie = bytes([0x0c, 7, 8, 0x90, 1])
    fde = bytes([0x41, 0x0e, 16, 0x44, 0x0e, 8])
    yield "hand-rows", bytes([1, 1, 0xf8, len(cie)]) + cie + fde, 3
    # advance_loc1 0xff then remember_state with no restore: 2 rows; an
    # advance_loc2 past the FDE's range: its first row cut at its end
    yield "hand-advance", bytes([1, 1, 0xf8, len(cie)]) + cie + bytes([0x02, 0xff, 0x0a]), 2
    yield "hand-advance-far", bytes([1, 1, 0xf8, len(cie)]) + cie + \
        bytes([0x03, 0x00, 0x20, 0x0e, 16]), 1
    # .eh_frame_hdr at 0x1000 for an .eh_frame at 0x2000: encodings
    # other than the linkers' (omit) refused; .eh_frame elsewhere or no
    # entry, ignored; two FDEs from 0x3000 (at .eh_frame + 0x10) and
    # 0x5000 (+ 0x40): 8 of the 64 pcs find the first, 44 the second
    yield "hand-hdr-omit", bytes([0, 1, 0x1b, 0xff, 0xff]) + bytes(8), -1
    hdr = lambda frame, n: bytes([0, 1, 0x1b, 0x03, 0x3b]) + struct.pack("<iI", frame, n)
    yield "hand-hdr-elsewhere", hdr(0x2ffc, 1) + struct.pack("<ii", 0x2000, 0x1010), 0
    yield "hand-hdr-empty", hdr(0xffc, 0), 0
    yield "hand-hdr-count-past", hdr(0xffc, 3) + struct.pack("<ii", 0x2000, 0x1010), -1
    yield "hand-hdr-table", hdr(0xffc, 2) + struct.pack("<iiii", 0x2000, 0x1010,
                                                        0x4000, 0x1040), 8 * 0x10 + 44 * 0x40
    yield "hand-hdr-version", bytes([0, 2, 0x1b, 0x03, 0x3b]) + bytes(12), -1


def dwl_cache(unit_of_seq=0, name_off=None, cut=0, nfiles=2):
    """A line table cache file's data (dwline.c, struct lines_hdr and
    after): one DWARF 4 unit, file 1 "a.c", a sequence from 0x1000 to
    0x1010 whose one row says line 10 (fuzz_dwlcache: 0x1000 and 0x1008
    give 10 each)."""
    std = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])
    hdr_rest = bytes([1, 1, 1, 0xfb, 14, 13]) + std + b"\0" + b"a.c\0\0\0\0" + b"\0"
    prog = (bytes([0, 9, 2]) + struct.pack("<Q", 0x1000) + bytes([3, 9, 1, 2, 0x10])
            + bytes([0, 1, 1]))
    body = struct.pack("<HI", 4, len(hdr_rest)) + hdr_rest + prog
    line = struct.pack("<I", len(body)) + body
    prog_off = len(line) - len(prog)
    name = line.index(b"a.c\0") if name_off is None else name_off
    unit = struct.pack("<QQIIiiQQ", prog_off, len(line), 1, 13, -5, 14, 0, nfiles) + \
        bytes([0] + list(std) + [0] * (256 - 13))
    seq = struct.pack("<QQQQ", 0x1000, 0x1010, prog_off, unit_of_seq)
    names = struct.pack("<QQ", 0, 1 + name)
    data = struct.pack("<5Q", len(line), 0, 1, 1, 2) + line + unit + seq + names
    return data[:len(data) - cut]


def text_inputs():
    yield "supp", "hand-leak", b"leak:foo\nfd:bar*\n", 2
    yield "supp", "hand-no-prefix", b"foo\n", -1
    yield "supp", "hand-nul", b"leak:a\0b\n", -1
    yield "supp", "hand-vg", (b"{\n   name\n   Memcheck:Leak\n   match-leak-kinds: definite\n"
                              b"   fun:malloc\n   ...\n   fun:main\n}\n"), 1
    yield "supp", "hand-vg-unclosed", b"{\n   name\n   Memcheck:Leak\n   fun:malloc\n", -1
    yield "elfsyms", "hand-empty", b"", -2
    yield "dwline", "hand-not-elf", b"\x7fELF\x02\x01\x01" + bytes(57), -1
    yield "unwtab", "hand-not-elf", b"garbage", -1
    yield "dwlcache", "hand-one-row", dwl_cache(), 20
    yield "dwlcache", "hand-empty", b"", -1
    yield "dwlcache", "hand-unit-past", dwl_cache(unit_of_seq=1), -1
    yield "dwlcache", "hand-name-past", dwl_cache(name_off=10000), -1
    yield "dwlcache", "hand-files-past", dwl_cache(nfiles=3), -1
    yield "dwlcache", "hand-cut", dwl_cache(cut=8), -1


def write(name, inputs):
    d = os.path.join(HERE, "corpus", name)
    os.makedirs(d, exist_ok=True)
    exp = os.path.join(d, "EXPECT")
    keep = []
    if os.path.exists(exp):
        with open(exp) as f:
            keep = [l for l in f if not l.startswith("hand-")]
    lines = []
    for fname, data, want in inputs:
        with open(os.path.join(d, fname), "wb") as f:
            f.write(data)
        lines.append("%s %d\n" % (fname, want))
    with open(exp, "w") as f:
        f.writelines(sorted(lines + keep))


def main():
    write("ring", ring_inputs())
    write("cbpf", cbpf_inputs())
    write("fastdec", fastdec_inputs())
    write("cfi", cfi_inputs())
    by = {}
    for name, fname, data, want in text_inputs():
        by.setdefault(name, []).append((fname, data, want))
    for name, inputs in by.items():
        write(name, inputs)


if __name__ == "__main__":
    main()
