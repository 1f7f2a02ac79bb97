# Cases written for the recorder (issue 10): other allocators, signals and
# threads, processes, ptleak killed, seccomp.  Each heap case runs under
# both engines with the same numbers (case(..., engines=True), heap_case);
# a rec_only_ case runs only under the recorder.  Exec'd in run.py's
# namespace (case, heap_case, run_heap, ptleak, Check, Rec, T, L, ...).

# --- other allocators, preloaded --------------------------------------------

LIBDIR = "/usr/lib/x86_64-linux-gnu"


def preload_env(soname, package):
    """target_env() with LD_PRELOAD=SONAME (ptleak gets it too, as a user's
    `LD_PRELOAD=... ptleak ./app` gives it); Skip if it is not installed."""
    path = os.path.join(LIBDIR, soname)
    if not os.path.exists(path):
        raise Skip("%s not installed (make deps installs %s)" % (path, package))
    env = target_env()
    env["LD_PRELOAD"] = path
    return env


def prealloc_records(pool):
    """r_prealloc's records (--no-scan: the classes depend on what each
    allocator leaves in freed memory).  POOL: libstdc++'s 72,704-byte
    emergency pool, allocated by its constructor (jemalloc and tcmalloc
    link libstdc++)."""
    recs = [
        Rec("posix_memalign", 512, 1, "posix_memalign", U, [T("main", "posix_memalign")],
            exact=True),
        Rec("leak100", 300, 3, "malloc", U, [T("leak100", "leak100"), T("main", "call_leak100")],
            exact=True),
        Rec("realloc", 300, 1, "realloc", U, [T("main", "realloc")], exact=True),
        Rec("calloc", 200, 1, "calloc", U, [T("main", "calloc")], exact=True),
        Rec("memalign", 96, 1, MEMALIGN_NAMES, U, [T("main", "memalign")], exact=True),
    ]
    if pool:
        recs.append(Rec("pool", 72704, 1, "malloc", U,
                        [L(None, os.path.realpath(os.path.join(LIBDIR, "libstdc++.so.6")))]))
    return recs


def prealloc_case(case_name, soname, package, in_use, totals, peak, pool):
    """r_prealloc with SONAME preloaded: its output, exact numbers and
    stacks, and no free of an unknown block (a nested free inside the
    allocator counted as the program's would be one)."""
    def fn():
        env = preload_env(soname, package) if soname else None
        ck, r, rep = run_heap("r_prealloc", opts=["--no-scan"], env=env, native=False,
                              in_use=in_use, totals=totals, peak=peak,
                              records=prealloc_records(pool))
        ck.eq("stdout", r.stdout, "r_prealloc: done\n")
        ck.eq("unknown frees", rep["heap"]["totals"]["unknown_frees"], 0)
        ck.done()
    case(case_name, engines=True)(fn)


# From the source (r_prealloc.c): 1,010 allocs, 1,003 frees, 507,038 bytes;
# 1,408 bytes in 7 blocks in use; peak 1,408 + valloc's 4,096.  glibc's
# malloc, as a reference for the three others.
prealloc_case("prealloc_glibc", None, None, (1408, 7), (1010, 1003, 507038), 5504, False)
# jemalloc 5.3 links libstdc++: its pool (+1 alloc, +72,704 bytes).
prealloc_case("prealloc_jemalloc", "libjemalloc.so.2", "libjemalloc2",
              (1408 + 72704, 8), (1011, 1003, 507038 + 72704), 5504 + 72704, True)
# tcmalloc 2.10 links libstdc++ (the pool), and its two initialisers
# (TCMallocGuard and the thread cache's) each do free(malloc(1)):
# +2 allocs, +2 frees, +2 bytes (PTLEAK_DEBUG=events shows them before main).
prealloc_case("prealloc_tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4",
              (1408 + 72704, 8), (1013, 1005, 507038 + 72704 + 2), 5504 + 72704, True)
# mimalloc 2.0: as glibc.  Its realloc (mi_realloc) tail-calls
# mi_heap_realloc, which calls free(): that free is nested.
prealloc_case("prealloc_mimalloc", "libmimalloc.so.2", "libmimalloc2.0",
              (1408, 7), (1010, 1003, 507038), 5504, False)


