# Live reports, attach (-p PID) and detach: SIGUSR1 reports, 50 attach and
# detach cycles on h_server, --report-on-signal, --min-age, --duration, a
# fatal error, a launched program detached, job control, -p errors.
# Server, Attached, Lines, code_differences, thread_states and attach_error
# are run.py's (cases_recorder.py and cases_signals.py use them too).
# Exec'd in run.py's namespace.


def json_after_signal(js):
    """The JSON report ptleak writes to JS after a SIGUSR1 (within 5 s)."""
    for _ in range(500):
        if os.path.exists(js):
            with open(js) as f:
                return json.load(f)
        time.sleep(0.01)
    raise Fail("no JSON report 5 s after SIGUSR1")


@case("report_on_sigusr1", engines=True)
def t_report_on_sigusr1():
    """SIGUSR1 to ptleak makes a report while the target runs (reason
    "signal", "in use now"), the target goes on, and the exit report
    follows.  -o FILE gets both text reports, one after the other."""
    name = "h_report_signal"
    tgt = need_target(name)
    need_ptleak()
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        js, txt, go = (os.path.join(d, f) for f in ("r.json", "r.txt", "go"))
        p = subprocess.Popen(ptleak_cmd() + ["--json", js, "-o", txt, tgt, go], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=target_env(),
                             start_new_session=True)
        try:
            ck.eq("target's first line", p.stdout.readline(), b"ready\n")
            p.send_signal(signal.SIGUSR1)
            live = json_after_signal(js)
            ck.eq("live report reason", live["reason"], "signal")
            ck.eq("live report fds", live["fds"], {"open": 3, "inherited": 3, "records": [],
                                                   "tracked": True, "why": None})
            ck.eq("live report target.exit", live["target"]["exit"], None)
            # the stdout buffer of printf("ready") + 100
            ck.eq("live report in_use", live["heap"]["in_use"], {"bytes": 4196, "blocks": 2})
            ck.eq("live report 100-byte record's stack",
                  [[(f["function"], f["line"]) for f in rec["stack"]]
                   for rec in live["heap"]["records"] if rec["bytes"] == 100],
                  [[("keep", line(name, "keep")), ("main", line(name, "first"))]])
            release_and_wait(p, go, ck)
        finally:
            reap_group(p)
        with open(js) as f:
            final = json.load(f)
        ck.eq("final report reason", final["reason"], "exit")
        ck.eq("final target.exit", final["target"]["exit"], {"code": 0})
        # the stdout buffer (4,096) + 100 + 50
        ck.eq("final in_use", final["heap"]["in_use"], {"bytes": 4246, "blocks": 3})
        with open(txt) as f:
            heads = [l.split(": ", 1)[1] for l in f.read().splitlines()
                     if re.match(r"ptleak\[\d+\]:\s+in use", l)]
        with open(txt) as f:
            fdheads = [l.split(": ", 1)[1] for l in f.read().splitlines()
                       if re.match(r"ptleak\[\d+\]: FILE DESCRIPTORS", l)]
        ck.eq("text reports' fd lines", fdheads,
              ["FILE DESCRIPTORS: 3 open now (3 inherited)",
               "FILE DESCRIPTORS: 3 open at exit (3 inherited)"])
        ck.eq("text reports' in-use lines", heads,
              ["        in use now: 4,196 bytes in 2 blocks",
               "    in use at exit: 4,246 bytes in 3 blocks"])
    ck.done()


