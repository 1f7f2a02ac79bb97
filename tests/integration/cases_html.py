# Cases of the HTML report (--html FILE): its data against the JSON report
# and the target's source, in launch and attach mode, at every report, a
# bad file name, and the page drawn by a real browser (headless Chromium,
# from `make deps`): no console error, the chart, a record, a descriptor
# and a source line rendered; screenshots kept in BUILD/html/.
# Exec'd in run.py's namespace.
import html as html_mod

HTML_DATA = re.compile(r'<script type="application/json" id="(ptleak-[a-z]+)">\n(.*?)</script>',
                       re.S)


def html_data(path):
    """The page at PATH: (its text, the JSON report, the extra data)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise Fail("no HTML report at %s" % path)
    blocks = dict(HTML_DATA.findall(text))
    if set(blocks) != {"ptleak-report", "ptleak-extra"}:
        raise Fail("HTML data blocks: %s" % sorted(blocks))
    try:
        return text, json.loads(blocks["ptleak-report"]), json.loads(blocks["ptleak-extra"])
    except ValueError as e:
        raise Fail("HTML data block is not JSON: %s" % e)


def html_self_contained(ck, text):
    """Nothing in TEXT that a browser would fetch."""
    ck.true("Content-Security-Policy default-src 'none'",
            "content=\"default-src 'none'; script-src 'unsafe-inline'; "
            "style-src 'unsafe-inline'; img-src data:\"" in text)
    ck.eq("URLs in the page", sorted(set(re.findall(r"(?:https?|ftp)://[^\s\"'<>]+", text))),
          ["http://www.w3.org/2000/svg"])
    ck.eq("src= / href= / @import / url(", re.findall(r"\bsrc=|href=|@import|url\(", text), [])


def source_window(name, at):
    """Lines AT-5..AT+5 of NAME's source: (first line number, lines)."""
    with open(source_path(name), encoding="utf-8") as f:
        lines = f.read().splitlines()
    first = max(1, at - 5)
    return first, lines[first - 1:at + 5]


def html_source(extra, module, file, at):
    got = [s for s in extra["sources"]
           if (s["module"], s["file"], s["line"]) == (module, file, at)]
    return got[0] if len(got) == 1 else None


def check_html_source(ck, name, extra, marker):
    """The source lines of NAME's line @MARKER, as in its file."""
    at = line(name, marker)
    mod = os.path.realpath(target_path(name))
    s = html_source(extra, mod, os.path.basename(source_path(name)), at)
    if not ck.true("source of %s:%d (@%s) embedded once" % (name, at, marker), s):
        return
    first, lines = source_window(name, at)
    ck.eq("@%s source: path, first, lines, why" % marker,
          (s["path"], s["first"], s["lines"], s["why"]),
          (source_path(name), first, lines, None))


