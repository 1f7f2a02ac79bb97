# Cases of memory over time: --timeline, --interval, --events, --live,
# --folded, the report's threads and the process's resources.
# Exec'd in run.py's namespace (case, ptleak, Check, need_target, ...).

import csv
import io
import pty
import select

TL_NAME = "t_timeline"
TL_HEADER = "ms,heap_bytes,heap_blocks,rss_kb,vm_kb,fds,threads"
TL_EV_HEADER = "ms,tid,event,size,address,old_address,caller"


def tl_worker(i):
    """What worker I of t_timeline does: (allocs, frees, bytes_allocated,
    in_use_bytes)."""
    return (11, 6, 2000 * (i + 1), 1400 * (i + 1))


def tl_rows(path):
    """The timeline CSV at PATH: its rows as lists of ints (None: empty)."""
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    if lines[0] != TL_HEADER:
        raise Fail("timeline header %s, want %s" % (short(lines[0]), TL_HEADER))
    if lines[-1] != "":
        raise Fail("timeline does not end with a newline: %s" % short(lines[-1]))
    rows = []
    for l in lines[1:-1]:
        if not re.fullmatch(r"\d+,(\d*,){5}\d+", l):
            raise Fail("timeline row %s is not 7 numbers" % short(l))
        rows.append([int(v) if v else None for v in l.split(",")])
    return rows


def tl_check_timeline(ck, rows, rep, min_rows):
    """ROWS in time order, at least MIN_ROWS, figures that make sense, the
    last equal to report REP's in-use figures and fds."""
    ck.true("timeline has %d rows, want at least %d" % (len(rows), min_rows), len(rows) >= min_rows)
    if not rows:
        return
    ms = [r[0] for r in rows]
    ck.eq("timeline ms in order", ms, sorted(ms))
    ck.true("a row with RSS 0 or VM < RSS: %s" % short(rows),
            all(r[3] > 0 and r[4] >= r[3] for r in rows))
    last = rows[-1]
    ck.eq("last row heap (bytes, blocks)", (last[1], last[2]),
          (rep["heap"]["in_use"]["bytes"], rep["heap"]["in_use"]["blocks"]))
    ck.eq("last row fds", last[5], rep["fds"]["open"])
    ck.eq("last row ms = the report's time", abs(last[0] - rep["report"]["elapsed_s"] * 1000) <= 50, True)


def tl_check_events(ck, path, rep, name):
    """The events file at PATH adds up to report REP: its allocation rows
    are the allocs and bytes allocated, its sized free rows the frees, its
    unsized ones the unknown frees, and replaying it (after an attach,
    from the census's rows) leaves the report's blocks in use.  The workers' mallocs are called from worker at the
    marked line.  Returns the rows."""
    with open(path) as f:
        text = f.read()
    if not text.startswith(TL_EV_HEADER + "\n"):
        raise Fail("events header %s" % short(text[:60]))
    rows = list(csv.reader(io.StringIO(text)))[1:]
    bad = [r for r in rows if len(r) != 7 or not re.fullmatch(r"\d+", r[0] + r[1])
           or not re.fullmatch(r"0x[0-9a-f]+", r[4])]
    ck.eq("malformed event rows", bad[:3], [])
    if bad:
        return rows
    allocs = [r for r in rows if r[2] not in ("free", "census")]
    frees = [r for r in rows if r[2] == "free" and r[3]]
    unknown = [r for r in rows if r[2] == "free" and not r[3]]
    t = rep["heap"]["totals"]
    ck.eq("events: allocs, frees, bytes allocated, unknown frees",
          (len(allocs), len(frees), sum(int(r[3]) for r in allocs), len(unknown)),
          (t["allocs"], t["frees"], t["bytes_allocated"], t["unknown_frees"]))
    live = {}
    for r in rows:
        if r[2] == "free":
            live.pop(r[4], None)
        else:
            live[r[4]] = int(r[3])
    ck.eq("events replayed: in use (bytes, blocks)", (sum(live.values()), len(live)),
          (rep["heap"]["in_use"]["bytes"], rep["heap"]["in_use"]["blocks"]))
    # ms is when a call was entered, a row written when it returned: in
    # order within a thread
    for tid in set(r[1] for r in rows):
        ms = [int(r[0]) for r in rows if r[1] == tid]
        ck.eq("thread %s's event ms in order" % tid, ms, sorted(ms))
    want = "worker (%s.c:%d)" % (name, line(name, "worker_malloc"))
    wm = [r for r in rows if r[2] == "malloc" and r[6] == want]
    ck.eq("worker mallocs named %s" % want, len(wm), 30)
    ck.eq("worker reallocs", sorted(int(r[3]) for r in rows if r[2] == "realloc" and
                                    r[6] == "worker (%s.c:%d)" % (name, line(name, "worker_realloc"))),
          [1000, 2000, 3000])
    # a free has no stack, but a realloc's release of its old block has the
    # realloc's caller, and is followed by the realloc's row
    wr = "worker (%s.c:%d)" % (name, line(name, "worker_realloc"))
    ck.eq("frees with a caller", sorted((r[6], rows[i + 1][2], rows[i + 1][5] == r[4])
                                        for i, r in enumerate(rows) if r[2] == "free" and r[6]),
          [(wr, "realloc", True)] * 3)
    return rows


