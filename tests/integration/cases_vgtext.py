# valgrind's text (issue 25): ptleak's memcheck text against this
# machine's valgrind, line for line, on the same binaries and options.
# Addresses, the allocator's frame (valgrind's replacement in its preload
# vs the allocator in libc), the two banner lines that name the tool and
# the Parent PID are masked; everything else (numbers, kinds, order,
# numbering, functions, files and lines, summaries, hints, ERROR SUMMARY,
# blank lines with their space) must be equal.  valgrind runs once per
# target and option set.  Exec'd in run.py's namespace.

VGT_ALLOCATORS = {"malloc", "calloc", "realloc", "reallocarray", "free", "memalign",
                  "posix_memalign", "aligned_alloc", "valloc", "pvalloc",
                  OPNEW, OPNEW_ARRAY}

VGT_FD_FUNCTIONS = {"open", "open64", "openat", "openat64", "socket", "pipe", "pipe2", "dup"}

VGT_SUPP = """\
# v_leaks' lose() and its still reachable calloc
{
   lose_it
   Memcheck:Leak
   match-leak-kinds: definite
   fun:malloc
   fun:lose
}

{
   reach_it
   Memcheck:Leak
   match-leak-kinds: reachable
   fun:calloc
   fun:main
}
"""


def vgt_runs(target, opts, args=(), log_file=True, env=None, cwd=None, files=None,
             inherit=False):
    """`valgrind --log-file=D/vg.%p OPTS TARGET ARGS` and the same with
    ptleak: (valgrind's status, its log, ptleak's status, its log,
    ptleak's stderr).  OPTS may name D as {d}; {supp} is a file holding
    VGT_SUPP.  Not LOG_FILE: the logs are on stderr (ptleak's stderr is
    then ""): valgrind's log file is a descriptor of the program's own
    (3), which --track-fds=yes lists.  ENV, CWD: run_cmd's, formatted as
    OPTS ({d}).  FILES: {path in D: (text, mode)} made first.  INHERIT:
    the tool (and so the program) inherits /dev/null as fd 7 and a pipe
    as fd 9."""
    need_ptleak()
    vg = shutil.which("valgrind")
    if not vg:
        raise Skip("valgrind not installed (make deps)")
    d = tempfile.mkdtemp(prefix="ptleak-vgt.")
    try:
        for rel, (text, mode) in (files or {}).items():
            path = os.path.join(d, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, mode)
        supp = os.path.join(d, "v.supp")
        with open(supp, "w") as f:
            f.write(VGT_SUPP)
        opts = [o.format(d=d, supp=supp) for o in opts]
        exe = [need_target(target)] + list(args)
        logs = []
        if env is not None:
            # only {d}: the environment's own values may hold braces
            # (make's MAKEOVERRIDES is ${-*-command-variables-*-} under
            # `make check B=DIR`)
            env = {k: v.replace("{d}", d) for k, v in env.items()}
        cwd = cwd.format(d=d) if cwd else None
        for tool, name, timeout in ((vg, "vg", TIMEOUT * 3), (PTLEAK, "pt", TIMEOUT)):
            log = ["--log-file=%s/%s.%s" % (d, name, "%p" if log_file != "shared" else "log")] \
                if log_file else []
            pre = ["sh", "-c", 'exec 7</dev/null 9>&1; exec "$@"', "sh"] \
                if inherit else []
            rc, out, err = run_cmd(pre + [tool] + log + opts + exe, timeout=timeout, env=env,
                                   cwd=cwd)
            if not log_file:
                logs.append((rc, err, ""))
                continue
            found = [f for f in os.listdir(d) if f.startswith(name + ".")]
            if len(found) != 1:
                raise Fail("%s wrote %d logs, not one (stderr %s)" % (name, len(found), short(err)))
            with open(os.path.join(d, found[0])) as f:
                logs.append((rc, f.read(), err))
        return logs[0][0], logs[0][1], logs[1][0], logs[1][1], logs[1][2]
    finally:
        shutil.rmtree(d)