@case("html_launch", engines=True)
def t_html_launch():
    """--html with --json on h_basic: the page holds the JSON report as
    written to --json, the timeline's samples (the last is the report's:
    its in-use bytes and blocks, an RSS) with the stacks over time and at
    the peak sample, the resources, the five stacks holding memory largest
    first with their frames, and the lines around every frame's file:line
    read from the source; nothing in it is fetched."""
    name = "h_basic"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-html.") as d:
        hp = os.path.join(d, "r.html")
        r = ptleak([tgt], opts=["--html", hp])
        ck.eq("exit status", r.rc, 0)
        rep = need_json(r)
        text, hrep, extra = html_data(hp)
        ck.eq("the page's JSON report is --json's", hrep, rep)
        ck.eq("no temporary file left", sorted(os.listdir(d)), ["r.html"])
    html_self_contained(ck, text)
    ck.true("title", "<title>ptleak: h_basic (pid %d)</title>" % rep["target"]["pid"] in text)
    se = extra["series"]
    ck.eq("last sample: heap bytes, blocks", (se["heap_bytes"][-1], se["heap_blocks"][-1]),
          (1652, 6))
    ck.true("the last sample's time is the report's (%s ms, %s s)" % (se["ms"], rep["report"]["elapsed_s"]),
            abs(se["ms"][-1] / 1000 - rep["report"]["elapsed_s"]) < 0.002)
    ck.eq("samples in time order", se["ms"], sorted(se["ms"]))
    ck.true("an RSS was measured (%s KiB)" % se["rss_kb"], se["rss_kb"][-1] > 0)
    # the stacks over time: at the last sample, each stack of the report's
    # top holds what the report says
    last = dict(zip(se["stacks"], se["stack_bytes"][-1]))
    ck.eq("the report's top stacks at the last sample",
          [last.get(t["id"]) for t in extra["top"]], [t["bytes"] for t in extra["top"]])
    pk = extra["peak"]
    ck.true("the peak is a sample's (%s ms)" % pk["ms"], pk["ms"] in se["ms"])
    # (two samples may share a millisecond: h_basic runs for a few)
    ck.eq("the stacks at the peak add up to the series' highest heap, a sample's of its ms",
          (sum(t["bytes"] for t in pk["stacks"]),
           max(se["heap_bytes"]) in [b for m, b in zip(se["ms"], se["heap_bytes"]) if m == pk["ms"]]),
          (max(se["heap_bytes"]), True))
    res = extra["resources"]
    ck.true("resources: peak RSS >= RSS", res and res["max_rss_kb"] >= se["rss_kb"][-1])
    ck.eq("top stacks at the report: bytes, blocks",
          [(t["bytes"], t["blocks"]) for t in extra["top"]],
          [(1000, 1), (300, 1), (200, 1), (128, 2), (24, 1)])
    big = extra["stacks"].get(str(extra["top"][0]["id"]), [])
    ck.eq("the biggest stack's frames",
          [(f["function"], f["file"], f["line"]) for f in big],
          [("malloc", None, None), ("leak_big", "h_basic.c", line(name, "big")),
           ("main", "h_basic.c", line(name, "call_big"))])
    for m in ("big", "call_big", "table", "grow"):
        check_html_source(ck, name, extra, m)
    # every file:line of a record has its lines
    mod = os.path.realpath(tgt)
    for rec in rep["heap"]["records"]:
        for f in rec["stack"]:
            if f["line"]:
                ck.true("source of %s:%d embedded" % (f["file"], f["line"]),
                        html_source(extra, mod, f["file"], f["line"]))
    ck.done()


@case("html_fd_only")
def t_html_fd_only():
    """--fd-only: the page has no heap (null in its report, no heap
    samples, no stacks) but the RSS and f_basic's four descriptor records
    with the lines of their frames."""
    name = "f_basic"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-html.") as d:
        hp = os.path.join(d, "r.html")
        r = ptleak([tgt], opts=["--fd-only", "--html", hp])
        ck.eq("exit status", r.rc, 0)
        rep = need_json(r)
        _, hrep, extra = html_data(hp)
    ck.eq("the page's JSON report is --json's", hrep, rep)
    ck.eq("heap", hrep["heap"], None)
    se = extra["series"]
    ck.eq("heap samples, top, stacks", (se["heap_bytes"], se["heap_blocks"], extra["top"],
                                        extra["stacks"]), (None, None, [], {}))
    ck.true("an RSS: %s" % se["rss_kb"], se["rss_kb"] and se["rss_kb"][-1] > 0)
    ck.eq("fd records", [f["fd"] for f in hrep["fds"]["records"]], [3, 4, 5, 6])
    for m in ("open_leak", "pipe"):
        check_html_source(ck, name, extra, m)
    ck.done()


@case("html_every_report", engines=True)
def t_html_every_report():
    """h_report_signal: SIGUSR1 to ptleak, then the exit.  The page is
    written at each report: the first ends with its report's sample (100
    bytes and stdout's 4,096), the last has it too and ends with 4,246;
    samples in time order."""
    name = "h_report_signal"
    tgt = need_target(name)
    need_ptleak()
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        hp, go = os.path.join(d, "r.html"), os.path.join(d, "go")
        p = subprocess.Popen(ptleak_cmd() + ["-q", "--html", hp, tgt, go],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=target_env(), start_new_session=True)
        try:
            ck.eq("target's first line", p.stdout.readline(), b"ready\n")
            p.send_signal(signal.SIGUSR1)
            for _ in range(500):
                if os.path.exists(hp):
                    break
                time.sleep(0.01)
            _, live, extra = html_data(hp)
            ck.eq("first page: reason, last sample", (live["reason"],
                                                     extra["series"]["heap_bytes"][-1]),
                  ("signal", 4196))
            first_ms = extra["series"]["ms"][-1]
            open(go, "w").close()
            p.communicate(timeout=60)
        finally:
            reap_group(p)
        ck.eq("exit status", p.returncode, 0)
        _, final, extra = html_data(hp)
    se = extra["series"]
    ck.eq("last page: reason, report number", (final["reason"], final["report"]["number"]),
          ("exit", 2))
    ck.eq("last sample: heap bytes, blocks", (se["heap_bytes"][-1], se["heap_blocks"][-1]),
          (4246, 3))
    ck.true("the first report's sample is there (%s ms)" % first_ms,
            4196 in [b for m, b in zip(se["ms"], se["heap_bytes"]) if m == first_ms])
    ck.eq("samples in time order", se["ms"], sorted(se["ms"]))
    check_html_source(ck, name, extra, "second")
    ck.done()


