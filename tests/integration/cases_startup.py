# Start-up cost and stacks of stripped executables (exec'd in run.py's
# namespace: case, ptleak, Check, need_target, line, ... are run.py's).

@case("stripped_main", engines=True)
def t_stripped_main():
    """A stripped executable's stacks end at main, found through the entry
    point's lea main(%rip),%rdi: the frame in main is the last one."""
    for tool in ("strip", "addr2line"):
        if not shutil.which(tool):
            raise Skip("%s missing" % tool)
    name = "h_basic"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        s = os.path.join(d, "h_basic_s")
        p = subprocess.run(["strip", "-o", s, tgt], capture_output=True, text=True)
        if p.returncode != 0:
            raise Fail("strip failed: %s" % p.stderr.strip())
        check_stripped(ck, name, tgt, s, h_basic_records(
            dict(big=DEF, table=DEF, grow=DEF, twice=DEF, level3=DEF)))
    ck.done()


@case("stripped_main_got", engines=True)
def t_stripped_main_got():
    """The same with main's address loaded from the GOT (a PIE linked with
    --no-relax: mov main@GOTPCREL(%rip),%rdi), and position-dependent
    (mov $main,%rdi)."""
    for tool in ("cc", "strip", "addr2line"):
        if not shutil.which(tool):
            raise Skip("%s missing" % tool)
    name = "h_basic"
    ck = Check()
    recs = h_basic_records(dict(big=DEF, table=DEF, grow=DEF, twice=DEF, level3=DEF))
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        for tag, flags in (("norelax", ["-Wl,--no-relax"]), ("nopie", ["-no-pie"])):
            exe = os.path.join(d, "h_basic_" + tag)
            s = exe + "_s"
            for cmd in (["cc", "-O0", "-g", "-fno-omit-frame-pointer", "-pthread"] + flags +
                        ["-o", exe, source_path(name)], ["strip", "-o", s, exe]):
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    raise Fail("%s failed: %s" % (" ".join(cmd), p.stderr.strip()))
            if tag == "norelax":
                dis = subprocess.run(["objdump", "-d", "-j", ".text", exe],
                                     capture_output=True, text=True).stdout
                ck.true("%s: _start does not load main from the GOT" % exe,
                        re.search(r"mov\s+0x[0-9a-f]+\(%rip\),%rdi", dis))
            check_stripped(ck, name, exe, s, recs)
    ck.done()


def strace_opens(cmd, env):
    """(result, [paths opened]) of ptleak run under strace -e openat (ptleak
    alone: its target is ptleak's to trace)."""
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        log = os.path.join(d, "strace.log")
        p = subprocess.run(["strace", "-qq", "-o", log, "-e", "trace=openat"] + cmd,
                           capture_output=True, text=True, env=env, timeout=TIMEOUT)
        with open(log) as f:
            opened = re.findall(r'openat\([^"]*"([^"]*)", [^)]*\) = \d+', f.read())
    return p, opened


def debug_env(urls):
    env = target_env()
    env.pop("DEBUGINFOD_URLS", None)
    if urls:
        env["DEBUGINFOD_URLS"] = urls
        env["DEBUGINFOD_TIMEOUT"] = "2"
    return env


@case("no_debuginfod")
def t_no_debuginfod():
    """DEBUGINFOD_URLS unset: libdebuginfod (and libcurl with it) is never
    loaded, even for a frame in libstdc++, which has no local debug file.
    Set (to a port where nothing listens), libdwfl's debuginfod client is
    used: the check can see it."""
    if not shutil.which("strace"):
        raise Skip("strace missing")
    name = "h_cxx"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as home:
        runs = {}
        for urls in (None, "http://127.0.0.1:9/"):
            env = debug_env(urls)
            env["HOME"] = env["XDG_CACHE_HOME"] = home
            p, opened = strace_opens([PTLEAK, "-o", os.path.join(home, "r.txt"), tgt], env)
            with open(os.path.join(home, "r.txt")) as f:
                text = [l for _, l in report_lines(f.read())]
            runs[urls] = (p, opened, text)
            ck.eq("exit status (DEBUGINFOD_URLS=%s)" % urls, p.returncode, native(name)[0])
        _, opened, text = runs[None]
        ck.eq("libraries of debuginfod opened without DEBUGINFOD_URLS",
              [o for o in opened if re.search(r"libdebuginfod|libcurl", o)], [])
        ck.true("frame 'operator new(unsigned long) (libstdc++.so.6)' missing",
                any(re.search(r"by 0x[0-9a-f]+: operator new\(unsigned long\) \(libstdc\+\+\.so\.6[.\d]*\)$", l)
                    for l in text))
        _, opened, _ = runs["http://127.0.0.1:9/"]
        ck.true("DEBUGINFOD_URLS set: libdebuginfod not opened: the check sees nothing",
                any("libdebuginfod" in o for o in opened))
    ck.done()