def vgt_norm(text):
    """TEXT's lines with the pid, addresses, the allocator's frame, the
    banner lines naming the tool and the Parent PID masked."""
    out = []
    for l in text.splitlines():
        l = re.sub(r"^==\d+==", "==PID==", l)
        l = re.sub(r"^--\d+--", "--PID--", l)
        l = re.sub(r"0x[0-9A-F]+", "0x?", l)
        # frame 0: the allocator, or the function that opened a
        # descriptor (valgrind's replacement or libc's with its lines)
        m = re.match(r"(==PID==    at 0x\?: (.*?)) \((in /[^)]*|[\w.]+:\d+)\)$", l)
        if m and (m.group(2) in VGT_ALLOCATORS or m.group(2) in VGT_FD_FUNCTIONS):
            l = m.group(1) + " (the allocator)"
        l = re.sub(r"^==PID== Parent PID: \d+$", "==PID== Parent PID: ?", l)
        out.append(l)
    for i, l in enumerate(out[:-2]):
        if l == "==PID== Memcheck, a memory error detector":
            out[i + 1] = out[i + 2] = "==PID== (the tool's name)"
    return out


VGT_OWN_SECTIONS = ("==PID== THREADS: ", "==PID== RESOURCES: ", "==PID== PROCESS TREE: ")


def vgt_memcheck_part(lines):
    """ptleak's lines without its own sections (a blank line, a header of
    VGT_OWN_SECTIONS, its indented rows: after each process's ERROR
    SUMMARY), and those sections' lines."""
    got, extra, i = [], [], 0
    while i < len(lines):
        if lines[i] == "==PID== " and i + 1 < len(lines) and \
                lines[i + 1].startswith(VGT_OWN_SECTIONS):
            extra += lines[i:i + 2]
            i += 2
            while i < len(lines) and lines[i].startswith("==PID==   ") and \
                    not lines[i].startswith("==PID==    "):
                extra.append(lines[i])
                i += 1
            continue
        got.append(lines[i])
        i += 1
    return got, extra


def vgt_diff(ck, what, got, want):
    """One error per differing line (the first 5), and the line counts."""
    n = 0
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else "<none>"
        w = want[i] if i < len(want) else "<none>"
        if g != w:
            n += 1
            if n <= 5:
                ck.err("%s line %d: got %r, want %r" % (what, i + 1, g, w))
    ck.eq("%s: lines" % what, len(got), len(want))


def vgt_greps(log):
    """What the consumers of the note find in a log: Redis's verdict (an
    error line, then "definitely lost: 0 bytes" or "no leaks are
    possible"), a CI script's "ERROR SUMMARY: 0 errors", the GitHub
    action's anchored regexes (counts), CTest's memory leak lines."""
    pre = r"^==.*== "
    redis_bad = any(s in log for s in (" at 0x", "Invalid", "Mismatched", "uninitialized",
                                       "has a fishy", "overlap")) or \
        any("Warning" in l and "set address range perms" not in l for l in log.split("\n"))
    redis_ok = "definitely lost: 0 bytes" in log or "no leaks are possible" in log
    action = tuple(len(re.findall(pre + r".* bytes in .* blocks are %s in loss record .* of .*$" % k,
                                  log, re.M))
                   for k in ("definitely lost", "indirectly lost", "possibly lost",
                             "still reachable"))
    ctest_mlk = len(re.findall(r"^==[0-9][0-9]*==.*== .*[0-9,]+ (\([0-9,]+ direct, [0-9,]+ "
                               r"indirect\) )?bytes in [0-9,]+ blocks are definitely lost in "
                               r"loss record [0-9,]+ of [0-9,]+", log, re.M))
    return {"redis error line": redis_bad, "redis no-leak line": redis_ok,
            "ERROR SUMMARY: 0 errors": "ERROR SUMMARY: 0 errors" in log,
            "action's loss records": action, "CTest's Memory Leak lines": ctest_mlk,
            "blank line ends a report": bool(re.search(r"^==.*== $", log, re.M))}