# --- blocks handed from thread to thread --------------------------------------

# 4 threads x 20,000 blocks, ~17,000 of them freed by another thread (the
# target counted them natively), glibc handing their addresses on to the
# freeing thread's next malloc: under the recorder each thread writes its
# own lane and the drain must run the calls in their times' order (taken
# lane after lane instead, measured: in use 9,723-38,173 bytes in 26-75
# blocks, 21-66 frees short).  valgrind: in use at exit 806 bytes in 4
# blocks (its threads' DTVs are freed), 80,009 allocs, 80,005 frees.
# r_handoff N M: blocks of 1 + (i * 53 + t * 211) % 1024 bytes, leaks of
# 200 + t bytes.
HANDOFF_IN_USE, HANDOFF_TOTALS, HANDOFF_LEAKS = workers_expect(4, 20000, 53, 211, 200)
assert HANDOFF_IN_USE == (5990, 9) and HANDOFF_TOTALS == (80009, 80000, 41004262)
heap_case("r_handoff", in_use=HANDOFF_IN_USE, totals=HANDOFF_TOTALS, records=[
    stdout_buffer(REACH),
    Rec("dtv", 272 * 4, 4, "calloc", POS, tail=[T("main", "pthread_create")]),
    Rec("handoff_leak", HANDOFF_LEAKS, 4, "malloc", DEF,
        [T("handoff_leak", "handoff_leak"), T("worker", "call_handoff_leak")]),
])


# --- SIGALRM every 100 us, 4 threads, a handler that allocates --------------

ALRM_M, ALRM_H = 5000, 1000


@case("alrm_threads", engines=True)
def t_alrm_threads():
    """r_alrm_threads: 4 threads x 5,000 malloc(16)/free pairs under a
    SIGALRM every 100 us; 1,000 handler runs, each a malloc(32), freed but
    every 100th.  Exact totals (from the source, r_alrm_threads.c); the
    10 lost blocks are in records whose stack starts with the handler
    (one per place the signal interrupted: their split is not fixed)."""
    m, h = ALRM_M, ALRM_H
    lost = h // 100
    in_use = (lost * 32 + 4 * 272 + 4096, lost + 5)
    totals = (4 * m + h + 8 + 4 + 1, 4 * m + h - lost + 8,
              16 * 4 * m + 32 * h + 4 * 48 + 4 * 272 + 4096)
    ck, r, rep = run_heap("r_alrm_threads", args=[str(m), str(h)], in_use=in_use,
                          totals=totals, peak=None, exhaustive=False, records=[
        stdout_buffer(REACH, "printf"),
        Rec("dtv", 272 * 4, 4, "calloc", POS, tail=[T("main", "create")]),
    ])
    ck.eq("stdout", r.stdout, "threads 4 x %d handler %d lost %d\n" % (m, h, lost))
    in_handler = [rec for rec in rep["heap"]["records"]
                  if rec["stack"] and rec["stack"][0]["function"] == "on_alrm"]
    ck.eq("handler's blocks (bytes, blocks)",
          (sum(x["bytes"] for x in in_handler), sum(x["blocks"] for x in in_handler)),
          (lost * 32, lost))
    for rec in in_handler:
        f = rec["stack"][0]
        ck.eq("handler record allocator, line", (rec["allocator"], f["line"]),
              ("malloc", line("r_alrm_threads", "alrm_malloc")))
    ck.done()


# --- fork, vfork, posix_spawn, dlopen/dlclose, exec -------------------------

