# What the target controls is untrusted (issue 28): a program that writes
# over ptleak's shared memory.  Exec'd in run.py's namespace.
#
# r_scribble (tests/targets/r_scribble.c), native and under valgrind 3.19.0
# --leak-check=full --show-leak-kinds=all --run-libc-freeres=no
# --run-cxx-freeres=no, stdout a pipe:
#   in use at exit: 240 bytes in 5 blocks
#   total heap usage: 405 allocs, 400 frees, 114,640 bytes allocated
#   240 bytes in 5 blocks are definitely lost (@kept)
# (200 malloc(100), 5 malloc(48), 200 fopen's FILE of 472 bytes); peak 712
# (the 5 kept blocks and one FILE).

SCRIBBLE_RUNS = 20
# ptleak and the target it launched (wait4's ru_maxrss covers both): the
# target's own pages are most of it (its hooks' ring, 4 x 1,024 random
# pages of ptleak's area it wrote); the bug allocated 120 GB.
SCRIBBLE_RSS_KB = 200 * 1024
# ptleak alone (attached: the target is not its child)
SCRIBBLE_ATTACHED_RSS_KB = 64 * 1024


def scribble_line(pid):
    """ptleak's one line when process PID wrote over its ring (a regex);
    group 1 is the report's why."""
    return (r"ptleak: (the target \(process %d\) wrote over ptleak's ring at "
            r"(\d+\.\d{3}) s; heap events after \2 s are not tracked)" % pid)


def check_scribbled(ck, run, pid, rc, out, err, rep):
    """One run of r_scribble under ENGINE: exit 0, the target's output, on
    stderr the line alone (recorder) or nothing (breakpoints), the heap
    not tracked with that line as why (recorder) or exact (breakpoints),
    descriptors tracked."""
    ck.eq("%s: exit status" % run, rc, 0)
    if ENGINE == "breakpoints":
        ck.eq("%s: target's stdout" % run, out, "scribbled\ndone\n")
        ck.eq("%s: stderr" % run, err, [])
        heap = rep["heap"]
        ck.eq("%s: heap tracked" % run, (heap["tracked"], heap["why"]), (True, None))
        ck.eq("%s: in use" % run, (heap["in_use"]["bytes"], heap["in_use"]["blocks"]),
              (240, 5))
        ck.eq("%s: totals" % run, (heap["totals"]["allocs"], heap["totals"]["frees"],
                                   heap["totals"]["bytes_allocated"]), (405, 400, 114640))
        ck.eq("%s: peak" % run, heap["peak"]["bytes"], 712)
    else:
        # its own hooks read what it wrote: it may end in its SIGSEGV
        # handler (exit 0) before "done"
        ck.true("%s: target's stdout %r" % (run, out),
                out in ("scribbled\n", "scribbled\ndone\n"))
        m = len(err) == 1 and re.fullmatch(scribble_line(pid), err[0])
        ck.true("%s: stderr is not the one line: %s" % (run, short(err)), m)
        if m:
            ck.eq("%s: heap tracked" % run, (rep["heap"]["tracked"], rep["heap"]["why"]),
                  (False, m.group(1)))
    ck.eq("%s: descriptors tracked" % run, rep["fds"]["tracked"], True)


def ptleak_scribble(args, seed):
    """ptleak -o /dev/null --json F ARGS with SCRIBBLE_SEED=SEED: (exit
    status, target's stdout, stderr lines, report, max RSS KiB of ptleak
    and the target)."""
    need_ptleak()
    env = dict(target_env(), SCRIBBLE_SEED=str(seed))
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        jf = os.path.join(d, "report.json")
        cmd = ptleak_cmd() + ["-o", os.devnull, "--json", jf] + list(args)
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, start_new_session=True,
                             preexec_fn=_child_setup)
        timer = threading.Timer(TIMEOUT, _kill_group, (p.pid,))
        timer.start()
        try:
            out, err = p.stdout.read(), p.stderr.read()
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
        finally:
            timer.cancel()
            _kill_group(p.pid)
        try:
            with open(jf, encoding="utf-8") as f:
                rep = check_shape(json.load(f))
        except (OSError, ValueError) as e:
            raise Fail("%s: no JSON report (%s), exit %d" % (" ".join(cmd), e, p.returncode))
    return (p.returncode, out.decode(), err.decode().splitlines(), rep, ru.ru_maxrss)