@case("html_attach")
def t_html_attach():
    """-p on h_sleeper: SIGUSR1 then SIGINT to ptleak.  The page of the
    detach report has the samples of both reports (and the timeline's);
    the blocks allocated before the attach are the census's (nothing was
    allocated since)."""
    tgt = need_target("h_sleeper")
    ck = Check()
    p = subprocess.Popen([tgt, "30"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=target_env(), start_new_session=True)
    at = None
    try:
        ck.eq("target's first line", p.stdout.readline(), b"ready %d\n" % p.pid)
        d = tempfile.mkdtemp(prefix="ptleak-html.")
        hp = os.path.join(d, "r.html")
        at = Attached(p.pid, opts=["--html", hp], d=d)
        at.signal(signal.SIGUSR1)
        at.report(1)
        at.signal(signal.SIGINT)
        ck.eq("ptleak's exit status", at.wait(), 0)
        rep = at.report(2)
        _, hrep, extra = html_data(hp)
        ck.eq("the page's report is the last JSON report", hrep, rep)
        ck.eq("reason", hrep["reason"], "detach")
        se = extra["series"]
        ck.true("two samples at least: %s" % se["ms"], len(se["ms"]) >= 2)
        c = rep["heap"]["census"]
        ck.eq("census exact", (c["exact"], c["why"]), (True, None))
        ck.eq("samples: heap bytes, blocks", (set(se["heap_bytes"]), set(se["heap_blocks"])),
              ({c["bytes"]}, {c["blocks"]}))
        ck.true("RSS measured: %s" % se["rss_kb"], all(v > 0 for v in se["rss_kb"]))
        ck.true("target still running", p.poll() is None)
        shutil.rmtree(d)
    finally:
        if at:
            at.kill()
        p.kill()
        p.wait()
    ck.done()


@case("html_bad_file")
def t_html_bad_file():
    """An --html file that cannot be written: one line, exit 1, before
    the target runs; --html without a file: usage error."""
    tgt = need_target("h_basic")
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "no", "r.html")
        r = ptleak([tgt], opts=["--html", bad], want_json=False)
        ck.eq("exit status", r.rc, 1)
        ck.eq("stderr", r.stderr, "ptleak: cannot write %s: No such file or directory\n" % bad)
        ck.eq("the target did not run", r.stdout, "")
        r = ptleak([tgt], opts=["--html", d], want_json=False)
        ck.eq("a directory: exit status", r.rc, 1)
        ck.eq("a directory: stderr", r.stderr, "ptleak: cannot write %s: Is a directory\n" % d)
    r = ptleak(["--html"], want_json=False, show_reachable=False)
    ck.eq("no file: exit status", r.rc, 64)
    ck.done()


# ---------------------------------------------------------------------------
# In a browser

def chromium():
    for b in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(b)
        if p:
            return p
    raise Skip("no chromium (make deps installs it): the HTML report is not drawn")


def browse(page, shot=None, width=1000, height=2600):
    """PAGE loaded in headless Chromium: (its DOM once the script ran,
    the console's messages).  SHOT: also a screenshot there."""
    br = chromium()
    with tempfile.TemporaryDirectory(prefix="ptleak-chromium.") as prof:
        base = [br, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                "--user-data-dir=" + prof, "--hide-scrollbars",
                "--window-size=%d,%d" % (width, height)]
        url = "file://" + os.path.abspath(page)
        rc, dom, err = run_cmd(base + ["--enable-logging=stderr", "--v=0", "--dump-dom", url],
                               timeout=120)
        if rc != 0:
            raise Fail("chromium --dump-dom exited %d: %s" % (rc, err[-500:]))
        console = [l for l in err.splitlines() if ":CONSOLE" in l]
        if shot:
            os.makedirs(os.path.dirname(shot), exist_ok=True)
            if os.path.exists(shot):
                os.unlink(shot)
            rc, _, err = run_cmd(base + ["--screenshot=" + shot, url], timeout=120)
            if rc != 0 or not os.path.exists(shot):
                raise Fail("chromium --screenshot exited %d: %s" % (rc, err[-500:]))
    return dom, console