def vgt_case(name, target, opts, args=(), want_rc=None, want=None, **run):
    """Case NAME: ptleak OPTS TARGET against valgrind OPTS TARGET, line for
    line up to the ERROR SUMMARY, the same status (WANT_RC, if given,
    checked too), the same answers to the consumers' greps.  WANT: a
    function (ck, pt_lines, vg_lines, pt_extra) for what more to check."""
    @case(name)
    def t():
        vrc, vlog, prc, plog, perr = vgt_runs(target, opts, args, **run)
        ck = Check()
        ck.eq("exit status (valgrind's)", prc, vrc)
        if want_rc is not None:
            ck.eq("exit status", prc, want_rc)
        ck.eq("ptleak's stderr", perr, "")
        got, extra = vgt_memcheck_part(vgt_norm(plog))
        want_lines = vgt_norm(vlog)
        vgt_diff(ck, "log", got, want_lines)
        ck.eq("the consumers' greps", vgt_greps(plog), vgt_greps(vlog))
        if want:
            want(ck, got, want_lines, extra)
        ck.done()
    return t


def vgt_extras(ck, got, want_lines, extra):
    """ptleak's own sections after the ERROR SUMMARY, in memcheck's prefix."""
    ck.eq("ptleak's sections", extra[:3], [
        "==PID== ", "==PID== THREADS: 1 thread used the heap",
        "==PID==   thread %s (v_leaks): 15 allocs, 10 frees, 1,278 bytes allocated, "
        "278 bytes in use" % (extra[2].split()[2] if len(extra) > 2 and
                                len(extra[2].split()) > 2 else "?")])
    ck.true("RESOURCES line after THREADS",
            len(extra) == 5 and extra[3] == "==PID== " and
            extra[4].startswith("==PID== RESOURCES: "))


def vgt_no_extras(ck, got, want_lines, extra):
    ck.eq("lines after the report", extra, [])


# v_leaks: one record of each kind (v_leaks.c); valgrind's defaults
vgt_case("vgtext_summary", "v_leaks", [])
vgt_case("vgtext_full", "v_leaks", ["--leak-check=full"], want=vgt_extras)
vgt_case("vgtext_full_quiet", "v_leaks", ["-q", "--leak-check=full"], want=vgt_no_extras)
vgt_case("vgtext_no", "v_leaks", ["--leak-check=no"])
vgt_case("vgtext_all_kinds", "v_leaks", ["--leak-check=full", "--show-leak-kinds=all",
                                         "--num-callers=2"])
# CTest's own default options
vgt_case("vgtext_ctest_defaults", "v_leaks", ["-q", "--tool=memcheck", "--leak-check=yes",
                                              "--show-reachable=yes", "--num-callers=50"],
         want=vgt_no_extras)
vgt_case("vgtext_suppressions", "v_leaks", ["--leak-check=full", "--show-leak-kinds=all",
                                            "--suppressions={supp}", "-s"])
vgt_case("vgtext_suppressions_quiet", "v_leaks", ["-q", "-s", "--leak-check=full",
                                                  "--suppressions={supp}"], want=vgt_no_extras)
# --gen-suppressions=all: a block after each record (and its end marker)
vgt_case("vgtext_gen_suppressions", "v_leaks", ["-q", "--leak-check=full",
                                                "--gen-suppressions=all",
                                                "--error-markers=B,E"])
# one suppression for two records, one with indirect bytes
vgt_case("vgtext_suppressions_two", "v_leaks", ["--leak-check=full", "-s",
                                                "--suppressions={d}/two.supp"],
         files={"two.supp": ("{\n   all_def\n   Memcheck:Leak\n   match-leak-kinds: definite\n"
                             "   fun:malloc\n   ...\n}\n", 0o644)})
vgt_case("vgtext_markers_exitcode", "v_leaks",
         ["--leak-check=full", "--errors-for-leak-kinds=all", "--show-leak-kinds=definite",
          "--error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END", "--error-exitcode=7"],
         want_rc=7)
