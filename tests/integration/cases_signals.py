# Signals, seccomp, job control, set-user-ID: ptleak never hangs and never
# harms its target.  exec'd in run.py's namespace (see load_case_files).

# Run in a child python that is a subreaper (PR_SET_CHILD_SUBREAPER), so
# that a launched target orphaned by ptleak's exit is reparented to it and
# its status can be read: argv = the ptleak command (a JSON list), json dir,
# runs, target argv...
# For each run: ptleak launches the target in a new process group; once the
# target says "ready PID", the group gets SIGTERM then SIGCONT (what
# `timeout` does).  Prints one JSON line per run: ptleak's status, the
# target's status (both as run_cmd gives them), or "hung".
TIMEOUT_RUNS = r'''
import ctypes, json, os, signal, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
ptleak, d, runs, argv = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def status(st):
    return 128 + os.WTERMSIG(st) if os.WIFSIGNALED(st) else os.WEXITSTATUS(st)
for i in range(runs):
    js = os.path.join(d, "r%d.json" % i)
    p = subprocess.Popen(ptleak + ["-q", "-o", os.devnull, "--json", js] + argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, start_new_session=True)
    tpid = int(p.stdout.readline().split()[1])
    os.killpg(p.pid, signal.SIGTERM)
    os.killpg(p.pid, signal.SIGCONT)
    out = {"run": i}
    end = time.time() + 20
    while p.poll() is None and time.time() < end:
        time.sleep(0.005)
    if p.poll() is None:
        out["hung"] = open("/proc/%d/status" % tpid).read().split("State:")[1].split("\n")[0].strip()
        os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    out["ptleak"] = p.returncode if p.returncode >= 0 else 128 - p.returncode
    for _ in range(500):
        w, st = os.waitpid(tpid, os.WNOHANG)
        if w:
            break
        time.sleep(0.01)
    else:
        os.kill(tpid, signal.SIGKILL)
        _, st = os.waitpid(tpid, 0)
    out["target"] = status(st)
    print(json.dumps(out), flush=True)
    if "hung" in out:
        break
'''


def leak_one_blocks(rep):
    """(bytes, blocks, kinds) of the records naming leak_one."""
    recs = [r for r in rep["heap"]["records"]
            if any(f["function"] == "leak_one" for f in r["stack"])]
    return (sum(r["bytes"] for r in recs), sum(r["blocks"] for r in recs),
            sorted(set(r["kind"] for r in recs)))


@case("signals_timeout_sleeper", engines=True)
def t_signals_timeout_sleeper():
    """`timeout`'s SIGTERM + SIGCONT to the process group of ptleak and a
    launched program sleeping in nanosleep, 50 runs: ptleak never hangs
    (it used to spin in the injected munmap of its detach, the SIGCONT
    re-queued and reported again forever, the target frozen, then killed
    by SIGSEGV); the program dies of SIGTERM as it does natively; ptleak
    exits 0 (it detached first) or 143 (the program died traced); the
    report has the 3 leaked blocks of 100 bytes, definitely lost."""
    need_ptleak()
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-sig.") as d:
        p = subprocess.run([sys.executable, "-c", TIMEOUT_RUNS, json.dumps(ptleak_cmd()), d, "50",
                            need_target("h_sleeper"), "30"],
                           capture_output=True, text=True, timeout=300, env=target_env())
        runs = [json.loads(l) for l in p.stdout.splitlines()]
        ck.eq("runs done (helper stderr %s)" % short(p.stderr), len(runs), 50)
        seen = {}
        for r in runs:
            w = "run %d" % r["run"]
            ck.eq(w + ": ptleak hung, target state", r.get("hung"), None)
            ck.eq(w + ": target status", r["target"], 128 + signal.SIGTERM)
            ck.true(w + ": ptleak status %d, want 0 or 143" % r["ptleak"], r["ptleak"] in (0, 143))
            try:
                with open(os.path.join(d, "r%d.json" % r["run"])) as f:
                    rep = json.load(f)
            except (OSError, ValueError) as e:
                ck.err(w + ": no JSON report: %s" % e)
                continue
            ck.true(w + ": reason %s, ptleak status %d" % (rep["reason"], r["ptleak"]),
                    rep["reason"] == "exit" or r["ptleak"] == 0)
            ck.eq(w + ": target exit in the report", rep["target"]["exit"],
                  {"signal": signal.SIGTERM} if rep["reason"] == "exit" else None)
            seen[(rep["reason"], r["ptleak"])] = seen.get((rep["reason"], r["ptleak"]), 0) + 1
            ck.eq(w + ": leak_one records", leak_one_blocks(rep), (300, 3, [DEF]))
            if ck.errors:
                break
        ck.eq("runs done (helper stderr %s)" % short(p.stderr), len(runs), 50)
        if VERBOSE:
            print("  (reason, ptleak status): runs", seen)
    ck.done()


