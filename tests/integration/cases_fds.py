# File-descriptor cases: the f_* targets, --fd-only / --heap-only, fd:
# suppressions and --error-exitcode on descriptors.  Fd and check_fds are
# cases_attach.py's too (attach_fds).  Exec'd in run.py's namespace (case,
# ptleak, Check, T, frame_errors, ...).


class Fd:
    """An expected fd record: TARGET a string or ("re", pattern); HEAD the
    frames expected from frame 1 on (the JSON stack); EXACT: nothing
    more (an empty HEAD with EXACT: no stack at all)."""

    def __init__(self, fd, type_, target, opened_by, head=(), exact=True, text_suffix=""):
        self.fd, self.type, self.target, self.opened_by = fd, type_, target, opened_by
        self.head, self.exact, self.text_suffix = list(head), exact, text_suffix


def _target_ok(got, want):
    if isinstance(want, tuple):
        return isinstance(got, str) and re.fullmatch(want[1], got) is not None
    return got == want


INHERITED = 3	# run_cmd: stdin, stdout, stderr


def check_fds(ck, name, rep, records, inherited=INHERITED, open_=None):
    """REP's fds object: OPEN_ open (default: inherited + the records),
    INHERITED, and exactly RECORDS, by fd."""
    f = rep.get("fds")
    if not isinstance(f, dict):
        ck.err("fds is %s, want an object" % short(f))
        return
    if open_ is None:
        open_ = inherited + len(records)
    ck.eq("fds (open, inherited)", (f["open"], f["inherited"]), (open_, inherited))
    got = f["records"]
    ck.eq("fd records' numbers", [r["fd"] for r in got], [e.fd for e in records])
    for r, e in zip(got, records):
        w = "fd %d" % e.fd
        ck.eq("%s type" % w, r["type"], e.type)
        if not _target_ok(r["target"], e.target):
            ck.err("%s target %s, want %s" % (w, short(r["target"]), short(e.target)))
        ck.eq("%s opened_by" % w, r["opened_by"], e.opened_by)
        st = [{"function": r["opened_by"]}] + r["stack"]	# frame 0 = the function
        for i, fe in enumerate(e.head, 1):
            if i >= len(st):
                ck.err("%s: stack has %d frames, want at least %d" % (w, len(st), len(e.head) + 1))
                break
            for m in frame_errors(name, i, st[i], fe):
                ck.err("%s: %s" % (w, m))
        if e.exact and len(st) != len(e.head) + 1:
            ck.err("%s: stack %s, want %d frames" % (
                w, [x.get("function") for x in st], len(e.head) + 1))


def expected_fd_text(name, records, inherited=INHERITED, label="open at exit", open_=None):
    if open_ is None:
        open_ = inherited + len(records)
    lines = ["FILE DESCRIPTORS: %d %s (%d inherited)" % (open_, label, inherited)]
    for e in records:
        if isinstance(e.target, tuple):
            lines.append(("re", r"fd %d -> %s, opened by %s%s" % (
                e.fd, e.target[1], re.escape(e.opened_by), re.escape(e.text_suffix))))
        else:
            lines.append("fd %d -> %s, opened by %s%s" % (e.fd, e.target, e.opened_by, e.text_suffix))
        if e.head or not e.exact:
            lines.append(("re", r"   at 0x[0-9a-f]+: %s \(.*\)" % re.escape(e.opened_by)))
        for fe in e.head:
            lines.append(("re", r"   by 0x[0-9a-f]+: %s \(%s:%d\)" % (
                re.escape(fe.function), re.escape(os.path.basename(source_path(name))),
                line(name, fe.marker))))
        if e.exact:
            lines.append("")
    return lines


