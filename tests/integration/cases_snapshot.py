# Live reports from a copy-on-write snapshot (issue 26, SPEC.md "Live
# reports and the target's pause"): a live report holds the target only
# to clone it; the report is made from the clone while the target runs.
# Targets: r_snapwatch (a heartbeat thread that measures its stalls, a
# main loop that counts SIGCHLD and reaps children, a file written if its
# code ever runs in a copy), c_census and c_census_cxx (quiet heaps whose
# reports must be equal with and without a snapshot).  Exec'd in run.py's
# namespace (case, Check, Attached, Live from cases_census.py, ...).


def usable(n):
    """glibc's usable size of a block of N bytes (the census's size)."""
    return max(32, (n + 8 + 15) & ~15) - 8


# r_snapwatch 1000's definitely lost blocks, made before the attach
# (usable sizes): its 500 dropped blocks and its 100-byte leak
SNAPWATCH_LOST = {"bytes": sum(usable(32 + i % 48) for i in range(1, 1000, 2)) + usable(100),
                  "blocks": 501}


class Watch(Live):
    """r_snapwatch N [MODE] running; MARK: the file its code writes if it
    ever runs in a copy of itself."""

    def __init__(self, n, mode=None, preexec=None, exe=None):
        self.d = tempfile.mkdtemp(prefix="ptleak-snap.")
        os.chmod(self.d, 0o777)
        self.mark = os.path.join(self.d, "ran-in-a-copy")
        env = target_env()
        env["SNAPWATCH_MARK"] = self.mark
        argv = [exe or need_target("r_snapwatch"), str(n)] + ([mode] if mode else [])
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env, start_new_session=True,
                                  preexec_fn=preexec or _child_setup,
                                  cwd=self.d)
        self.out = Lines(self.p.stdout)
        self.out.expect("ready", 60)

    def stats(self):
        """(sigchld, reaped, children, longest gap in us)."""
        self.send("stats")
        m = re.fullmatch(r"sigchld (\d+) reaped (\d+) children (-?\d+) gap_us (\d+)",
                         self.out.expect(r"sigchld .*").group(0))
        return tuple(int(x) for x in m.groups())

    def reset(self):
        self.send("reset")
        self.out.expect("reset")


def no_children_soon(ck, w, what, timeout=5.0):
    """After a report: within TIMEOUT, the target has no child left, not
    even a zombie (ptleak reaps its snapshot after the report)."""
    end = time.time() + timeout
    while True:
        st = w.stats()
        if st[2] == 0 or time.time() > end:
            break
        time.sleep(0.05)
    ck.eq("%s: the target's children" % what, st[2], 0)
    return st


def snap_report(ck, at, number, snapshot, what):
    """Report NUMBER; its JSON says whether it was made from a snapshot
    (SNAPSHOT) and how long the target was held."""
    rep = at.report(number, timeout=60)
    ck.eq("%s: report.snapshot" % what, rep["report"]["snapshot"], snapshot)
    ck.true("%s: report.pause_ms %r is a number >= 0" % (what, rep["report"].get("pause_ms")),
            isinstance(rep["report"].get("pause_ms"), (int, float)) and
            rep["report"]["pause_ms"] >= 0)
    return rep


def held_lines(at):
    """The lines of AT's text reports saying no snapshot was had, their
    times "(T ms)"."""
    with open(at.txt) as f:
        return [re.sub(r"\(\d+\.\d ms\)", "(T ms)", l.split(": ", 1)[1])
                for l in f.read().splitlines() if "no snapshot of the process" in l]


def comparable(rep):
    """What must be equal in two reports of the same quiet heap: records
    (kind, bytes, blocks, before_attach, stack), summary, in use, totals,
    census, descriptors."""
    h = rep["heap"]
    recs = sorted((r["kind"], r["bytes"], r["blocks"], r["before_attach"],
                   r.get("indirect_bytes"), tuple(f["function"] for f in r["stack"]))
                  for r in h["records"])
    fds = sorted((f["fd"], f.get("kind"), f.get("target")) for f in (rep.get("fds") or {}).get("records", []))
    return {"records": recs, "summary": h["summary"], "in_use": h["in_use"],
            "totals": h["totals"], "census": h["census"], "fds": fds}


