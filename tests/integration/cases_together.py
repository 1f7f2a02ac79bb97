# Every output at once (issue 11: "each option works ... together with the
# others"): one run of t_timeline with -o, --json, --html, --timeline,
# --events, --folded, --live, --pprof and --xml, launched and attached.
# Exec'd in run.py's namespace; uses the checks of cases_timeline.py,
# cases_html.py and cases_vgcompat.py.

import gzip


def all_outputs(d):
    """The option list writing every output into directory D, and the
    paths by name."""
    p = {n: os.path.join(d, f) for n, f in (
        ("html", "r.html"), ("timeline", "t.csv"), ("events", "e.csv"),
        ("folded", "f.folded"), ("pprof", "p.pb.gz"), ("xml", "r.xml"))}
    opts = ["--html", p["html"], "--timeline", p["timeline"], "--interval", "50",
            "--events", p["events"], "--folded", p["folded"], "--live",
            "--pprof", p["pprof"], "--xml=yes", "--xml-file=" + p["xml"]]
    return opts, p


def check_all_outputs(ck, p, rep, min_rows):
    """Every file at P agrees with JSON report REP."""
    tl_check_timeline(ck, tl_rows(p["timeline"]), rep, min_rows)
    tl_check_events(ck, p["events"], rep, TL_NAME)
    tl_check_folded(ck, p["folded"], rep, TL_NAME)
    tl_check_threads(ck, rep, TL_NAME)
    _, hrep, extra = html_data(p["html"])
    ck.eq("the page's report is the JSON report", hrep, rep)
    se = extra["series"]
    ck.eq("the page's last sample: heap bytes, blocks",
          (se["heap_bytes"][-1], se["heap_blocks"][-1]),
          (rep["heap"]["in_use"]["bytes"], rep["heap"]["in_use"]["blocks"]))
    ck.eq("the page's samples are the timeline's last ones",
          se["heap_bytes"][-3:], [r[1] for r in tl_rows(p["timeline"])][-3:])
    _, errs = vg_xml_errors(p["xml"])
    kinds = {"definitely_lost": "Leak_DefinitelyLost", "indirectly_lost": "Leak_IndirectlyLost",
             "possibly_lost": "Leak_PossiblyLost", "still_reachable": "Leak_StillReachable"}
    # (the harness gives --show-reachable: still reachable records listed)
    ck.eq("the XML's errors are the JSON's records (kind, bytes, blocks)",
          sorted((k, b, n) for k, b, n, _, _ in errs),
          sorted((kinds[r["kind"]], r["bytes"], r["blocks"]) for r in rep["heap"]["records"]
                 if r["kind"] in kinds))
    with open(p["pprof"], "rb") as f:
        raw = gzip.decompress(f.read())
    ck.true("the pprof file is a gzip'd profile (%d bytes)" % len(raw), len(raw) > 100)


@case("together_launch", engines=True)
def t_together_launch():
    """t_timeline launched with every output: each file agrees with the
    JSON report, --live's lines on stderr only, the text report in -o."""
    tgt = need_target(TL_NAME)
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        opts, p = all_outputs(d)
        r = ptleak([tgt], opts=opts, want_text=True)
        ck.eq("exit status", r.rc, 0)
        ck.eq("stdout", r.stdout, "done\n")
        ck.true("stderr: --live's lines only: %s" % short(r.stderr),
                all(l.startswith("ptleak: ") and " heap " in l
                    for l in r.stderr.splitlines()))
        rep = need_json(r)
        check_all_outputs(ck, p, rep, 6)
        ck.true("the text report's LEAK SUMMARY", "LEAK SUMMARY:" in r.text)
        ck.eq("files left", sorted(os.listdir(d)),
              ["e.csv", "f.folded", "p.pb.gz", "r.html", "r.xml", "t.csv"])
    ck.done()


@case("together_attach", engines=True)
def t_together_attach():
    """t_timeline attached (it waits for a line on stdin before working)
    with every output: at the detach, each file agrees with the JSON."""
    ck = Check()
    tl_attached(ck, "ptleak-all.", lambda d: all_outputs(d)[0],
                lambda at, rep: check_all_outputs(ck, all_outputs(at.d)[1], rep, 6))
    ck.done()


@case("together_forks", engines=True)
def t_together_forks():
    """-f (spelled --trace-children=yes, valgrind's) on p_tree's tree of 5
    processes with --json, --html, --xml, --pprof and --folded: each
    process has each file (a child's named NAME.PID), and each page's
    report is that process's JSON report."""
    tgt = need_target("p_tree")
    need_ptleak()
    ck = Check()
    d = tempfile.mkdtemp(prefix="ptleak-allf.")
    try:
        names = {"json": "r.json", "html": "r.html", "xml": "r.xml", "pprof": "p.pb.gz",
                 "folded": "f.folded"}
        pth = {k: os.path.join(d, v) for k, v in names.items()}
        cmd = ptleak_cmd() + ["--trace-children=yes", "-q", "--json", pth["json"],
                              "--html", pth["html"], "--xml=yes", "--xml-file=" + pth["xml"],
                              "--pprof", pth["pprof"], "--folded", pth["folded"], tgt, "tree"]
        rc, out, err = run_cmd(cmd)
        ck.eq("exit status", rc, 0)
        files = sorted(os.listdir(d))
        jsons = {}
        for f in files:
            if f.startswith("r.json"):
                with open(os.path.join(d, f)) as fh:
                    jsons[f[len("r.json"):]] = json.load(fh)
        ck.eq("JSON reports", len(jsons), 5)
        first = jsons.get("", {}).get("target", {}).get("pid")
        for suffix, rep in jsons.items():
            pid = rep["target"]["pid"]
            ck.eq("suffix of process %d's files" % pid, suffix, "" if pid == first else ".%d" % pid)
            for k in ("html", "xml", "folded"):
                ck.true("%s%s exists" % (names[k], suffix), names[k] + suffix in files)
            if rep["heap"]["in_use"]["blocks"]:
                ck.true("p.pb.gz%s exists" % suffix, "p.pb.gz" + suffix in files)
            if names["html"] + suffix in files:
                _, hrep, _ = html_data(os.path.join(d, names["html"] + suffix))
                ck.eq("process %d's page is its JSON report" % pid, hrep, rep)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    ck.done()


@case("together_pid_names")
def t_together_pid_names():
    """%p and %q{VAR} in every output's name, launched: the files carry
    the program's pid (the timeline and events files too, opened once the
    pid is known) and the variable's value."""
    tgt = need_target(TL_NAME)
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        env = target_env()
        env["PTLEAK_T_TAG"] = "tag"
        opts = []
        for opt, base in (("--timeline", "t"), ("--events", "e"), ("--folded", "f"),
                          ("--html", "h"), ("--pprof", "p")):
            opts += [opt, os.path.join(d, base + ".%p.%q{PTLEAK_T_TAG}")]
        r = ptleak([tgt], opts=opts + ["--xml=yes", "--xml-file=" + os.path.join(d, "x.%p")],
                   env=env)
        ck.eq("exit status", r.rc, 0)
        rep = need_json(r)
        pid = rep["target"]["pid"]
        ck.eq("files", sorted(os.listdir(d)),
              sorted(["%s.%d.tag" % (b, pid) for b in "tefhp"] + ["x.%d" % pid]))
        tl_check_timeline(ck, tl_rows(os.path.join(d, "t.%d.tag" % pid)), rep, 2)
        tl_check_events(ck, os.path.join(d, "e.%d.tag" % pid), rep, TL_NAME)
    ck.done()
