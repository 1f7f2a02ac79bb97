# ptleak as a drop-in for valgrind's leak check (issue 13): valgrind's
# option spellings, its suppression files, its XML (side by side with
# valgrind's own, and read by Perl's Test::Valgrind), --pprof read back by
# `go tool pprof`, %p/%q{VAR} in file names, make install.
# Exec'd in run.py's namespace (case, Check, need_target, line, run_cmd, ...).
import gzip
import xml.etree.ElementTree as ET

VG = "v_leaks"
VG_LIBC = "libc.so.6"

# v_leaks' records: (kind, total bytes, blocks, functions from the
# allocator outward, the lines of the callers' frames by marker)
VG_RECORDS = [
    ("Leak_DefinitelyLost", 100, 1, ["malloc", "lose", "main"], ["lose", "call_lose"]),
    ("Leak_DefinitelyLost", 64, 1, ["malloc", "make_list", "main"], ["list_head", "call_list"]),
    ("Leak_StillReachable", 64, 1, ["calloc", "main"], ["reach"]),
    ("Leak_PossiblyLost", 50, 1, ["malloc", "main"], ["inner"]),
    ("Leak_IndirectlyLost", 32, 1, ["malloc", "make_list", "main"], ["list_next", "call_list"]),
]
VG_KINDS = {"Leak_DefinitelyLost": DEF, "Leak_IndirectlyLost": IND,
            "Leak_PossiblyLost": POS, "Leak_StillReachable": REACH}


def vg_run(opts, args=(), env=None, name=VG):
    """ptleak --text=ptleak OPTS TARGET ARGS with a fresh directory D
    (OPTS may name files in it as {d}): (status, stdout, stderr, d); D is
    removed by the caller's `with`.  ptleak's own text, so that these
    cases see what valgrind's spellings mean in ptleak's terms (its text,
    with valgrind's spellings chosen by default, is cases_vgtext.py's)."""
    need_ptleak()
    d = tempfile.mkdtemp(prefix="ptleak-vgc.")
    cmd = [PTLEAK, "--text=ptleak"] + [o.format(d=d) for o in opts] + [need_target(name)] + list(args)
    rc, out, err = run_cmd(cmd, env=env)
    return rc, out, err, d


def vg_text_records(text, pid):
    """(bytes, blocks, kind words) of the loss records of a text report."""
    out = []
    for l in text.splitlines():
        m = re.match(r"ptleak\[%d\]: ([\d,]+)(?: \([^)]*\))? bytes in ([\d,]+) blocks? are "
                     r"(.*) in loss record" % pid, l)
        if m:
            out.append((int(m.group(1).replace(",", "")), int(m.group(2)), m.group(3)))
    return out


def vg_pid_of(text):
    m = re.search(r"^ptleak\[(\d+)\]:", text, re.M)
    if not m:
        raise Fail("no ptleak[PID] line in %s" % short(text))
    return int(m.group(1))


