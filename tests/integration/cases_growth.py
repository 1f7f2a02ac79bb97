# Growth (SPEC "Growth", growth.h): the stacks whose memory in use grows
# steadily, on g_growth (a list appended to every 10 ms, never trimmed,
# beside 100 short-lived blocks and a pool of 500 replaced one at a time),
# launched and attached, both engines, 1 and 4 threads; what is not
# growth; --errors-for-growth and leak: suppressions; ptleak's memory with
# 100,000 stacks; the timeline's last row.
# Exec'd in run.py's namespace (case, ptleak, Check, need_target, line, ...).

GROWTH_SECONDS = "4"
GROWTH_ENTRY = 640


def growth_staircase_rate(times, step):
    """The slope of the least-squares line through the bytes a list holds
    over time when it gains STEP bytes at each of TIMES (ns): the
    staircase fitted exactly over [first, last], as growth.c fits a
    stack."""
    ts = [(x - times[0]) / 1e9 for x in sorted(times)]
    X = ts[-1]
    if X <= 0:
        return 0.0
    s0 = s1 = 0.0
    for i in range(len(ts) - 1):
        b = (i + 1) * step
        s0 += b * (ts[i + 1] - ts[i])
        s1 += b * (ts[i + 1] ** 2 - ts[i] ** 2) / 2
    return (s1 / X - X / 2 * (s0 / X)) / (X * X / 12)


def growth_rate_file(d):
    """The program's own rate (its appends' times fitted as growth.c fits:
    a rate that changes under load is compared as it is measured) and the
    bytes it appended, from its RATEFILE."""
    with open(os.path.join(d, "rate")) as f:
        head = f.readline().split()
        times = [int(l) for l in f if l.strip()]
    return growth_staircase_rate(times, GROWTH_ENTRY), int(head[1])


def growth_frame_line(entry, fn):
    """The line of function FN in a growth entry's stack, or None."""
    for fr in entry["stack"]:
        if fr["function"] == fn:
            return fr["line"]
    return None


