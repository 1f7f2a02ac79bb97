# Command line: the text report's destination (-o, -q, stderr), an
# unwritable output, usage errors and programs that cannot be run: one
# 'ptleak: ' line and a non-zero exit.  Exec'd in run.py's namespace
# (case, ptleak, Check, need_target, ...).


@case("output_file", engines=True)
def t_output_file():
    """-o FILE: the report goes to FILE, stderr has none of it."""
    name = "h_basic"
    tgt = need_target(name)
    r = ptleak([tgt], want_json=False, want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    if r.text is None:
        ck.err("no text report file written")
    else:
        c = [x for _, x in report_lines(r.text)]
        ck.true("report file has no HEAP SUMMARY: (%s)" % short(r.text[-300:]), "HEAP SUMMARY:" in c)
        ck.true("report file has no 'in use at exit: 1,652 bytes in 6 blocks'",
                "    in use at exit: 1,652 bytes in 6 blocks" in c)
    ck.eq("report lines on stderr", [x for _, x in report_lines(r.stderr)], [])
    ck.true("stderr mentions HEAP SUMMARY", "HEAP SUMMARY" not in r.stderr)
    ck.done()


@case("quiet")
def t_quiet():
    """-q: nothing on stderr but the report."""
    name = "h_basic"
    tgt = need_target(name)
    r = ptleak([tgt], opts=["-q"], want_json=False)
    ck = Check()
    check_native(ck, name, [], r)
    other = [l for l in r.stderr.splitlines() if not re.match(r"ptleak\[\d+\]:( |$)", l)]
    ck.eq("stderr lines other than the report", other, [])
    ck.true("no HEAP SUMMARY: on stderr", any(c == "HEAP SUMMARY:" for _, c in report_lines(r.stderr)))
    ck.done()


@case("unwritable_output")
def t_unwritable_output():
    """-o or --json into a missing directory: one line, exit 1, and the
    target never runs."""
    tgt = need_target("demo")
    ck = Check()
    for opts in (["-o", "/nonexistent-dir/r.txt"], ["--json", "/nonexistent-dir/r.json"]):
        r = ptleak([tgt], opts=opts, want_json=False)
        ck.eq("%s: exit status" % opts[0], r.rc, 1)
        ck.eq("%s: stdout (the target must not run)" % opts[0], r.stdout, "")
        ck.eq("%s: stderr" % opts[0], r.stderr,
              "ptleak: cannot write %s: No such file or directory\n" % opts[1])
    ck.done()


# --- errors -----------------------------------------------------------------

def one_error_line(ck, r, want_rc, want_line=None, pattern=None):
    ck.eq("exit status", r.rc, want_rc)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    if want_line is not None:
        ck.eq("stderr", lines, [want_line])
    else:
        ck.true("stderr is not one 'ptleak: ' line: %s" % short(lines),
                len(lines) == 1 and lines[0].startswith("ptleak: "))
        if pattern and lines:
            ck.true("stderr %r does not match %s" % (lines[0], pattern),
                    re.search(pattern, lines[0], re.I))
    ck.eq("stdout", r.stdout, "")


@case("error_no_such_program")
def t_err_nosuch():
    r = ptleak(["nosuchprog"], want_json=False)
    ck = Check()
    one_error_line(ck, r, 1, "ptleak: cannot execute 'nosuchprog': No such file or directory")
    ck.done()


@case("error_not_executable")
def t_err_notexec():
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        p = os.path.join(d, "notexec")
        with open(p, "w") as f:
            f.write("#!/bin/sh\necho hi\n")
        os.chmod(p, 0o644)
        r = ptleak([p], want_json=False)
    ck = Check()
    one_error_line(ck, r, 1, "ptleak: cannot execute '%s': Permission denied" % p)
    ck.done()


@case("error_exec_format")
def t_err_format():
    # an executable text file without #!: execve says ENOEXEC (a shell
    # would run it with sh, ptleak must not)
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        p = os.path.join(d, "script")
        with open(p, "w") as f:
            f.write("echo should-not-run\n")
        os.chmod(p, 0o755)
        r = ptleak([p], want_json=False)
    ck = Check()
    one_error_line(ck, r, 1, "ptleak: cannot execute '%s': Exec format error" % p)
    ck.done()


@case("error_already_traced")
def t_err_traced():
    """ptleak under strace -f: its child is already traced."""
    strace = shutil.which("strace")
    if not strace:
        raise Skip("strace not installed")
    need_ptleak()
    tgt = need_target("h_basic")
    rc, out, err = run_cmd([strace, "-f", "-o", "/dev/null", PTLEAK, tgt])
    ck = Check()
    ck.eq("exit status", rc, 1)
    ck.true("no 'ptleak: ' line with 'ptrace' and 'already traced' on stderr: %s"
            % short(err.strip()[-400:]),
            any(l.startswith("ptleak: ") and "ptrace" in l.lower() and "already traced" in l.lower()
                for l in err.splitlines()))
    ck.done()


@case("error_bogus_option")
def t_err_bogus():
    tgt = need_target("h_basic")
    r = ptleak(["--bogus", tgt], want_json=False)
    ck = Check()
    one_error_line(ck, r, 64, "ptleak: unrecognized option '--bogus'")
    ck.done()


@case("error_no_program")
def t_err_noprog():
    r = ptleak([], want_json=False)
    ck = Check()
    ck.eq("exit status", r.rc, 64)
    ck.true("nothing on stderr", r.stderr.strip())
    ck.true("stderr does not start with 'ptleak: ' or 'usage': %s" % short(r.stderr[:200]),
            r.stderr.lstrip().lower().startswith(("ptleak: ", "usage")))
    ck.done()