def tl_check_threads(ck, rep, name, text=None):
    """REP's threads add up to its totals; the three workers' figures and
    names are exact; TEXT's THREADS section lists them."""
    th = rep["threads"]
    t = rep["heap"]["totals"]
    ck.eq("threads' sums (allocs, frees, bytes allocated, in use)",
          (sum(x["allocs"] for x in th), sum(x["frees"] for x in th),
           sum(x["bytes_allocated"] for x in th), sum(x["in_use_bytes"] for x in th)),
          (t["allocs"], t["frees"], t["bytes_allocated"], rep["heap"]["in_use"]["bytes"]))
    workers = sorted((x["name"], x["allocs"], x["frees"], x["bytes_allocated"], x["in_use_bytes"])
                     for x in th if (x["name"] or "").startswith("tl-worker"))
    ck.eq("workers", workers, [("tl-worker%d" % i,) + tl_worker(i) for i in range(3)])
    if text is not None:
        pid = rep["target"]["pid"]
        lines = [l for p, l in report_lines(text) if p == pid]
        want = ["THREADS: %d threads used the heap" % len(th)]
        for x in th:
            # tid 0: the census's blocks (after an attach), or the threads
            # beyond the table
            who = ("thread %d (%s)" % (x["tid"], x["name"]) if x["tid"] else
                   ("made before ptleak attached, or by " if rep["heap"].get("census") else "")
                   + "threads beyond 4096")
            want.append("  %s: %s allocs, %s frees, %s bytes allocated, %s bytes in use" % (
                who, fmt(x["allocs"]), fmt(x["frees"]),
                fmt(x["bytes_allocated"]), fmt(x["in_use_bytes"])))
        i = lines.index(want[0]) if want[0] in lines else -1
        ck.eq("THREADS section", lines[i:i + len(want)] if i >= 0 else lines[-12:], want)


def tl_check_folded(ck, path, rep, name):
    """The folded file: 'frames bytes' lines adding up to the bytes in use,
    main's leak exact."""
    with open(path) as f:
        lines = f.read().splitlines()
    bad = [l for l in lines if not re.fullmatch(r"[^ ;][^;]*(;[^;]+)* \d+", l)]
    ck.eq("malformed folded lines", bad, [])
    ck.eq("folded bytes", sum(int(l.rsplit(" ", 1)[1]) for l in lines if l not in bad),
          rep["heap"]["in_use"]["bytes"])
    ck.true("no line 'main;leak_main;malloc 6000' in %s" % short(lines),
            "main;leak_main;malloc 6000" in lines)


def tl_check_resources(ck, rep, min_wall):
    r = rep["target"]["resources"]
    ck.eq("resources keys", sorted(r), ["max_rss_kb", "sys_s", "user_s", "wall_s"])
    ck.true("wall_s %s < %s" % (r["wall_s"], min_wall), r["wall_s"] >= min_wall)
    ck.true("max_rss_kb %s" % r["max_rss_kb"], 500 < r["max_rss_kb"] < 1000000)
    ck.true("user_s, sys_s %s" % r, 0 <= r["user_s"] < 60 and 0 <= r["sys_s"] < 60)