def vg_xml_errors(path):
    """The <error>s of a valgrind XML file: (kind, leakedbytes, leakedblocks,
    functions, lines), in file order."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        raise Fail("%s is not XML: %s" % (path, e))
    out = []
    for e in root.findall("error"):
        xw = e.find("xwhat")
        frames = e.find("stack").findall("frame")
        out.append((e.findtext("kind"), int(xw.findtext("leakedbytes")),
                    int(xw.findtext("leakedblocks")),
                    [f.findtext("fn") for f in frames],
                    [int(f.findtext("line")) for f in frames if f.find("line") is not None]))
    return root, out


def vg_expected_errors():
    return [(k, b, n, fns, [line(VG, m) for m in marks])
            for k, b, n, fns, marks in VG_RECORDS]


def vg_run_valgrind(d, opts, quiet=True):
    """valgrind [-q] --leak-check=full OPTS v_leaks ({d}: D)."""
    vg = shutil.which("valgrind")
    if not vg:
        raise Skip("valgrind not installed (make deps)")
    cmd = [vg] + (["-q"] if quiet else []) + ["--leak-check=full"] + \
        [o.format(d=d) for o in opts] + [need_target(VG)]
    rc, out, err = run_cmd(cmd, timeout=TIMEOUT * 3)
    return rc, out, err


@case("vg_options_full")
def t_vg_options_full():
    """valgrind's own command line with `valgrind` replaced by `ptleak`:
    --leak-check=full --show-leak-kinds=all --num-callers=2
    --log-file=DIR/log.%p --error-exitcode=3 --track-fds=no writes the
    report to log.PID (PID the target's), lists every kind, keeps 2 frames
    (no descriptor record), exits 3."""
    rc, out, err, d = vg_run(["--leak-check=full", "--show-leak-kinds=all",
                              "--num-callers=2", "--log-file={d}/log.%p",
                              "--error-exitcode=3", "--track-fds=no"])
    try:
        ck = Check()
        ck.eq("exit status", rc, 3)
        ck.eq("stderr", err, "")
        logs = [f for f in os.listdir(d) if f.startswith("log.")]
        ck.eq("log files", len(logs), 1)
        if logs:
            with open(os.path.join(d, logs[0])) as f:
                text = f.read()
            pid = vg_pid_of(text)
            ck.eq("log file name", logs[0], "log.%d" % pid)
            ck.eq("records (bytes, blocks, kind)", vg_text_records(text, pid), [
                (100, 1, "definitely lost"), (64, 1, "definitely lost"),
                (64, 1, "still reachable"), (50, 1, "possibly lost"),
                (32, 1, "indirectly lost")])
            frames = [l for l in text.splitlines() if re.match(r"ptleak\[\d+\]:    (at|by) ", l)]
            ck.eq("frames (2 per record)", len(frames), 10)
            ck.true("by lose (v_leaks.c:%d) missing" % line(VG, "lose"),
                    any(l.endswith(": lose (v_leaks.c:%d)" % line(VG, "lose")) for l in frames))
        ck.done()
    finally:
        shutil.rmtree(d)


@case("vg_leak_check_summary_no")
def t_vg_leak_check_summary_no():
    """--leak-check=summary: the summaries, no record; --leak-check=no: no
    LEAK SUMMARY either (the HEAP SUMMARY stays), and no scan; the last
    --leak-check given wins."""
    ck = Check()
    for mode, want_leak_summary in (("summary", True), ("no", False)):
        rc, out, err, d = vg_run(["--leak-check=" + mode, "--json", "{d}/r.json",
                                  "--log-file={d}/log"])
        try:
            with open(os.path.join(d, "log")) as f:
                text = f.read()
            with open(os.path.join(d, "r.json")) as f:
                rep = json.load(f)
        finally:
            shutil.rmtree(d)
        pid = rep["target"]["pid"]
        ck.eq("%s: exit status" % mode, rc, 0)
        ck.eq("%s: text records" % mode, vg_text_records(text, pid), [])
        ck.eq("%s: JSON records" % mode, rep["heap"]["records"], [])
        ck.true("%s: no HEAP SUMMARY" % mode, "HEAP SUMMARY:" in text)
        ck.eq("%s: LEAK SUMMARY shown" % mode, "LEAK SUMMARY:" in text, want_leak_summary)
        if want_leak_summary:
            ck.true("summary: definitely lost line",
                    "ptleak[%d]:    definitely lost: 132 bytes in 2 blocks" % pid in text)
            ck.eq("summary: JSON classes", [rep["heap"]["summary"][k]["bytes"]
                                            for k in SUMMARY_CLASSES], [132, 32, 50, 64])
        else:
            ck.eq("no: everything unclassified (no scan)",
                  rep["heap"]["summary"]["unclassified"], {"bytes": 278, "blocks": 5})
    # the last --leak-check wins, the scan with it
    rc, out, err, d = vg_run(["--leak-check=no", "--leak-check=full", "-q",
                              "--json", "{d}/r.json"])
    try:
        with open(os.path.join(d, "r.json")) as f:
            rep = json.load(f)
    finally:
        shutil.rmtree(d)
    ck.eq("no then full: kinds listed", [r["kind"] for r in rep["heap"]["records"]],
          [DEF, DEF, POS, IND])
    ck.done()


@case("vg_show_and_error_kinds")
def t_vg_show_and_error_kinds():
    """--show-leak-kinds picks the records listed; --errors-for-leak-kinds
    what --error-exitcode counts (reachable only: exit 7 from a still
    reachable block; none: the program's 0); --track-fds=no: no
    descriptors (the open /dev/null is not an error then)."""
    ck = Check()
    for kinds, want in (("definite", [DEF, DEF]), ("indirect,possible", [POS, IND]),
                        ("reachable", [REACH]), ("none", []),
                        ("all", [DEF, DEF, REACH, POS, IND])):
        rc, out, err, d = vg_run(["--show-leak-kinds=" + kinds, "--json", "{d}/r.json", "-q"])
        try:
            with open(os.path.join(d, "r.json")) as f:
                rep = json.load(f)
        finally:
            shutil.rmtree(d)
        ck.eq("--show-leak-kinds=%s: kinds listed" % kinds,
              [r["kind"] for r in rep["heap"]["records"]], want)
    for errs, want in (("reachable", 7), ("none", 0), ("definite,possible", 7)):
        rc, out, err, d = vg_run(["--errors-for-leak-kinds=" + errs, "--error-exitcode=7",
                                  "--track-fds=no", "--json", "{d}/r.json", "-q"])
        try:
            with open(os.path.join(d, "r.json")) as f:
                rep = json.load(f)
        finally:
            shutil.rmtree(d)
        ck.eq("--errors-for-leak-kinds=%s: exit status" % errs, rc, want)
        ck.eq("--track-fds=no: fds", rep["fds"], None)
    # descriptors tracked (valgrind's --track-fds=yes): the leaked fd counts
    rc, out, err, d = vg_run(["--errors-for-leak-kinds=none", "--error-exitcode=7",
                              "--track-fds=yes", "-q", "--log-file={d}/log"])
    shutil.rmtree(d)
    ck.eq("--track-fds=yes, leaked /dev/null: exit status", rc, 7)
    ck.done()


@case("vg_unhonoured_options")
def t_vg_unhonoured_options():
    """valgrind options ptleak cannot honour: one line saying so, exit 64,
    the program never run; valgrind's spellings of what ptleak does anyway
    (-v, -s, --run-libc-freeres=no, --leak-resolution=high, ...) are
    accepted."""
    need_ptleak()
    ck = Check()
    tgt = need_target(VG)
    for opt, msg in (
            ("--tool=massif", "ptleak: --tool=massif cannot be honoured: ptleak is "
                              "memcheck's leak check only"),
            ("--gen-suppressions=yes", "ptleak: --gen-suppressions=yes cannot be honoured: "
                                       "ptleak asks no questions (use --gen-suppressions=all)"),
            ("--track-fds=all", "ptleak: --track-fds=all cannot be honoured: ptleak never "
                                "reports the descriptors the program inherited (use "
                                "--track-fds=yes)"),
            ("--leak-resolution=low", "ptleak: --leak-resolution=low cannot be honoured: "
                                      "ptleak groups records by their whole stack (high)"),
            ("--run-libc-freeres=yes", "ptleak: --run-libc-freeres=yes cannot be honoured: "
                                       "ptleak does not run code in the program"),
            ("--vgdb-error=0", "ptleak: --vgdb-error=0 cannot be honoured: no gdbserver in "
                               "ptleak"),
            ("--no-such-option", "ptleak: unrecognized option '--no-such-option'"),
            ("--leak-check=maybe", "ptleak: --leak-check wants no, summary or full, not 'maybe'"),
            ("--xml=yes", "ptleak: --xml=yes needs --xml-file=FILE (ptleak writes "
                          "valgrind's XML to a file)"),
            ("--num-callers=0", "ptleak: --num-callers wants a number from 1 to 500, not '0'"),
            ("--show-leak-kinds=definite,", "ptleak: --show-leak-kinds wants definite,indirect,"
                                            "possible,reachable (any of them), all or none, "
                                            "not 'definite,'")):
        rc, out, err = run_cmd([PTLEAK, opt, tgt])
        ck.eq("%s: exit status" % opt, rc, 64)
        ck.eq("%s: stderr" % opt, err, msg + "\n")
    rc, out, err = run_cmd([PTLEAK, "--tool=memcheck", "--trace-children=no", "--log-fd=2",
                            "--show-reachable=no", "--show-possibly-lost=no",
                            "--leak-check=yes", "--num-callers=500", "-q", "-v", "-s",
                            "--verbose", "--run-libc-freeres=no", "--leak-resolution=high",
                            "--track-origins=no", "--error-limit=no", "--show-below-main=no",
                            "--default-suppressions=no", tgt])
    ck.eq("accepted spellings: exit status", rc, 0)
    # memcheck's text (valgrind's spellings): its records, as memcheck's
    # --show-reachable=no --show-possibly-lost=no list them
    ck.eq("accepted spellings: records (--show-possibly-lost=no)",
          re.findall(r"^==\d+== (.* in loss record \d of \d)$", err, re.M),
          ["64 (32 direct, 32 indirect) bytes in 1 blocks are definitely lost in loss record 4 of 5",
           "100 bytes in 1 blocks are definitely lost in loss record 5 of 5"])
    # memcheck's checks of other errors than leaks: one notice (none
    # with -q), then the run
    rc, out, err = run_cmd([PTLEAK, "--track-origins=yes", "--undef-value-errors=yes",
                            "--malloc-fill=0x55", "--log-file=/dev/null", tgt])
    ck.eq("memcheck's other checks: exit status", rc, 0)
    ck.eq("memcheck's other checks: the notice", err,
          "ptleak: accepted, not honoured (memcheck's checks of other errors than leaks): "
          "--track-origins=yes --undef-value-errors=yes --malloc-fill=0x55\n")
    rc, out, err = run_cmd([PTLEAK, "--track-origins=yes", "-q", "--log-file=/dev/null", tgt])
    ck.eq("memcheck's other checks, -q: exit status, stderr", (rc, err), (0, ""))
    rc, out, err = run_cmd([PTLEAK, "--version"])
    ck.eq("--version", (rc, err, out.splitlines()[1:]), (0, "", ["engines: recorder breakpoints"]))
    ck.true("--version first line: %s" % short(out), re.match(r"ptleak \d+\.\d+", out))
    ck.done()


@case("vg_xml_side_by_side")
def t_vg_xml_side_by_side():
    """valgrind --xml=yes and ptleak --xml=yes on the same program: the
    same elements at the top level, the same errors (kinds, leaked bytes
    and blocks, functions from the allocator outward, lines), the same
    frame and <xwhat> fields; each record's <suppression> has the same
    frames as valgrind's."""
    d = tempfile.mkdtemp(prefix="ptleak-vgx.")
    try:
        vg_run_valgrind(d, ["--show-leak-kinds=all", "--xml=yes",
                            "--xml-file={d}/vg.xml", "--gen-suppressions=all"],
                        quiet=False)
        rc, out, err = run_cmd([PTLEAK, "--leak-check=full", "--show-leak-kinds=all",
                                "--xml=yes", "--xml-file=%s/pt.xml" % d,
                                "--gen-suppressions=all", "-q", need_target(VG)])
        vroot, verrs = vg_xml_errors(os.path.join(d, "vg.xml"))
        proot, perrs = vg_xml_errors(os.path.join(d, "pt.xml"))
    finally:
        shutil.rmtree(d)
    ck = Check()
    ck.eq("exit status", rc, 0)
    key = lambda e: (e[0], e[1], e[3])
    ck.eq("valgrind's errors (this test's premise)", sorted(verrs, key=key),
          sorted(vg_expected_errors(), key=key))
    ck.eq("ptleak's errors, in valgrind's order", perrs, verrs)
    # valgrind 3.19 repeats each <suppression> after its <error> (the
    # protocol has it inside only): the elements are compared in order of
    # first appearance, those aside
    tags = lambda root: [t for t in dict.fromkeys(c.tag for c in root) if t != "suppression"]
    ck.eq("top-level elements", tags(proot), tags(vroot))
    ck.eq("protocol", (proot.findtext("protocolversion"), proot.findtext("protocoltool")),
          ("4", "memcheck"))
    fields = lambda root: sorted({c.tag for f in root.iter("frame") for c in f} - {"dir"})
    ck.eq("frame fields (valgrind's <dir> aside)", fields(proot), fields(vroot))
    ck.eq("xwhat fields", sorted({c.tag for x in proot.iter("xwhat") for c in x}),
          sorted({c.tag for x in vroot.iter("xwhat") for c in x}))
    sup = lambda root: sorted((e.findtext("suppression/skaux"),
                               tuple(f[0].tag + ":" + f[0].text
                                     for f in e.findall("suppression/sframe")))
                              for e in root.findall("error"))
    ck.eq("generated suppressions", sup(proot), sup(vroot))
    ck.eq("ptleak's argv", [a.text for a in proot.find("args/argv")], [need_target(VG)])
    ck.done()


PERL_READ_XML = r"""
use strict; use warnings;
use Test::Valgrind::Parser::XML::Twig;
use Test::Valgrind::Tool::memcheck;
package Sess; sub new { bless { r => [] }, shift } sub report { push @{$_[0]{r}}, $_[1] }
sub report_class { 'Test::Valgrind::Tool::memcheck::Report' }
package main;
my $s = Sess->new; my $p = Test::Valgrind::Parser::XML::Twig->new;
$p->start($s); open my $fh, '<', $ARGV[0] or die "$ARGV[0]: $!";
$p->parse($s, $fh); $p->finish($s);
for my $r (@{$s->{r}}) {
    my $d = $r->data;
    printf "%s %d %d %s\n", $r->kind, $d->{leakedbytes}, $d->{leakedblocks},
        join(',', map { $_->[2] } @{$d->{stack}});
}
"""


@case("vg_xml_read_by_test_valgrind")
def t_vg_xml_read_by_test_valgrind():
    """Perl's Test::Valgrind (Debian's libtest-valgrind-perl) parses
    ptleak's XML with its XML::Twig parser into memcheck reports: every
    record, with kind, leaked bytes and blocks, and functions."""
    if subprocess.run(["perl", "-MTest::Valgrind::Parser::XML::Twig", "-e", "1"],
                      capture_output=True).returncode:
        raise Skip("Perl's Test::Valgrind not installed (libtest-valgrind-perl: make deps)")
    d = tempfile.mkdtemp(prefix="ptleak-vgt.")
    try:
        rc, out, err = run_cmd([PTLEAK, "--leak-check=full", "--show-leak-kinds=all",
                                "--xml=yes", "--xml-file=%s/pt.xml" % d, "-q",
                                need_target(VG)])
        prc, pout, perr = run_cmd(["perl", "-e", PERL_READ_XML, os.path.join(d, "pt.xml")])
    finally:
        shutil.rmtree(d)
    ck = Check()
    ck.eq("perl's exit status, stderr", (prc, perr), (0, ""))
    # memcheck's order, smallest first: VG_RECORDS' reversed
    ck.eq("reports read", pout.splitlines(),
          ["%s %d %d %s" % (k, b, n, ",".join(f)) for k, b, n, f, _ in reversed(VG_RECORDS)])
    ck.done()


@case("vg_suppressions_both_ways")
def t_vg_suppressions_both_ways():
    """valgrind's own --gen-suppressions=all output, pasted into a file
    (with an LSan-style file beside it), suppresses the same records in
    ptleak; ptleak's generated blocks suppress them in valgrind.  The
    suppressions used are counted by name (text and <suppcounts>)."""
    d = tempfile.mkdtemp(prefix="ptleak-vgs.")
    try:
        rc, out, err = vg_run_valgrind(d, ["--show-leak-kinds=all", "--gen-suppressions=all",
                                           "--log-file={d}/vg.log"])
        with open(os.path.join(d, "vg.log")) as f:
            blocks = re.findall(r"^\{\n.*?^\}\n", f.read(), re.M | re.S)
        # the definite and possible ones, named
        keep = [b.replace("<insert_a_suppression_name_here>", "vg_%d" % i)
                for i, b in enumerate(blocks)
                if "match-leak-kinds: definite" in b or "match-leak-kinds: possible" in b]
        with open(os.path.join(d, "vg.supp"), "w") as f:
            f.write("# valgrind's, pasted\n" + "\n".join(keep))
        with open(os.path.join(d, "lsan.supp"), "w") as f:
            f.write("leak:make_list\n")
        prc, pout, perr = run_cmd([PTLEAK, "--text=ptleak", "--show-leak-kinds=all", "-q",
                                   "--suppressions=%s/vg.supp" % d,
                                   "--suppressions", "%s/lsan.supp" % d,
                                   "--xml=yes", "--xml-file=%s/pt.xml" % d,
                                   "--gen-suppressions=all", need_target(VG)])
        root = ET.parse(os.path.join(d, "pt.xml")).getroot()
        counts = sorted((p.findtext("name"), int(p.findtext("count")))
                        for p in root.iter("pair"))
        # ptleak's generated blocks, into valgrind
        gen = re.findall(r"^\{\n.*?^\}\n", pout + perr, re.M | re.S)
        with open(os.path.join(d, "pt.supp"), "w") as f:
            f.write("\n".join(b.replace("<insert_a_suppression_name_here>", "pt_%d" % i)
                              for i, b in enumerate(gen)))
        vrc, vout, verr = vg_run_valgrind(d, ["--show-leak-kinds=all",
                                              "--suppressions={d}/pt.supp",
                                              "--log-file={d}/vg2.log"], quiet=False)
        with open(os.path.join(d, "vg2.log")) as f:
            vlog = f.read()
    finally:
        shutil.rmtree(d)
    ck = Check()
    ck.eq("valgrind's blocks kept", len(keep), 3)
    ck.eq("ptleak's exit status", prc, 0)
    pid = vg_pid_of(perr)
    ck.eq("records left", vg_text_records(perr, pid), [(64, 1, "still reachable")])
    ck.true("LEAK SUMMARY suppressed: 214 bytes in 4 blocks (the indirect one by leak:)",
            "ptleak[%d]:         suppressed: 214 bytes in 4 blocks" % pid in perr)
    names = sorted(n for n, c in counts)
    ck.eq("suppcounts", counts, sorted([(n, 1) for n in names]))
    ck.eq("suppcounts names", len(names), 4)
    ck.true("make_list (LSan) counted", "make_list" in names)
    ck.eq("ptleak's generated blocks (the one record listed)", len(gen), 1)
    ck.true("valgrind suppressed the still reachable block with ptleak's: %s"
            % short(vlog[-600:]),
            re.search(r"still reachable: 0 bytes in 0 blocks\n.*suppressed: 64 bytes in 1 blocks",
                      vlog))
    ck.done()


@case("vg_suppressions_malformed")
def t_vg_suppressions_malformed():
    """A malformed valgrind suppression file: 'ptleak: FILE:LINE: what is
    wrong', exit 1, the program never run."""
    d = tempfile.mkdtemp(prefix="ptleak-vgm.")
    try:
        p = os.path.join(d, "bad.supp")
        with open(p, "w") as f:
            f.write("{\n   ok\n   Memcheck:Leak\n   fun:malloc\n}\n{\n   bad\n"
                    "   Memcheck:Leak\n   fun:malloc\n   function:main\n}\n")
        rc, out, err = run_cmd([PTLEAK, "--suppressions=" + p, need_target(VG)])
    finally:
        shutil.rmtree(d)
    ck = Check()
    ck.eq("exit status", rc, 1)
    ck.eq("stderr", err, "ptleak: %s:10: expected fun:PATTERN, obj:PATTERN, src:FILE, "
          "'...' or '}', got 'function:main'\n" % p)
    ck.eq("stdout", out, "")
    ck.done()


def go_pprof(path, index):
    """`go tool pprof -top` of PATH for sample INDEX: {function: (flat, cum)}
    in bytes or counts, and the header lines."""
    rc, out, err = run_cmd(["go", "tool", "pprof", "-top", "-unit=B", "-nodefraction=0",
                            "-sample_index=" + index, path],
                           env=dict(target_env(), GOFLAGS="", HOME=os.path.dirname(path)))
    if rc:
        raise Fail("go tool pprof failed (%d): %s" % (rc, short(err)))
    top = {}
    for l in out.splitlines():
        m = re.match(r"\s*(\d+)B?\s+\S+%\s+\S+%\s+(\d+)B?\s+\S+%\s+(.+)$", l)
        if m:
            top[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return top, out.splitlines()[:4]


@case("vg_pprof")
def t_vg_pprof():
    """--pprof FILE: a gzip'd profile that `go tool pprof -top` reads:
    inuse_space/objects are the blocks in use at exit, alloc_space/objects
    every allocation (churn's 10 freed blocks of 100 bytes too), by
    function; the executable is the first mapping, with its build id."""
    if not shutil.which("go"):
        raise Skip("go not installed (golang-go: make deps): the profile is not read back")
    d = tempfile.mkdtemp(prefix="ptleak-pp.")
    try:
        p = os.path.join(d, "heap.%p.pb.gz")
        rc, out, err = run_cmd([PTLEAK, "-q", "--pprof", p, "--log-file=%s/log" % d,
                                need_target(VG)])
        files = [f for f in os.listdir(d) if f.endswith(".pb.gz")]
        if len(files) != 1:
            raise Fail("profile files: %s" % files)
        path = os.path.join(d, files[0])
        with open(path, "rb") as f:
            magic = f.read(2)
        with gzip.open(path) as f:
            f.read()
        tops = {i: go_pprof(path, i) for i in ("inuse_space", "inuse_objects",
                                              "alloc_space", "alloc_objects")}
        bid = subprocess.run(["readelf", "-n", need_target(VG)], capture_output=True,
                             text=True).stdout
    finally:
        shutil.rmtree(d)
    ck = Check()
    ck.eq("exit status", rc, 0)
    ck.eq("gzip magic", magic, b"\x1f\x8b")
    want = {
        "inuse_space": {"malloc": (214, 214), "calloc": (64, 64), "main": (0, 278),
                        "lose": (0, 100), "make_list": (0, 64)},
        "inuse_objects": {"malloc": (4, 4), "calloc": (1, 1), "main": (0, 5),
                          "lose": (0, 1), "make_list": (0, 2)},
        "alloc_space": {"malloc": (1214, 1214), "calloc": (64, 64), "main": (0, 1278),
                        "lose": (0, 100), "make_list": (0, 64), "churn": (0, 1000)},
        "alloc_objects": {"malloc": (14, 14), "calloc": (1, 1), "main": (0, 15),
                          "lose": (0, 1), "make_list": (0, 2), "churn": (0, 10)},
    }
    for index, w in want.items():
        top, head = tops[index]
        ck.eq("%s: (flat, cum) by function" % index,
              {k: v for k, v in top.items() if k in w or v != (0, 0)}, w)
    head = tops["inuse_space"][1]
    ck.eq("File:", head[0], "File: " + VG)
    m = re.search(r"Build ID: (\w+)", bid)
    ck.eq("Build ID:", head[1], "Build ID: " + (m.group(1) if m else "?"))
    ck.eq("Type:", head[2], "Type: inuse_space")
    ck.done()


@case("vg_file_names_expanded")
def t_vg_file_names_expanded():
    """%p and %q{VAR} in every output file's name (-o, --json, --xml-file,
    --pprof): the target's pid and the variable's value; %q of a variable
    not set is refused before the program runs (exit 1, one line)."""
    need_ptleak()
    d = tempfile.mkdtemp(prefix="ptleak-fn.")
    env = dict(target_env(), PTLEAK_T_TAG="tag")
    try:
        rc, out, err = run_cmd([PTLEAK, "-q", "-o", d + "/t.%q{PTLEAK_T_TAG}.%p",
                                "--json", d + "/j.%p.%q{PTLEAK_T_TAG}",
                                "--xml=yes", "--xml-file=" + d + "/x.%p",
                                "--pprof", d + "/p.%p", need_target(VG)], env=env)
        got = sorted(os.listdir(d))
        pid = None
        for f in got:
            if f.startswith("j."):
                with open(os.path.join(d, f)) as fh:
                    pid = json.load(fh)["target"]["pid"]
        rc2, out2, err2 = run_cmd([PTLEAK, "--json", d + "/%q{PTLEAK_T_UNSET}.json",
                                   need_target(VG)], env=env)
        got2 = sorted(os.listdir(d))
    finally:
        shutil.rmtree(d)
    ck = Check()
    ck.eq("exit status", rc, 0)
    ck.eq("files", got, sorted(["t.tag.%s" % pid, "j.%s.tag" % pid, "x.%s" % pid,
                                "p.%s" % pid]))
    ck.eq("unset variable: exit status, stderr", (rc2, err2, out2),
          (1, "ptleak: %s/%%q{PTLEAK_T_UNSET}.json: %%q{PTLEAK_T_UNSET}: environment "
              "variable PTLEAK_T_UNSET is not set\n" % d, ""))
    ck.eq("unset variable: no file written", got2, got)
    ck.done()


@case("vg_make_install")
def t_vg_make_install():
    """make install DESTDIR=D PREFIX=P puts the binary and the man page
    there; make uninstall removes them.  D and P hold a space, D a quote
    and a non-ASCII letter too."""
    if not shutil.which("make"):
        raise Skip("make not installed")
    top = tempfile.mkdtemp(prefix="ptleak-inst.")
    d = os.path.join(top, "stage it's \u00e9")
    try:
        # -o: the binary under test is installed as it is, never rebuilt
        # from sources edited since (a copied build dir, a flake run);
        # B relative to the checkout: make cannot name a path with a space
        b = os.path.relpath(BUILD, ROOT)
        base = ["make", "-s", "-C", ROOT, "B=" + b, "-o", os.path.join(b, "ptleak"),
                "DESTDIR=" + d, "PREFIX=/opt/pt leak"]
        # not the jobserver of a `make -j2 check` around us (its warning)
        menv = {k: v for k, v in target_env().items()
                if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        rc, out, err = run_cmd(base + ["install"], timeout=TIMEOUT * 5, env=menv)
        files = sorted(os.path.relpath(os.path.join(r, f), d)
                       for r, _, fs in os.walk(d) for f in fs)
        vrc, vout, verr = run_cmd([os.path.join(d, "opt/pt leak/bin/ptleak"), "--version"])
        urc, uout, uerr = run_cmd(base + ["uninstall"], env=menv)
        left = sorted(os.path.relpath(os.path.join(r, f), d)
                      for r, _, fs in os.walk(d) for f in fs)
    finally:
        shutil.rmtree(top)
    ck = Check()
    ck.eq("make install", (rc, err), (0, ""))
    ck.eq("installed", files, ["opt/pt leak/bin/ptleak", "opt/pt leak/share/man/man1/ptleak.1"])
    ck.eq("installed ptleak --version", (vrc, vout.splitlines()[-1:]),
          (0, ["engines: recorder breakpoints"]))
    ck.eq("make uninstall", (urc, left), (0, []))
    ck.done()


@case("vg_outputs_unwritable")
def t_vg_outputs_unwritable():
    """--xml-file, --pprof and --log-file (named after the pid, not known
    yet) that cannot be written: one line naming the file as given, exit 1,
    before the program runs."""
    need_ptleak()
    ck = Check()
    for opts, name in ((["--xml=yes", "--xml-file=/nonexistent/x.xml"], "/nonexistent/x.xml"),
                       (["--pprof", "/nonexistent/p.gz"], "/nonexistent/p.gz"),
                       (["--log-file=/nonexistent/l.%p"], "/nonexistent/l.%p")):
        rc, out, err = run_cmd([PTLEAK] + opts + [need_target(VG)])
        ck.eq("%s: exit status, stdout, stderr" % opts, (rc, out, err),
              (1, "", "ptleak: cannot write %s: No such file or directory\n" % name))
    ck.done()


@case("vg_xml_cxx_side_by_side")
def t_vg_xml_cxx_side_by_side():
    """C++ (h_vector: a vector of strings lost): valgrind's stacks start at
    operator new, which it replaces; ptleak's XML and generated
    suppressions start there too (the malloc under it left out), so the
    lost records' functions and suppression frames (fun:_Znwm ...) are
    valgrind's."""
    vg = shutil.which("valgrind")
    if not vg:
        raise Skip("valgrind not installed (make deps)")
    tgt = need_target("h_vector")
    d = tempfile.mkdtemp(prefix="ptleak-vgc.")
    try:
        run_cmd([vg, "-q", "--leak-check=full", "--run-libc-freeres=no",
                 "--run-cxx-freeres=no", "--show-leak-kinds=definite,indirect,possible",
                 "--xml=yes", "--xml-file=%s/vg.xml" % d,
                 "--gen-suppressions=all", tgt], timeout=TIMEOUT * 3)
        # valgrind's command line (its default is --leak-check=summary)
        rc, out, err = run_cmd([PTLEAK, "-q", "--leak-check=full",
                                "--show-leak-kinds=definite,indirect,possible",
                                "--track-fds=no", "--xml=yes",
                                "--xml-file=%s/pt.xml" % d, "--gen-suppressions=all", tgt])
        lost = lambda root: sorted(
            (e.findtext("kind"), int(e.findtext("xwhat/leakedbytes")),
             tuple(f.findtext("fn") for f in e.findall("stack/frame")),
             tuple(f[0].tag + ":" + f[0].text for f in e.findall("suppression/sframe")))
            for e in root.findall("error"))
        vlost = lost(ET.parse(os.path.join(d, "vg.xml")).getroot())
        plost = lost(ET.parse(os.path.join(d, "pt.xml")).getroot())
    finally:
        shutil.rmtree(d)
    ck = Check()
    ck.eq("exit status", rc, 0)
    ck.eq("kinds and bytes", [(k, b) for k, b, _, _ in plost],
          [("Leak_DefinitelyLost", 322), ("Leak_IndirectlyLost", 128),
           ("Leak_IndirectlyLost", 170)])
    for p, v in zip(plost, vlost):
        ck.eq("record vs valgrind", p, v)
    ck.eq("records vs valgrind", len(plost), len(vlost))
    ck.true("suppressions start at fun:_Znwm: %s" % short(plost),
            all(s[0] == "fun:_Znwm" for _, _, _, s in plost))
    ck.done()