# summary mode counts no errors: the program's own status
vgt_case("vgtext_summary_exitcode", "v_leaks", ["--error-exitcode=7"], want_rc=0)
# --track-fds=yes: memcheck's FILE DESCRIPTORS first (the logs on stderr)
vgt_case("vgtext_track_fds", "v_leaks", ["--leak-check=full", "--track-fds=yes"],
         log_file=False)
vgt_case("vgtext_track_fds_quiet", "v_leaks", ["-q", "--track-fds=yes"], log_file=False)
# descriptors inherited: "<inherited from parent>", a path or no name
vgt_case("vgtext_track_fds_inherited", "v_leaks", ["-q", "--track-fds=yes"],
         log_file=False, inherit=True)
# valgrind's option sources, in its order: ~/.valgrindrc, $VALGRIND_OPTS,
# ./.valgrindrc, the command line (each later one wins); quotes keep a
# space in a word
VGT_RC_ENV = dict(target_env(), HOME="{d}/home",
                  VALGRIND_OPTS="--leak-check=full --num-callers=3")
VGT_RC_FILES = {"home/.valgrindrc": ("--leak-check=summary --show-leak-kinds=all\n"
                                     "--num-callers=2 '--error-markers=a b,c'\n", 0o644),
                "work/.valgrindrc": ("--errors-for-leak-kinds=all --show-leak-kinds=definite\n",
                                     0o644)}
vgt_case("vgtext_valgrindrc", "v_leaks", ["--error-exitcode=9"], want_rc=9,
         env=VGT_RC_ENV, cwd="{d}/work", files=VGT_RC_FILES)
# ./.valgrindrc that others can write is not read
vgt_case("vgtext_valgrindrc_writable", "v_leaks", ["--error-exitcode=9"], want_rc=0,
         env=dict(target_env(), HOME="{d}/home"), cwd="{d}/work",
         files={"work/.valgrindrc": ("--leak-check=full\n", 0o646)})
# an exec (valgrind follows it with --trace-children=yes): a new banner,
# the image that exits is reported, the 77 bytes of the one the exec left
# are no error (on stderr: valgrind's new instance truncates a log file)
def vgt_tree(ck, got, want_lines, extra):
    """-f's PROCESS TREE, last, in memcheck's prefix."""
    ck.eq("PROCESS TREE", extra[-2:-1], ["==PID== PROCESS TREE: 1 process"])
    ck.true("the tree's row: %s" % short(extra[-1:]), extra and re.match(
        r"==PID==   \d+ %s again: exit 0, lost 11 bytes, 0 fds$"
        % re.escape(need_target("v_exec")), extra[-1]))


vgt_case("vgtext_exec", "v_exec", ["--trace-children=yes", "--leak-check=full",
                                   "--error-exitcode=5"], want_rc=5, log_file=False,
         want=vgt_tree)
# without --trace-children=yes valgrind does not follow the exec: the new
# image runs unchecked, the log has the banner only, the status is the
# program's; ptleak lets the process go at its exec and waits for it
vgt_case("vgtext_exec_untraced", "v_exec", ["--leak-check=full", "--error-exitcode=5"],
         want_rc=0, log_file=False)
# valgrind follows every fork (the child's report in the same log, no
# banner); the verdict is the first process's
vgt_case("vgtext_fork", "v_fork", ["--leak-check=full", "--error-exitcode=4"], want_rc=4,
         log_file="shared")
# C++: the stacks start at operator new, as memcheck's (valgrind's
# freeres off: ptleak frees nothing in the program).  The still reachable
# emergency pool of libstdc++ is counted, not shown: its stack runs
# through ld.so's inlined call_init, a frame valgrind shows and ptleak not
vgt_case("vgtext_cxx", "h_vector", ["--leak-check=full",
                                    "--show-leak-kinds=definite,indirect,possible",
                                    "--run-libc-freeres=no", "--run-cxx-freeres=no"])
vgt_case("vgtext_quiet_summary", "v_leaks", ["-q"], want=vgt_no_extras)
vgt_case("vgtext_kinds_none", "v_leaks", ["--leak-check=full", "--show-leak-kinds=none",
                                          "--errors-for-leak-kinds=none"])