def realloc_live_run(tgt, d, signal_it):
    """ptleak --show-reachable --json on h_realloc_live; with SIGNAL_IT a
    live report (SIGUSR1 to ptleak) while its thread waits inside
    realloc.  (live report or None, exit report, stdout, stderr, status)."""
    js, go = os.path.join(d, "r.json"), os.path.join(d, "go")
    if not signal_it:
        open(go, "w").close()
    p = subprocess.Popen(ptleak_cmd() + ["--show-reachable", "--json", js, "-o",
                                         os.path.join(d, "r.txt"), tgt, go],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=target_env(), start_new_session=True)
    live = None
    try:
        if signal_it:
            if p.stdout.readline() != b"ready\n" or p.stdout.readline() != b"inside\n":
                raise Fail("h_realloc_live did not say ready, inside")
            p.send_signal(signal.SIGUSR1)
            live = json_after_signal(js)
            os.unlink(js)
            open(go, "w").close()
        out, err = p.communicate(timeout=60)
    finally:
        reap_group(p)
    with open(js) as f:
        final = json.load(f)
    return live, final, out, err, p.returncode


@case("realloc_live_report", engines=True)
def t_realloc_live_report():
    """A live report while a thread waits inside realloc: the block it
    reallocates is still allocated (realloc has not returned), counted in
    use and scanned, so the block it alone points to is still reachable,
    not definitely lost; the exit report after is the one of a run
    without the live report."""
    name = "h_realloc_live"
    tgt = need_target(name)
    need_ptleak()
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        live, final, out, err, rc = realloc_live_run(tgt, d, True)
    with tempfile.TemporaryDirectory() as d:
        _, plain, _, _, _ = realloc_live_run(tgt, d, False)
    ck.eq("exit status", rc, 0)
    ck.eq("stderr", err, b"")
    ck.eq("program's last line", out, b"grown 1\n")
    h = live["heap"]
    # stdout's buffer, the holder, the child, the thread's dtv
    ck.eq("live in_use", h["in_use"], {"bytes": 4532, "blocks": 4})
    ck.eq("live definitely lost", h["summary"]["definitely_lost"],
          {"bytes": 0, "blocks": 0})
    ck.eq("live still reachable", h["summary"]["still_reachable"],
          {"bytes": 4260, "blocks": 3})
    recs = {r["bytes"]: (r["kind"], [(f["function"], f["line"]) for f in r["stack"]])
            for r in h["records"] if r["bytes"] in (64, 100)}
    ck.eq("live holder and child", recs,
          {64: ("still_reachable", [("main", line(name, "holder"))]),
           100: ("still_reachable", [("main", line(name, "child"))])})
    fh, ph = final["heap"], plain["heap"]
    # stdout's buffer, the child, the realloc's 4,242, the dtv
    ck.eq("exit in_use", fh["in_use"], {"bytes": 8710, "blocks": 4})
    ck.eq("exit figures as without the live report",
          (fh["in_use"], fh["totals"], fh["peak"], fh["summary"]),
          (ph["in_use"], ph["totals"], ph["peak"], ph["summary"]))
    ck.done()


def leak_records(rep):
    """The heap records whose stack names leak_one."""
    return [r for r in rep["heap"]["records"]
            if any(f["function"] == "leak_one" for f in r["stack"])]


def check_leak_records(ck, where, rep, reason, number, attached=True):
    ck.eq("%s: reason" % where, rep["reason"], reason)
    ck.eq("%s: report number" % where, rep["report"]["number"], number)
    recs = leak_records(rep)
    if not ck.true("%s: no record names leak_one (128-byte records: %s)" % (where, [
            (r["bytes"], r["blocks"], [(f["function"], f["module"]) for f in r["stack"][:3]])
            for r in rep["heap"]["records"] if r["bytes"] % 128 == 0][:4]), recs):
        return
    for r in recs:
        ck.eq("%s: leak_one record bytes" % where, r["bytes"], 128 * r["blocks"])
        ck.eq("%s: leak_one record allocator" % where, r["allocator"], "malloc")
        f = r["stack"][0]
        ck.eq("%s: leak_one frame" % where, (f["function"], f["file"], f["line"]),
              ("leak_one", "h_server.c", line("h_server", "leak")))
        ck.true("%s: ages youngest <= oldest" % where,
                "age_s" in r and 0 <= r["age_s"]["youngest"] <= r["age_s"]["oldest"])
    ck.true("%s: no definitely lost leak_one record (%s)" % (where, [r["kind"] for r in recs]),
            any(r["kind"] == DEF for r in recs))
    if not attached:
        return
    # the descriptors open at the attach are the program's: none is listed
    ck.eq("%s: fd records" % where, rep["fds"]["records"], [])
    ck.eq("%s: fds open == inherited" % where, rep["fds"]["open"], rep["fds"]["inherited"])


