# Signals, seccomp, job control, set-user-ID: ptleak never hangs and never
# harms its target.  exec'd in run.py's namespace (see load_case_files).

# Run in a child python that is a subreaper (PR_SET_CHILD_SUBREAPER), so
# that a launched target orphaned by ptleak's exit is reparented to it and
# its status can be read: argv = ptleak, json dir, runs, target argv...
# For each run: ptleak launches the target in a new process group; once the
# target says "ready PID", the group gets SIGTERM then SIGCONT (what
# `timeout` does).  Prints one JSON line per run: ptleak's status, the
# target's status (both as run_cmd gives them), or "hung".
TIMEOUT_RUNS = r'''
import ctypes, json, os, signal, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
ptleak, d, runs, argv = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def status(st):
    return 128 + os.WTERMSIG(st) if os.WIFSIGNALED(st) else os.WEXITSTATUS(st)
for i in range(runs):
    js = os.path.join(d, "r%d.json" % i)
    p = subprocess.Popen([ptleak, "-q", "-o", os.devnull, "--json", js] + argv, stdin=subprocess.DEVNULL,
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


@case("signals_timeout_sleeper")
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
        p = subprocess.run([sys.executable, "-c", TIMEOUT_RUNS, PTLEAK, d, "50",
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
