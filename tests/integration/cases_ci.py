# Replacing valgrind in CI (issue 25): CTest's `ctest -T memcheck`, meson's
# `meson test --wrapper`, autoconf-archive's ax_valgrind_check command
# line, plain scripts: each gives with ptleak the verdict it gives with
# valgrind.  The project (CMake and meson) is tests/integration/ci_project.
# Exec'd in run.py's namespace.

CTEST_PROJECT = os.path.join(ROOT, "tests", "integration", "ci_project")


def ci_need(*tools):
    for t in tools:
        if not shutil.which(t):
            raise Skip("%s not installed (make deps)" % t)


def ctest_memcheck(build, command, extra=()):
    """Configure the project in BUILD with MEMORYCHECK_COMMAND=COMMAND and
    EXTRA -D definitions, build it, run `ctest -T memcheck`: (ctest's
    status, {result label: count}, {test: defects}, tests failed)."""
    # the build directory is reused: nothing of the last run's cache
    rc, out, err = run_cmd(["cmake", "-S", CTEST_PROJECT, "-B", build,
                            "-UMEMORYCHECK_TYPE", "-UMEMORYCHECK_SUPPRESSIONS_FILE",
                            "-DMEMORYCHECK_COMMAND=" + command] + list(extra),
                           timeout=TIMEOUT * 2)
    if rc:
        raise Fail("cmake: %s" % short(err))
    rc, out, err = run_cmd(["cmake", "--build", build], timeout=TIMEOUT * 2)
    if rc:
        raise Fail("cmake --build: %s" % short(out + err))
    rc, out, err = run_cmd(["ctest", "-T", "memcheck"], cwd=build, timeout=TIMEOUT * 3)
    results = {m.group(1): int(m.group(2))
               for m in re.finditer(r"^(Memory Leak|Potential Memory Leak|[A-Z][\w ]+) - (\d+)$",
                                    out, re.M)}
    defects = {m.group(1): int(m.group(2))
               for m in re.finditer(r"MemCheck: #\d+: (\w+) \.+\s+Defects: (\d+)", out)}
    failed = re.findall(r"MemCheck #\d+: (\w+) \.+\*+\w", out)
    return rc, results, defects, failed


@case("ctest_memcheck")
def t_ctest_memcheck():
    """`ctest -T memcheck` with valgrind, with ptleak
    (MEMORYCHECK_TYPE=Valgrind) and with ptleak under the name valgrind (a
    link: CTest knows valgrind by name): "Memory Leak - 2" (33 and 100
    bytes), "Potential Memory Leak - 2" (possibly lost, and still
    reachable under CTest's --show-reachable=yes), leaky's "Defects: 4",
    none for tidy; with MEMORYCHECK_SUPPRESSIONS_FILE suppressing the 33
    bytes, one Memory Leak fewer."""
    ci_need("cmake", "ctest", "valgrind")
    need_ptleak()
    d = tempfile.mkdtemp(prefix="ptleak-ctest.")
    try:
        link = os.path.join(d, "bin", "valgrind")
        os.makedirs(os.path.dirname(link))
        os.symlink(PTLEAK, link)
        supp = "-DMEMORYCHECK_SUPPRESSIONS_FILE=" + os.path.join(CTEST_PROJECT, "leaky.supp")
        runs = {}
        for name, command, extra in (
                ("valgrind", shutil.which("valgrind"), []),
                ("ptleak", PTLEAK, ["-DMEMORYCHECK_TYPE=Valgrind"]),
                ("ptleak as valgrind", link, []),
                ("valgrind, suppressions", shutil.which("valgrind"), [supp]),
                ("ptleak, suppressions", PTLEAK, ["-DMEMORYCHECK_TYPE=Valgrind", supp])):
            runs[name] = ctest_memcheck(os.path.join(d, "b"), command, extra)
    finally:
        shutil.rmtree(d)
    ck = Check()
    want = (0, {"Memory Leak": 2, "Potential Memory Leak": 2}, {"leaky": 4}, [])
    want_supp = (0, {"Memory Leak": 1, "Potential Memory Leak": 2}, {"leaky": 3}, [])
    ck.eq("valgrind (this test's premise)", runs["valgrind"], want)
    ck.eq("valgrind, suppressions (premise)", runs["valgrind, suppressions"], want_supp)
    for name in ("ptleak", "ptleak as valgrind"):
        ck.eq(name, runs[name], runs["valgrind"])
    ck.eq("ptleak, suppressions", runs["ptleak, suppressions"], runs["valgrind, suppressions"])
    ck.done()


def meson_verdicts(build, wrapper, env_add):
    """`meson test -C BUILD --wrapper WRAPPER` with ENV_ADD in the
    environment: {test: "OK" | "FAIL"}."""
    env = target_env()
    env.update(env_add)
    rc, out, err = run_cmd(["meson", "test", "-C", build, "--wrapper", wrapper],
                           env=env, timeout=TIMEOUT * 3)
    return {m.group(1): m.group(2)
            for m in re.finditer(r"^\s*\d+/\d+ (\w+)\s+(OK|FAIL)\b", out, re.M)}