@case("attach_cycles", engines=["breakpoints", "recorder"])
def t_attach_cycles():
    """50 cycles of attach, SIGUSR1 report, SIGTERM/HUP/INT detach on a busy
    8-thread program (4 workers checking their blocks, a leaker, a thread
    creating threads, ...).  Every fifth cycle a thread is blocked inside an
    allocator call (the program's own valloc) and another inside a signal
    handler while ptleak detaches; a thread runs /bin/true with
    posix_spawn (vfork) without pause.  After every detach: no tracer, every
    code byte as in its file, no scratch mapping left, the program answers
    with no error; at the end the same executable mappings and mapped files
    (no ring) as before, and it exits 0."""
    srv = Server()
    ck = Check()
    d = tempfile.mkdtemp(prefix="ptleak-at.")
    try:
        srv.ping()
        srv.send("spawn")	# vfork children all the time
        srv.out.expect("spawning")
        before = [m for m in exec_maps(srv.p.pid)]
        files = mapped_files(srv.p.pid)
        for cycle in range(50):
            w = "cycle %d" % cycle
            at = Attached(srv.p.pid, d=d)
            try:
                special = cycle % 5 == 4
                if special:
                    srv.send("block")
                    srv.out.expect("blocked")
                    srv.send("sig")
                    srv.out.expect("in handler")
                srv.send("leak")	# one leak_one() after the attach, at least
                srv.out.expect("leaked")
                srv.send("freeold")	# a free of a block from before the attach
                srv.out.expect(r"freed old \d+")
                at.signal(signal.SIGUSR1)
                live = at.report(1)
                check_leak_records(ck, w + " signal report", live, "signal", 1)
                # the blocks from before the attach are the census's, taken
                # with no thread inside malloc (frees of unknown blocks
                # remain: an exiting thread's tcache handed to free(),
                # glibc's recycling)
                c = live["heap"]["census"]
                ck.eq(w + ": census", (c["exact"], c["why"]), (True, None))
                # SIGTERM, SIGHUP and SIGINT all detach
                sig = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)[cycle % 3]
                at.signal(sig)
                ck.eq(w + ": ptleak exit status after signal %d" % sig, at.wait(), 0)
                ck.eq(w + ": ptleak's stderr after the attach line", at.err.rest(), [])
                final = at.report(2, timeout=1)
                check_leak_records(ck, w + " detach report", final, "detach", 2)
                ck.eq(w + ": target argv", final["target"]["argv"], [need_target("h_server")])
            finally:
                at.kill()
            ck.eq(w + ": TracerPid after detach", tracer_pid(srv.p.pid), 0)
            ck.eq(w + ": code changed after detach", code_differences(srv.p.pid), [])
            if special:
                srv.send("unblock")
                srv.out.expect("unblocked ok")
                srv.send("unsig")
                srv.out.expect("handler ok")
            ck.eq(w + ": target errors", srv.ping()[1], 0)
            if ck.errors:
                break
        after = exec_maps(srv.p.pid)
        ck.eq("executable mappings after 50 detaches", after, before)
        ck.eq("mapped files after 50 detaches", mapped_files(srv.p.pid), files)
        ck.eq("target exit status", srv.quit(), 0)
        ck.eq("target stderr", srv.err.rest(), [])
    finally:
        srv.kill()
        shutil.rmtree(d, ignore_errors=True)
    ck.done()