@case("tl_launch", engines=True)
def t_tl_launch():
    """Launched with --timeline (--interval 50), --events and --folded: the
    timeline has a row every 50 ms of the 0.36 s run and its last row is the
    exit report's in-use figures; the events file's rows add up to the
    report's totals and replay to its blocks in use, with callers named;
    the threads add up to the process, the three workers exactly; the
    folded stacks add up to the bytes in use; the resources are there."""
    tgt = need_target(TL_NAME)
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        tl, ev, fo = (os.path.join(d, n) for n in ("t.csv", "e.csv", "f.folded"))
        r = ptleak([tgt], opts=["--timeline", tl, "--interval", "50", "--events", ev,
                                "--folded", fo], want_text=True)
        ck.eq("exit status", r.rc, 0)
        ck.eq("stdout", r.stdout, "done\n")
        ck.eq("stderr", r.stderr, "")
        rep = need_json(r)
        tl_check_timeline(ck, tl_rows(tl), rep, 6)
        rows = tl_check_events(ck, ev, rep, TL_NAME)
        tl_check_threads(ck, rep, TL_NAME, r.text)
        tids = {x["name"]: x["tid"] for x in rep["threads"]}
        ck.eq("worker0's events' tid", set(int(x[1]) for x in rows if x[2] == "malloc" and
                                           x[3] == "100"), {tids.get("tl-worker0")})
        tl_check_folded(ck, fo, rep, TL_NAME)
        tl_check_resources(ck, rep, 0.36)
        res = rep["target"]["resources"]
        last = [l for _, l in report_lines(r.text)][-2:]
        m = re.fullmatch(r"RESOURCES: ([\d.]+) s user, ([\d.]+) s system, ([\d.]+) s wall, "
                         r"max RSS ([\d,]+) KiB", last[-1])
        ck.true("the text's last lines: %r" % last, last[0] == "" and m)
        if m:
            # the text rounds the measured seconds to 2 places, the JSON
            # to 3: both roundings of one value (0.3849 -> 0.38, 0.385)
            for i, k in enumerate(("user_s", "sys_s", "wall_s"), 1):
                ck.true("text %s %s within 0.0051 of JSON's %s" % (k, m.group(i), res[k]),
                        abs(float(m.group(i)) - res[k]) <= 0.0051)
            ck.eq("text max RSS", m.group(4), fmt(res["max_rss_kb"]))
        ck.eq("no temporary file left", sorted(os.listdir(d)), ["e.csv", "f.folded", "t.csv"])
    ck.done()