class Storm(Server):
    """tests/targets/h_storm MODE, driven through its stdin and stdout."""

    def __init__(self, mode):
        self.p = subprocess.Popen([need_target("h_storm"), mode],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=target_env(),
                                  start_new_session=True, preexec_fn=_child_setup)
        self.out = Lines(self.p.stdout)
        self.err = Lines(self.p.stderr)

    def ping(self, timeout=10.0):
        self.send("ping")
        self.out.expect("pong", timeout)


def storm_cycles(mode, cycles=50):
    """CYCLES attaches and detaches (SIGTERM, SIGHUP, SIGINT in turn) of
    h_storm MODE, one leak_one() while attached.  After each detach: exit
    status 0, nothing else on stderr, the detach report has exactly the one
    block of 128 bytes; no tracer, every code byte as in
    its file, the program answers.  At the end it exits 0 saying "bye"."""
    ck = Check()
    srv = Storm(mode)
    d = tempfile.mkdtemp(prefix="ptleak-sig.")
    try:
        srv.ping()
        before = exec_maps(srv.p.pid)
        for cycle in range(cycles):
            w = "%s cycle %d" % (mode, cycle)
            at = Attached(srv.p.pid, ["--show-reachable"], d=d)
            try:
                srv.send("leak")
                # under the breakpoint engine a 100 us storm costs 4 stops
                # a signal: on a loaded machine the answer can take long
                srv.out.expect("leaked", 30)
                sig = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)[cycle % 3]
                at.signal(sig)
                ck.eq(w + ": ptleak exit status after signal %d" % sig, at.wait(), 0)
                ck.eq(w + ": ptleak's stderr after the attach line", at.err.rest(), [])
                rep = at.report(1, timeout=1)
                ck.eq(w + ": reason", rep["reason"], "detach")
                # the block is exact; its class is not always: a signal
                # frame may hold a stale copy of its address (in the
                # saved vector registers) while a handler runs
                got = leak_one_blocks(rep)
                ck.eq(w + ": leak_one bytes, blocks", got[:2], (128, 1))
                ck.true(w + ": leak_one kinds %s" % got[2], got[2] in ([DEF], [REACH]))
            finally:
                at.kill()
            ck.eq(w + ": TracerPid after detach", tracer_pid(srv.p.pid), 0)
            ck.eq(w + ": code changed after detach", code_differences(srv.p.pid), [])
            srv.ping()
            if ck.errors:
                break
        ck.eq("executable mappings after the detaches", exec_maps(srv.p.pid), before)
        srv.send("quit")
        srv.out.expect("bye")
        ck.eq("target exit status", srv.p.wait(timeout=30), 0)
        ck.eq("target stderr", srv.err.rest(), [])
    finally:
        srv.kill()
        shutil.rmtree(d, ignore_errors=True)
    ck.done()


@case("signals_storm_alrm", engines=True)
def t_signals_storm_alrm():
    """Attach and detach 50 times while the program gets SIGALRM every
    100 us (see storm_cycles): the injected mmap and munmap used to spin
    forever re-queueing the signal (6 runs out of 6)."""
    storm_cycles("alrm")