@case("meson_wrapper")
def t_meson_wrapper():
    """`meson test --wrapper`: with `--leak-check=full` and meson's
    VALGRIND_OPTS=--error-exitcode=1 (what meson >= 1.8 sets for a wrapper
    named valgrind) leaky fails and tidy passes, with valgrind, with
    ptleak and with ptleak under the name valgrind; with the wrapper alone
    (valgrind's default --leak-check=summary counts no error) both pass,
    as under valgrind."""
    ci_need("meson", "ninja", "valgrind")
    need_ptleak()
    d = tempfile.mkdtemp(prefix="ptleak-meson.")
    try:
        link = os.path.join(d, "bin", "valgrind")
        os.makedirs(os.path.dirname(link))
        os.symlink(PTLEAK, link)
        build = os.path.join(d, "b")
        rc, out, err = run_cmd(["meson", "setup", build, CTEST_PROJECT], timeout=TIMEOUT * 2)
        if rc:
            raise Fail("meson setup: %s" % short(out + err))
        opts = {"VALGRIND_OPTS": "--error-exitcode=1"}
        got = {}
        for name, tool in (("valgrind", shutil.which("valgrind")), ("ptleak", PTLEAK),
                           ("ptleak as valgrind", link)):
            # meson splits --wrapper as a shell would: a path with a
            # space quoted, as its user would quote it
            got[name + " --leak-check=full"] = meson_verdicts(
                build, shlex.quote(tool) + " --leak-check=full", opts)
            got[name] = meson_verdicts(build, shlex.quote(tool), opts)
    finally:
        shutil.rmtree(d)
    ck = Check()
    full = {"leaky": "FAIL", "tidy": "OK"}
    ck.eq("valgrind --leak-check=full (premise)", got["valgrind --leak-check=full"], full)
    ck.eq("valgrind alone (premise)", got["valgrind"], {"leaky": "OK", "tidy": "OK"})
    for name in ("ptleak", "ptleak as valgrind"):
        ck.eq(name + " --leak-check=full", got[name + " --leak-check=full"], full)
        ck.eq(name + " alone", got[name], got["valgrind"])
    ck.done()


# Command lines of valgrind's users (../shared/notes/valgrind-text.md)
CI_COMMAND_LINES = [
    # autoconf-archive's ax_valgrind_check, memcheck: the status decides
    ("ax_valgrind_check", ["--error-exitcode=1", "--tool=memcheck", "--leak-check=full",
                           "--show-reachable=no"]),
    # LLVM lit's --vg --vg-leak
    ("lit", ["-q", "--run-libc-freeres=no", "--tool=memcheck", "--trace-children=yes",
             "--error-exitcode=123", "--leak-check=full"]),
    # PostgreSQL's buildfarm: grep -l VALGRINDERROR- on the logs
    ("postgresql", ["--quiet", "--trace-children=yes", "--track-origins=yes",
                    "--read-var-info=yes", "--num-callers=20", "--leak-check=no",
                    "--gen-suppressions=all", "--error-limit=no",
                    "--error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END"]),
    ("postgresql, full", ["--quiet", "--leak-check=full",
                          "--error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END"]),
    # Redis's test suite: its verdict from the log's lines
    ("redis", ["--track-origins=yes", "--leak-check=full", "--show-reachable=no",
               "--show-possibly-lost=no", "--trace-children=yes"]),
    # a script: `valgrind --leak-check=full ... | grep "ERROR SUMMARY: 0 errors"`
    ("script", ["--leak-check=full", "--show-leak-kinds=all"]),
]


@case("ci_command_lines")
def t_ci_command_lines():
    """Each command line of CI_COMMAND_LINES on the CI project's leaky and
    tidy programs, with valgrind and with ptleak: the same exit status
    and the same answers to the greps of its consumer (Redis's error
    lines and "definitely lost: 0 bytes" / "no leaks are possible",
    "ERROR SUMMARY: 0 errors", the GitHub action's anchored loss
    records, CTest's, VALGRINDERROR- markers)."""
    ci_need("cc", "valgrind")
    need_ptleak()
    d = tempfile.mkdtemp(prefix="ptleak-ci.")
    try:
        progs = {}
        for p in ("leaky", "tidy"):
            progs[p] = os.path.join(d, p)
            rc, out, err = run_cmd(["cc", "-g", "-O0", "-o", progs[p],
                                    os.path.join(CTEST_PROJECT, p + ".c")])
            if rc:
                raise Fail("cc %s: %s" % (p, short(err)))
        got = {}
        for label, opts in CI_COMMAND_LINES:
            for p, exe in progs.items():
                for tool, path in (("valgrind", shutil.which("valgrind")), ("ptleak", PTLEAK)):
                    log = os.path.join(d, "%s.log" % tool)
                    rc, out, err = run_cmd([path, "--log-file=" + log] + opts + [exe],
                                           timeout=TIMEOUT * 3)
                    with open(log) as f:
                        text = f.read()
                    os.unlink(log)
                    got[(label, p, tool)] = (rc, vgt_greps(text),
                                             "VALGRINDERROR-" in text)
    finally:
        shutil.rmtree(d)
    ck = Check()
    ck.eq("ax_valgrind_check: leaky, tidy (premise)",
          (got[("ax_valgrind_check", "leaky", "valgrind")][0],
           got[("ax_valgrind_check", "tidy", "valgrind")][0]), (1, 0))
    ck.eq("postgresql, full: markers with valgrind (premise)",
          got[("postgresql, full", "leaky", "valgrind")][2], True)
    for label, opts in CI_COMMAND_LINES:
        for p in ("leaky", "tidy"):
            ck.eq("%s, %s" % (label, p), got[(label, p, "ptleak")], got[(label, p, "valgrind")])
    ck.done()