def check_fd_text(ck, where, text, expected):
    """The text report's FILE DESCRIPTORS section starts with EXPECTED
    (exact strings or ("re", pattern)); with a non-exact record, the
    lines up to its blank are skipped."""
    content = [c for _, c in report_lines(text)]
    heads = [i for i, c in enumerate(content) if c.startswith("FILE DESCRIPTORS:")]
    if len(heads) != 1:
        ck.err("%s: %d 'FILE DESCRIPTORS:' lines, want 1" % (where, len(heads)))
        return
    content = content[heads[0]:]
    i = 0
    for want in expected:
        g = content[i] if i < len(content) else None
        if isinstance(want, tuple):
            ok = g is not None and re.fullmatch(want[1], g)
        else:
            ok = g == want
        if not ok:
            ck.err("%s: FILE DESCRIPTORS line %d is %s, want %s" % (where, i + 1, short(g, 120),
                                                                   short(want, 120)))
            return
        i += 1
    rest = [c for c in content[i:] if c.startswith("fd ")]
    if rest:
        ck.err("%s: extra fd records: %s" % (where, short(rest)))


def f_basic_fds():
    return [
        Fd(3, "file", "/dev/null", "open", [T("keep_null", "open_leak"), T("main", "call_keep_null")]),
        Fd(4, "socket", ("re", r"socket:\[\d+\]"), "socket",
           [T("leak_socket", "socket"), T("main", "call_socket")]),
        Fd(5, "pipe", ("re", r"pipe:\[\d+\]"), "pipe",
           [T("leak_pipe_end", "pipe"), T("main", "call_pipe")]),
        Fd(6, "file", "/etc/hostname", "fopen", [T("leak_file", "fopen"), T("main", "call_fopen")]),
    ]