def tl_attached(ck, prefix, make_opts, check):
    """t_timeline started waiting for a line on stdin, ptleak -p with the
    options MAKE_OPTS(D) gives (D: a fresh directory), the work done, then
    SIGINT: ptleak exits 0 with a detach report, CHECK(AT, REP) looks at
    it, and the target, let go, exits 0."""
    tgt = need_target(TL_NAME)
    d = tempfile.mkdtemp(prefix=prefix)
    p = subprocess.Popen([tgt, "wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=target_env(), start_new_session=True,
                         preexec_fn=_child_setup)
    out = Lines(p.stdout)
    at = None
    try:
        out.expect("ready")
        at = Attached(p.pid, make_opts(d), d=d)
        p.stdin.write(b"go\n")
        p.stdin.flush()
        out.expect("done", 30)
        at.signal(signal.SIGINT)
        ck.eq("ptleak's exit status", at.wait(), 0)
        rep = at.report(1)
        ck.eq("reason", rep["reason"], "detach")
        check(at, rep)
        p.stdin.write(b"quit\n")
        p.stdin.flush()
        ck.eq("target's exit status", p.wait(timeout=20), 0)
    finally:
        if at:
            at.kill()
        if p.poll() is None:
            _kill_group(p.pid)
            p.wait()
        shutil.rmtree(d, ignore_errors=True)


@case("tl_attach", engines=True)
def t_tl_attach():
    """ptleak -p with --timeline, --events and --folded, detached by
    SIGINT after the program did its work: the timeline's last row is the
    detach report's, the events add up to its totals (counted from the
    attach on), the workers' threads are exact, the folded file adds up."""
    ck = Check()
    names = ("t.csv", "e.csv", "f.folded")

    def opts(d):
        tl, ev, fo = (os.path.join(d, n) for n in names)
        return ["--timeline", tl, "--interval", "50", "--events", ev, "--folded", fo]

    def check(at, rep):
        tl, ev, fo = (os.path.join(at.d, n) for n in names)
        tl_check_timeline(ck, tl_rows(tl), rep, 6)
        tl_check_events(ck, ev, rep, TL_NAME)
        with open(at.txt) as f:
            tl_check_threads(ck, rep, TL_NAME, f.read())
        tl_check_folded(ck, fo, rep, TL_NAME)
        tl_check_resources(ck, rep, 0.36)

    tl_attached(ck, "ptleak-tl.", opts, check)
    ck.done()


LIVE_RE = (r"ptleak: \d+\.\d s  heap [\d.]+ (B|KiB|MiB) \([+-][\d.]+ (B|KiB|MiB)/s\) in [\d,]+ blocks"
           r"  RSS [\d.]+ (KiB|MiB)  \d+ threads?  \d+ fds  [\d,]+ calls/s")


@case("tl_live_pipe", engines=True)
def t_tl_live_pipe():
    """--live with stderr a pipe: one status line per 250 ms (--interval 50
    is raised to 250) before the report, each with every figure."""
    tgt = need_target(TL_NAME)
    ck = Check()
    r = ptleak([tgt], opts=["--live", "--interval", "50"], want_json=False)
    ck.eq("exit status", r.rc, 0)
    lines = r.stderr.splitlines()
    live = [l for l in lines if l.startswith("ptleak: ")]
    ck.true("%d live lines in a 0.36 s run, want 1 or 2: %s" % (len(live), short(live)),
            1 <= len(live) <= 2)
    ck.eq("live lines not matching", [l for l in live if not re.fullmatch(LIVE_RE, l)], [])
    first = next((i for i, l in enumerate(lines) if l.startswith("ptleak[")), len(lines))
    ck.eq("live lines after the report", [l for l in lines[first:] if l.startswith("ptleak: ")], [])
    ck.done()


@case("tl_live_tty")
def t_tl_live_tty():
    """--live with stderr a terminal: the line is redrawn in place
    (carriage return, erase to end of line, no newline) and erased before
    the report is printed."""
    tgt = need_target(TL_NAME)
    need_ptleak()
    ck = Check()
    master, slave = pty.openpty()
    p = subprocess.Popen(ptleak_cmd() + ["--live", tgt], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=slave, env=target_env(),
                         start_new_session=True)
    os.close(slave)
    data = b""
    end = time.time() + TIMEOUT
    while time.time() < end:
        rd, _, _ = select.select([master], [], [], 0.5)
        if rd:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    ck.eq("exit status", p.wait(timeout=10), 0)
    text = data.decode("utf-8", "replace")
    ck.true("no line redrawn in place: %s" % short(text[:300]),
            re.match(r"\rptleak: \d+\.\d s  heap .*?\x1b\[K", text) is not None)
    head, sep, _ = text.partition("ptleak[")
    ck.true("no report", sep != "")
    ck.true("the live line is not erased before the report: %s" % short(head[-120:]),
            head.endswith("\r\x1b[K"))
    ck.eq("newlines before the report", head.count("\n"), 0)
    ck.done()


@case("tl_fd_only")
def t_tl_fd_only():
    """--fd-only with --timeline and --folded: the heap columns are empty,
    fds and threads are there; nothing folded (no heap); JSON threads []."""
    tgt = need_target(TL_NAME)
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        tl, fo = os.path.join(d, "t.csv"), os.path.join(d, "f")
        r = ptleak([tgt], opts=["--fd-only", "--timeline", tl, "--interval", "50", "--folded", fo])
        ck.eq("exit status", r.rc, 0)
        rep = need_json(r)
        rows = tl_rows(tl)
        ck.true("%d rows" % len(rows), len(rows) >= 6)
        ck.eq("heap columns", set((x[1], x[2]) for x in rows), {(None, None)})
        ck.eq("fds of the last row", rows[-1][5], rep["fds"]["open"])
        ck.eq("threads", rep["threads"], [])
        ck.eq("folded file", os.path.exists(fo), False)
        ck.eq("resources", sorted(rep["target"]["resources"]), ["max_rss_kb", "sys_s", "user_s", "wall_s"])
    ck.done()


@case("tl_bad_options")
def t_tl_bad_options():
    """--interval out of range is a usage error (64); an unwritable
    --timeline, --events or --folded fails before the program runs."""
    need_ptleak()
    ck = Check()
    for arg in ("0", "9", "abc", "3600001"):
        rc, out, err = run_cmd(ptleak_cmd() + ["--interval", arg, "/bin/true"])
        ck.eq("--interval %s" % arg, (rc, err),
              (64, "ptleak: --interval wants milliseconds from 10 to 3600000, not '%s'\n" % arg))
    with tempfile.TemporaryDirectory() as d:
        mark = os.path.join(d, "ran")
        for opt in ("--timeline", "--events", "--folded"):
            bad = os.path.join(d, "no", "such", "dir", "f")
            rc, out, err = run_cmd(ptleak_cmd() + [opt, bad, "/bin/touch", mark])
            ck.eq(opt + " unwritable: status", rc, 1)
            ck.true(opt + " unwritable: message %s" % short(err),
                    err.startswith("ptleak: cannot write %s" % bad) and err.count("\n") == 1)
            ck.eq(opt + ": the program ran", os.path.exists(mark), False)
    ck.done()