# valgrind, r_procs (the parent; valgrind follows the forked child on its
# own: 1,110 bytes in 2 blocks, 102 allocs, 100 frees - not the parent's):
#   in use at exit: 2,492 bytes in 3 blocks
#   total heap usage: 60 allocs, 57 frees, 4,536 bytes allocated
# = the source's 53 allocs (111, r_dlib's 64, 50 x 10, 77: 752 bytes) and
# 51 frees, plus dlopen/dlclose's 7 allocs and 6 frees in ld.so (3,784
# bytes); ld.so keeps one, _dl_find_object's 2,304-byte segment.
# massif: peak 4,028.
def procs_records():
    # the frame in r_dlib.so: the library is gone at the report (dlclose),
    # its frame is named all the same (its module "PATH (unloaded)":
    # dlclose_names)
    return [
        Rec("dl_find_object", 2304, 1, "malloc", POS,
            [L("_dl_find_object_update", os.path.realpath("/lib64/ld-linux-x86-64.so.2"))],
            tail=[T("use_library", "dlopen"), T("main", "call_use_library")]),
        Rec("main_keep", 111, 1, "malloc", REACH, [T("main", "main_keep")], exact=True),
        Rec("lib_keep", 77, 1, "malloc", REACH,
            [L("r_dlib_work"), T("use_library", "call_work"), T("main", "call_use_library")],
            exact=True),
    ]


# ld.so keeps three copies of the library's path (its name and origin)
# while it is loaded: the totals above were measured with the targets in
# /work/wt-rtests/build/targets (39 bytes of path); they move with it.
def dlib_delta():
    path = os.path.join(os.path.dirname(need_target("r_procs")), "r_dlib.so")
    return 3 * (len(os.fsencode(path)) - len("/work/wt-rtests/build/targets/r_dlib.so"))


class Procs:
    """The numbers of r_procs' parent, for the targets' directory."""
    @staticmethod
    def totals():
        return (60, 57, 4536 + dlib_delta())

    @staticmethod
    def peak():
        return 4028 + dlib_delta()


def procs_case():
    ck, r, rep = run_heap("r_procs", in_use=(2492, 3), totals=Procs.totals(),
                          peak=Procs.peak(), records=procs_records())
    ck.done()


case("procs", engines=True)(procs_case)

# The exec'd image (r_procs image2, from the source): malloc(4242) kept,
# 10 x malloc(30) + free.  The report at exit is the new image's.
heap_case("procs_exec", name="r_procs", args=["exec"], in_use=(4242, 1),
          exec_argv=lambda tgt: ["r_procs", "image2"],
          totals=(11, 10, 4542), peak=4272, records=[
    Rec("image2", 4242, 1, "malloc", REACH, [T("image2", "image2_keep"), T("main", "image2")],
        exact=True),
])


@case("procs_exec_report", engines=True)
def t_procs_exec_report():
    """The parent's numbers just before its exec (a report on its own
    SIGUSR1, --report-on-signal), the same again in the report at its
    execve (nothing allocated between), and the exec'd image's at exit,
    in one text report file: the same numbers as the two cases above."""
    name = "r_procs"
    tgt = need_target(name)
    r = ptleak([tgt, "report", "exec"], opts=["--report-on-signal"], want_text=True)
    ck = Check()
    ck.eq("exit status", r.rc, 0)
    ck.eq("stdout", r.stdout, "r_procs: image2 done\n")
    heads = [c for _, c in report_lines(r.text)
             if re.match(r" +(in use|total heap usage|peak)", c)]
    ck.eq("heap lines of the two reports", heads, [
        "        in use now: 2,492 bytes in 3 blocks",
        "  total heap usage: 60 allocs, 57 frees, {:,} bytes allocated".format(Procs.totals()[2]),
        "  peak: {:,} bytes in use".format(Procs.peak()),
        "    in use at exec: 2,492 bytes in 3 blocks",
        "  total heap usage: 60 allocs, 57 frees, {:,} bytes allocated".format(Procs.totals()[2]),
        "  peak: {:,} bytes in use".format(Procs.peak()),
        "    in use at exit: 4,242 bytes in 1 block",
        "  total heap usage: 11 allocs, 10 frees, 4,542 bytes allocated",
        "  peak: 4,272 bytes in use"])
    rep = need_json(r)
    check_heap(ck, name, rep, (4242, 1), (11, 10, 4542), 4272, [
        Rec("image2", 4242, 1, "malloc", REACH, [T("image2", "image2_keep"), T("main", "image2")],
            exact=True)], None)
    ck.done()


