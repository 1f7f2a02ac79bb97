# Process trees (-f, --follow-forks): every child traced from its first
# instruction with its own report, the tree summary, %p and .PID file
# names, exec reports, the exit status over every process.  Exec'd in
# run.py's namespace.  The target is p_tree (tests/targets/p_tree.c):
# every process leaks a known number of bytes through leak() (@leak).


class Tree:
    """ptleak -f [OPTS] ARGS with -o DIR/r.txt and --json DIR/r.json
    (names given by TEXT and JSON, %p allowed): the text and JSON reports
    of every process by pid, the first process's pid."""

    def __init__(self, args, opts=(), text="r.txt", json_name="r.json", env=None,
                 timeout=None):
        need_ptleak()
        self.d = tempfile.mkdtemp(prefix="ptleak-ff.")
        cmd = ptleak_cmd() + ["-f"] + list(opts) + [
            "-o", os.path.join(self.d, text), "--json", os.path.join(self.d, json_name)] + list(args)
        self.rc, self.stdout, self.stderr = run_cmd(cmd, timeout, env)
        self.texts, self.jsons = {}, {}

        def pattern(name):
            return re.escape(name).replace("%p", r"\d+") + r"(\.\d+)?"
        for f in os.listdir(self.d):
            path = os.path.join(self.d, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                data = fh.read()
            if re.fullmatch(pattern(text), f):
                self.texts[f] = data
            elif not re.fullmatch(pattern(json_name), f):
                raise Fail("unexpected file %s" % f)
            else:
                try:
                    self.jsons[f] = check_shape(json.loads(data))
                except ValueError as e:
                    raise Fail("%s is not JSON: %s" % (f, e))
        shutil.rmtree(self.d, ignore_errors=True)

    def by_pid(self):
        """{pid: JSON report} (the last report of each process)."""
        return {rep["target"]["pid"]: rep for rep in self.jsons.values()}

    def first_text(self, name="r.txt"):
        if name not in self.texts:
            raise Fail("no text report %s (files: %s; stderr: %s)" % (
                name, sorted(self.texts), short(self.stderr)))
        return self.texts[name]


def lost(rep):
    s = rep["heap"]["summary"]
    return s["definitely_lost"]["bytes"]


def tree_rows(text):
    """[(depth, pid, command, status, lost bytes, fds)] of the tree summary."""
    rows, inside = [], False
    for pid, c in report_lines(text):
        if re.match(r"PROCESS TREE: \d+ process", c):
            inside = True
            continue
        if not inside:
            continue
        m = re.match(r"  ( *)(\d+) (.*): (exit \d+|killed by signal \d+|running|let go), "
                     r"lost ([\d,]+) bytes, (\d+) fds?$", c)
        if not m:
            continue
        rows.append((len(m.group(1)) // 2, int(m.group(2)), m.group(3), m.group(4),
                     int(m.group(5).replace(",", "")), int(m.group(6))))
    return rows


def check_leak_record(ck, pid, rep, nbytes, inherited=()):
    """REP's records: NBYTES definitely lost, allocated by malloc in leak(),
    and the leaks INHERITED from its parent (a fork child starts with its
    parent's blocks, as under valgrind --trace-children=yes)."""
    recs = rep["heap"]["records"]
    lostrecs = [r for r in recs if r["kind"] == "definitely_lost"]
    ck.eq("process %d: definitely lost records (bytes, blocks)" % pid,
          sorted((r["bytes"], r["blocks"]) for r in lostrecs),
          sorted(([(nbytes, 1)] if nbytes else []) + [(b, 1) for b in inherited]))
    for r in lostrecs:
        ck.eq("process %d: allocator" % pid, r["allocator"], "malloc")
        fr = r["stack"][0] if r["stack"] else {}
        ck.eq("process %d: first frame" % pid, (fr.get("function"), fr.get("file"), fr.get("line")),
              ("leak", "p_tree.c", line("p_tree", "leak")))


@case("forks_tree", engines=True)
def t_forks_tree():
    """fork, vfork + exec, posix_spawn and system(): 5 processes, each
    with its own text and JSON report (NAME.PID for the children), each
    leak exact and named; the children's fd leak; the tree summary at the
    end of the first process's text report lists all five with their
    command line, exit status and leaks; the output is the native one."""
    tgt = need_target("p_tree")
    t = Tree([tgt, "tree"])
    ck = Check()
    nrc, nout, _ = native("p_tree", ["tree"])
    ck.eq("stdout (vs native)", t.stdout, nout)
    ck.eq("exit status", t.rc, 0)
    reps = t.by_pid()
    ck.eq("JSON reports", len(reps), 5)
    first = t.jsons.get("r.json")
    if not first:
        raise Fail("no r.json: %s" % sorted(t.jsons))
    fpid = first["target"]["pid"]
    ck.eq("files", sorted(t.jsons), sorted(["r.json"] + ["r.json.%d" % p for p in reps if p != fpid]))
    ck.eq("text files", sorted(t.texts), sorted(["r.txt"] + ["r.txt.%d" % p for p in reps if p != fpid]))
    want = {  # argv -> (lost, exit)
        (tgt, "tree"): None,
        ("p_tree", "leaf", "300", "3"): (300, {"code": 3}),
        ("p_tree", "leaf", "400", "0"): (400, {"code": 0}),
        (tgt, "leaf", "500", "0"): (500, {"code": 0}),
    }
    got_argv = sorted(tuple(r["target"]["argv"]) for r in reps.values())
    ck.eq("argv of the processes", got_argv,
          sorted([(tgt, "tree"), (tgt, "tree"), ("p_tree", "leaf", "300", "3"),
                  ("p_tree", "leaf", "400", "0"), (tgt, "leaf", "500", "0")]))
    for pid, rep in reps.items():
        argv = tuple(rep["target"]["argv"])
        ck.eq("process %d: reason" % pid, rep["reason"], "exit")
        if pid == fpid:
            check_leak_record(ck, pid, rep, 100)
            ck.eq("first process's fds", rep["fds"]["records"], [])
        elif argv == (tgt, "tree"):
            # the fork child: 200 bytes, and its parent's 100 leaked
            # before the fork; fd 3 on /dev/null
            check_leak_record(ck, pid, rep, 200, inherited=[100])
            ck.eq("fork child: exit", rep["target"]["exit"], {"code": 0})
            fds = [(f["fd"], f["target"], f["opened_by"],
                    f["stack"][0]["function"] if f["stack"] else None,
                    f["stack"][0]["line"] if f["stack"] else None)
                   for f in rep["fds"]["records"]]
            ck.eq("fork child: fds", fds, [(3, "/dev/null", "open", "tree", line("p_tree", "child_fd"))])
        elif argv in want and want[argv]:
            check_leak_record(ck, pid, rep, want[argv][0])
            ck.eq("process %d: exit" % pid, rep["target"]["exit"], want[argv][1])
            ck.eq("process %d: fds" % pid, rep["fds"]["records"], [])
    text = t.first_text()
    rows = tree_rows(text)
    bypid = {r[1]: r for r in rows}
    ck.eq("tree: pids", sorted(bypid), sorted(reps))
    ck.true("tree summary is the text's end: %s" % short(text[-300:]),
            re.search(r"PROCESS TREE: 5 processes\n(ptleak\[\d+\]:   .*\n){5}$", text))
    for pid, rep in reps.items():
        if pid not in bypid:
            continue
        depth, _, cmd, status, lb, fds = bypid[pid]
        ck.eq("tree row %d: depth" % pid, depth, 0 if pid == fpid else 1)
        ck.eq("tree row %d: command" % pid, cmd, " ".join(rep["target"]["argv"]))
        ex = rep["target"]["exit"]
        ck.eq("tree row %d: status" % pid, status, "exit %d" % ex["code"])
        ck.eq("tree row %d: lost" % pid, lb, lost(rep))
        ck.eq("tree row %d: fds" % pid, fds, len(rep["fds"]["records"]))
    # each process numbers its own reports, its images' together
    for f, txt in sorted(t.texts.items()):
        nums = [int(n) for n in re.findall(r"(?m)^ptleak\[\d+\]: report (\d+) at", txt)]
        ck.eq("%s: report numbers" % f, nums, list(range(1, len(nums) + 1)))
    # system(): sh execs p_tree; the sh image is reported first
    sys_pid = [p for p, r in reps.items() if tuple(r["target"]["argv"]) == (tgt, "leaf", "500", "0")]
    if sys_pid:
        st = t.texts.get("r.txt.%d" % sys_pid[0], "")
        ck.eq("system() child: its reports", re.findall(r"report \d+ at (\w+),", st), ["exec", "exit"])
    ck.done()


@case("forks_pid_names")
def t_forks_pid_names():
    """%p in -o and --json is each process's pid, the first one's too;
    no file without it."""
    tgt = need_target("p_tree")
    t = Tree([tgt, "killed"], text="t.%p.txt", json_name="j.%p.json")
    ck = Check()
    reps = t.by_pid()
    ck.eq("processes", len(reps), 2)
    ck.eq("JSON files", sorted(t.jsons), sorted("j.%d.json" % p for p in reps))
    ck.eq("text files", sorted(t.texts), sorted("t.%d.txt" % p for p in reps))
    ck.done()


@case("forks_killed_child", engines=True)
def t_forks_killed_child():
    """A child killed by a signal (SIGSEGV's default action): its report
    with its 700 bytes and exit {"signal": 11}; the tree says so; the
    parent leaks nothing, yet --error-exitcode counts the child's leak."""
    tgt = need_target("p_tree")
    t = Tree([tgt, "killed"], opts=["--error-exitcode=9"])
    ck = Check()
    ck.eq("stdout", t.stdout, "child: signal 11\n")
    ck.eq("exit status (--error-exitcode: the child's leak)", t.rc, 9)
    reps = t.by_pid()
    fpid = t.jsons["r.json"]["target"]["pid"] if "r.json" in t.jsons else None
    ck.eq("processes", len(reps), 2)
    for pid, rep in reps.items():
        if pid == fpid:
            check_leak_record(ck, pid, rep, 0)
            ck.eq("parent exit", rep["target"]["exit"], {"code": 0})
        else:
            check_leak_record(ck, pid, rep, 700)
            ck.eq("child exit", rep["target"]["exit"], {"signal": 11})
    rows = tree_rows(t.first_text())
    ck.eq("tree", [(d, s, lb) for d, _, _, s, lb, _ in rows],
          [(0, "exit 0", 0), (1, "killed by signal 11", 700)])
    ck.done()


@case("forks_error_exitcode_without_f")
def t_forks_error_exitcode_without_f():
    """Without -f the child is not traced: its leak does not count, the
    parent leaks nothing, the status is the target's (0), one report."""
    tgt = need_target("p_tree")
    r = ptleak([tgt, "killed"], opts=["--error-exitcode=9"], want_text=True)
    ck = Check()
    ck.eq("exit status", r.rc, 0)
    ck.eq("reports", len(re.findall(r"report \d+ at", r.text or "")), 1)
    ck.true("no tree summary", "PROCESS TREE" not in (r.text or ""))
    ck.done()


@case("forks_orphan", engines=True)
def t_forks_orphan():
    """A child that outlives its parent: ptleak reports the parent at its
    exit, goes on tracing the child, reports its 600 bytes when it exits,
    then the tree; the status is the parent's."""
    tgt = need_target("p_tree")
    t = Tree([tgt, "orphan"])
    ck = Check()
    ck.eq("exit status", t.rc, 0)
    reps = t.by_pid()
    ck.eq("processes", len(reps), 2)
    fpid = t.jsons["r.json"]["target"]["pid"]
    for pid, rep in reps.items():
        check_leak_record(ck, pid, rep, 100 if pid == fpid else 600)
    rows = tree_rows(t.first_text())
    ck.eq("tree", [(d, s, lb) for d, _, _, s, lb, _ in rows],
          [(0, "exit 0", 100), (1, "exit 0", 600)])
    ck.done()


@case("forks_daemon", engines=True)
def t_forks_daemon():
    """Double fork + setsid: the daemon (grandchild) is traced to its end
    and reported (800 bytes); ptleak exits after it, nothing left traced."""
    tgt = need_target("p_tree")
    with tempfile.TemporaryDirectory(prefix="ptleak-ff.") as d:
        out = os.path.join(d, "out")
        env = dict(target_env(), P_TREE_OUT=out)
        t = Tree([tgt, "daemon"], env=env)
        ck = Check()
        ck.eq("exit status", t.rc, 0)
        ck.true("the daemon finished before ptleak exited", os.path.exists(out))
    reps = t.by_pid()
    ck.eq("processes", len(reps), 3)
    rows = tree_rows(t.first_text())
    ck.eq("tree", [(d, s, lb) for d, _, _, s, lb, _ in rows],
          [(0, "exit 0", 0), (1, "exit 0", 0), (2, "exit 0", 800)])
    ck.done()


def bomb_expect(n, depth=0):
    """[(depth, lost)] of p_tree bomb N, in the tree's order: a process's
    own leak and those it inherited from its ancestors (leaked before they
    forked), 10 x (depth + 1) + ... + 10."""
    left = (n - 1) // 2
    right = n - 1 - left
    out = [(depth, 10 * (depth + 1) * (depth + 2) // 2)]
    if left > 0:
        out += bomb_expect(left, depth + 1)
    if right > 0:
        out += bomb_expect(right, depth + 1)
    return out


@case("forks_bomb", engines=True)
def t_forks_bomb():
    """A fork bomb bounded at 200 processes (a binary tree, up to 8
    deep), each leaking 10 x (its depth + 1) bytes before it forks: 200
    reports, each exact (its leak and its ancestors'), the tree summary in
    order with every process's leak."""
    tgt = need_target("p_tree")
    t = Tree([tgt, "bomb", "200"], opts=["-q"], timeout=max(TIMEOUT, 240))
    ck = Check()
    ck.eq("exit status", t.rc, 0)
    reps = t.by_pid()
    ck.eq("reports", len(reps), 200)
    rows = tree_rows(t.first_text())
    want = bomb_expect(200)
    ck.eq("tree (depth, lost)", [(d, lb) for d, _, _, _, lb, _ in rows], want)
    ck.eq("total lost", sum(lost(r) for r in reps.values()), sum(lb for _, lb in want))
    # one record per generation: 10, 20, ... 10 x (depth + 1)
    bad = [p for p, r in reps.items()
           if sorted(x["bytes"] for x in r["heap"]["records"] if x["kind"] == "definitely_lost")
           != [10 * (k + 1) for k in range(len([x for x in r["heap"]["records"]
                                                if x["kind"] == "definitely_lost"]))]]
    ck.eq("processes whose leaks are not one record a generation", bad, [])
    ck.done()


@case("forks_busy_thread", engines=True)
def t_forks_busy_thread():
    """A thread allocates without pause while the main thread forks 20
    children (a fork may come while that thread is inside malloc): every
    child reports exactly its 64 bytes, the parent nothing lost."""
    tgt = need_target("p_tree")
    t = Tree([tgt, "busyfork"])
    ck = Check()
    ck.eq("exit status", t.rc, 0)
    ck.eq("stdout", t.stdout, "busyfork: 0\n")
    reps = t.by_pid()
    ck.eq("processes", len(reps), 21)
    fpid = t.jsons["r.json"]["target"]["pid"]
    for pid, rep in reps.items():
        check_leak_record(ck, pid, rep, 0 if pid == fpid else 64)
    ck.done()


@case("forks_pipeline")
def t_forks_pipeline():
    """sh -c 'a | b | c' under -f: the output is the native one, every
    process of the pipeline is in the tree."""
    ck = Check()
    script = "printf 'pear\\napple\\nfig\\n' | sort | tr a-z A-Z"
    t = Tree(["/bin/sh", "-c", script], opts=["-q"])
    nrc, nout, _ = run_cmd(["/bin/sh", "-c", script])
    ck.eq("stdout (vs native)", t.stdout, nout)
    ck.eq("exit status", t.rc, nrc)
    rows = tree_rows(t.first_text())
    cmds = sorted(c for _, _, c, _, _, _ in rows)
    ck.true("tree has sort and tr: %s" % cmds,
            any(c.startswith("sort") for c in cmds) and any(c.startswith("tr ") for c in cmds))
    ck.eq("every process exited 0", [s for _, _, _, s, _, _ in rows], ["exit 0"] * len(rows))
    ck.done()


@case("forks_make")
def t_forks_make():
    """make -j2 on a small project under -f: the same output and files as
    without ptleak."""
    ck = Check()
    mk = ("all: a.out b.out c.out\n\t@cat a.out b.out c.out\n"
          "%.out: %.in\n\t@tr a-z A-Z < $< > $@\n")

    def project(d):
        with open(os.path.join(d, "Makefile"), "w") as f:
            f.write(mk)
        for n in "abc":
            with open(os.path.join(d, n + ".in"), "w") as f:
                f.write("file %s\n" % n)

    with tempfile.TemporaryDirectory(prefix="ptleak-ff.") as d1, \
            tempfile.TemporaryDirectory(prefix="ptleak-ff.") as d2:
        project(d1)
        project(d2)
        rc, out, err = run_cmd(ptleak_cmd() + ["-f", "-q", "-o", os.path.join(d1, "r.txt"),
                                               "make", "-s", "-j2", "-C", d1])
        nrc, nout, _ = run_cmd(["make", "-s", "-j2", "-C", d2])
        ck.eq("exit status", rc, nrc)
        ck.eq("stdout (vs native)", out.replace(d1, "D"), nout.replace(d2, "D"))
        for n in "abc":
            with open(os.path.join(d1, n + ".out")) as f:
                ck.eq(n + ".out", f.read(), "FILE %s\n" % n.upper())
        with open(os.path.join(d1, "r.txt")) as f:
            rows = tree_rows(f.read())
        ck.true("make and its 4 shells (or commands) in the tree: %d rows" % len(rows),
                len(rows) >= 5)
    ck.done()


@case("exec_report")
def t_exec_report():
    """Without -f, the launched program execs: its image is reported
    first (reason exec, scanned: its 100 bytes definitely lost, named),
    then the new image's at exit (900 bytes) under the same pid."""
    tgt = need_target("p_tree")
    r = ptleak([tgt, "execself"], want_text=True)
    ck = Check()
    ck.eq("exit status", r.rc, 0)
    rep = need_json(r)
    ck.eq("JSON: the last report's reason", rep["reason"], "exit")
    ck.eq("JSON: argv", rep["target"]["argv"], ["p_tree", "leaf", "900", "0"])
    check_leak_record(ck, rep["target"]["pid"], rep, 900)
    text = r.text or ""
    ck.eq("reports", re.findall(r"report \d+ at (\w+),", text), ["exec", "exit"])
    first = text[:text.index("report 2 at exit")] if "report 2 at exit" in text else text
    ck.true("exec report: 100 bytes definitely lost in leak(): %s" % short(first),
            re.search(r"100 bytes in 1 block are definitely lost in loss record 1 of \d+"
                      r"( \(age [^)]*\))?\nptleak\[\d+\]:    at 0x[0-9a-f]+: malloc .*\n"
                      r"ptleak\[\d+\]:    by 0x[0-9a-f]+: leak \(p_tree.c:%d\)" % line("p_tree", "leak"),
                      first))
    ck.done()


@case("forks_attach", engines=["breakpoints"])
def t_forks_attach():
    """-p PID -f: a child forked after the attach is followed (its 250
    bytes reported in r.json.PID); the tree lists both."""
    tgt = need_target("p_tree")
    p = subprocess.Popen([tgt, "attachfork"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=target_env())
    ck = Check()
    try:
        out = Lines(p.stdout)
        out.expect("ready", 20)
        a = Attached(p.pid, ["-f"])
        p.send_signal(signal.SIGUSR2)
        ck.eq("ptleak's exit status", a.wait(60), 0)
        p.wait(20)
        files = sorted(os.listdir(a.d))
        kids = [f for f in files if re.fullmatch(r"r\.json\.\d+", f)]
        ck.eq("one child's JSON report: %s" % files, len(kids), 1)
        for f in kids:
            with open(os.path.join(a.d, f)) as fh:
                rep = check_shape(json.load(fh))
            check_leak_record(ck, rep["target"]["pid"], rep, 250)
        with open(a.txt) as fh:
            rows = tree_rows(fh.read())
        ck.eq("tree (depth, status, lost)", [(d, s, lb) for d, _, _, s, lb, _ in rows],
              [(0, "exit 0", 0), (1, "exit 0", 250)])
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    ck.done()


@case("forks_sigterm_detach", engines=True)
def t_forks_sigterm_detach():
    """SIGTERM to ptleak -f while three children run (allocating): every
    process gets its report (reason detach) and is let go: no child is
    left traced or stopped after ptleak exits, all finish normally."""
    tgt = need_target("p_tree")
    need_ptleak()
    d = tempfile.mkdtemp(prefix="ptleak-ff.")
    cmd = ptleak_cmd() + ["-f", "-q", "-o", os.path.join(d, "r.txt"), tgt, "sleepers"]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=target_env(), start_new_session=True)
    ck = Check()
    try:
        out = Lines(p.stdout)
        out.expect("started", 20)
        kids = [int(l.split()[1]) for l in out.seen if l.startswith("child ")]
        ck.eq("children", len(kids), 3)
        p.send_signal(signal.SIGTERM)
        ck.eq("ptleak's exit status", p.wait(30), 0)
        for k in kids:
            try:
                with open("/proc/%d/status" % k) as f:
                    st = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
            except FileNotFoundError:
                continue	# finished already
            ck.eq("child %d: TracerPid" % k, st["TracerPid"].strip(), "0")
            ck.true("child %d stopped: %s" % (k, st["State"]), st["State"].split()[0] not in "tT")
        out.expect("children: 0 failed", 20)
        reasons = []
        for f in sorted(os.listdir(d)):
            with open(os.path.join(d, f)) as fh:
                reasons += re.findall(r"report \d+ (at \w+)", fh.read())
        ck.eq("reports", reasons, ["at detach"] * 4)
    finally:
        _kill_group(p.pid)
        p.wait()
        shutil.rmtree(d, ignore_errors=True)
    ck.done()


@case("dlclose_names", engines=True)
def t_dlclose_names():
    """A block allocated in a library dlclose'd before the report: its
    frame keeps its function, file and line, its module says
    '(unloaded)' (it used to be a bare pc)."""
    r = ptleak([need_target("r_procs")])
    ck = Check()
    rep = need_json(r)
    lib = os.path.join(os.path.dirname(need_target("r_procs")), "r_dlib.so")
    recs = [x for x in rep["heap"]["records"] if x["bytes"] == 77]
    ck.eq("records of 77 bytes", len(recs), 1)
    for x in recs:
        fr = x["stack"][0]
        ck.eq("frame in the unloaded library",
              (fr["function"], fr["file"], fr["line"], fr["module"]),
              ("r_dlib_work", "r_dlib.c", line("lib/r_dlib", "dlib_keep"),
               os.path.realpath(lib) + " (unloaded)"))
    ck.done()


class PtyStall(Fail):
    """Nothing at all from the terminal where output was due."""


# read, poll, select, pselect6, ppoll on x86-64
WAIT_INPUT_SYSCALLS = ("0", "7", "23", "270", "271")


def terminal_modes(fd):
    """The foreground group and the local modes (c_lflag) of the terminal
    whose master is FD (OSError if they cannot be read)."""
    import fcntl
    import struct
    import termios
    pgrp = os.tcgetpgrp(fd)
    n = struct.unpack("I", fcntl.ioctl(fd, 0x80045430, b"\0" * 4))[0]	# TIOCGPTN
    with open("/dev/pts/%d" % n, "rb", buffering=0) as t:
        return pgrp, termios.tcgetattr(t.fileno())[3]


def processes():
    """(pid, name, state, group, session, system call fields) of every
    process that can be read."""
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                st = f.read()
            with open("/proc/%s/syscall" % p) as f:
                sc = f.read().split()
            v = st[st.rindex(")") + 2:].split()
            yield (p, st[st.index("(") + 1:st.rindex(")")], v[0], int(v[2]),
                   int(v[3]), sc)
        except (OSError, ValueError):
            continue


def terminal_state(fd, sid):
    """The foreground group of FD's terminal, its local modes, and each
    process of session SID: pid, group, state, system call."""
    try:
        fg, lflag = terminal_modes(fd)
        lflag = "%#o" % lflag
    except OSError as e:
        fg = lflag = str(e)
    procs = ["%s(%s) pgrp %d %s syscall %s" % (p, name, pgrp, state, " ".join(sc[:2]))
             for p, name, state, pgrp, s, sc in processes() if s == sid]
    return "foreground group %s, lflag %s, %s" % (fg, lflag, "; ".join(procs))


def terminal_ready(fd, shell, for_shell):
    """Whether the terminal whose master is FD waits for a line of the
    reader it is meant for: FOR_SHELL, bash (pid SHELL) in the foreground
    with readline's modes (no ICANON); else the job in the foreground
    with the job's (ICANON); and a process of the foreground group in a
    system call that reads input."""
    import termios
    try:
        pgrp, lflag = terminal_modes(fd)
    except OSError:
        return False
    if (pgrp == shell) != for_shell or bool(lflag & termios.ICANON) == for_shell:
        return False
    return any(g == pgrp and sc and sc[0] in WAIT_INPUT_SYSCALLS
               for _, _, _, g, _, sc in processes())


def pty_job(cmdline, env=None):
    """CMDLINE as a job of an interactive bash on a pty: a line typed to
    it (read by cat), ^Z, the shell's jobs, fg, another line, ^D, the
    job's status.  The transcript (CMDLINE replaced by CMD), or a Fail.
    ENV: variables for bash besides PATH, PS1 and TERM (a long path goes
    there, CMDLINE naming it "$VAR": what is typed stays short and needs
    no quoting, wherever the checkout is).
    A terminal that stalls (no output at all for 10 s where some was
    due) is given up for a new one, three times at most: under four CPU
    hogs on two CPUs about one `cat | cat` run in four stalls after ^Z,
    without ptleak as with it: bash waits in read() in readline's modes,
    a line typed then never reaches it (the job reads it after fg), the
    stopped pipeline's second cat is inside write()."""
    for attempt in range(3):
        try:
            return pty_job_once(cmdline, env)
        except PtyStall as e:
            last = e
            print("NOTE pty_job: the terminal stalled, a new one: %s" % str(e)[:200],
                  flush=True)
    raise last


def pty_job_once(cmdline, env):
    """pty_job's one try: PtyStall if the terminal stalls."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    pid, fd = pty.fork()
    if pid == 0:
        try:
            # 1000 columns: a typed line never wraps (readline would redraw
            # it scrolled, "<...", when longer than the screen is wide)
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 1000, 0, 0))
            os.execve("/bin/bash", ["bash", "--norc", "--noprofile", "-i"],
                      dict(env or {}, PATH=os.environ.get("PATH", "/usr/bin:/bin"),
                           PS1="PROMPT$ ", TERM="dumb"))
        finally:
            os._exit(127)
    buf = [b""]
    out = []

    def expect(pat, timeout=10.0):
        end = time.time() + timeout
        while True:
            m = re.search(pat.encode(), buf[0])
            if m:
                out.append(buf[0][:m.end()].decode("utf-8", "replace"))
                buf[0] = buf[0][m.end():]
                return
            r, _, _ = select.select([fd], [], [], max(0, end - time.time()))
            data = b""
            if r:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    pass
            if not data:
                why = "end of file" if r else "nothing in %g s" % timeout
                raise (Fail if r else PtyStall)("pty: no /%s/: %s (got %r after %r; %s)" %
                           (pat, why, buf[0][-300:], "".join(out)[-300:],
                            terminal_state(fd, pid)))
            buf[0] += data

    def typed(text, for_shell, timeout=10.0):
        """TEXT written once the terminal waits for its reader's line
        (terminal_ready; after TIMEOUT s: anyway).  A line typed while
        the terminal went from the stopped job to bash (^Z) was seen
        lost to bash, under four CPU hogs, with and without ptleak, and
        read later by the job at fg: type-ahead across job control."""
        end = time.time() + timeout
        while time.time() < end and not terminal_ready(fd, pid, for_shell):
            time.sleep(0.01)
        os.write(fd, text.encode())

    try:
        expect(r"PROMPT\$ ")
        typed(cmdline + "\n", True)
        expect(r"\n")
        typed("hello\n", False)
        expect(r"hello\r\nhello\r\n")
        os.write(fd, b"\x1a")	# ^Z
        expect(r"Stopped[^\r]*\r\nPROMPT\$ ")
        typed("jobs\n", True)
        expect(r"PROMPT\$ ")
        typed("fg\n", True)
        expect(r"fg\r\n[^\r]*\r\n")
        typed("world\n", False)
        expect(r"world\r\nworld\r\n")
        typed("\x04", False)	# ^D: cat ends
        expect(r"PROMPT\$ ")
        typed("echo status $?\n", True)
        expect(r"status \d+\r\n")
        typed("exit\n", True)
    finally:
        # after a failure bash never gets its exit: hang up its terminal
        # (the job gets SIGHUP too), then kill it, rather than wait forever
        end = time.time() + 5
        done = False
        while not done and time.time() < end:
            try:
                done = os.waitpid(pid, os.WNOHANG)[0] == pid
            except ChildProcessError:
                done = True
            if not done:
                time.sleep(0.05)
        os.close(fd)
        if not done:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
    return [o.replace(cmdline, "CMD") for o in out]


def t_job_control_pty(cmd, opts):
    need_ptleak()
    ck = Check()
    try:
        native_run = pty_job(cmd)
    except Fail as e:
        raise Fail("without ptleak: %s" % e)
    try:
        traced = pty_job(" ".join(['"$PTLEAK_EXE"'] + opts + ["-q", "-o", os.devnull, cmd]),
                         {"PTLEAK_EXE": PTLEAK})
    except Fail as e:
        raise Fail("under ptleak: %s" % e)
    ck.true("native transcript: %s" % short(native_run),
            any("Stopped" in o for o in native_run) and native_run[-1] == "echo status $?\r\nstatus 0\r\n")
    ck.eq("transcript under ptleak", traced, native_run)
    ck.done()


@case("job_control_pty")
def t_job_control_pty_alone():
    """An interactive program (cat) launched under ptleak from an
    interactive bash on a pty: ^Z stops the job (bash says Stopped), fg
    continues it, it reads the terminal again, ^D ends it with status 0:
    the transcript is the one without ptleak."""
    t_job_control_pty("cat", [])


@case("job_control_pty_forks")
def t_job_control_pty_forks():
    """The same with -f and a pipeline of two cats under sh: every process
    of the job stops at ^Z and goes on at fg."""
    t_job_control_pty("sh -c 'cat | cat'", ["-f"])


@case("forks_sigkill_attached", engines=["breakpoints"])
def t_forks_sigkill_attached():
    """SIGKILL to ptleak -p PID -f after it followed a child (waiting, no
    call in progress): the child's own guardian puts its copy of the int3s
    back, and the 200 descriptor and allocator calls the child makes then
    run as untraced: it exits 0 (without a guardian it died of SIGTRAP at
    its next call)."""
    tgt = need_target("p_tree")
    p = subprocess.Popen([tgt, "fdkid"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=target_env())
    out = Lines(p.stdout)
    ck = Check()
    try:
        out.expect("ready", 20)
        others = set(guardians())
        at = Attached(p.pid, ["-f"])
        try:
            p.send_signal(signal.SIGUSR2)
            child = int(out.expect(r"child (\d+) running", 20).group(1))
            # ptleak's children: its guardians, named or not yet
            kids = child_pids(at.p.pid)
            at.p.kill()
            at.p.wait()
        finally:
            at.kill()
        # the guardians run when ptleak's pipe closes
        end = time.time() + 10
        while (tracer_pid(child) or alive(kids) or set(guardians()) - others) and \
                time.time() < end:
            time.sleep(0.01)
        ck.eq("the child's TracerPid", tracer_pid(child), 0)
        os.kill(child, signal.SIGUSR1)
        m = out.expect(r"child status (-?\d+)", 30)
        ck.eq("the child's wait status", int(m.group(1)), 0)
        ck.eq("exit status", p.wait(timeout=10), 0)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    ck.done()


@case("forks_limit", engines=["breakpoints"])
def t_forks_limit():
    """300 children alive at once: 256 processes are traced (the first and
    255 children), one notice says the others run untraced; those are
    released clean (their copy of the int3s removed): every child exits 0.
    256 reports, 255 of them with the child's 32 bytes."""
    tgt = need_target("p_tree")
    t = Tree([tgt, "wide", "300"], timeout=max(TIMEOUT, 240))
    ck = Check()
    ck.eq("exit status", t.rc, 0)
    ck.eq("stdout", t.stdout, "wide: 0 failed\n")
    notes = [l for l in t.stderr.splitlines() if l.startswith("ptleak: ")]
    ck.eq("notices", len(notes), 1)
    ck.true("notice: %s" % notes, notes and re.fullmatch(
        r"ptleak: 256 processes are traced: process \d+ runs untraced, as will any child "
        r"created until some end", notes[0]))
    reps = t.by_pid()
    ck.eq("reports", len(reps), 256)
    ck.eq("children's leaks", sorted(lost(r) for r in reps.values()), [0] + [32] * 255)
    ck.done()


@case("forks_child_untraceable")
def t_forks_child_untraceable():
    """A child (-f) whose exec'd image cannot be traced (a seccomp filter
    installed before its exec kills it for ptleak's mmap): that child
    alone runs on untraced, one line says so; the shell above it is still
    traced and reported at its exit (ptleak used to let go of every
    process, the first one unreported)."""
    tgt = need_target("h_seccomp")
    d = tempfile.mkdtemp(prefix="ptleak-ff.")
    try:
        rc, out, err = run_cmd(ptleak_cmd() + ["-f", "-o", os.path.join(d, "r.txt"), "/bin/sh", "-c",
                                               "%s exec; echo after $?" % shlex.quote(tgt)])
        ck = Check()
        ck.eq("exit status", rc, 0)
        ck.eq("stdout", out, "leaked 2\nafter 0\n")
        ck.true("stderr: %s" % short(err), re.fullmatch(
            r"ptleak: cannot trace %s \(process \d+\) after its exec: it runs under a seccomp "
            r"filter that would kill it for ptleak's mmap; it runs on untraced\n" % re.escape(tgt), err))
        with open(os.path.join(d, "r.txt")) as f:
            text = f.read()
        rows = tree_rows(text)
        ck.eq("tree (depth, status)", [(dp, s) for dp, _, _, s, _, _ in rows],
              [(0, "exit 0"), (1, "let go")])
        ck.eq("the shell's reports", re.findall(r"(?m)^ptleak\[(\d+)\]: report \d+ at (\w+)", text)[-1:],
              [(str(rows[0][1]) if rows else "", "exit")])
    finally:
        shutil.rmtree(d, ignore_errors=True)
    ck.done()


@case("forks_inherit", engines=True)
def t_forks_inherit():
    """A fork child starts with its parent's table as it was at the fork:
    c_fork_inherit's parent keeps 222 bytes, drops 333, keeps 555 and
    forks; the child frees the 555-byte block (a free of a live block, not
    an unknown one) and drops 44.  valgrind --trace-children=yes: the
    child 599 bytes in 3 blocks at exit, 377 definitely lost, 222 still
    reachable; the parent 888 in 2, 333 definitely lost, 555 still
    reachable.  The inherited blocks keep their stacks."""
    tgt = need_target("c_fork_inherit")
    t = Tree([tgt], opts=["--show-reachable"])
    ck = Check()
    ck.eq("exit status", t.rc, 0)
    reps = t.by_pid()
    ck.eq("reports", len(reps), 2)
    first = t.jsons["r.json"]
    child = [r for p, r in reps.items() if p != first["target"]["pid"]]

    def recs(rep):
        return sorted((r["kind"], r["bytes"], r["blocks"],
                       tuple((f["function"], f["line"]) for f in r["stack"]))
                      for r in rep["heap"]["records"])
    ck.eq("parent in_use", first["heap"]["in_use"], {"bytes": 888, "blocks": 2})
    ck.eq("parent records", recs(first), sorted([
        ("definitely_lost", 333, 1, (("drop", line("c_fork_inherit", "drop")),
                                     ("main", line("c_fork_inherit", "drop333")))),
        ("still_reachable", 555, 1, (("main", line("c_fork_inherit", "keep2")),)),
    ]))
    if child:
        c = child[0]
        ck.eq("child in_use", c["heap"]["in_use"], {"bytes": 599, "blocks": 3})
        ck.eq("child totals", c["heap"]["totals"],
              {"allocs": 1, "frees": 1, "bytes_allocated": 44, "unknown_frees": 0})
        ck.eq("child summary", (c["heap"]["summary"]["definitely_lost"],
                                c["heap"]["summary"]["still_reachable"]),
              ({"bytes": 377, "blocks": 2}, {"bytes": 222, "blocks": 1}))
        ck.eq("child records' stacks", sorted((r["kind"], r["bytes"], r["stack"][-1]["function"])
                                              for r in c["heap"]["records"]),
              sorted([("definitely_lost", 333, "main"), ("definitely_lost", 44, "main"),
                      ("still_reachable", 222, "main")]))
    ck.done()
