# Cases of the outputs area: reports that never claim what ptleak could
# not see, the output files, suppression files and control characters.
# Exec'd in run.py's namespace (case, ptleak, Check, need_target, ...).

NOT_DUMPABLE = ("(the process is not dumpable: setuid, or prctl(PR_SET_DUMPABLE, 0); "
                "run ptleak as root or with CAP_SYS_PTRACE)")


def out_lines(text, pid):
    """The lines of PID's text report, without their 'ptleak[PID]: '."""
    return [l for p, l in report_lines(text) if p == pid]


def check_blind(ck, rep, text, why, fwhy):
    """REP (JSON) and TEXT say that nothing was seen of the heap (WHY) nor
    of the descriptors (FWHY), with no heap record and no 'no leaks'."""
    ck.eq("heap tracked, why", (rep["heap"]["tracked"], rep["heap"]["why"]), (False, why))
    ck.eq("fds tracked, why", (rep["fds"]["tracked"], rep["fds"]["why"]), (False, fwhy))
    ck.eq("text from HEAP SUMMARY", out_lines(text, rep["target"]["pid"])[1:10], [
        "HEAP SUMMARY:",
        "    in use at exit: 0 bytes in 0 blocks",
        "  total heap usage: 0 allocs, 0 frees, 0 bytes allocated",
        "  peak: 0 bytes in use",
        "",
        "heap NOT tracked: " + why,
        "",
        "FILE DESCRIPTORS: %d open at exit (%d inherited)" % (rep["fds"]["open"],
                                                              rep["fds"]["inherited"]),
        "file descriptors NOT tracked: " + fwhy])
    ck.true("'no leaks are possible' claimed", "no leaks are possible" not in (text or ""))


@case("blind_stripped_static", engines=True)
def t_blind_stripped_static():
    """A stripped static executable: no symbol names malloc or open.  The
    report says the heap and the descriptors were NOT tracked (never 'no
    leaks are possible'), the JSON says "tracked": false and why, and
    --error-exitcode fires although nothing was seen lost."""
    name = "static_stripped_leak"
    tgt = need_target(name)
    ck = Check()
    r = ptleak([tgt], opts=["--error-exitcode", "9"], want_text=True)
    ck.eq("exit status", r.rc, 9)
    ck.eq("stdout", r.stdout, "static_stripped_leak: done\n")
    ck.eq("stderr", r.stderr, "")
    rep = need_json(r)
    pid = rep["target"]["pid"]
    why = "no allocator function found in %s (stripped static executable?)" % tgt
    fwhy = ("no descriptor function found in %s (stripped static executable?); "
            "only /proc/%d/fd is read at reports" % (tgt, pid))
    check_blind(ck, rep, r.text, why, fwhy)
    ck.eq("fd records (seen in /proc only)",
          [(f["fd"], f["target"], f["opened_by"]) for f in rep["fds"]["records"]],
          [(3, "/dev/null", "unknown")])
    # without --error-exitcode: the target's own status
    r = ptleak([tgt], want_json=False)
    ck.eq("exit status without --error-exitcode", r.rc, 0)
    ck.done()