# --- ptleak killed while attached -------------------------------------------

@case("rec_only_sigkill_attached", engines=["recorder"])
def t_rec_only_sigkill_attached():
    """SIGKILL to ptleak attached to h_server (4 threads allocating without
    pause, a leaker, a thread creating threads): 5 s later the program
    still runs, untraced, answers with no error, and exits 0 on "quit"
    (its own check of every block).  Recorder only: the breakpoint
    engine's int3s stay behind and kill the program at its next malloc."""
    srv = Server()
    ck = Check()
    try:
        srv.ping()
        at = Attached(srv.p.pid)
        try:
            srv.send("leak")
            srv.out.expect("leaked")
            time.sleep(0.2)
            at.p.kill()
            at.p.wait()
        finally:
            at.kill()
        time.sleep(5)
        ck.eq("program's status 5 s after ptleak's SIGKILL (None: running)", srv.p.poll(), None)
        if srv.p.poll() is None:
            ck.eq("TracerPid", tracer_pid(srv.p.pid), 0)
            ck.eq("errors", srv.ping()[1], 0)
            ck.eq("exit status", srv.quit(), 0)
    finally:
        srv.kill()
    ck.done()


def guardians(parent=None, names=("(ptleak-guard)",)):
    """Pids of the live ptleak-guard processes (children of PARENT only,
    if given: other ptleaks may run on the machine), or of processes of
    the other NAMES."""
    found = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except (OSError, ValueError):
            continue
        rest = st.split(") ")[-1].split()
        if (any(n in st for n in names) and rest[0] != "Z" and
                (parent is None or int(rest[1]) == parent)):
            found.append(int(d))
    return found


def alive(pids):
    """Those of PIDS that still run (not zombies)."""
    left = []
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().split(") ")[-1][0] != "Z":
                    left.append(pid)
        except OSError:
            pass
    return left


@case("sigkill_attached_fds", engines=True)
def t_sigkill_attached_fds():
    """SIGKILL to ptleak attached to r_fdcmd: its guardian puts back every
    int3 (descriptor functions; allocator functions too with the breakpoint
    engine), so the descriptor and allocator calls the program makes after
    that run as if it had never been traced: 3 more "go" answered, exit 0
    on "quit"."""
    tgt = need_target("r_fdcmd")
    p = subprocess.Popen([tgt], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, bufsize=0)
    out = Lines(p.stdout)
    ck = Check()
    try:
        out.expect("ready")
        at = Attached(p.pid)
        try:
            p.stdin.write(b"go\n")
            out.expect("done 1")
            # a guardian names itself once it runs (a loaded machine
            # may not have scheduled it yet)
            end = time.time() + 10
            mine = guardians(at.p.pid)
            while not mine and time.time() < end:
                time.sleep(0.01)
                mine = guardians(at.p.pid)
            ck.eq("ptleak's guardians", len(mine), 1)
            at.p.kill()
            at.p.wait()
        finally:
            at.kill()
        # the guardian runs when ptleak's pipe closes: a call made before
        # it wrote the bytes back would hit an int3 (docs/usage.md)
        end = time.time() + 10
        while (tracer_pid(p.pid) or alive(mine)) and time.time() < end:
            time.sleep(0.01)
        ck.eq("TracerPid after ptleak's SIGKILL", tracer_pid(p.pid), 0)
        ck.eq("guardians left", alive(mine), [])
        try:
            for i in (2, 3, 4):
                p.stdin.write(b"go\n")
                out.expect("done %d" % i)
        except (Fail, BrokenPipeError) as e:
            # how it died (-N: signal N), for the failure that shows
            # once in ~15 runs under two hogs (docs/history.md)
            raise Fail("%s; the program's wait status %s" % (e, p.wait(timeout=10)))
        p.stdin.write(b"quit\n")
        ck.eq("exit status", p.wait(timeout=10), 0)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    ck.done()