def js_fixed(x, digits):
    """X as JavaScript's Number.prototype.toFixed(DIGITS) writes it: the
    exact binary value rounded, a tie to the larger (Python's "%.2f"
    rounds a tie to even: an RSS of 1,664 KiB is 1.625 MiB, "1.63" in
    the page and "1.62" in Python: 1 run in 64 failed)."""
    import decimal
    q = decimal.Decimal(1).scaleb(-digits)
    return str(decimal.Decimal(x).quantize(q, rounding=decimal.ROUND_HALF_UP))


def dom_text(s):
    """S as the DOM dump writes text."""
    return html_mod.escape(s, quote=False)


def check_drawn(ck, what, dom, console):
    ck.eq(what + ": console messages", console, [])
    ck.true(what + ": drawn (data-state=\"rendered\")",
            re.search(r'<html [^>]*data-state="rendered"', dom))
    ck.true(what + ": no error shown", 'id="ptleak-error"' not in dom)


@case("html_browser")
def t_html_browser():
    """f_basic's page in headless Chromium: no console message (a script
    error, a blocked fetch), the heap chart's line and its peak mark, the
    FILE record, the descriptor records, the highlighted source line of
    open and of fopen; a screenshot at 1000 and at 380 pixels wide.  The
    unit test's page of 1,000 samples and three stacks (test_report_html):
    three layers over time and both trees."""
    name = "f_basic"
    tgt = need_target(name)
    chromium()
    ck = Check()
    out = os.path.join(BUILD, "html")
    os.makedirs(out, exist_ok=True)
    page = os.path.join(out, "f_basic.html")
    r = ptleak([tgt], opts=["--html", page], want_json=False)
    ck.eq("exit status", r.rc, 0)
    dom, console = browse(page, os.path.join(out, "f_basic.png"))
    check_drawn(ck, "f_basic", dom, console)
    ck.true("heap chart line", re.search(r'<path d="M[\d.]+,[\d.]+L[^"]*" class="heap" id="heap-line">', dom))
    ck.true("RSS line", 'class="rss" id="rss-line"' in dom)
    ck.true("peak mark", 'class="peak" id="peak-mark"' in dom)
    ck.true("the FILE record",
            "<summary>472 bytes in 1 block is still reachable, allocated by malloc</summary>" in dom)
    ck.true("fd 3's record",
            "<summary>fd 3 (file) \u2192 /dev/null, opened by open</summary>" in dom)
    with open(source_path(name), encoding="utf-8") as f:
        src = f.read().split("\n")
    for m in ("open_leak", "pipe"):
        at = line(name, m)
        want = '<span class="src-line hit"><span class="no">%d</span>%s</span>' % (
            at, dom_text(src[at - 1]))
        ck.true("source line %d (@%s) highlighted" % (at, m), want in dom)
    ck.true("tree at the report", 'id="tree-report"' in dom)
    _, rep, extra = html_data(page)
    se = extra["series"]
    ck.true("the sample's values said where it is drawn",
            "<title>t = %s s\nheap: 472 bytes in 1 block\nRSS: %s bytes (%s MiB)</title>"
            % (js_fixed(se["ms"][-1] / 1000, 3), fmt(se["rss_kb"][-1] * 1024),
               js_fixed(se["rss_kb"][-1] / 1024, 2)) in dom)
    _, console = browse(page, os.path.join(out, "f_basic-narrow.png"), width=380)
    ck.eq("narrow: console messages", console, [])

    unit = os.path.join(BUILD, "tests", "test_report_html")
    if not os.access(unit, os.X_OK):
        raise Fail("%s not built (make %s)" % (unit, os.path.relpath(unit, ROOT)))
    syn = os.path.join(out, "synthetic.html")
    env = target_env()
    env["PTLEAK_HTML_KEEP"] = syn
    rc, o, e = run_cmd([unit], env=env)
    ck.eq("test_report_html exit status", rc, 0)
    dom, console = browse(syn, os.path.join(out, "synthetic.png"))
    check_drawn(ck, "synthetic", dom, console)
    ck.eq("stack layers over time", len(re.findall(r'class="layer"', dom)), 3)
    ck.true("1,000 samples said", "1,000 samples" in dom)
    ck.true("legend of a stack", "f10 (app.c:10)" in dom)
    ck.true("tree at the peak", 'id="tree-peak"' in dom)
    ck.true("a name that would close the script, as text",
            "/bin/&lt;b&gt;&amp;\"x'" in dom or "/bin/&lt;b&gt;&amp;&quot;x'" in dom)
    ck.done()