def wait_stopped(pid, timeout=10.0):
    """Wait until every thread of PID is stopped (T, or t under ptrace)."""
    end = time.time() + timeout
    while time.time() < end:
        st = thread_states(pid)
        if st and all(s in "tT" for s in st):
            return
        time.sleep(0.01)
    raise Fail("process %d not stopped %g s after SIGSTOP: %s" % (pid, timeout, thread_states(pid)))


def no_answer(srv, t=0.5):
    """True if a ping gets no answer within T s (the answer is read later)."""
    srv.send("ping")
    try:
        srv.out.expect(r"pong \d+ \d+", t)
        return False
    except Fail:
        return True


@case("report_on_signal_target", engines=True)
def t_report_on_signal_target():
    """--report-on-signal: SIGUSR1 sent to the target (which has no handler
    for it: it would die) makes a report instead; the target never sees it.
    SIGINT to ptleak then detaches (exit 0)."""
    srv = Server()
    ck = Check()
    try:
        srv.ping()
        at = Attached(srv.p.pid, ["--report-on-signal"])
        try:
            srv.send("leak")
            srv.out.expect("leaked")
            os.kill(srv.p.pid, signal.SIGUSR1)
            check_leak_records(ck, "report on the target's SIGUSR1", at.report(1), "signal", 1)
            ck.eq("target errors while attached", srv.ping()[1], 0)
            at.signal(signal.SIGINT)
            ck.eq("ptleak exit status after SIGINT", at.wait(), 0)
            check_leak_records(ck, "detach report", at.report(2, timeout=1), "detach", 2)
        finally:
            at.kill()
        ck.eq("code changed after detach", code_differences(srv.p.pid), [])
        ck.eq("target exit status", srv.quit(), 0)
    finally:
        srv.kill()
    ck.done()


@case("report_on_signal_named")
def t_report_on_signal_named():
    """--report-on-signal=SIGUSR2 swallows the target's SIGUSR2 (whose
    handler would say "in handler"); SIGUSR1 to the target is not touched
    and kills it (no handler), and ptleak reports its death."""
    srv = Server()
    ck = Check()
    try:
        srv.ping()
        at = Attached(srv.p.pid, ["--report-on-signal=USR2"])
        try:
            os.kill(srv.p.pid, signal.SIGUSR2)
            ck.eq("report on SIGUSR2 reason", at.report(1)["reason"], "signal")
            time.sleep(0.2)
            srv.ping()
            ck.true("'in handler' printed: %s" % srv.out.seen[-3:], "in handler" not in srv.out.seen)
            os.kill(srv.p.pid, signal.SIGUSR1)
            ck.eq("ptleak exit status (the target's)", at.wait(), 128 + signal.SIGUSR1)
            final = at.report(2, timeout=1)
            ck.eq("final reason", final["reason"], "exit")
            ck.eq("final target.exit", final["target"]["exit"], {"signal": signal.SIGUSR1})
        finally:
            at.kill()
        ck.eq("target's status", srv.p.wait(timeout=10), -signal.SIGUSR1)
    finally:
        srv.kill()
    ck.done()


@case("attach_fds")
def t_attach_fds():
    """Attached: the descriptors open at the attach are inherited, one
    opened after it is listed with its stack, at a live report and at the
    detach; the program keeps it after the detach."""
    srv = Server()
    ck = Check()
    try:
        srv.ping()
        inherited = len(os.listdir("/proc/%d/fd" % srv.p.pid))
        at = Attached(srv.p.pid)
        try:
            srv.send("open")
            fd = int(srv.out.expect(r"opened (\d+)").group(1))
            want = [Fd(fd, "file", "/dev/null", "open", [T("main", "open")], exact=True)]
            at.signal(signal.SIGUSR1)
            check_fds(ck, "h_server", at.report(1), want, inherited=inherited)
            at.signal(signal.SIGTERM)
            ck.eq("ptleak exit status", at.wait(), 0)
            check_fds(ck, "h_server", at.report(2, timeout=1), want, inherited=inherited)
            with open(at.txt) as f:
                text = f.read()
            ck.true("no 'FILE DESCRIPTORS: %d open now (%d inherited)' line" % (inherited + 1, inherited),
                    "FILE DESCRIPTORS: %d open now (%d inherited)" % (inherited + 1, inherited) in text)
            ck.true("no 'fd %d -> /dev/null, opened by open' line" % fd,
                    "fd %d -> /dev/null, opened by open" % fd in text)
        finally:
            at.kill()
        ck.eq("fd %d after the detach" % fd, os.readlink("/proc/%d/fd/%d" % (srv.p.pid, fd)), "/dev/null")
        ck.eq("target exit status", srv.quit(), 0)
    finally:
        srv.kill()
    ck.done()


