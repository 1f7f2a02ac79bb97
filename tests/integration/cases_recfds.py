# The descriptor functions under the recorder: their calls recorded by the
# hooks like the allocator's (no stop), the same records as the breakpoint
# engine's, and nothing of ptleak's left to kill the program when ptleak
# is killed.  Exec'd in run.py's namespace (cases_fds.py's Fd, check_fds).

FD_CHURN_ROUNDS = 1000


def fd_churn_fds():
    return [
        Fd(3, "file", "/dev/null", "open", [T("keep", "keep_open"), T("main", "call_keep")]),
        Fd(4, "file", "/dev/null", "fopen", [T("keep", "keep_fopen"), T("main", "call_keep")]),
        Fd(5, "file", "/", "opendir", [T("keep", "keep_opendir"), T("main", "call_keep")]),
        Fd(6, "pipe", ("re", r"pipe:\[\d+\]"), "pipe", [T("keep", "keep_pipe"), T("main", "call_keep")]),
        Fd(7, "pipe", ("re", r"pipe:\[\d+\]"), "pipe", [T("keep", "keep_pipe"), T("main", "call_keep")]),
    ]


@case("rec_fd_no_stops", engines=True)
def t_rec_fd_no_stops():
    """fd_churn loop 1000: 1000 rounds of open/close, fopen/fclose,
    opendir/closedir and pipe/close, then one of each kept.  Both engines:
    exactly the five kept descriptors, named after the function called,
    with the caller's line (fopen's and opendir's own open counted once),
    and the heap part exact (the FILE and the DIR malloc'd inside them,
    their stacks with no frame of ptleak's code).  The recorder makes no
    stop per call: fewer than 20 stops in all (PTLEAK_DEBUG=stops counts
    them); the breakpoint engine at least one per call (8 per round)."""
    name = "fd_churn"
    tgt = need_target(name)
    env = target_env()
    env["PTLEAK_DEBUG"] = "stops"
    r = ptleak([tgt, "loop", str(FD_CHURN_ROUNDS)], want_text=True, env=env)
    ck = Check()
    check_native(ck, name, ["loop", str(FD_CHURN_ROUNDS)], r)
    rep = need_json(r)
    check_target(ck, rep, [tgt, "loop", str(FD_CHURN_ROUNDS)], {"code": 0})
    recs = fd_churn_fds()
    check_fds(ck, name, rep, recs)
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    n = FD_CHURN_ROUNDS + 1
    check_heap(ck, name, rep, (32816 + 472, 2), (2 * n, 2 * n - 2, n * (32816 + 472)), None,
               [Rec("dir", 32816, 1, "malloc", DEF,
                    [L("__alloc_dir", "libc.so.6"), L("opendir_tail", "libc.so.6"),
                     T("keep", "keep_opendir"), T("main", "call_keep")],
                    exact=True),
                Rec("file", 472, 1, "malloc", REACH,
                    tail=[T("keep", "keep_fopen"), T("main", "call_keep")])],
               lib_of(name, "libc.so.6"))
    stops = len([l for l in r.stderr.splitlines() if l.startswith("ptleak-debug: wait ")])
    if ENGINE == "breakpoints":
        if stops < 8 * FD_CHURN_ROUNDS:
            ck.err("%d stops with breakpoints, want at least %d (one per call)"
                   % (stops, 8 * FD_CHURN_ROUNDS))
    elif stops >= 20:
        ck.err("%d stops with the recorder, want fewer than 20 (none per call)" % stops)
    ck.done()