@case("signals_storm_chld", engines=True)
def t_signals_storm_chld():
    """Attach and detach 50 times while a thread of the program forks
    children that exit at once, SIGCHLD all the time (see storm_cycles)."""
    storm_cycles("chld")


@case("seccomp_attach_refused")
def t_seccomp_attach_refused():
    """-p on a program whose seccomp filter kills it for any mmap: ptleak
    would inject one (its scratch page), so it refuses with one line,
    exit 1 (it used to kill the target with SIGSYS and say "no such
    process"); the program runs on untraced, answers, and dies of the
    SIGTERM it is sent, its output as without ptleak."""
    ck = Check()
    p = subprocess.Popen([need_target("h_seccomp"), "wait"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=target_env(),
                         start_new_session=True, preexec_fn=_child_setup)
    out = Lines(p.stdout)
    try:
        out.expect("filtered")
        want = (r"ptleak: cannot attach to process %d: it runs under a seccomp filter "
                r"that would kill it for ptleak's mmap; start the program under ptleak "
                r"instead \(it then maps its page before the filter is installed\)" % p.pid)
        attach_error(ck, p.pid, want)
        attach_error(ck, p.pid, want)
        ck.eq("TracerPid after the refusals", tracer_pid(p.pid), 0)
        p.stdin.write(b"ping\n")
        p.stdin.flush()
        out.expect("pong", 5)
        os.kill(p.pid, signal.SIGTERM)
        ck.eq("target status", p.wait(timeout=10), -signal.SIGTERM)
        ck.eq("target output", out.seen, ["filtered", "pong"])
        ck.eq("target stderr", p.stderr.read(), b"")
    finally:
        _kill_group(p.pid)
        p.wait()
    ck.done()


@case("seccomp_filter_after_start", engines=True)
def t_seccomp_filter_after_start():
    """A launched program that installs a filter killing it for an mmap of
    an anonymous executable page (ptleak's scratch page) after ptleak has
    mapped its page: traced to the end, the 2 leaked blocks exact."""
    ck = Check()
    r = ptleak([need_target("h_seccomp"), "leak"])
    rep = need_json(r)
    ck.eq("exit status", r.rc, 0)
    ck.eq("stdout", r.stdout, "leaked 2\n")
    ck.eq("in use", (rep["heap"]["in_use"]["bytes"], rep["heap"]["in_use"]["blocks"]), (128, 2))
    ck.eq("leak_one records", leak_one_blocks(rep), (128, 2, [DEF]))
    ck.eq("leak_one line", sorted(set(r["stack"][0]["line"] for r in rep["heap"]["records"])),
          [line("h_seccomp", "leak")])
    ck.done()


@case("seccomp_filter_before_exec")
def t_seccomp_filter_before_exec():
    """A launched program installs that filter, then execs: the new image
    runs under it from its start, so ptleak cannot map its page there.  One
    line says so (after the old image's report, reason exec), ptleak lets
    the program run on untraced (nothing injected: it is not killed) and
    exits with its status; its output is as without ptleak."""
    ck = Check()
    tgt = need_target("h_seccomp")
    rc, out, err = run_cmd([PTLEAK, "-q", tgt, "exec"])
    nrc, nout, nerr = native("h_seccomp", ["exec"])
    ck.eq("exit status (native %d)" % nrc, rc, nrc)
    ck.eq("stdout", out, nout)
    ck.true("one report, at exec: %s" % short(err),
            len(re.findall(r"(?m)^ptleak\[\d+\]: report \d+ at exec, ", err)) == 1 and
            len(re.findall(r"(?m)^ptleak\[\d+\]: report ", err)) == 1)
    err = "".join(l for l in err.splitlines(True) if not l.startswith("ptleak["))
    ck.true("stderr: %s" % short(err), re.fullmatch(
        r"ptleak: cannot trace %s \(process \d+\) after its exec: it runs under a seccomp "
        r"filter that would kill it for ptleak's mmap; it runs on untraced\n" % re.escape(tgt), err))
    ck.done()


@case("seccomp_log_filter", engines=True)
def t_seccomp_log_filter():
    """A filter that only logs ptleak's mmap (SECCOMP_RET_LOG: the kernel
    runs the call) installed before an exec does not stop ptleak tracing
    the new image: no warning, the 2 leaked blocks exact (it used to be
    taken for a refusal: 'runs on untraced')."""
    ck = Check()
    r = ptleak([need_target("h_seccomp"), "logexec"])
    rep = need_json(r)
    ck.eq("exit status", r.rc, 0)
    ck.eq("stdout", r.stdout, "leaked 2\n")
    ck.eq("ptleak's own lines on stderr",
          [l for l in r.stderr.splitlines() if l.startswith("ptleak: ")], [])
    ck.eq("leak_one records", leak_one_blocks(rep), (128, 2, [DEF]))
    ck.done()


def stop_status(pid, timeout=10.0):
    """The stop signal of child PID (waitpid WUNTRACED), or a Fail."""
    end = time.time() + timeout
    while time.time() < end:
        w, st = os.waitpid(pid, os.WUNTRACED | os.WNOHANG)
        if w:
            if not os.WIFSTOPPED(st):
                raise Fail("process %d ended (status %#x) instead of stopping" % (pid, st))
            return os.WSTOPSIG(st)
        time.sleep(0.005)
    raise Fail("process %d not stopped %g s after the signal" % (pid, timeout))


def job_control_run(launcher):
    """h_server (under LAUNCHER) as a job: its own process group in our
    session (not orphaned: stop signals are not discarded).  For SIGTSTP,
    SIGTTIN and SIGSTOP sent to the program alone, then SIGTSTP sent to
    the whole group (a terminal's ^Z): the stop signal waitpid(WUNTRACED)
    sees for the job's first process; SIGCONT to the group (fg) resumes
    it, it answers, and is not stopped again.  Returns (stop signals,
    output, exit status)."""
    p = subprocess.Popen(list(launcher) + [need_target("h_server")], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=target_env(),
                         preexec_fn=lambda: (os.setpgid(0, 0), _child_setup()))
    srv = Server.__new__(Server)
    srv.p = p
    srv.out = Lines(p.stdout)
    stops = []
    try:
        srv.ping()
        prog = p.pid
        if launcher:
            with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
                prog = int(f.read().split()[0])
        for sig, to_group in ((signal.SIGTSTP, 0), (signal.SIGTTIN, 0), (signal.SIGSTOP, 0),
                              (signal.SIGTSTP, 1)):
            if to_group:
                os.killpg(p.pid, sig)
            else:
                os.kill(prog, sig)
            stops.append(signal.Signals(stop_status(p.pid)).name)
            os.killpg(p.pid, signal.SIGCONT)
            srv.ping()
            if os.waitpid(p.pid, os.WUNTRACED | os.WNOHANG)[0]:
                stops.append("stopped again")
        srv.send("quit")
        srv.out.expect(r"bye 0")
        rc = p.wait(timeout=30)
        return stops, [l for l in srv.out.seen if not l.startswith("pong")], rc
    finally:
        _kill_group(p.pid)
        p.wait()


@case("signals_job_control")
def t_signals_job_control():
    """A launched program stopped by SIGTSTP, SIGTTIN or SIGSTOP: ptleak
    stops itself with the same signal, so that its parent (a shell) sees
    the job stopped as without ptleak (it used to stay running, and a
    shell saw nothing); a terminal's SIGTSTP to the whole job stops both
    once.  SIGCONT to the job resumes both; output and status unchanged."""
    need_ptleak()
    ck = Check()
    native_run = job_control_run(())
    ck.eq("native stop signals", native_run[0], ["SIGTSTP", "SIGTTIN", "SIGSTOP", "SIGTSTP"])
    traced = job_control_run([PTLEAK, "-q", "-o", os.devnull])
    ck.eq("stop signals under ptleak", traced[0], native_run[0])
    ck.eq("output under ptleak", traced[1], native_run[1])
    ck.eq("exit status under ptleak", traced[2], native_run[2])
    ck.done()


@case("setuid_warning")
def t_setuid_warning():
    """A set-user-ID (or set-group-ID) root program run by user nobody
    under ptleak: the kernel runs it without the privilege (its tracer
    lacks CAP_SYS_PTRACE) and ptleak says so in one warning line (not
    with -q: a warning); natively it runs with euid 0.  Run by root, no
    warning and the privilege is kept."""
    need_ptleak()
    ck = Check()
    # nobody may not reach the checkout (under /root): copies it can run
    exe = user_copy(PTLEAK)
    d = tempfile.mkdtemp(prefix="ptleak-suid.", dir=user_dir())
    try:
        os.chmod(d, 0o755)
        suid, sgid = os.path.join(d, "h_ids"), os.path.join(d, "h_gids")
        for path, mode in ((suid, 0o4755), (sgid, 0o2755)):
            shutil.copy(need_target("h_ids"), path)
            os.chown(path, 0, 0)
            os.chmod(path, mode)

        def run(cmd, user=True):
            if user:
                return run_as(NOBODY, cmd)
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                               stdin=subprocess.DEVNULL)
            return p.returncode, p.stdout, p.stderr

        nobody = "uid 65534 euid 65534 gid 65534 egid 65534\n"
        ck.eq("native set-user-ID as nobody", run([suid]),
              (0, "uid 65534 euid 0 gid 65534 egid 65534\n", ""))
        ck.eq("native set-group-ID as nobody", run([sgid]),
              (0, "uid 65534 euid 65534 gid 65534 egid 0\n", ""))
        ck.eq("ptleak set-user-ID as nobody", run([exe, "-o", os.devnull, suid]),
              (0, nobody, "ptleak: warning: %s is set-user-ID (owner root); under ptrace "
               "it runs without that privilege\n" % suid))
        ck.eq("ptleak set-group-ID as nobody", run([exe, "-o", os.devnull, sgid]),
              (0, nobody, "ptleak: warning: %s is set-group-ID (group root); under ptrace "
               "it runs without that privilege\n" % sgid))
        ck.eq("ptleak -q set-user-ID as nobody", run([exe, "-q", "-o", os.devnull, suid]),
              (0, nobody, ""))
        ck.eq("ptleak set-user-ID as root", run([PTLEAK, "-o", os.devnull, suid], user=False),
              (0, "uid 0 euid 0 gid 0 egid 0\n", ""))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    ck.done()