@case("min_age", engines=True)
def t_min_age():
    """--min-age: blocks younger than it are left out of the records."""
    srv = Server()
    ck = Check()
    try:
        srv.ping()
        at = Attached(srv.p.pid, ["--min-age", "0.4"])
        try:
            time.sleep(0.8)
            at.signal(signal.SIGUSR1)
            rep = at.report(1)
            ck.eq("report min_age_s", rep["report"]["min_age_s"], 0.4)
            recs = rep["heap"]["records"]
            ck.true("no records", recs)
            ck.eq("records with a block younger than 0.4 s",
                  [r["age_s"] for r in recs if r["age_s"]["youngest"] < 0.4], [])
            lr = leak_records(rep)
            # leak_one ran before 0.4 s ago, and since: the younger
            # blocks are in use but not listed
            n = sum(r["blocks"] for r in lr)
            ck.true("no leak_one block older than 0.4 s", n > 0)
            listed = sum(r["blocks"] for r in recs)
            ck.true("in use %d blocks, listed %d: none left out" % (rep["heap"]["in_use"]["blocks"], listed),
                    rep["heap"]["in_use"]["blocks"] > listed)
            at.signal(signal.SIGTERM)
            ck.eq("ptleak exit status", at.wait(), 0)
            with open(at.txt) as f:
                text = f.read()
            ck.true("no banner with 'blocks younger than 0.4 s left out': %s" % short(text[:300]),
                    re.search(r"^ptleak\[%d\]: report 1 on signal, .*, blocks younger than 0.4 s left out$"
                              % srv.p.pid, text, re.M))
        finally:
            at.kill()
        ck.eq("target exit status", srv.quit(), 0)
    finally:
        srv.kill()
    ck.done()


@case("duration", engines=True)
def t_duration():
    """--duration 0.3: ptleak reports, detaches and exits 0 by itself."""
    srv = Server()
    ck = Check()
    try:
        srv.ping()
        t0 = time.time()
        at = Attached(srv.p.pid, ["--duration", "0.3"])
        try:
            ck.eq("ptleak exit status", at.wait(), 0)
            dt = time.time() - t0
            ck.true("ptleak took %.2f s, want 0.3..10" % dt, 0.3 <= dt < 10)
            check_leak_records(ck, "detach report", at.report(1, timeout=1), "detach", 1)
        finally:
            at.kill()
        ck.eq("TracerPid", tracer_pid(srv.p.pid), 0)
        ck.eq("code changed after detach", code_differences(srv.p.pid), [])
        ck.eq("target exit status", srv.quit(), 0)
    finally:
        srv.kill()
    ck.done()


@case("detach_on_fatal_error", engines=True)
def t_detach_on_fatal_error():
    """A fatal error of ptleak's own (simulated: PTLEAK_DEBUG=die-on-report
    makes the report die()) detaches before exiting 1: the target runs on
    untouched."""
    srv = Server()
    ck = Check()
    try:
        srv.ping()
        with ptleak_debug("die-on-report"):
            at = Attached(srv.p.pid)
        try:
            time.sleep(0.05)
            at.signal(signal.SIGUSR1)
            ck.eq("ptleak exit status", at.wait(), 1)
            ck.eq("ptleak's stderr", at.err.rest(),
                  ["ptleak: debug: a fatal error in the report (PTLEAK_DEBUG=die-on-report)"])
        finally:
            at.kill()
        ck.eq("TracerPid", tracer_pid(srv.p.pid), 0)
        ck.eq("code changed after the fatal error", code_differences(srv.p.pid), [])
        ck.eq("target errors", srv.ping()[1], 0)
        ck.eq("target exit status", srv.quit(), 0)
    finally:
        srv.kill()
    ck.done()