@case("rec_sigkill_fd_churn", engines=["recorder"])
def t_rec_sigkill_fd_churn():
    """SIGKILL to ptleak attached to fd_churn serve 4 (4 threads making
    open/close and malloc/free pairs without pause): the descriptor
    functions are hooked like the allocator's, so no thread can be caught
    at an int3 of ptleak's when it dies.  2 s later the program still runs,
    untraced, its rounds count up again (at once, or once the threads that
    found the ring full give up on its consumer: 3 s), and "quit" exits 0.  (With the
    breakpoint engine a thread stopped at an int3 at that moment dies
    with it.)"""
    tgt = need_target("fd_churn")
    p = subprocess.Popen([tgt, "serve", "4"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, bufsize=0, env=target_env())
    out = Lines(p.stdout)
    ck = Check()

    def count():
        p.stdin.write(b"count\n")
        return int(out.expect(r"count (\d+)").group(1))

    try:
        out.expect("ready")
        at = Attached(p.pid)
        try:
            time.sleep(0.3)
            before = count()
            at.p.kill()
            at.p.wait()
        finally:
            at.kill()
        time.sleep(2)
        ck.eq("program's status 2 s after ptleak's SIGKILL (None: running)", p.poll(), None)
        if p.poll() is None:
            ck.eq("TracerPid", tracer_pid(p.pid), 0)
            # threads that found the ring full at the kill wait for the
            # consumer RING_STALE_NS (3 s) before they give up on it
            after = count()
            deadline = time.monotonic() + 6
            while after <= before and time.monotonic() < deadline:
                time.sleep(0.5)
                after = count()
            if after <= before:
                ck.err("rounds did not go on within 8 s of ptleak's death: %d, then %d"
                       % (before, after))
            p.stdin.write(b"quit\n")
            ck.eq("exit status", p.wait(timeout=10), 0)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    ck.done()


@case("rec_seccomp_getpid")
def t_rec_seccomp_getpid():
    """r_seccomp_memfd getpid: a seccomp filter that kills the process for
    getpid, which the descriptor hooks would call.  --engine=auto: the
    allocator functions are recorded, the descriptor functions fall back
    to breakpoints with one 'ptleak: ' line saying why; the program lives
    (exit 0) and every number is exact: the heap of the other seccomp
    cases, and fd 3 kept by open in run (@fdleak)."""
    ck, r, rep = run_heap("r_seccomp_memfd", args=["getpid"], opts=["--engine=auto"],
                          in_use=(128, 2), totals=(22, 20, 1088), peak=128,
                          records=seccomp_memfd_records(),
                          exec_argv=lambda tgt: [tgt, "run", "getpid"])
    check_fds(ck, "r_seccomp_memfd", rep,
              [Fd(3, "file", "/dev/null", "open", [T("run", "fdleak"), T("main", "run")])])
    others = [l for l in r.stderr.splitlines() if not re.match(r"ptleak\[\d+\]:", l)]
    ck.true("stderr, besides the report: %s, want one 'ptleak: ' line about getpid" % short(others),
            len(others) == 1 and others[0].startswith("ptleak: ") and "getpid" in others[0])
    ck.done()


@case("rec_fd_pid_namespace", engines=True)
def t_rec_fd_pid_namespace():
    """ptleak -f unshare --pid --fork fd_churn loop 10: the traced child
    runs in its own pid namespace, where getpid() is 1, not the pid ptleak
    sees.  Its report (r.json.PID) has the five kept descriptors named
    after their functions, with their callers: the descriptor hooks
    compare getpid() with the process's own pid (NSpid), not ptleak's
    view of it, or they would take every call for a vfork child's."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        raise Skip("needs root and unshare(1) for a pid namespace")
    tgt = need_target("fd_churn")
    d = tempfile.mkdtemp(prefix="ptleak-it.")
    try:
        js = os.path.join(d, "r.json")
        rc, out, err = run_cmd(ptleak_cmd() + ["-f", "-q", "-o", os.devnull, "--json", js,
                                               "unshare", "--pid", "--fork", tgt, "loop", "10"])
        ck = Check()
        ck.eq("exit status", rc, 0)
        kids = [f for f in os.listdir(d) if f.startswith("r.json.")]
        ck.eq("child reports", len(kids), 1)
        if kids:
            with open(os.path.join(d, kids[0])) as f:
                rep = json.load(f)
            check_fds(ck, "fd_churn", rep, fd_churn_fds())
        ck.done()
    finally:
        shutil.rmtree(d)