def snapshot_equal(target):
    """TARGET (a quiet heap) attached twice: a live report and the detach
    report made from snapshots, then the same with PTLEAK_DEBUG=no-snapshot
    (every thread held for the whole scan, the report saying so): the
    reports are equal."""
    ck = Check()
    t = Live(target)
    reps = {}
    try:
        t.out.expect("ready")
        for snap in (True, False):
            with ptleak_debug(os.environ.get("PTLEAK_DEBUG") if snap else "no-snapshot"):
                at = Attached(t.p.pid, opts=["--show-reachable"])
            try:
                at.signal(signal.SIGUSR1)
                live = snap_report(ck, at, 1, snap, "live, snapshot %s" % snap)
                at.signal(signal.SIGINT)
                ck.eq("ptleak's exit status", at.wait(), 0)
                detach = snap_report(ck, at, 2, snap, "detach, snapshot %s" % snap)
                ck.eq("ptleak's stderr", at.err.rest(), [])
                ck.eq("text: the line of a report made without a snapshot",
                      held_lines(at),
                      [] if snap else
                      ["no snapshot of the process (PTLEAK_DEBUG=no-snapshot): its "
                       "threads were held for the whole scan (T ms)"] * 2)
                reps[snap] = (comparable(live), comparable(detach))
            finally:
                at.kill()
        ck.true("a live report has records", len(reps[True][0]["records"]) > 3)
        ck.eq("live report, snapshot and not", reps[True][0], reps[False][0])
        ck.eq("detach report, snapshot and not", reps[True][1], reps[False][1])
        t.quit(ck)
    finally:
        t.kill()
    ck.done()


@case("snapshot_equal_census", engines=True)
def t_snapshot_equal_census():
    snapshot_equal("c_census")


@case("snapshot_equal_cxx", engines=True)
def t_snapshot_equal_cxx():
    snapshot_equal("c_census_cxx")


@case("snapshot_invisible", engines=True)
def t_snapshot_invisible():
    """Three live reports and a detach from snapshots of r_snapwatch: the
    clone never runs the program's code (no file written), the program
    sees no SIGCHLD, reaps no child with waitpid(-1, WNOHANG), and has no
    child, not even a zombie, after each report; the records are the
    program's (its 500 dropped blocks... and its leak)."""
    ck = Check()
    w = Watch(1000)
    at = None
    try:
        at = Attached(w.p.pid)
        for n in (1, 2, 3):
            at.signal(signal.SIGUSR1)
            rep = snap_report(ck, at, n, True, "report %d" % n)
            st = no_children_soon(ck, w, "report %d" % n)
            ck.eq("report %d: SIGCHLD, reaped" % n, st[:2], (0, 0))
            lost = rep["heap"]["summary"]["definitely_lost"]
            ck.eq("report %d: definitely lost" % n, lost,
                  SNAPWATCH_LOST)
        at.signal(signal.SIGINT)
        ck.eq("ptleak's exit status", at.wait(), 0)
        snap_report(ck, at, 4, True, "detach report")
        ck.eq("ptleak's stderr", at.err.rest(), [])
        st = no_children_soon(ck, w, "after the detach")
        ck.eq("after the detach: SIGCHLD, reaped", st[:2], (0, 0))
        ck.eq("the program's code ran in a copy", os.path.exists(w.mark), False)
        ck.eq("TracerPid", tracer_pid(w.p.pid), 0)
        w.quit(ck)
    finally:
        if at:
            at.kill()
        w.kill()
    ck.done()