@case("scribble_launch", engines=True)
def t_scribble_launch():
    """r_scribble launched, 20 runs with 20 seeds: it writes random words
    over the first 128 KiB and 1,024 random words of every writable shared
    mapping it has (its own page; the recorder's area) four times while
    allocating.  ptleak never crashes, hangs or balloons: exit 0, the
    report, the one line and the heap not tracked (recorder); exact numbers
    and nothing on stderr (breakpoints: nothing of ptleak's to write
    over)."""
    tgt = need_target("r_scribble")
    ck = Check()
    for seed in range(1, SCRIBBLE_RUNS + 1):
        rc, out, err, rep, rss = ptleak_scribble([tgt, "launch"], seed)
        pid = rep["target"]["pid"]
        check_scribbled(ck, "seed %d" % seed, pid, rc, out, err, rep)
        ck.true("seed %d: peak RSS of ptleak + target %d KiB under %d KiB"
                % (seed, rss, SCRIBBLE_RSS_KB), rss < SCRIBBLE_RSS_KB)
    ck.done()


def run_attached(args, body, env=None):
    """Start ARGS (a program that says "ready"), attach ptleak to it, run
    BODY(program, its stdout Lines, Attached); both killed after, if
    still running."""
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, bufsize=0)
    out = Lines(p.stdout)
    try:
        out.expect("ready")
        at = Attached(p.pid)
        try:
            body(p, out, at)
        finally:
            at.kill()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@case("scribble_attach", engines=True)
def t_scribble_attach():
    """r_scribble attached (ptleak -p): the same, 20 runs; the program
    waits for a line once ptleak is attached (and checks that the ring is
    in its maps under the recorder) before it writes.  ptleak's own peak RSS is bounded."""
    tgt = need_target("r_scribble")
    ck = Check()

    def body(p, out, at):
        p.stdin.write(b"go\n")
        _, status, ru = os.wait4(at.p.pid, 0)
        at.p.returncode = os.waitstatus_to_exitcode(status)
        with open(at.json, encoding="utf-8") as f:
            rep = check_shape(json.load(f))
        check_scribbled(ck, "seed %d" % seed, p.pid, at.p.returncode,
                        "".join(l + "\n" for l in out.rest()), at.err.rest(), rep)
        ck.eq("seed %d: target's exit status" % seed, p.wait(timeout=10), 0)
        ck.true("seed %d: peak RSS of ptleak %d KiB under %d KiB"
                % (seed, ru.ru_maxrss, SCRIBBLE_ATTACHED_RSS_KB),
                ru.ru_maxrss < SCRIBBLE_ATTACHED_RSS_KB)

    for seed in range(1, SCRIBBLE_RUNS + 1):
        args = [tgt, "attach"] + (["ring"] if ENGINE == "recorder" else [])
        run_attached(args, body, env=dict(target_env(), SCRIBBLE_SEED=str(seed)))
    ck.done()