def guardians_of(pid):
    """The live ptleak-guard processes that hold PID's memory open (its
    guardian, whoever its parent is now).  Once ptleak is dead: a
    guardian the system has not run yet since its fork is still named
    ptleak (it names itself first thing; 11 of 30 runs under four hogs
    and two builds missed it so, the loop below ending while TracerPid
    was 0 before its seize)."""
    found = []
    want = "/proc/%d/mem" % pid
    for g in guardians(names=("(ptleak-guard)", "(ptleak)")):
        try:
            fds = os.listdir("/proc/%d/fd" % g)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink("/proc/%d/fd/%s" % (g, fd)) == want:
                    found.append(g)
                    break
            except OSError:
                pass
    return found


def proc_brief(pid):
    """PID's name, state, wchan and system call, for a failure."""
    out = []
    for f in ("comm", "wchan", "syscall"):
        try:
            with open("/proc/%d/%s" % (pid, f)) as fh:
                out.append(fh.read().strip()[:80])
        except OSError as e:
            out.append(str(e))
    try:
        with open("/proc/%d/stat" % pid) as fh:
            out.append("state " + fh.read().split(") ")[-1].split()[0])
    except OSError:
        pass
    return "%d (%s)" % (pid, ", ".join(out))


def sig_blocked(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("SigBlk:"):
                return l.split()[1]
    return None


def live_children(pid):
    """Pids of PID's children that are not zombies."""
    out = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                rest = f.read().split(") ")[-1].split()
        except (OSError, ValueError):
            continue
        if int(rest[1]) == pid and rest[0] != "Z":
            out.append(int(d))
    return out


@case("sigkill_in_injection", engines=True)
def t_sigkill_in_injection():
    """ptleak SIGKILLed while a thread of r_fdcmd runs a system call for it
    (PTLEAK_DEBUG=die-inject=NAME[:trap]: inside the call, or stopped
    after it): the first mmap of an attach (at the thread's pc) and the
    census's snapshot clone (in ptleak's page).  The guardian takes the
    thread spinning after the call, gives it its registers and signal
    mask and lets it go: it answers 3 "go" and exits 0 on "quit", its
    mask as before, no copy of it left running.  Before: the program
    died of the step's SIGTRAP (sigkill_attached_fds, 1 in 100 under
    load)."""
    tgt = need_target("r_fdcmd")
    ck = Check()
    for mode in ("mmap", "mmap:trap", "clone", "clone:trap"):
        p = subprocess.Popen([tgt], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, bufsize=0)
        out = Lines(p.stdout)
        try:
            out.expect("ready")
            mask = sig_blocked(p.pid)
            env = target_env()
            env["PTLEAK_DEBUG"] = "die-inject=" + mode
            pt = subprocess.Popen(ptleak_cmd() + ["-p", str(p.pid), "-o", os.devnull],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=env)
            try:
                rc = pt.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pt.kill()
                rc = pt.wait()
            ck.eq("%s: ptleak's end" % mode, rc, -signal.SIGKILL)
            # the guardian (an orphan now) works once the kernel has
            # let the program go: TracerPid is 0 for a moment before it
            # seizes the thread
            end = time.time() + 10
            while (tracer_pid(p.pid) or guardians_of(p.pid)) and time.time() < end:
                time.sleep(0.01)
            tr = tracer_pid(p.pid)
            if tr:
                raise Fail("%s: still traced 10 s after: by %s; the program %s" %
                           (mode, proc_brief(tr), proc_brief(p.pid)))
            ck.eq("%s: guardians left" % mode, guardians_of(p.pid), [])
            ck.eq("%s: blocked signals" % mode, sig_blocked(p.pid), mask)
            # the snapshot's copy, let go, leaves by itself (exit_group):
            # when the system runs it
            end = time.time() + 10
            while live_children(p.pid) and time.time() < end:
                time.sleep(0.01)
            ck.eq("%s: copies running" % mode, live_children(p.pid), [])
            try:
                for i in (1, 2, 3):
                    p.stdin.write(b"go\n")
                    out.expect("done %d" % i)
            except (Fail, BrokenPipeError) as e:
                raise Fail("%s: %s; the program's wait status %s" % (mode, e, p.wait(timeout=10)))
            p.stdin.write(b"quit\n")
            ck.eq("%s: exit status" % mode, p.wait(timeout=10), 0)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    ck.done()


# --- seccomp: no memfd_create -----------------------------------------------

# r_seccomp_memfd MODE (from the source): 20 malloc(48) + free pairs and
# two blocks of 64 bytes lost by leak_one, under a filter installed before
# the exec that forbids memfd_create (errno: EPERM; kill: the process is
# killed) but allows mmap.
def seccomp_memfd_records():
    return [Rec("leak%d" % i, 64, 1, "malloc", k,
                [T("leak_one", "leak"), T("run", "leak%d" % i), T("main", "run")], exact=True)
            for i, k in ((1, DEF), (2, REACH))]


def seccomp_memfd_auto(mode):
    """--engine=auto: the recorder cannot be injected, the heap falls back
    to breakpoints: exact numbers; on stderr nothing but ptleak's own
    lines, at most one (the fallback notice)."""
    def fn():
        ck, r, rep = run_heap("r_seccomp_memfd", args=[mode], opts=["--engine=auto"],
                              in_use=(128, 2), totals=(22, 20, 1088), peak=128,
                              records=seccomp_memfd_records(),
                              exec_argv=lambda tgt: [tgt, "run", mode])
        others = [l for l in r.stderr.splitlines() if not re.match(r"ptleak\[\d+\]:", l)]
        ck.true("stderr, besides the report: %s, want at most one 'ptleak: ' line" % short(others),
                len(others) <= 1 and all(l.startswith("ptleak: ") for l in others))
        ck.done()
    return fn


case("seccomp_memfd_auto_errno")(seccomp_memfd_auto("errno"))
case("seccomp_memfd_auto_kill")(seccomp_memfd_auto("kill"))


def rec_only_seccomp_memfd(mode):
    """--engine=recorder where it cannot be injected (the image after the
    exec): one 'ptleak: ' line and a non-zero exit, no fallback; the image
    before has its report (reason exec)."""
    def fn():
        r = ptleak([need_target("r_seccomp_memfd"), mode], want_json=False)
        ck = Check()
        ck.true("exit status %d, want non-zero" % r.rc, r.rc != 0)
        ck.eq("reports", re.findall(r"(?m)^ptleak\[\d+\]: report \d+ at (\w+)", r.stderr),
              ["exec"])
        lines = [l for l in r.stderr.splitlines() if l.strip() and not l.startswith("ptleak[")]
        ck.true("stderr is not one 'ptleak: ' line: %s" % short(lines),
                len(lines) == 1 and lines[0].startswith("ptleak: "))
        ck.done()
    return fn


case("rec_only_seccomp_memfd_errno", engines=["recorder"])(rec_only_seccomp_memfd("errno"))
case("rec_only_seccomp_memfd_kill", engines=["recorder"])(rec_only_seccomp_memfd("kill"))


# --- a forked child released while its parent is traced ---------------------

@case("fork_child_released", engines=True)
def t_fork_child_released():
    """r_forkhold: while the parent is traced, its forked child (which has
    allocated 1,000 times) is untraced, its code as in its files (no int3,
    no patched entry) and it maps no file but the program's (no ring);
    told to go on, it allocates and checks 1,000 blocks and exits 0, which
    the parent returns.  The parent's numbers, from the source: 55 bytes
    in 1 block, 11 allocs, 10 frees, 135 bytes, peak 55 + 8.  (ptleak's scratch page,
    an anonymous executable page, is still mapped in the child: not
    checked here.)"""
    name = "r_forkhold"
    tgt = need_target(name)
    d = tempfile.mkdtemp(prefix="ptleak-it.")
    js = os.path.join(d, "r.json")
    p = subprocess.Popen(ptleak_cmd() + ["-q", "-o", os.devnull, "--show-reachable", "--json", js,
                                          tgt],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=target_env(), start_new_session=True, preexec_fn=_child_setup)
    out = Lines(p.stdout)
    ck = Check()
    try:
        child = int(out.expect(r"child (\d+)").group(1))
        ck.eq("child's TracerPid", tracer_pid(child), 0)
        ck.eq("child's code bytes that differ from their files",
              [x for x in code_differences(child) if "with no file" not in x], [])
        ck.eq("child's mapped files", mapped_files(child),
              sorted(set(os.path.realpath(x) for x in
                         (tgt, lib_of(name, "libc.so.6"), "/lib64/ld-linux-x86-64.so.2"))))
        p.stdin.write(b"go\n")
        p.stdin.flush()
        ck.eq("exit status (the child's)", p.wait(timeout=TIMEOUT), 0)
        ck.eq("ptleak's stderr", p.stderr.read(), b"")
        rep = check_shape(json.load(open(js)))
        check_target(ck, rep, [tgt], {"code": 0})
        check_heap(ck, name, rep, (55, 1), (11, 10, 135), 63, [
            Rec("keep", 55, 1, "malloc", REACH, [T("main", "keep")], exact=True)], None)
    finally:
        _kill_group(p.pid)
        p.wait()
        shutil.rmtree(d, ignore_errors=True)
    ck.done()


# --- ptleak's own priority ----------------------------------------------------

def nice_of(pid, tid):
    """Thread TID's nice value (its /proc stat, field 19)."""
    with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
        return int(f.read().rsplit(")", 1)[1].split()[16])


def threads_nice(pid):
    """The nice values of PID's threads, as a sorted list (a thread gone
    between the listing and its stat is not in it)."""
    vals = []
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            vals.append(nice_of(pid, int(t)))
        except FileNotFoundError:
            pass
    return sorted(vals)


@case("drain_priority", engines=["recorder"])
def t_drain_priority():
    """With the recorder in the program, ptleak's drain runs 5 nice levels
    above where it started where it may (as root here), the program's
    threads keep theirs, launched and attached; PTLEAK_DEBUG=no-nice keeps
    ptleak's too (docs/usage.md, "ptleak's own priority")."""
    tgt = need_target("h_report_signal")
    need_ptleak()
    ck = Check()
    base = os.getpriority(os.PRIO_PROCESS, 0)
    want = max(base - 5, -20) if os.geteuid() == 0 else base
    for debug, mine in ((None, want), ("no-nice", base)):
        env = target_env()
        if debug:
            env["PTLEAK_DEBUG"] = debug
        with tempfile.TemporaryDirectory() as d:
            go = os.path.join(d, "go")
            p = subprocess.Popen(ptleak_cmd() + ["-q", "-o", os.devnull, tgt, go],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env,
                                 start_new_session=True)
            try:
                ck.eq("target's first line", p.stdout.readline(), b"ready\n")
                with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
                    child = int(f.read().split()[0])
                ck.eq("ptleak's nice (PTLEAK_DEBUG=%s)" % debug, nice_of(p.pid, p.pid), mine)
                ck.eq("the program's threads' nice (PTLEAK_DEBUG=%s)" % debug,
                      threads_nice(child), [base])
                release_and_wait(p, go, ck)
            finally:
                reap_group(p)
    # attached: the server's threads keep theirs
    srv = Server()
    try:
        srv.ping()
        before = set(threads_nice(srv.p.pid))	# its threads come and go
        ck.eq("the server's threads' nice", before, {base})
        a = subprocess.Popen(ptleak_cmd() + ["-q", "-o", os.devnull, "-p", str(srv.p.pid)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=target_env(),
                             start_new_session=True)
        try:
            for _ in range(500):
                if tracer_pid(srv.p.pid) == a.pid and nice_of(a.pid, a.pid) == want:
                    break
                time.sleep(0.01)
            srv.ping()
            ck.eq("attached: ptleak's nice", nice_of(a.pid, a.pid), want)
            ck.eq("attached: the server's threads' nice", set(threads_nice(srv.p.pid)), before)
            a.send_signal(signal.SIGINT)
            out, err = a.communicate(timeout=60)
        finally:
            reap_group(a)
        ck.eq("attached: ptleak's status", a.returncode, 0)
        ck.eq("attached: the server after the detach", set(threads_nice(srv.p.pid)), before)
        ck.eq("attached: server's exit", srv.quit(), 0)
    finally:
        srv.kill()
    ck.done()