def libc_debug_file(name):
    """/usr/lib/debug/.build-id/xx/yyyy.debug of the libc of target NAME."""
    libc = lib_of(name, "libc.so.6")
    out = subprocess.run(["readelf", "-n", libc], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not m:
        raise Skip("%s has no build-id" % libc)
    path = "/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2], m.group(1)[2:])
    if not os.path.exists(path):
        raise Skip("no libc debug file %s (libc6-dbg)" % path)
    return path


@case("lazy_debug_info")
def t_lazy_debug_info():
    """libc's debug file is opened only when a printed frame in libc needs
    a line: not for h_basic (libc frames: the allocators' own, named
    'malloc (libc.so.6)'), but for demo's strdup frame (strdup.c:42)."""
    if not shutil.which("strace"):
        raise Skip("strace missing")
    ck = Check()
    dbg = libc_debug_file("h_basic")
    env = debug_env(None)
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        out = os.path.join(d, "r.txt")
        for name, want in (("h_basic", False), ("demo", True)):
            p, opened = strace_opens([PTLEAK, "-o", out, need_target(name)], env)
            with open(out) as f:
                text = [l for _, l in report_lines(f.read())]
            ck.eq("%s: libc's debug file opened" % name, dbg in opened, want)
            at = [l for l in text if re.match(r"   at 0x", l)]
            ck.true("%s: no frame 0" % name, at)
            bad = [l for l in at if not re.fullmatch(
                r"   at 0x[0-9a-f]+: (malloc|calloc|realloc) \(libc\.so\.6\)", l)]
            ck.eq("%s: frames 0 not 'malloc (libc.so.6)'" % name, bad, [])
            if want:
                ck.true("demo: frame 'strdup (strdup.c:42)' missing: %s" % text,
                        any(re.search(r"by 0x[0-9a-f]+: strdup \(strdup\.c:\d+\)$", l) for l in text))
    ck.done()


@case("debuglink_crc", engines=True)
def t_debuglink_crc():
    """An executable without a build-id: its .gnu_debuglink file is taken
    when its CRC matches (lines), refused when it does not (no lines,
    function names from the executable's own symbols)."""
    for tool in ("cc", "objcopy"):
        if not shutil.which(tool):
            raise Skip("%s missing" % tool)
    name = "demo"
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        full = os.path.join(d, "demo_full")
        exe = os.path.join(d, "demo_nb")
        dbg = exe + ".debug"
        for cmd in (["cc", "-O0", "-g", "-fno-omit-frame-pointer", "-Wl,--build-id=none",
                     "-o", full, source_path(name)],
                    ["objcopy", "--only-keep-debug", full, dbg],
                    ["objcopy", "--strip-debug", "--add-gnu-debuglink=" + dbg, full, exe]):
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=d)
            if p.returncode != 0:
                raise Fail("%s failed: %s" % (" ".join(cmd), p.stderr.strip()))
        out = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True).stdout
        ck.true("%s has a build-id" % exe, "Build ID" not in out)
        ck.eq("frames, debuglink CRC matching", greeting_frames(need_json(ptleak([exe])), exe),
              [("make_greeting", "demo.c", line("demo", "greeting"), exe),
               ("main", "demo.c", line("demo", "call_greeting"), exe)])
        with open(dbg, "ab") as f:
            f.write(b"\0")	# another CRC
        ck.eq("frames, debuglink CRC not matching", greeting_frames(need_json(ptleak([exe])), exe),
              [("make_greeting", None, None, exe), ("main", None, None, exe)])
    ck.done()