@case("fifo_swap_attach", engines=True)
def t_fifo_swap_attach():
    """r_fifo_swap: a library the program loaded is replaced by a FIFO
    (renamed over its path) before ptleak attaches.  An open of a FIFO
    waits for a writer: ptleak opens what the target names as regular
    files only, without blocking.  It attaches, says once (recorder: it
    compiles the unwind tables of the loaded objects at attach) that the
    file is not one any more, records the 77 bytes r_dlib_work() loses
    after the attach (50 malloc(10) + free pairs before), and exits 0
    with the program."""
    tgt = need_target("r_fifo_swap")
    need_target("r_dlib.so")
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-fifo.") as d:
        lib = os.path.join(d, "r_dlib.so")

        def body(p, out, at):
            p.stdin.write(b"go\n")
            out.expect("done")
            ck.eq("exit status", at.wait(), 0)
            ck.eq("program's exit status", p.wait(timeout=10), 0)
            err = at.err.seen[:-1] + at.err.rest()
            want = [] if ENGINE == "breakpoints" else [
                "ptleak: warning: %s is not a regular file any more (replaced after "
                "it was loaded): stacks through it end there" % lib]
            ck.eq("stderr besides the attach line", err, want)
            heap = at.report(1)["heap"]
            # the census's blocks (made before the attach) are in use too
            cen = heap["census"] or {}
            ck.eq("census exact", cen.get("exact"), True)
            recs = [r for r in heap["records"] if not r["before_attach"]]
            ck.eq("records made after the attach (bytes, blocks)",
                  [(r["bytes"], r["blocks"]) for r in recs], [(77, 1)])
            # 50 pairs and the loss; one block of the census freed
            ck.eq("totals", (heap["totals"]["allocs"], heap["totals"]["frees"],
                             heap["totals"]["bytes_allocated"]), (51, 51, 577))
            rec = recs[0] if recs else {}
            got = [(f["function"], f["module"], f["line"]) for f in rec.get("stack", [])]
            # the library's frame unnamed (its file cannot be read; maps
            # says "(deleted)": the inode mapped is gone); the recorder's
            # walk ends there (no unwind table for it), libunwind goes on
            want = [(None, lib + " (deleted)", None)]
            if ENGINE == "breakpoints":
                want.append(("main", tgt, line("r_fifo_swap", "again")))
            ck.eq("allocator", rec.get("allocator"), "malloc")
            ck.eq("stack (function, module, line)", got, want)

        run_attached([tgt, d, "attach"], body)
    ck.done()


@case("rec_only_forged_record", engines=["recorder"])
def t_rec_only_forged_record():
    """r_forge writes one record into the ring as a producer would, with
    more return addresses (5) than words (1): counted and skipped (it was
    read past the record), recording goes on (its 24-byte block, kept),
    the heap marked not tracked with the count, one warning."""
    tgt = need_target("r_forge")
    r = ptleak([tgt], opts=["-o", os.devnull])
    rep = need_json(r)
    pid = rep["target"]["pid"]
    why = ("1 record of the recorder's ring in process %d failed its checks (skipped)"
           % pid)
    ck = Check()
    ck.eq("exit status", r.rc, 0)
    ck.eq("target's stdout", r.stdout, "forged\n")
    ck.eq("stderr", r.stderr.splitlines(), [
        "ptleak: warning: %s: this call is not recorded, nor any like it "
        "(the report counts them)" % why])
    heap = rep["heap"]
    ck.eq("in use", (heap["in_use"]["bytes"], heap["in_use"]["blocks"]), (24, 1))
    ck.eq("heap tracked", (heap["tracked"], heap["why"]),
          (False, "1 allocator call was not recorded (first: %s)" % why))
    ck.done()


@case("cfi_loop", engines=True)
def t_cfi_loop():
    """r_cfi_loop's call_malloc has a CFA rule that jumps back to itself
    (DW_OP_skip -3): libunwind (the breakpoints' unwinder) evaluated it
    for ever, ptleak spinning while the target waited at its breakpoint.
    Its reads of the target are bounded per stack: one warning, the
    stack ends at call_malloc; the recorder's tables have no rule for it
    (its walk ends there too).  Exit 0, the 40 bytes lost."""
    tgt = need_target("r_cfi_loop")
    r = ptleak([tgt], opts=["-o", os.devnull], timeout=60)
    rep = need_json(r)
    ck = Check()
    ck.eq("exit status", r.rc, 0)
    ck.eq("target's stdout", r.stdout, "done\n")
    want = [] if ENGINE == "recorder" else [
        "ptleak: warning: a stack of thread %d took more than 1048576 reads "
        "of its memory to unwind (its unwind information loops?): that stack "
        "ends there" % rep["target"]["pid"]]
    ck.eq("stderr", r.stderr.splitlines(), want)
    lost = [(x["bytes"], [f["function"] for f in x["stack"]])
            for x in rep["heap"]["records"] if x["kind"] == "definitely_lost"]
    ck.eq("lost (bytes, functions)", lost, [(40, ["call_malloc"])])
    ck.done()