@case("blind_not_dumpable")
def t_blind_not_dumpable():
    """A process that makes itself non-dumpable (prctl(PR_SET_DUMPABLE, 0),
    as a setuid program is), traced by an unprivileged user (nobody): its
    memory cannot be read, so its 11 allocator calls (10 mallocs and
    stdout's buffer) are not recorded by the breakpoint engine.  One warning
    line for all of them, the report says so and counts them,
    --error-exitcode fires.  With no call after the prctl, the report still
    says the memory is unreadable.  The recorder (injected before the
    prctl) counts the 11 calls exactly, and says the memory cannot be read
    for the leak scan."""
    name = "h_nondumpable"
    need_ptleak()
    # nobody may not reach the checkout (under /root): copies it can run
    tgt, exe = user_copy(need_target(name)), user_copy(PTLEAK)
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.", dir=user_dir()) as d:
        os.chmod(d, 0o777)
        js, txt = os.path.join(d, "r.json"), os.path.join(d, "r.txt")
        rc, out, err = run_as(NOBODY, [exe, "--engine=breakpoints", "--error-exitcode",
                                      "9", "--json", js, "-o", txt, tgt], d)
        ck.eq("exit status", rc, 9)
        ck.eq("stdout", out, "h_nondumpable: done\n")
        try:
            with open(js) as f:
                rep = json.load(f)
            with open(txt) as f:
                text = f.read()
        except (OSError, ValueError) as e:
            raise Fail("no report: %s (stderr: %s)" % (e, short(err)))
        pid = rep["target"]["pid"]
        first = ("cannot read the return address of malloc in thread %d: Operation not "
                 "permitted %s" % (pid, NOT_DUMPABLE))
        ck.eq("stderr", err.splitlines(), [
            "ptleak: cannot read the objects mapped by process %d: Permission denied" % pid,
            "ptleak: warning: %s: this call is not recorded, nor any like it "
            "(the report counts them)" % first,
            "ptleak: cannot read the objects mapped by process %d: Permission denied" % pid,
            "ptleak: cannot read /proc/%d/maps: Permission denied" % pid,
            "ptleak: warning: stacks are shown as addresses only"])
        why = "11 allocator calls were not recorded (first: %s)" % first
        fwhy = "/proc/%d/fd cannot be read: Permission denied %s" % (pid, NOT_DUMPABLE)
        check_blind(ck, rep, text, why, fwhy)
        # no call after the prctl: none lost, but the memory is unreadable
        rc, out, err = run_as(NOBODY, [exe, "--error-exitcode", "9", "--json", js, "-o",
                                      txt, tgt, "idle"], d)
        ck.eq("idle: exit status", rc, 9)
        with open(js) as f:
            rep = json.load(f)
        with open(txt) as f:
            text = f.read()
        pid = rep["target"]["pid"]
        check_blind(ck, rep, text,
                    "the memory of process %d cannot be read: Operation not permitted %s"
                    % (pid, NOT_DUMPABLE),
                    "/proc/%d/fd cannot be read: Permission denied %s" % (pid, NOT_DUMPABLE))
        # the recorder: every call counted, the memory not scanned
        rc, out, err = run_as(NOBODY, [exe, "--engine=recorder", "--error-exitcode", "9",
                                      "--json", js, "-o", txt, tgt], d)
        ck.eq("recorder: exit status", rc, 9)
        with open(js) as f:
            rep = json.load(f)
        with open(txt) as f:
            text = f.read()
        pid = rep["target"]["pid"]
        why = "the memory of process %d cannot be read: Operation not permitted %s" % (
            pid, NOT_DUMPABLE)
        ck.eq("recorder: stderr", err.splitlines(), [
            "ptleak: cannot read the objects mapped by process %d: Permission denied" % pid,
            "ptleak: cannot read /proc/%d/maps: Permission denied" % pid,
            "ptleak: warning: stacks are shown as addresses only"])
        ck.eq("recorder: heap tracked, why", (rep["heap"]["tracked"], rep["heap"]["why"]),
              (False, why))
        ck.eq("recorder: text from HEAP SUMMARY", out_lines(text, pid)[1:7], [
            "HEAP SUMMARY:",
            "    in use at exit: 4,196 bytes in 11 blocks",
            "  total heap usage: 11 allocs, 0 frees, 4,196 bytes allocated",
            "  peak: 4,196 bytes in use",
            "",
            "heap NOT tracked: " + why])
        # as root the same program is seen whole: the 10 blocks of 10 bytes lost
        r = ptleak([tgt])
        rep = need_json(r)
        ck.eq("as root: heap tracked", (rep["heap"]["tracked"], rep["heap"]["why"]), (True, None))
        ck.eq("as root: definitely lost", rep["heap"]["summary"]["definitely_lost"],
              {"bytes": 100, "blocks": 10})
    ck.done()