def check_growth_list(ck, growth, rate, appended=None):
    """One entry, the list's: grow_list at its malloc, the program's own
    rate within 10%, and (launched) exactly the bytes it appended."""
    ck.eq("growing stacks (their second frames)",
          [[fr["function"] for fr in g["stack"][1:2]] for g in growth], [["grow_list"]])
    if not growth:
        return
    g = growth[0]
    ck.eq("grow_list's line", growth_frame_line(g, "grow_list"), line("g_growth", "list"))
    ck.true("bytes_per_s %.1f within 10%% of the program's own %.1f" % (g["bytes_per_s"], rate),
            abs(g["bytes_per_s"] - rate) <= 0.1 * rate)
    ck.true("blocks_per_s %.2f within 10%% of the program's own %.2f"
            % (g["blocks_per_s"], rate / GROWTH_ENTRY),
            abs(g["blocks_per_s"] - rate / GROWTH_ENTRY) <= 0.1 * rate / GROWTH_ENTRY)
    if appended is not None:
        ck.eq("in_use_bytes (the bytes the program appended)", g["in_use_bytes"], appended)
        ck.eq("in_use_blocks", g["in_use_blocks"], appended // GROWTH_ENTRY)


def growth_launch(threads, extra=()):
    """g_growth launched for GROWTH_SECONDS with THREADS workers: (result,
    rate, appended, timeline rows)."""
    tgt = need_target("g_growth")
    with tempfile.TemporaryDirectory(prefix="ptleak-growth.") as d:
        tl = os.path.join(d, "t.csv")
        r = ptleak([tgt, GROWTH_SECONDS, str(threads), "grow", os.path.join(d, "rate")],
                   opts=["--timeline", tl] + list(extra), want_text=True)
        rate, appended = growth_rate_file(d)
        with open(tl) as f:
            rows = [l.strip().split(",") for l in f if l.strip()]
    return r, rate, appended, rows


def growth_launched_case(threads):
    ck = Check()
    r, rate, appended, rows = growth_launch(threads)
    rep = need_json(r)
    ck.eq("exit status", r.rc, 0)
    ck.eq("stdout", r.stdout, "ready\ndone\n")
    growth = rep["heap"]["growth"]
    check_growth_list(ck, growth, rate, appended)
    lines = [c for _, c in report_lines(r.text)]
    head = "GROWTH: 1 stack whose memory in use grew steadily, fastest first:"
    ck.true("text: %r" % head, head in lines)
    if head in lines and growth:
        g = growth[0]
        got = lines[lines.index(head) + 1]
        # the JSON's rate has one decimal: the text's whole number is
        # either side of it
        rates = "|".join(re.escape(fmt(v)) for v in (int(g["bytes_per_s"]),
                                                      int(g["bytes_per_s"]) + 1))
        want = (r"\+(?:" + rates + r") bytes/s \(" +
                re.escape("%.1f" % g["blocks_per_s"]) + r" blocks/s\) over [0-9]+\.[0-9] s: " +
                re.escape("%s bytes in %s blocks in use" % (fmt(appended),
                                                           fmt(appended // GROWTH_ENTRY))))
        ck.true("text: %r matches %r" % (got, want), re.fullmatch(want, got) is not None)
    # the timeline's last row: the report at exit, the main thread alive
    # (the workers were joined), the exiting thread counted
    ck.eq("timeline header", rows[0], ["ms", "heap_bytes", "heap_blocks", "rss_kb",
                                       "vm_kb", "fds", "threads"])
    ck.eq("threads in the timeline's last row", rows[-1][6], "1")
    ck.done()


@case("growth_launch", engines=True)
def t_growth_launch():
    """Launched, one worker: the list's stack alone, at the program's own
    rate, with exactly the bytes it appended; the churn and the pool never;
    the text section; the timeline's last row says 1 thread."""
    growth_launched_case(1)


@case("growth_threads", engines=True)
def t_growth_threads():
    """Four workers appending from the same stack: one entry, their rates
    together."""
    growth_launched_case(4)


@case("growth_stopped")
def t_growth_stopped():
    """A list that grows for 2 s, then stops, in a 5 s run: not growing at
    the end (its last new maximum is 3 s old); no GROWTH section."""
    ck = Check()
    tgt = need_target("g_growth")
    r = ptleak([tgt, "5", "1", "stop", "-"], want_text=True)
    rep = need_json(r)
    ck.eq("exit status", r.rc, 0)
    ck.eq("growth", rep["heap"]["growth"], [])
    ck.true("no GROWTH section", not any(c.startswith("GROWTH") for _, c in report_lines(r.text)))
    ck.done()


def growth_attached_case(threads):
    """Attached for 3 s to THREADS workers already running (their pools
    made before the attach, replaced after it: not growth): the list's
    stack alone, within 10% of the rate the program measured itself over
    the same time (a least-squares line through what it said every
    round)."""
    ck = Check()
    tgt = need_target("g_growth")
    p = subprocess.Popen([tgt, "8", str(threads), "progress", "-"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=target_env(), start_new_session=True, preexec_fn=_child_setup)
    out = Lines(p.stdout)
    a = None
    try:
        out.expect("ready", 10)
        out.expect(r"at \d+ \d+", 10)
        a = Attached(p.pid, ["--duration", "3"])
        t_attached = time.monotonic_ns()
        ck.eq("ptleak's exit status", a.wait(20), 0)
        t_detached = time.monotonic_ns()
        rep = a.report(1)
        pts = []
        while True:
            m = out.expect(r"at (\d+) (\d+)", 10)
            t = int(m.group(1))
            if t >= t_attached:
                pts.append((t, int(m.group(2))))
            if t > t_detached:
                break
        pts = [pt for pt in pts if pt[0] <= t_detached]
        # ptleak's window: its first allocation there after the attach to
        # its last (0.1 s: the text's "over N.N s")
        with open(a.txt) as f:
            m = re.search(r"GROWTH: .*\n.* over ([0-9.]+) s: ", f.read())
        if m:
            pts = [pt for pt in pts if pt[0] >= pts[-1][0] - float(m.group(1)) * 1e9]
        if len(pts) < 2:
            raise Fail("the program said too little while attached: %s" % pts)
        # its own rate over the time ptleak watched, fitted as ptleak
        # fits (least squares: the rate changes when ptleak comes)
        n = len(pts)
        mt = sum(p_[0] for p_ in pts) / n / 1e9
        mb = sum(p_[1] for p_ in pts) / n
        rate = (sum((p_[0] / 1e9 - mt) * (p_[1] - mb) for p_ in pts) /
                sum((p_[0] / 1e9 - mt) ** 2 for p_ in pts))
        check_growth_list(ck, rep["heap"]["growth"], rate)
    finally:
        if a:
            a.kill()
        _kill_group(p.pid)
        p.wait()
    ck.done()


@case("growth_attached", engines=True)
def t_growth_attached():
    """growth_attached_case with four workers."""
    growth_attached_case(4)


@case("growth_attached_one", engines=True)
def t_growth_attached_one():
    """growth_attached_case with one worker."""
    growth_attached_case(1)


@case("growth_errors")
def t_growth_errors():
    """--errors-for-growth: a stack growing that fast or faster counts for
    --error-exitcode (the main thread alone works: nothing is lost), a
    slower one does not; a leak: pattern on its stack leaves it out."""
    ck = Check()
    tgt = need_target("g_growth")
    with tempfile.TemporaryDirectory(prefix="ptleak-growth.") as d:
        supp = os.path.join(d, "s.supp")
        with open(supp, "w") as f:
            f.write("leak:grow_list\n")
        for what, opts, want_rc, want_n in (
                ("10,000 B/s", ["--errors-for-growth", "10000"], 9, 1),
                ("1,000,000 B/s", ["--errors-for-growth", "1000000"], 0, 1),
                ("suppressed", ["--errors-for-growth", "10000", "--suppressions", supp], 0, 0)):
            r = ptleak([tgt, GROWTH_SECONDS, "0", "grow", "-"],
                       opts=["--error-exitcode", "9"] + opts)
            rep = need_json(r)
            ck.eq("%s: exit status" % what, r.rc, want_rc)
            ck.eq("%s: growth entries" % what, len(rep["heap"]["growth"]), want_n)
            ck.eq("%s: lost bytes" % what, rep["heap"]["summary"]["definitely_lost"]["bytes"]
                  + rep["heap"]["summary"]["possibly_lost"]["bytes"], 0)
    r = ptleak([tgt, "1", "0", "grow", "-"], opts=["--errors-for-growth", "fast"])
    ck.eq("--errors-for-growth fast: exit status", r.rc, 64)
    ck.done()


@case("growth_many_stacks")
def t_growth_many_stacks():
    """100,000 distinct stacks: ptleak's own peak RSS stays under 100 MiB
    (the growth history: at most 112 bytes a stack) and no stack grows."""
    ck = Check()
    env = dict(target_env(), PTLEAK_DEBUG="stats")
    r = ptleak([need_target("g_stacks")], env=env)
    rep = need_json(r)
    ck.eq("exit status", r.rc, 0)
    ck.eq("allocations", rep["heap"]["totals"]["allocs"], 100001)
    m = re.search(r"ptleak-debug: stacks: (\d+) interned, \d+ with a block, (\d+) bytes of "
                  r"growth history each", r.stderr)
    ck.true("the stats line", m is not None)
    if m:
        ck.true("stacks interned: %s (100,000 at least)" % m.group(1), int(m.group(1)) >= 100000)
        ck.true("growth history: %s bytes a stack (112 at most)" % m.group(2),
                int(m.group(2)) <= 112)
    m = re.search(r"ptleak-debug: ptleak's peak RSS: (\d+) KiB", r.stderr)
    ck.true("ptleak's peak RSS said", m is not None)
    if m:
        ck.true("ptleak's peak RSS %s KiB (under 100 MiB)" % m.group(1),
                int(m.group(1)) < 100 * 1024)
    ck.eq("growth", rep["heap"]["growth"], [])
    ck.done()


@case("growth_html")
def t_growth_html():
    """--html: a "Growing stacks" section with the list's stack, its own
    curve beside the heap's (the page's series: its bytes at every sample,
    rising, the last one the report's), drawn by headless Chromium."""
    tgt = need_target("g_growth")
    chromium()
    ck = Check()
    out = os.path.join(BUILD, "html")
    os.makedirs(out, exist_ok=True)
    page = os.path.join(out, "g_growth.html")
    r = ptleak([tgt, GROWTH_SECONDS, "1", "grow", "-"], opts=["--html", page],
               want_json=False)
    ck.eq("exit status", r.rc, 0)
    _, rep, extra = html_data(page)
    growth = rep["heap"]["growth"]
    ck.eq("growing stacks", [[f["function"] for f in g["stack"][1:2]] for g in growth],
          [["grow_list"]])
    curves = extra["series"]["growth"]
    ck.eq("curves in the page", len(curves), len(growth))
    if growth and curves:
        vals = [v for v in curves[0] if v is not None]
        ck.true("the stack sampled (%d of %d samples)" % (len(vals), len(curves[0])),
                len(vals) >= len(curves[0]) // 2)
        ck.eq("its last sample: the report's bytes in use", curves[0][-1],
              growth[0]["in_use_bytes"])
        ck.true("its curve rises", vals == sorted(vals) and vals[0] < vals[-1])
    dom, console = browse(page, os.path.join(out, "g_growth.png"))
    check_drawn(ck, "g_growth", dom, console)
    ck.true("the section", '<section id="growth">' in dom or 'id="growth"' in dom)
    ck.true("the stack's curve", re.search(r'<path d="M[^"]*" class="grow" id="growth-line-0">', dom))
    ck.true("the heap's curve beside it", 'class="heap" id="growth-heap-0"' in dom)
    if growth:
        g = growth[0]

        def js_bytes(n):	# report.js's bytes()
            if n < 1024:
                return "%s bytes" % fmt(n)
            v, u = float(n), 0
            while v >= 1024 and u < 4:
                v /= 1024
                u += 1
            return "%s bytes (%s %s)" % (fmt(n), js_fixed(v, 2 if v < 10 else 1),
                                         ["B", "KiB", "MiB", "GiB", "TiB"][u])
        want = "<summary>+%s/s (%s blocks/s): %s in %s in use</summary>" % (
            js_bytes(int(js_fixed(g["bytes_per_s"], 0))), js_fixed(g["blocks_per_s"], 1),
            js_bytes(g["in_use_bytes"]), blocks(g["in_use_blocks"]))
        ck.true("the entry's summary %r" % want, want in dom)
    ck.done()


@case("growth_vgtext")
def t_growth_vgtext():
    """valgrind's text: the GROWTH section after memcheck's blocks, in its
    prefix; --errors-for-growth changes the exit status, not memcheck's
    ERROR SUMMARY (the main thread alone works: nothing is lost)."""
    ck = Check()
    tgt = need_target("g_growth")
    with tempfile.TemporaryDirectory(prefix="ptleak-growth.") as d:
        log = os.path.join(d, "vg.%p.log")
        r = ptleak([tgt, GROWTH_SECONDS, "0", "grow", "-"], want_json=False,
                   show_reachable=False,
                   opts=["--leak-check=full", "--log-file=" + log, "--error-exitcode=9",
                         "--errors-for-growth=10000"])
        logs = glob.glob(os.path.join(d, "vg.*.log"))
        ck.eq("logs", len(logs), 1)
        with open(logs[0]) as f:
            lines = f.read().splitlines()
    ck.eq("exit status", r.rc, 9)
    pre = re.compile(r"==(\d+)== ?(.*)$")
    body = [pre.match(l).group(2) if pre.match(l) else "NOT PREFIXED: " + l for l in lines]
    ck.eq("lines without memcheck's prefix", [b for b in body if b.startswith("NOT PREFIXED")], [])
    es = [i for i, b in enumerate(body) if b.startswith("ERROR SUMMARY: ")]
    gr = [i for i, b in enumerate(body)
          if b == "GROWTH: 1 stack whose memory in use grew steadily, fastest first:"]
    ck.eq("ERROR SUMMARY", [body[i] for i in es],
          ["ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)"])
    ck.eq("GROWTH lines", len(gr), 1)
    if es and gr:
        ck.true("GROWTH after memcheck's blocks", gr[0] > es[0])
        ck.true("the list's frame", any(re.fullmatch(
            r"   by 0x[0-9a-f]+: grow_list \(g_growth\.c:%d\)" % line("g_growth", "list"), b)
            for b in body[gr[0]:gr[0] + 8]))
    ck.done()
