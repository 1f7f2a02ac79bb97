# The unwind tables' disk cache (src/recorder/unwtab_cache.c) and the line
# tables' (src/symbols/dwline.c): a table compiled (inflated) once is read
# back by the next run, the stacks the same; a damaged file
# is compiled again; no cache when PTLEAK_CACHE_DIR is set empty; an
# unusable directory changes nothing; the default places; the bound.
# Exec'd in run.py's namespace (case, ptleak, Check, need_target, ...).

CACHE_RE = re.compile(r"^ptleak-debug: unwind table of (.*): (compiled|from the cache)$", re.M)
LINES_RE = re.compile(r"^ptleak-debug: line table of (.*): (inflated and indexed|indexed|from the cache)$", re.M)


def cache_env(**kw):
    """The tests' environment with PTLEAK_DEBUG=stats and KW (a value of
    None removes the variable)."""
    env = target_env()
    env["PTLEAK_DEBUG"] = "stats"
    for k, v in kw.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def cache_run(env, lines=None):
    """demo (a stack of 6 libc frames) under the recorder: (how each table
    was had {path: 'compiled'|'from the cache'}, the records as
    (kind, bytes, blocks, frames) with frames (function, file, line,
    module's base name), stderr's lines that are not debug lines); LINES
    (a dict) gets how each line table was had {path: how}."""
    r = ptleak([need_target("demo")], opts=["--engine=recorder"], env=env)
    if r.rc != 0 or r.json is None:
        raise Fail("ptleak exits %s: %s" % (r.rc, r.stderr[-2000:]))
    how = {}
    for path, h in CACHE_RE.findall(r.stderr):
        how[re.sub(r"^/proc/\d+/", "/proc/PID/", path)] = h
    recs = sorted((x["kind"], x["bytes"], x["blocks"],
                   tuple((f.get("function"), f.get("file"), f.get("line"),
                          os.path.basename(f.get("module") or ""))
                         for f in x["stack"]))
                  for x in r.json["heap"]["records"])
    other = [l for l in r.stderr.splitlines()
             if l.startswith("ptleak: ") and not l.startswith("ptleak-debug")]
    if lines is not None:
        lines.clear()
        lines.update(LINES_RE.findall(r.stderr))
    return how, recs, other


def old_files(d, suffix, n):
    """N cache files of a byte each named like ptleak's with SUFFIX in D,
    each older than the next: their names, oldest first."""
    old = [("%016x" % (0x1000 + i)) + suffix for i in range(n)]
    for i, f in enumerate(old):
        p = os.path.join(d, f)
        with open(p, "wb") as fh:
            fh.write(b"x")
        os.utime(p, (1000000000 + i, 1000000000 + i))
    return old


def dwl_files(d):
    return sorted(f for f in os.listdir(d) if re.fullmatch(r"[0-9a-f]{16}\.dwl", f)) \
        if os.path.isdir(d) else []


def uwt_files(d):
    return sorted(f for f in os.listdir(d) if re.fullmatch(r"[0-9a-f]{16}\.uwt", f)) \
        if os.path.isdir(d) else []


@case("unwind_cache")
def t_unwind_cache():
    """First run: every object's table compiled and written (one file
    each, 0600 in a 0700 directory); second run: every table from the
    cache, the same records and stacks (libc frames included); every file
    damaged: each table compiled again, the same records; then read back
    again."""
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        cd = os.path.join(d, "c", "unwind")
        env = cache_env(PTLEAK_CACHE_DIR=cd)
        lines = {}
        how1, recs1, _ = cache_run(env, lines)
        try:
            dbg = libc_debug_file("demo")
        except Skip:
            dbg = None
        if dbg:
            # libc's lines (its debug file's DWARF compressed): inflated,
            # indexed, kept; read back by the next runs
            ck.eq("run 1: libc's line table", lines, {dbg: "inflated and indexed"})
            ck.eq("run 1: one line table kept", len(dwl_files(cd)), 1)
            ck.true("demo's frames have libc's lines",
                    any(f[3] == "libc.so.6" and f[1] and f[2]
                        for r in recs1 for f in r[3]))
        libc = [p for p in how1 if re.search(r"/libc\.so\.6$", p)]
        ck.eq("libc among the tables", len(libc), 1)
        ck.true("the executable among the tables (%s)" % sorted(how1),
                "/proc/PID/exe" in how1)
        ck.eq("run 1: every table compiled", sorted(set(how1.values())), ["compiled"])
        files = uwt_files(cd)
        ck.eq("run 1: one file per table", len(files), len(how1))
        ck.eq("directory mode", oct(os.stat(cd).st_mode & 0o777), "0o700")
        ck.eq("file modes", sorted(set(oct(os.stat(os.path.join(cd, f)).st_mode & 0o777)
                                       for f in files)), ["0o600"])
        ck.true("demo's stdout buffer has its 6 libc frames",
                any(sum(1 for f in r[3] if f[3] == "libc.so.6") == 6 for r in recs1))
        how2, recs2, _ = cache_run(env, lines)
        if dbg:
            ck.eq("run 2: libc's line table", lines, {dbg: "from the cache"})
        ck.eq("run 2: the same tables", sorted(how2), sorted(how1))
        ck.eq("run 2: every table from the cache", sorted(set(how2.values())),
              ["from the cache"])
        ck.eq("run 2: records and stacks", recs2, recs1)
        for f in files + dwl_files(cd):
            p = os.path.join(cd, f)
            with open(p, "r+b") as fh:
                size = os.path.getsize(p)
                fh.seek(size - 8)	# the table's last bytes: rules
                fh.write(b"\xff" * 8)
        how3, recs3, other3 = cache_run(env, lines)
        if dbg:
            ck.eq("run 3: libc's line table", lines, {dbg: "inflated and indexed"})
        ck.eq("run 3 (every file damaged): every table compiled",
              sorted(set(how3.values())), ["compiled"])
        ck.eq("run 3: records and stacks", recs3, recs1)
        ck.eq("run 3: no message", other3, [])
        how4, recs4, _ = cache_run(env, lines)
        if dbg:
            ck.eq("run 4: libc's line table", lines, {dbg: "from the cache"})
        ck.eq("run 4: every table from the cache again", sorted(set(how4.values())),
              ["from the cache"])
        ck.eq("run 4: records and stacks", recs4, recs1)
    ck.done()