def launch_detach(env=()):
    """Launched, SIGUSR1 to ptleak makes a scanned live report; SIGTERM to
    ptleak reports and detaches: the program runs on untraced, ptleak
    exits 0.  ENV: ptleak's environment variables (NAME=VALUE)."""
    need_ptleak()
    d = tempfile.mkdtemp(prefix="ptleak-at.")
    js = os.path.join(d, "r.json")
    srv = Server((["env"] + list(env) if env else []) + ptleak_cmd() + ["-q", "--json", js])
    ck = Check()
    try:
        srv.send("leak")
        srv.out.expect("leaked")
        srv.p.send_signal(signal.SIGUSR1)	# srv.p is ptleak
        at = Attached.__new__(Attached)
        at.json = js
        check_leak_records(ck, "live report", at.report(1), "signal", 1, attached=False)
        tpid = at.report(1)["target"]["pid"]
        srv.p.send_signal(signal.SIGTERM)
        ck.eq("ptleak exit status", srv.p.wait(timeout=30), 0)
        check_leak_records(ck, "detach report", at.report(2, timeout=1), "detach", 2,
                           attached=False)
        ck.eq("TracerPid", tracer_pid(tpid), 0)
        ck.eq("code changed after detach", code_differences(tpid), [])
        ck.eq("target errors", srv.ping()[1], 0)
        srv.send("quit")
        srv.out.expect("bye 0")
        for _ in range(1000):
            if not os.path.exists("/proc/%d" % tpid):
                break
            time.sleep(0.01)
    finally:
        srv.kill()
        shutil.rmtree(d, ignore_errors=True)
    ck.done()


case("launch_detach", engines=True)(launch_detach)
# the live report's settle and the detach with a consumer slower than
# h_server's allocating threads: each drain takes what was reserved when
# it began (it used to follow the producers for ever, ptleak never exited)
case("launch_detach_slow_drain", engines=["recorder"])(
    lambda: launch_detach(["PTLEAK_DEBUG=slow-drain," + DEBUG_DEFAULT]))


@case("group_stop_launched")
def t_group_stop_launched():
    """SIGSTOP to a launched program stops it (it answers nothing), SIGCONT
    lets it go on; then it exits normally under ptleak."""
    need_ptleak()
    d = tempfile.mkdtemp(prefix="ptleak-at.")
    js = os.path.join(d, "r.json")
    srv = Server(ptleak_cmd() + ["-q", "--json", js])
    ck = Check()
    try:
        srv.ping()
        tpid = int(open("/proc/%d/task/%d/children" % (srv.p.pid, srv.p.pid)).read().split()[0])
        os.kill(tpid, signal.SIGSTOP)
        wait_stopped(tpid)
        ck.true("a stopped program answered a ping", no_answer(srv))
        os.kill(tpid, signal.SIGCONT)
        srv.out.expect(r"pong \d+ 0")
        ck.eq("second ping's errors", srv.ping()[1], 0)
        srv.send("quit")
        srv.out.expect("bye 0")
        ck.eq("ptleak exit status", srv.p.wait(timeout=30), 0)
        with open(js) as f:
            rep = json.load(f)
        ck.eq("exit report", (rep["reason"], rep["target"]["exit"]), ("exit", {"code": 0}))
    finally:
        srv.kill()
        shutil.rmtree(d, ignore_errors=True)
    ck.done()