@case("f_basic", engines=True)
def t_f_basic():
    """An open/close loop with one kept, a pipe's write end, a socket, a
    FILE from fopen (named after fopen, its caller next); the fclose'd
    FILE and the closedir'd DIR are gone (glibc closes them with
    __close_nocancel).  The heap part is unchanged: the leaked FILE's 472
    bytes, malloc'd inside fopen, are seen."""
    name = "f_basic"
    tgt = need_target(name)
    r = ptleak([tgt], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    check_target(ck, rep, [tgt], {"code": 0})
    recs = f_basic_fds()
    check_fds(ck, name, rep, recs)
    # the leaked FILE stays in glibc's list of streams (valgrind: still
    # reachable)
    check_heap(ck, name, rep, (472, 1), (3, 2, 472 * 2 + 32816), None,
               [Rec("file", 472, 1, "malloc", REACH, tail=[T("leak_file", "fopen"), T("main", "call_fopen")])],
               lib_of(name, "libc.so.6"))
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    ck.done()


@case("f_dup")
def t_f_dup():
    """dup2 onto an open descriptor replaces its record, dup and fcntl
    F_DUPFD create, dup2(fd, fd) does nothing."""
    name = "f_dup"
    tgt = need_target(name)
    r = ptleak([tgt], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    recs = [Fd(4, "file", "/dev/null", "dup2", [T("main", "dup2")]),
            Fd(10, "file", "/dev/null", "fcntl", [T("main", "fcntl")])]
    check_fds(ck, name, rep, recs)
    ck.eq("heap in use", rep["heap"]["in_use"], {"bytes": 0, "blocks": 0})
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    ck.done()


@case("f_raw")
def t_f_raw():
    """syscall(SYS_openat): found in /proc at the report, opened_by
    "unknown", no stack; an fd closed by a raw close is dropped."""
    name = "f_raw"
    tgt = need_target(name)
    r = ptleak([tgt], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    recs = [Fd(3, "file", "/dev/zero", "unknown")]
    check_fds(ck, name, rep, recs)
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    ck.done()


@case("f_kinds")
def t_f_kinds():
    """One leak from each other creating function, with its type and
    target; calls that create nothing (signalfd on an fd, F_GETFL, failed
    opens) add nothing."""
    name = "f_kinds"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        r = ptleak([tgt, d])
        ck.eq("exit status", r.rc, 0)
        rep = need_json(r)
        sock = ("re", r"socket:\[\d+\]")
        recs = [
            Fd(3, "socket", sock, "socketpair", [T("main", "socketpair")]),
            Fd(4, "socket", sock, "socketpair", [T("main", "socketpair")]),
            Fd(5, "anon", "anon_inode:[eventfd]", "eventfd", [T("main", "eventfd")]),
            Fd(6, "anon", "anon_inode:[timerfd]", "timerfd_create", [T("main", "timerfd")]),
            Fd(7, "anon", "anon_inode:[signalfd]", "signalfd", [T("main", "signalfd")]),
            Fd(8, "anon", "anon_inode:[eventpoll]", "epoll_create1", [T("main", "epoll_create1")]),
            Fd(9, "anon", "anon_inode:[eventpoll]", "epoll_create", [T("main", "epoll_create")]),
            Fd(10, "anon", "anon_inode:inotify", "inotify_init1", [T("main", "inotify_init1")]),
            Fd(11, "anon", "anon_inode:inotify", "inotify_init", [T("main", "inotify_init")]),
            Fd(12, "file", "/memfd:f_kinds (deleted)", "memfd_create", [T("main", "memfd")]),
            Fd(13, "file", os.path.join(d, "created"), "creat", [T("main", "creat")]),
            Fd(14, "file", "/dev/null", "openat", [T("main", "openat")]),
            Fd(17, "socket", sock, "accept4", [T("main", "accept4")]),
        ]
        check_fds(ck, name, rep, recs)
    ck.done()


@case("f_range")
def t_f_range():
    """close_range closes a range, marks it with CLOSE_RANGE_CLOEXEC,
    nothing when it fails; closefrom closes the rest."""
    name = "f_range"
    tgt = need_target(name)
    r = ptleak([tgt])
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    check_fds(ck, name, rep, [Fd(fd, "file", "/dev/null", "open", [T("main", "open")])
                              for fd in (3, 7, 8, 9)])
    ck.done()


@case("f_exec")
def t_f_exec():
    """Across an exec: O_CLOEXEC, fopen "re" and FD_CLOEXEC descriptors
    are gone, the one without survives (opened before an exec: its stack
    named the old image, it has none); the new image's are traced.  The
    old image has its report first (reason exec), the last one is the new
    image's, under its argv."""
    name = "f_exec"
    tgt = need_target(name)
    r = ptleak([tgt], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    check_target(ck, rep, [tgt, "again"], {"code": 0})
    heads = re.findall(r"(?m)^ptleak\[\d+\]: report \d+ at (\w+),", r.text)
    ck.eq("reports", heads, ["exec", "exit"])
    r.text = r.text[r.text.index("report 2 at exit"):]
    recs = [Fd(3, "file", "/dev/urandom", "open", [T("main", "after_exec")]),
            Fd(4, "file", "/dev/zero", "open", text_suffix=" before an exec")]
    check_fds(ck, name, rep, recs)
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    ck.done()


@case("f_threads")
def t_f_threads():
    """4 threads open and close concurrently (2 x 2000 descriptors
    each); exactly the 4 each kept are left, with the numbers the threads
    got."""
    name = "f_threads"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d, \
            tempfile.TemporaryDirectory(prefix="ptleak-it.") as nd:
        r = ptleak([tgt, d])
        # the native run in a directory of its own: it writes DIR/fds too
        nrc, nout, _ = run_cmd([tgt, nd])
        ck.eq("target stdout under ptleak (vs native run)", r.stdout, nout)
        ck.eq("exit status (vs native run)", r.rc, nrc)
        rep = need_json(r)
        with open(os.path.join(d, "fds")) as f:
            kept = sorted((int(fd), int(i)) for i, fd in (l.split() for l in f))
        recs = [Fd(fd, "file", os.path.join(d, "leak%d" % i), "open",
                   [T("leak", "thread_leak"), T("worker", "call_leak")], exact=False)
                for fd, i in kept]
        ck.eq("kept descriptors", len(kept), 4)
        check_fds(ck, name, rep, recs)
    ck.done()


@case("f_fork")
def t_f_fork():
    """A forked child's closes and opens, a posix_spawn child's file
    actions and a vfork child's close are not the parent's."""
    name = "f_fork"
    tgt = need_target(name)
    r = ptleak([tgt])
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    check_fds(ck, name, rep, [Fd(3, "file", "/dev/null", "open", [T("main", "parent_null")]),
                              Fd(4, "file", "/dev/full", "open", [T("main", "parent_full")])])
    ck.done()


@case("fd_only")
def t_fd_only():
    """--fd-only: no allocator breakpoint, JSON heap null, no heap text."""
    name = "f_basic"
    tgt = need_target(name)
    r = ptleak([tgt], opts=["--fd-only"], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    ck.eq("heap", rep["heap"], None)
    recs = f_basic_fds()
    check_fds(ck, name, rep, recs)
    content = [c for _, c in report_lines(r.text)]
    ck.true("HEAP SUMMARY in the text", "HEAP SUMMARY:" not in content)
    ck.true("LEAK SUMMARY in the text", "LEAK SUMMARY:" not in content)
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    ck.true("first text line is not the banner: %s" % short(content[:1]),
            re.fullmatch(r"report 1 at exit, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d, \d+\.\d{3} s after "
                         r"tracing started", content[0] if content else ""))
    ck.eq("second text line", content[1:2], ["FILE DESCRIPTORS: 7 open at exit (3 inherited)"])
    ck.done()


@case("heap_only", engines=True)
def t_heap_only():
    """--heap-only: no descriptor breakpoint, JSON fds null, no fd text;
    the heap as by default."""
    name = "f_basic"
    tgt = need_target(name)
    r = ptleak([tgt], opts=["--heap-only"], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    ck.eq("fds", rep["fds"], None)
    ck.eq("heap in use", rep["heap"]["in_use"], {"bytes": 472, "blocks": 1})
    ck.true("FILE DESCRIPTORS in the text",
            not any(c.startswith("FILE DESCRIPTORS") for _, c in report_lines(r.text)))
    ck.true("no HEAP SUMMARY in the text",
            "HEAP SUMMARY:" in [c for _, c in report_lines(r.text)])
    ck.done()


@case("fd_suppressions", engines=True)
def t_fd_suppressions():
    """fd:GLOB against a function and a source file; leak: patterns do
    not touch descriptors; the 'Suppressions used' table lists both."""
    name = "f_basic"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        sf = os.path.join(d, "supp")
        with open(sf, "w") as f:
            f.write("fd:leak_s*\nleak:leak_file\nleak:keep_null\n")
        r = ptleak([tgt], opts=["--suppressions", sf], want_text=True)
        rep = need_json(r)
        recs = [e for e in f_basic_fds() if e.fd != 4]
        # still open: 7, of which 3 inherited
        check_fds(ck, name, rep, recs, open_=7)
        ck.eq("heap suppressed", rep["heap"]["summary"]["suppressed"], {"bytes": 472, "blocks": 1})
        lines = [l.split(": ", 1)[1] if ": " in l else "" for l in (r.text or "").splitlines()]
        i = lines.index("Suppressions used:") if "Suppressions used:" in lines else -1
        ck.eq("table", lines[i:i + 4] if i >= 0 else None,
              ["Suppressions used:", "  count      bytes template",
               "      1          0 leak_s*", "      1        472 leak_file"])
        ck.true("table after the FILE DESCRIPTORS section",
                i > lines.index("FILE DESCRIPTORS: 7 open at exit (3 inherited)"))
        with open(sf, "w") as f:
            f.write("fd:f_basic.c\n")
        rep = need_json(ptleak([tgt], opts=["--suppressions", sf]))
        check_fds(ck, name, rep, [], open_=7)
    ck.done()


@case("fd_error_exitcode")
def t_fd_error_exitcode():
    """--error-exitcode N with descriptor leaks only (f_dup allocates
    nothing): N; with them suppressed or not tracked: the target's own."""
    tgt = need_target("f_dup")
    ck = Check()
    r = ptleak([tgt], opts=["--error-exitcode", "42"])
    ck.eq("fd leaks", r.rc, 42)
    r = ptleak([tgt], opts=["--error-exitcode", "42", "--heap-only"])
    ck.eq("--heap-only", r.rc, 0)
    with tempfile.TemporaryDirectory() as d:
        sf = os.path.join(d, "supp")
        with open(sf, "w") as f:
            f.write("fd:main\n")
        r = ptleak([tgt], opts=["--error-exitcode", "42", "--suppressions", sf])
        ck.eq("suppressed", r.rc, 0)
    ck.done()
