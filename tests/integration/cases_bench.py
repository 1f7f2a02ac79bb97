# The benchmark programs that exercise ptleak's library directly still run
# (exec'd in run.py's namespace: case, run_cmd, Check, Fail, BUILD, ROOT
# are run.py's).  No time is checked here: make bench measures.


def bench_program(name):
    """BUILD/bench/NAME, built by bench/Makefile (as make bench does).
    Make is given paths relative to bench/ (make cannot name a file whose
    path holds a space; the checkout's may)."""
    bench = os.path.join(ROOT, "bench")
    b = os.path.relpath(BUILD, bench)
    rel = os.path.join(b, "bench", name)
    rc, _, err = run_cmd(["make", "-s", "-C", bench, "B=" + b, rel], timeout=300)
    if rc != 0:
        raise Fail("make %s failed (%d): %s" % (rel, rc, err.strip()[-300:]))
    return os.path.join(BUILD, "bench", name)


@case("bench_ring_blob")
def t_bench_ring_blob():
    # ring_bench maps the hook blob as ptleak does and fills its context
    # word; it stored the ring there instead of a struct rec_conf and
    # died of SIGSEGV at its first blob call.  10^4 records per producer.
    ck = Check()
    rc, out, err = run_cmd([bench_program("ring_bench"), "10000"])
    ck.eq("ring_bench 10000: exit status (stderr %r)" % err.strip()[-200:], rc, 0)
    rows = [l.split()[:4] for l in out.splitlines()
            if l.startswith(("inline ring_produce", "blob rec_record"))]
    ck.eq("ring_bench rows (producer, threads)", [" ".join(r[:3]) for r in rows],
          ["inline ring_produce 1", "inline ring_produce 4",
           "blob rec_record 1", "blob rec_record 4"])
    ck.true("ring_bench: no 'counts exact' line in %r" % out[-300:],
            "ring bench: counts exact" in out)
    ck.done()