@case("unwind_cache_places")
def t_unwind_cache_places():
    """Where the cache is: $XDG_CACHE_HOME/ptleak/unwind, else
    ~/.cache/ptleak/unwind; none at all when PTLEAK_CACHE_DIR is set
    empty; a PTLEAK_CACHE_DIR that cannot be made: compiled, no message,
    the same records."""
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        home = os.path.join(d, "home")
        xdg = os.path.join(d, "xdg")
        os.mkdir(home)
        how, recs, _ = cache_run(cache_env(PTLEAK_CACHE_DIR=None, HOME=home,
                                           XDG_CACHE_HOME=xdg))
        ck.eq("XDG_CACHE_HOME: files there", len(uwt_files(os.path.join(xdg, "ptleak", "unwind"))),
              len(how))
        ck.eq("XDG_CACHE_HOME: nothing in HOME", os.listdir(home), [])
        how, recs2, _ = cache_run(cache_env(PTLEAK_CACHE_DIR=None, HOME=home,
                                            XDG_CACHE_HOME=None))
        ck.eq("HOME: every table compiled (a new place)", sorted(set(how.values())),
              ["compiled"])
        ck.eq("HOME: files in ~/.cache/ptleak/unwind",
              len(uwt_files(os.path.join(home, ".cache", "ptleak", "unwind"))), len(how))
        ck.eq("HOME: records", recs2, recs)
        empty = os.path.join(d, "empty")
        os.mkdir(empty)
        how, recs3, _ = cache_run(cache_env(PTLEAK_CACHE_DIR="", HOME=empty,
                                            XDG_CACHE_HOME=None))
        ck.eq("PTLEAK_CACHE_DIR empty: compiled", sorted(set(how.values())), ["compiled"])
        ck.eq("PTLEAK_CACHE_DIR empty: nothing written", os.listdir(empty), [])
        ck.eq("PTLEAK_CACHE_DIR empty: records", recs3, recs)
        blocker = os.path.join(d, "a-file")
        with open(blocker, "w") as f:
            f.write("not a directory\n")
        how, recs4, other = cache_run(cache_env(PTLEAK_CACHE_DIR=os.path.join(blocker, "sub")))
        ck.eq("unusable directory: compiled", sorted(set(how.values())), ["compiled"])
        ck.eq("unusable directory: no message", other, [])
        ck.eq("unusable directory: records", recs4, recs)
    ck.done()


@case("unwind_cache_bound")
def t_unwind_cache_bound():
    """300 old tables in the directory: the run's first write leaves the
    192 most recent (its own among them), its later writes add theirs."""
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        old = old_files(d, ".uwt", 300)
        how, _, other = cache_run(cache_env(PTLEAK_CACHE_DIR=d))
        n = len(how)
        ck.eq("every table compiled", sorted(set(how.values())), ["compiled"])
        files = uwt_files(d)
        ck.eq("files left", len(files), 192 + n - 1)
        ck.eq("the old ones kept: the most recent", sorted(set(files) & set(old)),
              old[300 - (192 - 1):])
        ck.eq("no message", other, [])
    ck.done()


@case("line_cache_bound")
def t_line_cache_bound():
    """40 old line tables in the directory: the run that inflates libc's
    (demo names libc frames with lines) leaves the 24 most recent, its
    own among them; the unwind tables are not counted with them."""
    dbg = libc_debug_file("demo")	# Skip without libc6-dbg
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        old = old_files(d, ".dwl", 40)
        lines = {}
        _, _, other = cache_run(cache_env(PTLEAK_CACHE_DIR=d), lines)
        ck.eq("libc's line table inflated", lines, {dbg: "inflated and indexed"})
        files = dwl_files(d)
        ck.eq("line tables left", len(files), 24)
        ck.eq("the old ones kept: the most recent", sorted(set(files) & set(old)),
              old[40 - 23:])
        ck.true("unwind tables written beside them", len(uwt_files(d)) > 0)
        ck.eq("no message", other, [])
    ck.done()
