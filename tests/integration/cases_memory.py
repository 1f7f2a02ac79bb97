# ptleak's own memory per live block (issue 26, part 2): the table,
# the stacks, the scan and the grouping of a report, launched and
# attached, at most MEM_PER_BLOCK bytes a live block above a fixed
# amount.  Measured as the slope of ptleak's peak RSS (getrusage of
# ptleak itself, not the target's) between 10^5 and 10^6 live blocks of
# h_many_blocks, so that the fixed part (code, libraries, read-ahead
# windows) cancels.  (exec'd in run.py's namespace.)

MEM_PER_BLOCK = 48
MEM_SMALL, MEM_BIG = 100000, 1000000


def mem_classes(rep):
    return {k: v["blocks"] for k, v in rep["heap"]["summary"].items()
            if k in ("definitely_lost", "indirectly_lost", "still_reachable")}


def mem_want(n, extra=0):
    """EXTRA: more still reachable blocks (attached: stdio's two buffers)."""
    return {"definitely_lost": n // 16, "indirectly_lost": n // 16,
            "still_reachable": n - n // 8 + 1 + extra}


def mem_slope(ck, what, kib):
    """KIB: {n: peak RSS in KiB}; the bytes a block between the two."""
    per = (kib[MEM_BIG] - kib[MEM_SMALL]) * 1024.0 / (MEM_BIG - MEM_SMALL)
    ck.true("%s: ptleak's peak RSS %d KiB at %d blocks, %d KiB at %d: %.1f bytes "
            "a live block (%d at most)" % (what, kib[MEM_SMALL], MEM_SMALL, kib[MEM_BIG],
                                           MEM_BIG, per, MEM_PER_BLOCK),
            per <= MEM_PER_BLOCK)


@case("memory_per_block_launch")
def t_memory_per_block_launch():
    """ptleak ./h_many_blocks N, report at exit (scan included): ptleak's
    peak RSS (PTLEAK_DEBUG=stats: getrusage of ptleak) grows by at most
    48 bytes a live block; the classes exact."""
    tgt = need_target("h_many_blocks")
    ck = Check()
    env = dict(target_env(), PTLEAK_DEBUG="stats")
    kib = {}
    for n in (MEM_SMALL, MEM_BIG):
        r = ptleak([tgt, str(n)], env=env, show_reachable=False, timeout=120)
        rep = need_json(r)
        ck.eq("%d blocks: exit status" % n, r.rc, 0)
        ck.eq("%d blocks: classes" % n, mem_classes(rep), mem_want(n))
        m = re.search(r"ptleak-debug: ptleak's peak RSS: (\d+) KiB", r.stderr)
        ck.true("%d blocks: ptleak's peak RSS said" % n, m is not None)
        kib[n] = int(m.group(1)) if m else 0
    if all(kib.values()):
        mem_slope(ck, "launched", kib)
    ck.done()


@case("memory_per_block_attach")
def t_memory_per_block_attach():
    """ptleak -p on h_many_blocks N once its heap is built (the census
    finds every block), SIGINT: a report, detach.  ptleak's peak RSS
    (wait4 of ptleak), or its report child's if larger (the detach's
    report is made from a snapshot by a fork of ptleak:
    PTLEAK_DEBUG=stats's "children's peak RSS"), grows by at most 48
    bytes a live block; the classes exact, every block from the
    census."""
    tgt = need_target("h_many_blocks")
    ck = Check()
    kib = {}
    for n in (MEM_SMALL, MEM_BIG):
        p = subprocess.Popen([tgt, str(n), "wait"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=target_env(), bufsize=0)
        out = Lines(p.stdout)
        at = None
        try:
            out.expect("ready", 60)
            # (no snapshot-check: a held report's scan in ptleak itself)
            with ptleak_debug("stats"):
                at = Attached(p.pid)
            at.signal(signal.SIGINT)
            _, status, ru = os.wait4(at.p.pid, 0)
            kids = [int(m.group(1)) for m in (re.search(r"children's peak RSS: (\d+) KiB", l)
                                              for l in at.err.rest()) if m]
            ck.eq("%d blocks: the children's peak RSS said" % n, len(kids), 1)
            at.p.returncode = os.waitstatus_to_exitcode(status)
            ck.eq("%d blocks: ptleak's exit status" % n, at.p.returncode, 0)
            with open(at.json, encoding="utf-8") as f:
                rep = check_shape(json.load(f))
            # + stdout's and stdin's buffers (printf, fgets; stdin's may
            # not be there yet when the report is made)
            stdio = rep["heap"]["in_use"]["blocks"] - n - 1
            ck.true("%d blocks: stdio's buffers: %d" % (n, stdio), stdio in (1, 2))
            ck.eq("%d blocks: classes" % n, mem_classes(rep), mem_want(n, stdio))
            # stdin's buffer may come after the attach (fgets)
            ck.true("%d blocks: from the census: %d" % (n, rep["heap"]["census"]["blocks"]),
                    rep["heap"]["census"]["blocks"] in (n + 2, n + 3))
            kib[n] = max([ru.ru_maxrss] + kids)
            p.stdin.write(b"go\n")
            ck.eq("%d blocks: target's exit status" % n, p.wait(timeout=30), 0)
        finally:
            if at and at.p.poll() is None:
                at.p.kill()
                at.p.wait()
            if p.poll() is None:
                p.kill()
                p.wait()
    if len(kib) == 2:
        mem_slope(ck, "attached", kib)
    ck.done()