# more kinds and stacks: h_classes (a cycle, an interior pointer, a
# definite block holding indirect ones), demo (realloc, strdup, stdio's
# buffer: valgrind's freeres off)
vgt_case("vgtext_classes", "h_classes", ["--leak-check=full", "--show-leak-kinds=all",
                                         "--run-libc-freeres=no"])
vgt_case("vgtext_demo", "demo", ["--leak-check=full", "--run-libc-freeres=no"])
# no leaks: "All heap blocks were freed -- no leaks are possible"
vgt_case("vgtext_clean", "v_clean", ["--leak-check=full", "--error-exitcode=3"], want_rc=0)
vgt_case("vgtext_clean_quiet", "v_clean", ["-q", "--leak-check=full"], want=vgt_no_extras)
vgt_case("vgtext_clean_no", "v_clean", ["--leak-check=no"])


@case("vgtext_signal")
def t_vgtext_signal():
    """h_segv dies of SIGSEGV: from the HEAP SUMMARY to the end of the
    LEAK SUMMARY as valgrind's; before it valgrind reports the invalid
    write (an error of a kind ptleak does not check: one error fewer) and
    its "Process terminating" block, ptleak the line that starts it."""
    vrc, vlog, prc, plog, perr = vgt_runs("h_segv", ["--leak-check=full"])
    ck = Check()
    ck.eq("exit status (valgrind's)", prc, vrc)
    ck.eq("exit status", prc, 128 + signal.SIGSEGV)
    got, extra = vgt_memcheck_part(vgt_norm(plog))
    want = vgt_norm(vlog)

    def section(lines):
        try:
            a = lines.index("==PID== HEAP SUMMARY:")
            b = lines.index("==PID== LEAK SUMMARY:")
            return lines[a:b + 9]
        except ValueError:
            return []
    ck.true("a HEAP SUMMARY and a LEAK SUMMARY", section(got))
    vgt_diff(ck, "HEAP SUMMARY to LEAK SUMMARY", section(got), section(want))
    ck.eq("valgrind's invalid write", vlog.count("Invalid write of size 4"), 1)
    ck.true("the signal's line",
            "==PID== Process terminating with default action of signal 11 (SIGSEGV)" in got)
    ck.eq("ERROR SUMMARY", got[-1],
          want[-1].replace("3 errors from 3 contexts", "2 errors from 2 contexts"))
    ck.done()


@case("vgtext_valgrindrc_bad")
def t_vgtext_valgrindrc_bad():
    """A word of $VALGRIND_OPTS that is no option (valgrind: "Unknown
    option"), or a bad value there: one line, exit 64, nothing run; with
    ptleak's text VALGRIND_OPTS is not read."""
    need_ptleak()
    ck = Check()
    tgt = need_target("v_leaks")
    for opts, args, want in (
            ("--leak-check=full # x", ["-s"], (64, "ptleak: '#' in ~/.valgrindrc, $VALGRIND_OPTS "
                                               "or ./.valgrindrc is no option\n")),
            ("--leak-check=maybe", ["-s"], (64, "ptleak: --leak-check wants no, summary or full, "
                                                "not 'maybe'\n")),
            ("--leak-check=maybe", ["-q", "--text=ptleak"], (0, None))):
        env = dict(target_env(), VALGRIND_OPTS=opts)
        rc, out, err = run_cmd([PTLEAK] + args + [tgt], env=env)
        ck.eq("VALGRIND_OPTS=%r, %s: exit status" % (opts, args), rc, want[0])
        if want[1] is not None:
            ck.eq("VALGRIND_OPTS=%r, %s: stderr" % (opts, args), err, want[1])
        else:
            ck.true("VALGRIND_OPTS=%r, %s: ptleak's text: %s" % (opts, args, short(err)),
                    re.search(r"^ptleak\[\d+\]: LEAK SUMMARY:$", err, re.M))
    ck.done()