@case("signals_storm_alloc", engines=True)
def t_signals_storm_alloc():
    """SIGALRM every 100 us whose handler allocates (1,000 of them, then
    the timer stops) while main does 2,000 malloc + free pairs: the program
    finishes under ptleak (60 s limit) with its native output, and every
    allocator call is counted exactly: 2,000 + 1,000 + 2 (tcache priming)
    + 1 (stdout buffer) allocations.  While the timer runs, each signal
    costs 4 ptrace stops (its delivery, malloc entry and return, free),
    more than 100 us on this machine: main runs only once it stops."""
    ck = Check()
    args = ["alloc", "2000", "1000"]
    r = ptleak([need_target("h_storm")] + args, timeout=60)
    rep = need_json(r)
    nrc, nout, _ = native("h_storm", args)
    ck.eq("stdout", r.stdout, nout)
    ck.eq("stdout", r.stdout, "main 2000 handler 1000\n")
    ck.eq("exit status", r.rc, nrc)
    t = rep["heap"]["totals"]
    ck.eq("totals", (t["allocs"], t["frees"], t["bytes_allocated"], t["unknown_frees"]),
          (3003, 3002, 2000 * 16 + 1000 * 32 + 16 + 32 + 4096, 0))
    ck.eq("in use", (rep["heap"]["in_use"]["bytes"], rep["heap"]["in_use"]["blocks"]), (4096, 1))
    ck.done()