@case("group_stop_attached")
def t_group_stop_attached():
    """SIGSTOP/SIGCONT to an attached program work; a program stopped
    when ptleak detaches stays stopped, and SIGCONT wakes it."""
    srv = Server()
    ck = Check()
    try:
        srv.ping()
        at = Attached(srv.p.pid)
        try:
            os.kill(srv.p.pid, signal.SIGSTOP)
            wait_stopped(srv.p.pid)
            ck.true("a stopped program answered a ping", no_answer(srv))
            os.kill(srv.p.pid, signal.SIGCONT)
            srv.out.expect(r"pong \d+ 0")
            os.kill(srv.p.pid, signal.SIGSTOP)
            wait_stopped(srv.p.pid)
            ck.true("a stopped program answered a ping", no_answer(srv))
            at.signal(signal.SIGTERM)
            ck.eq("ptleak exit status", at.wait(), 0)
            ck.eq("ptleak's stderr", at.err.rest(), [])
        finally:
            at.kill()
        ck.eq("TracerPid", tracer_pid(srv.p.pid), 0)
        wait_stopped(srv.p.pid)
        ck.eq("thread states after a detach while stopped", sorted(set(thread_states(srv.p.pid))), ["T"])
        ck.true("a stopped program answered a ping after the detach", no_answer(srv, 0.2))
        ck.eq("code changed after detach", code_differences(srv.p.pid), [])
        os.kill(srv.p.pid, signal.SIGCONT)
        try:
            srv.out.expect(r"pong \d+ 0")
            srv.out.expect(r"pong \d+ 0")
        except Fail as e:
            # seen 1 in ~50 under two hogs: say where each thread waits
            raise Fail("%s; after the SIGCONT: TracerPid %s, threads (tid state "
                       "wchan syscall stack): %s; checks so far: %s"
                       % (e, tracer_pid(srv.p.pid), thread_waits(srv.p.pid),
                          "; ".join(ck.errors) or "passed"))
        ck.eq("target exit status", srv.quit(), 0)
    finally:
        srv.kill()
    ck.done()


@case("attach_errors")
def t_attach_errors():
    """-p errors: no such process, a zombie, a thread id, ptleak itself,
    already traced, permission denied (as nobody: names ptrace_scope and
    CAP_SYS_PTRACE)."""
    ck = Check()
    with open("/proc/sys/kernel/pid_max") as f:
        free_pid = int(f.read()) - 1
    while os.path.exists("/proc/%d" % free_pid):
        free_pid -= 1
    attach_error(ck, free_pid, r"ptleak: cannot attach to process %d: no such process" % free_pid)
    z = subprocess.Popen(["true"])
    for _ in range(500):
        if thread_states(z.pid) == ["Z"]:
            break
        time.sleep(0.01)
    attach_error(ck, z.pid, r"ptleak: cannot attach to process %d: it is a zombie .*" % z.pid)
    z.wait()
    srv = Server()
    try:
        srv.ping()
        # the first thread main created (a worker): it lives on
        tid = sorted(int(t) for t in os.listdir("/proc/%d/task" % srv.p.pid))[1]
        attach_error(ck, tid, r"ptleak: cannot attach to %d: it is a thread of process %d \(use -p %d\)"
                     % (tid, srv.p.pid, srv.p.pid))
        attach_error(ck, srv.p.pid, r"ptleak: cannot attach to process %d: ptrace: Operation not "
                     r"permitted \(check kernel.yama.ptrace_scope, the process's owner, or give "
                     r"ptleak CAP_SYS_PTRACE\)" % srv.p.pid, user=NOBODY)
        at = Attached(srv.p.pid)
        try:
            attach_error(ck, srv.p.pid, r"ptleak: cannot attach to process %d: it is already traced "
                         r"by process %d \(ptleak\); a process has one tracer at a time"
                         % (srv.p.pid, at.p.pid))
            at.signal(signal.SIGTERM)
            ck.eq("first ptleak's exit status", at.wait(), 0)
        finally:
            at.kill()
        ck.eq("target exit status", srv.quit(), 0)
    finally:
        srv.kill()
    ck.done()