def outputs_demo_json(path_opt, extra=()):
    """ptleak -q -o /dev/null --json PATH_OPT demo: (status, stdout, stderr)."""
    need_ptleak()
    return run_cmd([PTLEAK, "-q", "-o", "/dev/null"] + list(extra) +
                   ["--json", path_opt, need_target("demo")])


@case("outputs_json_kinds")
def t_outputs_json_kinds():
    """--json onto a character device (a null device of its own: a broken
    ptleak must not replace the machine's /dev/null) and a FIFO writes in
    place (they stay what they are), and so is a pipe named /dev/fd/N;
    onto a symbolic link replaces the
    file it points to (the link stays a link; a dangling link's file is
    created); onto a regular file still atomically (a new inode, no
    FILE.tmp left)."""
    import stat
    import threading
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        null = os.path.join(d, "null")
        try:
            os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except OSError as e:
            raise Skip("cannot make a null device: %s" % e.strerror)
        rc, _, err = outputs_demo_json(null)
        ck.eq("null device: exit status, stderr", (rc, err), (0, ""))
        ck.true("null device is no longer a character device",
                stat.S_ISCHR(os.lstat(null).st_mode))
        os.unlink(null)
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo).read()), daemon=True)
        reader.start()
        rc, _, err = outputs_demo_json(fifo)
        reader.join(30)
        ck.eq("FIFO: exit status, stderr", (rc, err), (0, ""))
        ck.true("FIFO is no longer a FIFO", stat.S_ISFIFO(os.lstat(fifo).st_mode))
        try:
            ck.eq("FIFO: the report read from it", json.loads(got[0])["tool"], "ptleak")
        except (IndexError, ValueError) as e:
            ck.err("FIFO: no JSON read from it: %s" % e)
        # a pipe as /dev/fd/N (a shell's --json >(jq .)): a magic link
        rd, wr = os.pipe()
        try:
            p = subprocess.Popen([PTLEAK, "-q", "-o", "/dev/null", "--json", "/dev/fd/%d" % wr,
                                  need_target("demo")], pass_fds=(wr,), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            os.close(wr)
            with os.fdopen(rd) as f:
                piped = f.read()
            err = p.communicate(timeout=TIMEOUT)[1]
        finally:
            if p.poll() is None:
                p.kill()
        ck.eq("/dev/fd/N: exit status, stderr", (p.returncode, err), (0, b""))
        try:
            ck.eq("/dev/fd/N: the report read from the pipe", json.loads(piped)["tool"], "ptleak")
        except ValueError as e:
            ck.err("/dev/fd/N: no JSON read from the pipe: %s" % e)
        real, link = os.path.join(d, "real.json"), os.path.join(d, "link.json")
        with open(real, "w") as f:
            f.write("old\n")
        ino = os.stat(real).st_ino
        os.symlink("real.json", link)
        rc, _, err = outputs_demo_json(link)
        ck.eq("symlink: exit status, stderr", (rc, err), (0, ""))
        ck.true("symlink: no longer a link", os.path.islink(link))
        ck.eq("symlink: points to", os.path.islink(link) and os.readlink(link), "real.json")
        ck.true("symlink: its file not replaced (same inode)", os.stat(real).st_ino != ino)
        with open(real) as f:
            ck.eq("symlink: the report in its file", json.load(f)["tool"], "ptleak")
        dangling = os.path.join(d, "dangling.json")
        os.symlink(os.path.join(d, "new.json"), dangling)
        rc, _, err = outputs_demo_json(dangling)
        ck.eq("dangling symlink: exit status, stderr", (rc, err), (0, ""))
        ck.true("dangling symlink: no longer a link", os.path.islink(dangling))
        ck.true("dangling symlink: its file not created",
                os.path.isfile(os.path.join(d, "new.json")))
        plain = os.path.join(d, "plain.json")
        with open(plain, "w") as f:
            f.write("old\n")
        ino = os.stat(plain).st_ino
        rc, _, err = outputs_demo_json(plain)
        ck.eq("regular file: exit status, stderr", (rc, err), (0, ""))
        ck.true("regular file: not replaced by a rename (same inode)", os.stat(plain).st_ino != ino)
        ck.eq("files left in the directory", sorted(os.listdir(d)),
              ["dangling.json", "fifo", "link.json", "new.json", "plain.json", "real.json"])
    ck.done()


@case("outputs_refused_up_front")
def t_outputs_refused_up_front():
    """An output name that cannot be a file (empty, a directory, a trailing
    '/', a missing directory) is refused before the target runs: one line,
    exit 1, the target's stdout empty; for -o and --json alike."""
    tgt = need_target("demo")
    need_ptleak()
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        sub = os.path.join(d, "sub")
        os.mkdir(sub)
        cases = [("", "ptleak: cannot write '': empty file name"),
                 (d, "ptleak: cannot write %s: Is a directory" % d),
                 (sub + "/", "ptleak: cannot write %s/: a file name is needed, not a directory" % sub),
                 (d + "/missing/", "ptleak: cannot write %s/missing/: a file name is needed, "
                  "not a directory" % d),
                 (d + "/missing/r", "ptleak: cannot write %s/missing/r: No such file or directory" % d)]
        for opt in ("--json", "-o"):
            for path, want in cases:
                rc, out, err = run_cmd([PTLEAK, opt, path, tgt])
                what = "%s %r" % (opt, path)
                ck.eq(what + ": exit status", rc, 1)
                ck.eq(what + ": stdout (the target must not run)", out, "")
                ck.eq(what + ": stderr", err, want + "\n")
        ck.eq("files left", sorted(os.listdir(d)), ["sub"])
        ck.eq("files left in sub", os.listdir(sub), [])
    ck.done()


@case("suppressions_bounded")
def t_suppressions_bounded():
    """A suppressions file is read with bounds: /dev/zero (a NUL byte), a
    line longer than 4096 bytes, a file over 16 MiB: one 'file:line:' line,
    exit 1, before the target runs.  A line of exactly 4096 bytes is read."""
    tgt = need_target("demo")
    need_ptleak()
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        def supp(name, data):
            p = os.path.join(d, name)
            with open(p, "wb") as f:
                f.write(data)
            return p
        ok = supp("ok.supp", b"# fine\n" + b"leak:" + b"x" * 4091 + b"\n")
        long = supp("long.supp", b"# fine\n" + b"leak:" + b"x" * 4092 + b"\n")
        nul = supp("nul.supp", b"leak:a\nleak:b\0c\n")
        big = supp("big.supp", b"leak:a\n" + b"\n" * (16 << 20))
        for path, want in [("/dev/zero", "/dev/zero:1: a NUL byte: not a suppressions file"),
                           (long, "%s:2: line longer than 4096 bytes" % long),
                           (nul, "%s:2: a NUL byte: not a suppressions file" % nul),
                           (big, "%s: more than 16 MiB: not a suppressions file" % big)]:
            rc, out, err = run_cmd([PTLEAK, "--suppressions", path, tgt])
            ck.eq("%s: exit, stdout, stderr" % os.path.basename(path), (rc, out, err),
                  (1, "", "ptleak: %s\n" % want))
        rc, out, err = run_cmd([PTLEAK, "-q", "-o", "/dev/null", "--suppressions", ok, tgt])
        ck.eq("4096-byte line: exit status, stderr", (rc, err), (0, ""))
    ck.done()


@case("ctrl_names_escaped", engines=True)
def t_ctrl_names_escaped():
    """Control characters in a symbol name, a debug-info file name, an open
    file's name, a suppression, a program name and an option never reach the
    terminal raw: the text report and messages write them \\x1b, the JSON
    \\u001b (valid JSON, the names intact once parsed)."""
    name = "h_ctrl_names"
    tgt = need_target(name)
    ck = Check()
    esc_line = 1000 + line(name, "esc_malloc") - line(name, "hash_line") - 1
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        evil = os.path.join(d, "f\x1b[1mx")
        sf = os.path.join(d, "s.supp")
        with open(sf, "w") as f:
            f.write("leak:leak\x1b*\n")
        r = ptleak([tgt, evil], opts=["--suppressions", sf], want_text=True)
        ck.eq("exit status", r.rc, 0)
        rep = need_json(r)
        pid = rep["target"]["pid"]
        ck.eq("JSON: fd target", [f["target"] for f in rep["fds"]["records"]], [evil])
        ck.eq("JSON: suppressed", rep["heap"]["summary"]["suppressed"], {"bytes": 42, "blocks": 1})
        ck.eq("JSON: argv", rep["target"]["argv"], [tgt, evil])
        text = r.text or ""
        ck.true("text has a raw ESC", "\x1b" not in text)
        lines = out_lines(text, pid)
        want_fd = "fd 3 -> %s, opened by open" % evil.replace("\x1b", "\\x1b")
        ck.true("text: no line %r" % want_fd, want_fd in lines)
        used = [l for l in lines if l.endswith("leak\\x1b*")]
        ck.eq("text: suppressions used", used, ["      1         42 leak\\x1b*"])
        # listed, not suppressed: the frames
        r = ptleak([tgt, evil], want_text=True)
        rep = need_json(r)
        ck.eq("JSON: stack", [(f["function"], f["file"], f["line"])
                              for rec in rep["heap"]["records"] for f in rec["stack"]],
              [("leak\x1b[2Jesc", "esc\x1b[31m.c", esc_line),
               ("main", "h_ctrl_names.c", line(name, "call"))])
        frames = [l.split(": ", 1)[1] for l in out_lines(r.text, rep["target"]["pid"])
                  if l.startswith("   by ")]
        ck.eq("text: the heap record's frames", frames[:2], ["leak\\x1b[2Jesc (esc\\x1b[31m.c:%d)" % esc_line,
                                       "main (h_ctrl_names.c:%d)" % line(name, "call")])
        with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d2:
            js = os.path.join(d2, "r.json")
            rc, _, _ = run_cmd(ptleak_cmd() + ["-q", "--json", js, tgt, evil])
            with open(js, "rb") as f:
                raw = f.read()
        ck.true("raw JSON has a raw ESC", b"\x1b" not in raw)
        ck.true("raw JSON lacks leak\\u001b[2Jesc", b'"leak\\u001b[2Jesc"' in raw)
        # messages: a malformed suppression, a program that is not there
        with open(sf, "w") as f:
            f.write("bad\x1b[31m\n")
        rc, out, err = run_cmd([PTLEAK, "--suppressions", sf, tgt, evil])
        ck.eq("malformed suppression: exit, stderr", (rc, err),
              (1, "ptleak: %s:1: expected leak:GLOB, fd:GLOB or type:GLOB, got 'bad\\x1b[31m'\n" % sf))
        rc, out, err = run_cmd([PTLEAK, os.path.join(d, "no\x1bsuch")])
        ck.eq("no such program: exit, stderr", (rc, err),
              (1, "ptleak: cannot execute '%s/no\\x1bsuch': No such file or directory\n" % d))
        for args, want in [(["--depth", "1\x1b[2J", tgt], "--depth wants a number from 1 to "
                            "256, not '1\\x1b[2J'"),
                           (["--b\x1bogus", tgt], "unrecognized option '--b\\x1bogus'")]:
            rc, out, err = run_cmd([PTLEAK] + args)
            ck.eq("usage error %r: exit, stderr" % args[0], (rc, err), (64, "ptleak: %s\n" % want))
    ck.done()