@case("snapshot_stall", engines=True)
def t_snapshot_stall():
    """r_snapwatch with 2,000,000 blocks: the longest stall its 1 ms
    heartbeat sees during a live report made from a snapshot is a small
    part of the stall of the same report made with every thread held
    (PTLEAK_DEBUG=no-snapshot): a ratio, not a time.  The medians of
    three reports each way (a loaded machine's scheduling stretched a
    snapshot's pause of ~10 ms to 264 ms once in a few hundred runs)."""
    ck = Check()
    gaps = {}
    for snap in (True, False):
        w = Watch(2000000)
        at = None
        try:
            # a pause measured: no snapshot-check (its held report is
            # made in the pause)
            with ptleak_debug(None if snap else "no-snapshot"):
                at = Attached(w.p.pid)
            time.sleep(0.2)
            got = []
            for n in (1, 2, 3):
                w.reset()
                at.signal(signal.SIGUSR1)
                snap_report(ck, at, n, snap, "snapshot %s, report %d" % (snap, n))
                time.sleep(0.1)	# the heartbeat ticked since (a held
                # report is written before its threads run again)
                got.append(no_children_soon(ck, w, "snapshot %s" % snap, 30)[3])
            gaps[snap] = sorted(got)[len(got) // 2]
            at.signal(signal.SIGINT)
            ck.eq("ptleak's exit status", at.wait(60), 0)
            w.quit(ck)
        finally:
            if at:
                at.kill()
            w.kill()
    ck.true("longest stall with a snapshot %d us, without %d us: want 5 times less"
            % (gaps[True], gaps[False]), gaps[True] * 5 < gaps[False])
    ck.done()


def proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


@case("snapshot_sigkill", engines=True)
def t_snapshot_sigkill():
    """SIGKILL to ptleak while its report child scans a snapshot of a
    2,000,000-block heap: the snapshot dies with it (no child of the
    program runs on: a zombie at most), the report child too, and the
    program runs on."""
    ck = Check()
    w = Watch(2000000)
    at = None
    try:
        at = Attached(w.p.pid)
        at.signal(signal.SIGUSR1)
        # the snapshot exists: the program has a child
        end = time.time() + 30
        while w.stats()[2] == 0 and time.time() < end:
            time.sleep(0.01)
        kids = child_pids(at.p.pid)	# its report child, its guardian
        at.p.kill()
        at.p.wait()
        time.sleep(0.5)
        states = []
        for tid in os.listdir("/proc/%d/task" % w.p.pid):
            with open("/proc/%d/task/%s/children" % (w.p.pid, tid)) as f:
                states += [proc_state(int(c)) for c in f.read().split()]
        ck.eq("the program's children's states", [s for s in states if s not in ("Z", None)], [])
        end = time.time() + 5
        while any(proc_state(k) not in (None, "Z") for k in kids) and time.time() < end:
            time.sleep(0.05)
        ck.eq("ptleak's children left running", [k for k in kids if proc_state(k) not in (None, "Z")], [])
        ck.eq("TracerPid", tracer_pid(w.p.pid), 0)
        # it runs on (what the guardian puts back is its own case's)
        ck.eq("SIGCHLD, reaped", w.stats()[:2], (0, 0))
        ck.eq("the program's code ran in a copy", os.path.exists(w.mark), False)
        w.quit(ck)
    finally:
        if at:
            at.kill()
        w.kill()
    ck.done()


def snapshot_refused(mode, want_why, user=None):
    """r_snapwatch MODE refuses the snapshot's clone: the live report is
    still made, every thread held, with the line; the leak is found."""
    ck = Check()
    exe, pre = None, None
    if user is not None:
        exe, pre = user_copy(need_target("r_snapwatch")), as_user(user)
    w = Watch(1000, mode, pre, exe)
    at = None
    try:
        at = Attached(w.p.pid)
        at.signal(signal.SIGUSR1)
        rep = snap_report(ck, at, 1, False, mode)
        ck.eq("%s: definitely lost" % mode, rep["heap"]["summary"]["definitely_lost"],
              SNAPWATCH_LOST)
        at.signal(signal.SIGINT)
        ck.eq("ptleak's exit status", at.wait(), 0)
        ck.eq("ptleak's stderr", at.err.rest(), [])
        held = held_lines(at)
        ck.eq("%s: the lines" % mode, held,
              ["no snapshot of the process (%s): its threads were held for the "
               "whole scan (T ms)" % want_why] * 2)
        st = w.stats()
        ck.eq("%s: SIGCHLD, reaped, children" % mode, st[:3], (0, 0, 0))
        w.quit(ck)
    finally:
        if at:
            at.kill()
        w.kill()
    ck.done()


@case("snapshot_refused_seccomp")
def t_snapshot_refused_seccomp():
    snapshot_refused("noclone", "it runs under a seccomp filter that would "
                     "make fail ptleak's clone")


@case("snapshot_refused_nproc")
def t_snapshot_refused_nproc():
    snapshot_refused("nproc", "its clone failed: Resource temporarily "
                     "unavailable (a process or pids limit)", user=NOBODY)


def shared_records(rep):
    """(kind, bytes, blocks, the function calling the allocator) of every
    record."""
    return sorted((r["kind"], r["bytes"], r["blocks"], r["stack"][0]["function"])
                  for r in rep["heap"]["records"])


def snapshot_shared(mode):
    """r_snapshared MODE (a MAP_SHARED | MAP_ANONYMOUS region of 1 MiB)
    attached, its blocks made, a live report and the detach's: clean (the
    region points at no block) has both from snapshots, the target held
    only briefly, checked against the held reports at the same instants
    (PTLEAK_DEBUG=snapshot-check); ptr (the region holds the only pointer
    to the 200-byte block) has both made held with the line naming the
    region, and that block reachable.  The records are the same: the
    100-byte block definitely lost, the 200-byte one still reachable."""
    ck = Check()
    t = Live("r_snapshared", args=[mode])
    at = None
    try:
        t.out.expect("ready")
        with ptleak_debug("snapshot-check"):
            at = Attached(t.p.pid, opts=["--show-reachable"])
        t.send("make")
        t.out.expect("made")
        at.signal(signal.SIGUSR1)
        live = snap_report(ck, at, 1, mode == "clean", mode)
        at.signal(signal.SIGINT)
        ck.eq("ptleak's exit status", at.wait(), 0)
        detach = snap_report(ck, at, 2, mode == "clean", mode + ", detach")
        ck.eq("ptleak's stderr", at.err.rest(), [])
        want = [("definitely_lost", 100, 1, "drop"), ("still_reachable", 200, 1, "make")]
        ck.eq("live report's records", shared_records(live), want)
        ck.eq("detach report's records", shared_records(detach), want)
        if mode == "clean":
            for what, rep in (("live", live), ("detach", detach)):
                ck.true("%s: pause_ms %r < 500" % (what, rep["report"]["pause_ms"]),
                        rep["report"]["pause_ms"] < 500)
        held = held_lines(at)
        ck.eq("%s: the lines" % mode, held, [] if mode == "clean" else
              ["no snapshot of the process (a shared writable mapping, /dev/zero "
               "(deleted), holds a pointer to a live block: a snapshot does not "
               "copy it): its threads were held for the whole scan (T ms)"] * 2)
        t.send("quit")
        ck.eq("target's exit status", t.p.wait(timeout=30), 0)
    finally:
        if at:
            at.kill()
        t.kill()
    ck.done()


@case("snapshot_shared_clean", engines=True)
def t_snapshot_shared_clean():
    snapshot_shared("clean")


@case("snapshot_shared_ptr", engines=True)
def t_snapshot_shared_ptr():
    snapshot_shared("ptr")


@case("snapshot_check_fails", engines=True)
def t_snapshot_check_fails():
    """The check can fail: PTLEAK_DEBUG=snapshot-check,snapshot-perturb
    (the snapshot's report turns its first block's class over) on
    c_census: the live report and the detach's are written from the
    snapshots, each followed by the line saying how it differs from the
    held one (a class's totals: one block moved), and ptleak exits 1."""
    ck = Check()
    t = Live("c_census")
    at = None
    try:
        t.out.expect("ready")
        with ptleak_debug("snapshot-check,snapshot-perturb"):
            at = Attached(t.p.pid, opts=["--show-reachable"])
        lines = []
        for n, sig in ((1, signal.SIGUSR1), (2, signal.SIGINT)):
            at.signal(sig)
            rep = snap_report(ck, at, n, True, "report %d" % n)
            m = at.err.expect(re.escape(SNAPSHOT_DIFFERS) + r"(.*)", 60)
            lines.append(m.group(1))
            summ = rep["heap"]["summary"]
            # the first class that differs: the perturbed report's totals
            # there, the held one's a block apart (one block moved)
            m = re.fullmatch(r"(definitely lost|still reachable): (\d+) bytes in (\d+) "
                             r"blocks, held (\d+) bytes in (\d+) blocks", lines[-1])
            ck.true("report %d: the line %r says a class's totals" % (n, lines[-1]), m)
            if m:
                key = m.group(1).replace(" ", "_")
                ck.eq("report %d: the line's figures are the report's" % n,
                      (int(m.group(2)), int(m.group(3))),
                      (summ[key]["bytes"], summ[key]["blocks"]))
                ck.eq("report %d: one block apart" % n,
                      abs(int(m.group(3)) - int(m.group(5))), 1)
        ck.eq("ptleak's exit status", at.wait(), 1)
        ck.eq("ptleak's stderr after", at.err.rest(), [])
        t.quit(ck)
    finally:
        if at:
            at.kill()
        t.kill()
        del DIFFERS_SEEN[:]	# this case's own
    ck.done()
