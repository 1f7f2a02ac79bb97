#!/usr/bin/env python3
"""Integration tests of ptleak: run it on the programs of tests/targets and
check exact numbers (measured with valgrind, see each case).

This file is the harness: running ptleak and the targets, checking
reports, registering cases (case, heap_case), the runner and its options.
The cases are in cases_<area>.py beside it (see load_case_files and
README.md): cases_heap.py, cases_fds.py, cases_cli.py, cases_attach.py,
cases_outputs.py, cases_recorder.py, ...

usage: run.py BUILD_DIR [-k SUBSTRING] [--engine NAME] [--timeout S] [-v]
       run.py BUILD_DIR --valgrind [-k SUBSTRING] [--engine NAME]

BUILD_DIR holds ptleak and targets/ (make builds build/targets/X from
tests/targets/X.c or X.cc).  The PTLEAK environment variable overrides the
ptleak binary.  Prints "PASS name" or "FAIL name: what differed" per case
and, last, "integration: N passed, M failed"; exits 1 if any case failed.

A heap case runs once per engine, as NAME[breakpoints] and NAME[recorder]
(see ALL_ENGINES, RECORDER_READY); --engine NAME runs only that engine's
variants.

--valgrind runs valgrind live on every dynamically linked target and
compares its in-use bytes/blocks (and totals where they are deterministic)
with ptleak's; it is not part of `make check`.

Source line numbers are never written here: a line that a test checks
carries a marker comment `/* @NAME */` in the target's source and is looked
up by name (line("h_basic", "big")).

Python standard library only.
"""
import argparse
import atexit
import json
import os
import re
import resource
import shutil
import shlex
import signal
import subprocess
import sys
import queue
import tempfile
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC_DIR = os.path.join(ROOT, "tests", "targets")

BUILD = None		# absolute BUILD_DIR
PTLEAK = None		# the ptleak binary under test
TIMEOUT = 60		# seconds per process run; a timeout is a failure
VERBOSE = False

# Every ptleak the cases start runs with PTLEAK_DEBUG=snapshot-check (set
# in os.environ by main unless PTLEAK_DEBUG is set already): each live
# report made from a snapshot is compared with the same report made held
# at the same instant, and a difference prints SNAPSHOT_DIFFERS and makes
# ptleak's exit status 1.  A case that sets PTLEAK_DEBUG (ptleak_debug) runs
# without it unless it names it; a line SNAPSHOT_DIFFERS seen on a
# ptleak's stderr (run_cmd, Lines) fails the case that ran it.
DEBUG_DEFAULT = "snapshot-check"
SNAPSHOT_DIFFERS = "ptleak: debug: snapshot report differs from the held one: "
DIFFERS_SEEN = []	# such lines, since the case began

# Heap engines (--engine=...).  A case registered with case(NAME,
# engines=True) checks allocation numbers or stacks: it runs once per
# engine, as NAME[ENGINE], every ptleak it starts given --engine=ENGINE
# (ptleak_cmd), with the same expected numbers and stacks.
ALL_ENGINES = ["breakpoints", "recorder"]
# The recorder is not in ptleak yet (--engine=recorder runs breakpoints):
# until it lands, make check runs the breakpoint variants only, and the
# recorder's (with the rec_only_ cases) run when asked: run.py --engine
# recorder, or PTLEAK_TEST_RECORDER=1.  Flip to True when it lands.
RECORDER_READY = os.environ.get("PTLEAK_TEST_RECORDER", "1") == "1"
ENGINE = None		# the engine of the case running; None: ptleak's default

# The classes of a record ("kind" in JSON) that valgrind gives.
SUMMARY_CLASSES = ["definitely_lost", "indirectly_lost", "possibly_lost",
                   "still_reachable"]
U = "unclassified"	# every record's kind until the reachability scan lands
DEF, IND, POS, REACH = SUMMARY_CLASSES

# Names glibc 2.36 gives one address: aligned_alloc and memalign are both
# __libc_memalign, so either name is accepted for blocks of either.
MEMALIGN_NAMES = {"aligned_alloc", "memalign"}
OPNEW = "operator new(unsigned long)"
OPNEW_ARRAY = "operator new[](unsigned long)"


class Fail(Exception):
    """A test case failed; the message says what differed."""


class Skip(Exception):
    """A test case cannot run here (a tool is missing)."""


# ---------------------------------------------------------------------------
# Targets, sources and markers

def target_path(name):
    return os.path.join(BUILD, "targets", name)


def source_path(name):
    for ext in (".c", ".cc"):
        p = os.path.join(SRC_DIR, name + ext)
        if os.path.exists(p):
            return p
    raise Fail("no source for target %s in %s" % (name, SRC_DIR))


_markers = {}


def markers(name):
    if name not in _markers:
        found = {}
        with open(source_path(name), encoding="utf-8") as f:
            for n, text in enumerate(f, 1):
                for m in re.finditer(r"/\*\s*@(\w+)\s*\*/", text):
                    if m.group(1) in found:
                        raise Fail("marker @%s twice in %s" % (m.group(1), source_path(name)))
                    found[m.group(1)] = n
        _markers[name] = found
    return _markers[name]


def line(name, marker):
    """Source line of NAME's line marked /* @MARKER */."""
    try:
        return markers(name)[marker]
    except KeyError:
        raise Fail("marker @%s not found in %s" % (marker, source_path(name)))


def need_target(name):
    p = target_path(name)
    if not os.access(p, os.X_OK):
        raise Fail("target %s not built (make %s)" % (p, os.path.relpath(p, ROOT)))
    return p


_libs = {}


def lib_of(name, soname):
    """Real path of SONAME (e.g. libc.so.6) as the dynamic linker binds it
    for target NAME, from ldd."""
    key = (name, soname)
    if key not in _libs:
        path = None
        try:
            out = subprocess.run(["ldd", target_path(name)], capture_output=True,
                                 text=True, timeout=30).stdout
            for l in out.splitlines():
                m = re.match(r"\s*(\S+) => (\S+) \(0x", l)
                if m and m.group(1) == soname:
                    path = os.path.realpath(m.group(2))
        except (OSError, subprocess.SubprocessError):
            pass
        if path is None:
            raise Fail("cannot find %s of %s with ldd" % (soname, name))
        _libs[key] = path
    return _libs[key]


def target_env():
    """The environment of every run: ours, less what changes allocation."""
    env = dict(os.environ)
    for k in list(env):
        if (k.startswith("LD_") or k.startswith("MALLOC_") or k == "GLIBC_TUNABLES"
                or k.startswith("VALGRIND")):
            del env[k]
    return env


# ---------------------------------------------------------------------------
# Running processes

def _child_setup():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def reap_group(p):
    """If P (a Popen leading its process group) still runs, SIGKILL its
    group; then wait for P."""
    if p.poll() is None:
        _kill_group(p.pid)
        p.wait()


def release_and_wait(p, go, ck, timeout=60):
    """Make the file GO a target waits for, and wait for ptleak P to end:
    its exit status 0 and no stderr checked into CK.  Its stdout."""
    open(go, "w").close()
    out, err = p.communicate(timeout=timeout)
    ck.eq("exit status", p.returncode, 0)
    ck.eq("stderr", err, b"")
    return out


def run_cmd(cmd, timeout=None, env=None, cwd=None):
    """Run CMD in its own process group with stdin /dev/null and stdout and
    stderr to pipes (so the target's stdout is a pipe, as when valgrind
    measured it: glibc then allocates a 4096-byte stdout buffer).  ENV
    replaces target_env(), CWD the working directory.  Returns
    (status, stdout, stderr), status 128+N for death by signal N.  On
    timeout the whole group is killed and the case fails."""
    timeout = timeout or TIMEOUT
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE,
                             env=target_env() if env is None else env, cwd=cwd,
                             start_new_session=True, preexec_fn=_child_setup)
    except OSError as e:
        raise Fail("cannot run %s: %s" % (cmd[0], e.strerror))
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(p.pid)
        try:
            p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        raise Fail("timed out after %g s (process group killed): %s" % (timeout, " ".join(cmd)))
    finally:
        _kill_group(p.pid)	# nothing of the run may linger
    rc = p.returncode
    if rc < 0:
        rc = 128 - rc
    if VERBOSE:
        sys.stdout.write("  $ %s -> %d\n" % (" ".join(cmd), rc))
    err = err.decode("utf-8", "replace")
    DIFFERS_SEEN.extend(l for l in err.splitlines() if l.startswith(SNAPSHOT_DIFFERS))
    return rc, out.decode("utf-8", "replace"), err


# ---------------------------------------------------------------------------
# Running as another user (nobody)

NOBODY = 65534
_user_dir = None
_user_copies = {}


def user_dir():
    """A directory of this run that every user can enter and read:
    /tmp/ptleak-users.XXXXXX, mode 0755, removed when run.py exits.  What
    a case runs as another user goes there (user_copy): that user may not
    reach the checkout (under /root, mode 0700, on a fresh machine)."""
    global _user_dir
    if _user_dir is None:
        _user_dir = tempfile.mkdtemp(prefix="ptleak-users.", dir="/tmp")
        os.chmod(_user_dir, 0o755)
        atexit.register(shutil.rmtree, _user_dir, True)
    return _user_dir


def user_copy(path):
    """PATH (ptleak, a target) copied, mode 0755 and under its own name,
    into a subdirectory (0755) of user_dir(): what another user can run
    wherever the checkout is.  One copy per PATH per run."""
    if path not in _user_copies:
        sub = os.path.join(user_dir(), str(len(_user_copies)))
        os.mkdir(sub)
        os.chmod(sub, 0o755)
        dst = os.path.join(sub, os.path.basename(path))
        shutil.copyfile(path, dst)
        os.chmod(dst, 0o755)
        _user_copies[path] = dst
    return _user_copies[path]


def as_user(uid):
    """A preexec_fn that makes the child user UID (group UID, no
    supplementary groups)."""
    def pre():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    return pre


def run_as(uid, cmd, cwd=None):
    """Run CMD as user UID (as_user) in CWD (default user_dir()), stdin
    /dev/null, in target_env(): (status, stdout, stderr).  The programs
    CMD names must be ones UID can reach (user_copy)."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                       cwd=cwd or user_dir(), preexec_fn=as_user(uid), env=target_env(),
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


class Result:
    def __init__(self, cmd, rc, stdout, stderr):
        self.cmd, self.rc, self.stdout, self.stderr = cmd, rc, stdout, stderr
        self.json = None	# parsed JSON report
        self.json_error = None	# why there is none
        self.text = None	# contents of the -o file


def need_ptleak():
    if not PTLEAK or not os.path.isfile(PTLEAK) or not os.access(PTLEAK, os.X_OK):
        raise Fail("ptleak binary not found or not executable: %s" % PTLEAK)


def ptleak_cmd():
    """The start of every ptleak command line: the binary and, in an
    engine variant of a case, --engine=ENGINE."""
    return [PTLEAK] + (["--engine=" + ENGINE] if ENGINE else [])


def ptleak(args, opts=(), want_json=True, want_text=False, timeout=None,
           show_reachable=True, env=None, cwd=None):
    """Run ptleak [--show-reachable] [OPTS] [--json F] [-o F] ARGS: every
    record is listed, still reachable ones too, unless SHOW_REACHABLE is
    false (the case that checks they are hidden)."""
    if show_reachable:
        opts = ["--show-reachable"] + list(opts)
    need_ptleak()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        jf = os.path.join(d, "report.json")
        tf = os.path.join(d, "report.txt")
        cmd = ptleak_cmd() + list(opts)
        if want_json:
            cmd += ["--json", jf]
        if want_text:
            cmd += ["-o", tf]
        cmd += list(args)
        r = Result(cmd, *run_cmd(cmd, timeout, env, cwd))
        if want_json:
            try:
                with open(jf, encoding="utf-8") as f:
                    r.json = json.load(f)
            except FileNotFoundError:
                r.json_error = "no JSON report written"
            except (ValueError, UnicodeDecodeError) as e:
                r.json_error = "JSON report is not valid JSON: %s" % e
        if want_text:
            try:
                with open(tf, encoding="utf-8", errors="replace") as f:
                    r.text = f.read()
            except FileNotFoundError:
                r.text = None
    return r


_native = {}


def native(name, args=()):
    """The target run without ptleak (cached)."""
    key = (name, tuple(args))
    if key not in _native:
        _native[key] = run_cmd([need_target(name)] + list(args))
    return _native[key]


# ---------------------------------------------------------------------------
# Checking

def short(v, n=300):
    s = repr(v)
    return s if len(s) <= n else s[:n] + "..."


class Check:
    """Collects every difference of a case, so that one FAIL line says all."""

    def __init__(self):
        self.errors = []

    def err(self, msg):
        self.errors.append(msg)

    def eq(self, what, got, want):
        if got != want:
            self.err("%s: got %s, want %s" % (what, short(got), short(want)))
            return False
        return True

    def true(self, what, cond):
        if not cond:
            self.err(what)
        return bool(cond)

    def done(self):
        if self.errors:
            n = len(self.errors)
            msg = "; ".join(self.errors[:10])
            if n > 10:
                msg += " (and %d more)" % (n - 10)
            raise Fail(msg)


def fmt(n):
    return "{:,}".format(n)


def blocks(n):
    return "%s %s" % (fmt(n), "block" if n == 1 else "blocks")


class T:
    """Expected frame in the target itself: function, and the marked line
    of the call (file = the source's basename, module = the target)."""

    def __init__(self, function, marker):
        self.function, self.marker = function, marker


class L:
    """Expected frame in a library: function (one of a set of names, or any
    if None) and module (real path, or a soname such as "libc.so.6" that
    lib_of finds for the case's target, or any if None)."""

    def __init__(self, functions, module=None):
        if isinstance(functions, str):
            functions = {functions}
        self.functions, self.module = functions, module


class Rec:
    """An expected loss record.

    head: frames expected from frame 1 on; tail: frames expected at the end
    of the stack; exact: the stack is frame 0 + head exactly; maxlen: upper
    bound of the stack length.  Frame 0 is always the allocator itself (in
    the libc or the static executable).  ALLOCATOR may be a set of
    acceptable names (aliases)."""

    def __init__(self, key, nbytes, nblocks, allocator, kind, head=(), tail=(),
                 exact=False, maxlen=None, indirect=0):
        # nbytes: the record's bytes, direct + indirect
        self.key, self.bytes, self.blocks = key, nbytes, nblocks
        self.indirect = indirect
        self.allocator = allocator
        self.kind = kind
        self.head, self.tail, self.exact, self.maxlen = list(head), list(tail), exact, maxlen

    def allocators(self):
        return self.allocator if isinstance(self.allocator, set) else {self.allocator}

    def desc(self):
        return "record %s (%s bytes in %s)" % (self.key, fmt(self.bytes), blocks(self.blocks))


def _path_eq(got, want):
    return isinstance(got, str) and got.startswith("/") and os.path.realpath(got) == want


def frame_errors(name, i, fr, exp):
    """Differences between JSON frame FR (index I) and expectation EXP."""
    errs = []
    fn = fr.get("function")
    if isinstance(exp, T):
        want_line = line(name, exp.marker)
        want_file = os.path.basename(source_path(name))
        if fn != exp.function:
            errs.append("frame %d function %s, want %s" % (i, short(fn), short(exp.function)))
        if fr.get("file") != want_file or fr.get("line") != want_line:
            errs.append("frame %d (%s) at %s:%s, want %s:%d (@%s)" % (
                i, fn, fr.get("file"), fr.get("line"), want_file, want_line, exp.marker))
        if not _path_eq(fr.get("module"), os.path.realpath(target_path(name))):
            errs.append("frame %d (%s) module %s, want %s" % (
                i, fn, short(fr.get("module")), os.path.realpath(target_path(name))))
    else:
        if exp.functions is not None and fn not in exp.functions:
            errs.append("frame %d function %s, want one of %s" % (i, short(fn), sorted(exp.functions)))
        mod = exp.module
        if mod is not None and not mod.startswith("/"):
            mod = lib_of(name, mod)
        if mod is not None and not _path_eq(fr.get("module"), mod):
            errs.append("frame %d (%s) module %s, want %s" % (i, fn, short(fr.get("module")), mod))
    return errs


def record_errors(name, rec, exp, alloc_module, depth):
    errs = []
    if rec.get("allocator") not in exp.allocators():
        errs.append("allocator %s, want %s" % (short(rec.get("allocator")),
                                                " or ".join(sorted(exp.allocators()))))
    if exp.kind is not None and rec.get("kind") != exp.kind:
        errs.append("kind %s, want %s" % (short(rec.get("kind")), exp.kind))
    if (rec.get("direct_bytes"), rec.get("indirect_bytes")) != (exp.bytes - exp.indirect, exp.indirect):
        errs.append("direct/indirect bytes %s/%s, want %d/%d" % (
            rec.get("direct_bytes"), rec.get("indirect_bytes"), exp.bytes - exp.indirect,
            exp.indirect))
    # SPEC.md's JSON stack lists the callers; the allocator's own frame
    # (frame 0 of the text report, "at ...") is the record's "allocator".
    # st[0] stands for it so that frame numbers match the text report.
    st = [{"function": rec.get("allocator")}] + list(rec.get("stack") or [])
    if len(st) > depth:
        errs.append("stack of %d frames, more than --depth %d" % (len(st), depth))
    for i, e in enumerate(exp.head, 1):
        if i >= len(st):
            errs.append("stack has %d frames, want at least %d" % (len(st), len(exp.head) + 1))
            break
        errs += frame_errors(name, i, st[i], e)
    if exp.tail:
        if len(st) < len(exp.tail) + 1:
            errs.append("stack has %d frames, want at least %d" % (len(st), len(exp.tail) + 1))
        else:
            for j, e in enumerate(exp.tail):
                i = len(st) - len(exp.tail) + j
                errs += frame_errors(name, i, st[i], e)
    if exp.exact and len(st) != len(exp.head) + 1:
        errs.append("stack has %d frames (%s), want %d" % (
            len(st), ", ".join(str(f.get("function")) for f in st), len(exp.head) + 1))
    if exp.maxlen is not None and len(st) > exp.maxlen:
        errs.append("stack has %d frames, want at most %d" % (len(st), exp.maxlen))
    # Stacks stop after main (valgrind's below-main hiding).
    fns = [f.get("function") for f in st]
    if "main" in fns and fns.index("main") != len(fns) - 1:
        errs.append("stack goes on after main: %s" % fns)
    return errs


FRAME_KEYS = ["pc", "function", "file", "line", "module"]
RECORD_KEYS = ["kind", "bytes", "blocks", "direct_bytes", "indirect_bytes", "allocator", "stack"]


def check_shape(rep):
    """The JSON report has the schema of SPEC.md; raises Fail if not, since
    nothing else can be checked then."""
    def need(obj, key, typ, where):
        if not isinstance(obj, dict) or key not in obj:
            raise Fail("JSON: %s has no key %r" % (where, key))
        v = obj[key]
        if typ is not None and (not isinstance(v, typ) or isinstance(v, bool)):
            raise Fail("JSON: %s.%s is %s, want %s" % (where, key, short(v, 80), typ))
        return v
    def tracked(obj, where):
        if not isinstance(obj.get("tracked"), bool):
            raise Fail("JSON: %s.tracked is %s, want true or false" % (where, short(obj.get("tracked"), 80)))
        if obj["tracked"] != (need(obj, "why", (str, type(None)), where) is None):
            raise Fail("JSON: %s.why is %s with tracked %s" % (where, short(obj["why"], 80), obj["tracked"]))
    if not isinstance(rep, dict):
        raise Fail("JSON report is not an object")
    need(rep, "version", int, "report")
    need(rep, "tool", str, "report")
    need(rep, "reason", str, "report")
    t = need(rep, "target", dict, "report")
    need(t, "pid", int, "target")
    need(t, "argv", list, "target")
    need(t, "exit", (dict, type(None)), "target")
    fds = need(rep, "fds", (dict, type(None)), "report")
    if fds is not None:
        need(fds, "open", int, "fds")
        need(fds, "inherited", int, "fds")
        tracked(fds, "fds")
        for i, r in enumerate(need(fds, "records", list, "fds")):
            w = "fds.records[%d]" % i
            need(r, "fd", int, w)
            need(r, "type", str, w)
            need(r, "target", (str, type(None)), w)
            need(r, "opened_by", str, w)
            need(r, "stack", list, w)
    h = need(rep, "heap", (dict, type(None)), "report")
    if h is None:
        return rep
    tracked(h, "heap")
    for k, sub in (("in_use", ["bytes", "blocks"]), ("totals", ["allocs", "frees", "bytes_allocated"]),
                   ("peak", ["bytes"])):
        o = need(h, k, dict, "heap")
        for s in sub:
            need(o, s, int, "heap." + k)
    s = need(h, "summary", dict, "heap")
    for c in SUMMARY_CLASSES + ["suppressed"]:
        o = need(s, c, dict, "heap.summary")
        need(o, "bytes", int, "heap.summary." + c)
        need(o, "blocks", int, "heap.summary." + c)
    recs = need(h, "records", list, "heap")
    for i, r in enumerate(recs):
        w = "heap.records[%d]" % i
        for k in RECORD_KEYS:
            need(r, k, None, w)
        for k in ("bytes", "blocks", "direct_bytes", "indirect_bytes"):
            need(r, k, int, w)
        need(r, "kind", str, w)
        st = need(r, "stack", list, w)
        for j, fr in enumerate(st):
            fw = "%s.stack[%d]" % (w, j)
            for k in FRAME_KEYS:
                need(fr, k, None, fw)
            if not isinstance(fr["pc"], str) or not re.fullmatch(r"0x[0-9a-f]+", fr["pc"]):
                raise Fail("JSON: %s.pc is %s, want a string 0x<hex>" % (fw, short(fr["pc"], 40)))
            for k in ("function", "file", "module"):
                need(fr, k, (str, type(None)), fw)
            need(fr, "line", (int, type(None)), fw)
    for i, g in enumerate(need(h, "growth", list, "heap")):
        w = "heap.growth[%d]" % i
        for k in ("bytes_per_s", "blocks_per_s"):
            need(g, k, (float, int), w)
        for k in ("in_use_bytes", "in_use_blocks"):
            need(g, k, int, w)
        need(g, "stack", list, w)
    return rep


def check_heap(ck, name, rep, in_use, totals, peak, records, alloc_module,
               depth=16, exhaustive=True, check_summary=True):
    """Compare the heap part of REP with the expectations.  IN_USE (bytes,
    blocks), TOTALS (allocs, frees, bytes_allocated), PEAK bytes (or a
    (low, high) range, or None); RECORDS the expected Rec list: all of the
    records when EXHAUSTIVE."""
    h = rep["heap"]
    ck.eq("heap tracked, why", (h["tracked"], h["why"]), (True, None))
    ck.eq("in_use", (h["in_use"]["bytes"], h["in_use"]["blocks"]), in_use)
    if totals is not None:
        t = h["totals"]
        ck.eq("totals (allocs, frees, bytes_allocated)",
              (t["allocs"], t["frees"], t["bytes_allocated"]), totals)
    p = h["peak"]["bytes"]
    if isinstance(peak, tuple):
        ck.true("peak %s not within %s" % (fmt(p), peak), peak[0] <= p <= peak[1])
    elif peak is not None:
        ck.eq("peak bytes", p, peak)
    recs = h["records"]
    # grouping and order: bytes descending, then blocks descending
    order = [(r["bytes"], r["blocks"]) for r in recs]
    ck.true("records not sorted by bytes, blocks descending: %s" % short(order),
            order == sorted(order, reverse=True))
    ck.eq("sum of record direct bytes/blocks",
          (sum(r["direct_bytes"] for r in recs), sum(r["blocks"] for r in recs)),
          (h["in_use"]["bytes"], h["in_use"]["blocks"]))
    if exhaustive:
        ck.eq("records (bytes, blocks)", order,
              sorted(((e.bytes, e.blocks) for e in records), reverse=True))
    used = set()
    for e in records:
        cands = [i for i, r in enumerate(recs)
                 if i not in used and r["bytes"] == e.bytes and r["blocks"] == e.blocks]
        if not cands:
            ck.err("no %s" % e.desc())
            continue
        best = None
        for i in cands:
            errs = record_errors(name, recs[i], e, alloc_module, depth)
            if not errs:
                best = (i, [])
                break
            if best is None:
                best = (i, errs)
        used.add(best[0])
        for m in best[1]:
            ck.err("%s: %s" % (e.desc(), m))
    # summary: the classes' totals follow from the expected kinds
    if exhaustive and check_summary:
        want = {c: {"bytes": sum(e.bytes - e.indirect for e in records if e.kind == c),
                    "blocks": sum(e.blocks for e in records if e.kind == c)}
                for c in SUMMARY_CLASSES}
        want["suppressed"] = {"bytes": 0, "blocks": 0}
        got = {c: h["summary"][c] for c in SUMMARY_CLASSES + ["suppressed"]}
        got = {c: {"bytes": v.get("bytes"), "blocks": v.get("blocks")} for c, v in got.items()}
        ck.eq("heap.summary", got, want)


def check_target(ck, rep, argv, exit_):
    ck.eq("version", rep["version"], 1)
    ck.eq("tool", rep["tool"], "ptleak")
    ck.eq("reason", rep["reason"], "exit")
    ck.eq("target.argv", rep["target"]["argv"], argv)
    ck.eq("target.exit", rep["target"]["exit"], exit_)
    ck.true("target.pid %r is not a pid" % rep["target"]["pid"], rep["target"]["pid"] > 1)


def check_native(ck, name, args, r, normalize=None):
    """The target's stdout and exit status under ptleak are a native run's."""
    nrc, nout, _ = native(name, args)
    got, want = r.stdout, nout
    if normalize:
        got, want = normalize(got), normalize(want)
    ck.eq("target stdout under ptleak (vs native run)", got, want)
    ck.eq("exit status (vs native run)", r.rc, nrc)


def exit_json(status):
    return {"signal": status - 128} if status > 128 else {"code": status}


def report_lines(text):
    """[(pid, content)] of the lines 'ptleak[PID]: ...' of TEXT."""
    out = []
    for l in (text or "").splitlines():
        m = re.match(r"ptleak\[(\d+)\]:(?: (.*))?$", l)
        if m:
            out.append((int(m.group(1)), (m.group(2) or "").rstrip()))
    return out


# Stacks of stripped executables (cases_startup.py, cases_paths.py)

def text_records(text):
    """{(bytes, blocks): [frame lines]} of a text report: each record's
    frame lines ('at ...', 'by ...'), without the 'ptleak[PID]: ' prefix."""
    recs, cur = {}, None
    for _, l in report_lines(text):
        m = re.match(r"([\d,]+) bytes in ([\d,]+) blocks? are .* in loss record", l)
        if m:
            cur = recs.setdefault((int(m.group(1).replace(",", "")),
                                   int(m.group(2).replace(",", ""))), [])
        elif cur is not None and re.match(r"   (at|by) 0x", l):
            cur.append(l.strip())
        else:
            cur = None
    return recs


def load_base(exe):
    """Virtual address of EXE's first loaded byte (0 for a PIE)."""
    out = subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True).stdout
    m = re.search(r"^\s*LOAD\s+0x0+\s+(0x[0-9a-f]+)", out, re.M)
    if not m:
        raise Fail("no LOAD segment at file offset 0 in %s" % exe)
    return int(m.group(1), 16)


def addr2line(exe, offset):
    """(function, 'file:line') of module offset OFFSET in EXE, with binutils."""
    p = subprocess.run(["addr2line", "-f", "-e", exe, "0x%x" % (load_base(exe) + offset)],
                       capture_output=True, text=True, timeout=30)
    out = p.stdout.split("\n")
    if p.returncode != 0 or len(out) < 2:
        raise Fail("addr2line -e %s 0x%x failed: %s" % (exe, offset, p.stderr.strip()))
    # "FILE:LINE" or "FILE:LINE (discriminator N)"; FILE may hold spaces
    return out[0], os.path.basename(re.sub(r" \(discriminator \d+\)$", "", out[1]))


def check_stripped(ck, name, unstripped, stripped, recs):
    """The text report of STRIPPED (a stripped copy of UNSTRIPPED, built
    from target NAME): every record of RECS has its frames 1.. as
    '??? (STRIPPED+0xOFF)', exactly as many as the unstripped stack (the
    last one in main, nothing below), and OFF - 1 is, in UNSTRIPPED, the
    expected function at the marked line."""
    r = ptleak([stripped], want_text=True)
    got = text_records(r.text)
    base = os.path.basename(stripped)
    src = os.path.basename(source_path(name))
    for e in recs:
        frames = got.get((e.bytes, e.blocks))
        if frames is None:
            ck.err("%s: no record %s in %s" % (base, e.desc(), sorted(got)))
            continue
        callers = frames[1:]
        ck.eq("%s: %s: frames after the allocator (%s)" % (base, e.desc(), callers),
              len(callers), len(e.head))
        for i, (l, t) in enumerate(zip(callers, e.head), 1):
            m = re.fullmatch(r"by 0x[0-9a-f]+: \?\?\? \(%s\+0x([0-9a-f]+)\)" % re.escape(base), l)
            if not m:
                ck.err("%s: %s: frame %d is %r, want '??? (%s+0x...)'" % (
                    base, e.desc(), i, l, base))
                continue
            want = (t.function, "%s:%d" % (src, line(name, t.marker)))
            ck.eq("%s: %s: frame %d at +0x%s in %s" % (base, e.desc(), i, m.group(1), unstripped),
                  addr2line(unstripped, int(m.group(1), 16) - 1), want)


def need_json(r):
    if r.json is None:
        raise Fail("%s (exit %d; stderr: %s)" % (r.json_error, r.rc, short(r.stderr.strip()[-500:], 500)))
    return check_shape(r.json)


def run_heap(name, args=(), in_use=None, totals=None, peak=None, records=(), exit=0,
             opts=(), native=True, normalize=None, text=False, env=None, exhaustive=True,
             exec_argv=None):
    """The skeleton of a heap case: ptleak [OPTS] TARGET ARGS, then the
    target's stdout and status as natively (unless NATIVE is false), exit
    status EXIT (128+N: signal N), the JSON's target and heap part
    (check_heap: IN_USE, TOTALS, PEAK, RECORDS, all of the records when
    EXHAUSTIVE; TOTALS may be a function of the Result; EXEC_ARGV: the
    argv after the target's exec, the report's).  Returns (ck, r, rep) for what the case checks more;
    the case ends with ck.done()."""
    tgt = need_target(name)
    argv = [tgt] + list(args)
    r = ptleak(argv, opts=opts, want_text=text, env=env)
    ck = Check()
    if native:
        check_native(ck, name, list(args), r, normalize)
    ck.eq("exit status", r.rc, exit)
    rep = need_json(r)
    check_target(ck, rep, argv if exec_argv is None else exec_argv(tgt), exit_json(exit))
    if callable(totals):
        totals = totals(r)
    check_heap(ck, name, rep, in_use, totals, peak, records, None, exhaustive=exhaustive)
    return ck, r, rep


def heap_case(case_name, name=None, extra=None, **expect):
    """Register CASE_NAME, a heap case for every engine: run_heap(NAME
    (default CASE_NAME), **EXPECT), then EXTRA(ck, r, rep) if given.
    EXPECT's records may be a function (called when the case runs)."""
    def fn():
        kw = dict(expect)
        if callable(kw.get("records")):
            kw["records"] = kw["records"]()
        # per engine: {"recorder": value, None: value of the others}
        for k, v in list(kw.items()):
            if isinstance(v, dict) and None in v:
                kw[k] = v.get(ENGINE, v[None])
        ck, r, rep = run_heap(name or case_name, **kw)
        if extra:
            extra(ck, r, rep)
        ck.done()
    CASES.append((case_name, fn, True))


# ---------------------------------------------------------------------------
# Registering cases (the cases themselves are in cases_*.py)

CASES = []	# (name, fn, engines): engines False, True (all) or a list


def case(name, engines=False):
    """Register the decorated function as case NAME.  ENGINES=True: it
    checks the heap, and runs once per engine (see ALL_ENGINES); a list of
    engines: only under those (a rec_only_ case)."""
    def deco(fn):
        CASES.append((name, fn, engines))
        return fn
    return deco


def in_engine(engine, fn):
    """FN run with ENGINE as the engine of every ptleak it starts."""
    def run():
        global ENGINE
        ENGINE = engine
        try:
            fn()
        finally:
            ENGINE = None
    return run


def expand_engines(cases, chosen):
    """[(name, fn)] to run: a case without engines as it is (none when
    CHOSEN names an engine), one NAME[ENGINE] per engine of its own that
    is selected (CHOSEN, else the recorder only if RECORDER_READY).  A
    recorder-only case that is not selected is a visible SKIP."""
    out = []
    for name, fn, engines in cases:
        if not engines:
            if not chosen:
                out.append((name, fn))
            continue
        for e in ALL_ENGINES if engines is True else engines:
            if chosen and e != chosen:
                continue
            if not chosen and e == "recorder" and not RECORDER_READY:
                if engines is not True:
                    out.append(("%s[%s]" % (name, e), skip_recorder))
                continue
            out.append(("%s[%s]" % (name, e), in_engine(e, fn)))
    return out


def skip_recorder():
    raise Skip("the recorder is not enabled: RECORDER_READY in run.py, "
               "or run.py --engine recorder, or PTLEAK_TEST_RECORDER=1")


def stdout_buffer(kind, marker="stdout_buf"):
    """glibc's stdout buffer: malloc(4096) inside the first printf (stdout is
    a pipe), called from main at the marked line."""
    return Rec("stdout_buf", 4096, 1, "malloc", kind, tail=[T("main", marker)])


# ---------------------------------------------------------------------------
# Live processes: tests/targets/h_server driven through its pipes, ptleak -p
# (cases_attach.py, cases_recorder.py, cases_signals.py)

class ptleak_debug:
    """with ptleak_debug(VALUE): PTLEAK_DEBUG=VALUE in os.environ (what every
    ptleak started meanwhile inherits; "" or None: no flag), the value
    before restored after (DEBUG_DEFAULT, as a rule)."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.old = os.environ.get("PTLEAK_DEBUG")
        os.environ["PTLEAK_DEBUG"] = self.value or ""

    def __exit__(self, *exc):
        if self.old is None:
            os.environ.pop("PTLEAK_DEBUG", None)
        else:
            os.environ["PTLEAK_DEBUG"] = self.old
        return False


class Lines:
    """Lines of a pipe read by a thread, to wait for with a timeout."""

    def __init__(self, f):
        self.q = queue.Queue()
        self.seen = []
        t = threading.Thread(target=self._read, args=(f,), daemon=True)
        t.start()

    def _read(self, f):
        for l in iter(f.readline, b""):
            l = l.decode("utf-8", "replace").rstrip("\n")
            if l.startswith(SNAPSHOT_DIFFERS):
                DIFFERS_SEEN.append(l)
            self.q.put(l)
        self.q.put(None)

    def expect(self, want, timeout=10.0):
        """The next line that matches WANT (a regex); lines before it are
        kept in self.seen.  Fail after TIMEOUT s or at end of file."""
        end = time.time() + timeout
        while True:
            try:
                l = self.q.get(timeout=max(0.01, end - time.time()))
            except queue.Empty:
                raise Fail("no line /%s/ within %g s (got %s)" % (want, timeout, short(self.seen[-5:])))
            if l is None:
                raise Fail("end of output before a line /%s/ (got %s)" % (want, short(self.seen[-5:])))
            self.seen.append(l)
            m = re.fullmatch(want, l)
            if m:
                return m

    def rest(self, timeout=5.0):
        """Every line until end of file."""
        out = []
        end = time.time() + timeout
        while time.time() < end:
            try:
                l = self.q.get(timeout=max(0.01, end - time.time()))
            except queue.Empty:
                break
            if l is None:
                break
            out.append(l)
        return out


class Server:
    """tests/targets/h_server, driven through its stdin and stdout."""

    def __init__(self, launcher=()):
        self.p = subprocess.Popen(list(launcher) + [need_target("h_server")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=target_env(),
                                  start_new_session=True, preexec_fn=_child_setup)
        self.out = Lines(self.p.stdout)
        self.err = Lines(self.p.stderr)

    def send(self, cmd):
        self.p.stdin.write((cmd + "\n").encode())
        self.p.stdin.flush()

    def ping(self, timeout=10.0):
        """(ops, errors) from a ping."""
        self.send("ping")
        m = self.out.expect(r"pong (\d+) (\d+)", timeout)
        return int(m.group(1)), int(m.group(2))

    def quit(self, timeout=30.0):
        """The server's exit status after "quit" (it must say "bye 0")."""
        self.send("quit")
        try:
            self.out.expect(r"bye 0", timeout)
        except Fail as e:	# say where it hangs: a thread left stopped?
            states = "".join(sorted(thread_states(self.p.pid)))
            tracer = tracer_pid(self.p.pid)
            waits = thread_waits(self.p.pid)
            time.sleep(0.2)
            raise Fail("%s; its threads' states %s, TracerPid %s, exit status %s, "
                       "stderr %r; threads (tid state wchan syscall stack): %s"
                       % (e, states, tracer, self.p.poll(),
                          "".join(self.err.seen[-5:]), waits))
        return self.p.wait(timeout=timeout)

    def kill(self):
        reap_group(self.p)


def tracer_pid(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("TracerPid:"):
                return int(l.split()[1])
    return None


def exec_maps(pid):
    """[(start, end, offset, path)] of PID's executable mappings."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for l in f:
            parts = l.split(None, 5)
            start, end = (int(x, 16) for x in parts[0].split("-"))
            if "x" in parts[1]:
                out.append((start, end, int(parts[2], 16), parts[5].strip() if len(parts) > 5 else ""))
    return out


def mapped_files(pid):
    """The sorted names of PID's file-backed mappings (a shared ring on a
    memfd left behind shows as /memfd:...)."""
    with open("/proc/%d/maps" % pid) as f:
        return sorted(set(l.split(None, 5)[5].strip() for l in f
                          if len(l.split(None, 5)) > 5 and l.split(None, 5)[5].startswith("/")))


def code_differences(pid):
    """Where PID's executable file-backed mappings differ from their files
    (a breakpoint left behind), and executable mappings with no file
    (a scratch page left behind)."""
    diffs = []
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
        for start, end, off, path in exec_maps(pid):
            if path in ("[vdso]", "[vsyscall]"):
                continue
            if not path.startswith("/"):
                diffs.append("executable mapping %x-%x with no file (%s)" % (start, end, path or "anon"))
                continue
            with open(path, "rb") as f:
                f.seek(off)
                want = f.read(end - start)
            mem.seek(start)
            got = mem.read(len(want))
            if got != want:
                i = next(k for k in range(len(want)) if got[k] != want[k])
                diffs.append("%s+%#x: %02x, file has %02x" % (os.path.basename(path), off + i, got[i], want[i]))
    return diffs


class Attached:
    """ptleak -p PID running, its JSON and text reports in a temp dir."""

    def __init__(self, pid, opts=(), d=None):
        need_ptleak()
        self.d = d or tempfile.mkdtemp(prefix="ptleak-at.")
        self.json = os.path.join(self.d, "r.json")
        self.txt = os.path.join(self.d, "r.txt")
        for f in (self.json, self.txt):
            if os.path.exists(f):
                os.unlink(f)
        self.cmd = ptleak_cmd() + ["-p", str(pid), "--json", self.json, "-o", self.txt] + list(opts)
        self.p = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=target_env())
        self.err = Lines(self.p.stderr)
        self.err.expect(r"ptleak: attached to process %d \(\d+ threads?\)" % pid, 20)

    def report(self, number, timeout=20.0):
        """The JSON report number NUMBER, once written."""
        end = time.time() + timeout
        while time.time() < end:
            try:
                with open(self.json) as f:
                    rep = json.load(f)
                if rep.get("report", {}).get("number") == number:
                    return check_shape(rep)
            except (FileNotFoundError, ValueError):
                pass
            time.sleep(0.01)
        raise Fail("no JSON report number %d within %g s" % (number, timeout))

    def signal(self, sig):
        self.p.send_signal(sig)

    def wait(self, timeout=30.0):
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise Fail("ptleak did not exit within %g s" % timeout)

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def thread_states(pid):
    """The state letters of PID's threads."""
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                out.append(f.read().rsplit(")", 1)[1].split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def thread_waits(pid):
    """Where PID's threads wait, for a failure's message: per thread its
    state, wchan, /proc/TID/syscall (number, args, sp, pc) and the top
    of its kernel stack."""
    out = []
    for tid in sorted(os.listdir("/proc/%d/task" % pid), key=int):
        d = "/proc/%d/task/%s/" % (pid, tid)
        parts = [tid]
        for name in ("stat", "wchan", "syscall", "stack"):
            try:
                with open(d + name) as f:
                    v = f.read().strip()
            except OSError as e:
                v = "?%s" % e.errno
            if name == "stat":
                v = v.rsplit(")", 1)[1].split()[0] if ")" in v else v
            elif name == "stack":
                v = "|".join(l.split()[-1] for l in v.splitlines()[:4])
            parts.append(v)
        out.append(" ".join(parts))
    return "; ".join(out)


def child_pids(pid):
    """The pids of PID's children (of any of its threads)."""
    out = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def attach_error(ck, pid, want_line, user=None):
    """ptleak -p PID fails with exit 1 and exactly WANT_LINE (a regex)."""
    need_ptleak()
    exe, pre, cwd = PTLEAK, None, None
    if user is not None:
        exe, pre, cwd = user_copy(PTLEAK), as_user(user), user_dir()
    p = subprocess.run([exe, "-p", str(pid)], capture_output=True, text=True,
                       timeout=30, preexec_fn=pre, cwd=cwd)
    ck.eq("exit status of ptleak -p %d" % pid, p.returncode, 1)
    lines = p.stderr.splitlines()
    ck.true("stderr is not one line /%s/: %s" % (want_line, short(lines)),
            len(lines) == 1 and re.fullmatch(want_line, lines[0]))


# ---------------------------------------------------------------------------
# --valgrind: compare with valgrind live

VALGRIND_TARGETS = [
    ("demo", []), ("h_basic", []), ("h_family", ["no-pvalloc"]), ("h_threads", []),
    ("h_cxx", []), ("h_segv", []), ("h_exit_deep", []), ("h_children", []),
    ("h_sighandler", []), ("h_classes", []), ("h_leader_exit", []), ("h_register", []),
    ("h_vector", []),
]
NONDETERMINISTIC_TOTALS = {"h_sighandler"}
VALGRIND_CASES = []	# more (name, fn) pairs for --valgrind, from cases_*.py


_valgrind_numbers = {}


def valgrind_numbers(name, args):
    """valgrind_run of target NAME ARGS, once for all engines."""
    key = (name, tuple(args))
    if key not in _valgrind_numbers:
        _valgrind_numbers[key] = valgrind_run([need_target(name)] + list(args))
    return _valgrind_numbers[key]


def valgrind_run(argv, env=None, cwd=None):
    """valgrind's in-use (bytes, blocks), totals (allocs, frees, bytes) and
    classes for ARGV run in ENV (default target_env()) and CWD."""
    vg = shutil.which("valgrind")
    if not vg:
        raise Fail("valgrind not installed")
    with tempfile.TemporaryDirectory(prefix="ptleak-vg.") as d:
        cmd = [vg, "--leak-check=full", "--show-leak-kinds=all", "--run-libc-freeres=no",
               "--run-cxx-freeres=no", "--log-file=%s/vg.%%p" % d] + list(argv)
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=target_env() if env is None else env,
                             cwd=cwd, start_new_session=True, preexec_fn=_child_setup)
        try:
            p.communicate(timeout=TIMEOUT * 5)
        except subprocess.TimeoutExpired:
            _kill_group(p.pid)
            p.communicate()
            raise Fail("valgrind timed out")
        finally:
            _kill_group(p.pid)
        try:
            with open(os.path.join(d, "vg.%d" % p.pid)) as f:
                log = f.read()
        except FileNotFoundError:
            raise Fail("valgrind wrote no log")
    m = re.search(r"in use at exit: ([\d,]+) bytes in ([\d,]+) blocks", log)
    t = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated", log)
    if not m or not t:
        raise Fail("no HEAP SUMMARY in valgrind's log")
    num = lambda s: int(s.replace(",", ""))
    classes = {}
    for key, words in (("definitely_lost", "definitely lost"), ("indirectly_lost", "indirectly lost"),
                       ("possibly_lost", "possibly lost"), ("still_reachable", "still reachable")):
        c = re.search(words + r": ([\d,]+) bytes in ([\d,]+) blocks", log)
        classes[key] = {"bytes": num(c.group(1)), "blocks": num(c.group(2))} if c else \
            {"bytes": 0, "blocks": 0}
    return (num(m.group(1)), num(m.group(2))), tuple(num(x) for x in t.groups()), classes


def valgrind_case(name, args):
    def fn():
        vin, vtot, vclasses = valgrind_numbers(name, args)
        r = ptleak([need_target(name)] + list(args))
        rep = need_json(r)
        h = rep["heap"]
        ck = Check()
        ck.eq("in use (bytes, blocks) vs valgrind", (h["in_use"]["bytes"], h["in_use"]["blocks"]), vin)
        if name not in NONDETERMINISTIC_TOTALS:
            t = h["totals"]
            ck.eq("totals vs valgrind", (t["allocs"], t["frees"], t["bytes_allocated"]), vtot)
        got = {k: {"bytes": h["summary"][k]["bytes"], "blocks": h["summary"][k]["blocks"]}
               for k in vclasses}
        ck.eq("leak classes vs valgrind", got, vclasses)
        ck.done()
    return fn


# ---------------------------------------------------------------------------

# The case files that come first, in this order (the order their cases
# ran in when they were in this file); every other cases_*.py follows in
# name order.
FIRST_CASE_FILES = ["cases_heap.py", "cases_fds.py", "cases_cli.py", "cases_attach.py"]


def load_case_files():
    """The cases, kept in tests/integration/cases_*.py: each file is run in
    this module's namespace (so it uses case(), ptleak(), Check... and what
    the files before it define), FIRST_CASE_FILES first."""
    here = os.path.dirname(os.path.abspath(__file__))
    rest = sorted(fn for fn in os.listdir(here) if fn.startswith("cases_")
                  and fn.endswith(".py") and fn not in FIRST_CASE_FILES)
    for fn in FIRST_CASE_FILES + rest:
        path = os.path.join(here, fn)
        with open(path, encoding="utf-8") as f:
            exec(compile(f.read(), path, "exec"), globals())


def cpu_hogs(n):
    """N busy-loop processes (to run the cases under CPU load); a list of
    Popen objects for stop_hogs()."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             stdin=subprocess.DEVNULL, start_new_session=True)
            for _ in range(n)]


def stop_hogs(hogs):
    for h in hogs:
        _kill_group(h.pid)
        h.wait()


def run_cases(cases, label, repeat=1):
    """Run every case REPEAT times in a row; with REPEAT > 1 a line per
    case that ever failed says how often, and a case counts as failed if
    any of its runs failed."""
    passed = failed = skipped = 0
    fails = {}
    for name, fn in [c for c in cases for _ in range(repeat)]:
        del DIFFERS_SEEN[:]
        try:
            fn()
            if DIFFERS_SEEN:
                raise Fail("%d snapshot check(s) failed: %s" % (len(DIFFERS_SEEN),
                                                              short(DIFFERS_SEEN)))
        except Skip as e:
            print("SKIP %s: %s" % (name, e), flush=True)
            skipped += 1
        except Fail as e:
            print("FAIL %s: %s" % (name, e), flush=True)
            failed += 1
            fails[name] = fails.get(name, 0) + 1
        except Exception as e:	# a bug here, or a report shaped unexpectedly
            tb = traceback.extract_tb(sys.exc_info()[2])[-1]
            print("FAIL %s: internal error %s: %s (%s line %d)" % (
                name, type(e).__name__, e, os.path.basename(tb.filename), tb.lineno), flush=True)
            if VERBOSE:
                traceback.print_exc(file=sys.stdout)
            failed += 1
            fails[name] = fails.get(name, 0) + 1
        else:
            print("PASS %s" % name, flush=True)
            passed += 1
    if repeat > 1:
        for name, n in sorted(fails.items()):
            print("FLAKY %s: failed %d of %d runs" % (name, n, repeat), flush=True)
        runs = len(cases)
        failed = len(fails)
        passed = runs - failed - (skipped // repeat)
        skipped //= repeat
    print("%s: %d passed, %d failed%s" % (label, passed, failed,
                                         ", %d skipped" % skipped if skipped else ""), flush=True)
    return failed


def main():
    global BUILD, PTLEAK, TIMEOUT, VERBOSE
    ap = argparse.ArgumentParser(description="ptleak integration tests")
    ap.add_argument("build_dir")
    ap.add_argument("-k", dest="substring", default="", help="only cases whose name contains this")
    ap.add_argument("--valgrind", action="store_true",
                    help="compare with valgrind live instead (not part of check)")
    ap.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per run (default 60)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each case N times in a row (flake hunting)")
    ap.add_argument("--engine", choices=ALL_ENGINES,
                    help="only the variants of the heap cases for this engine")
    ap.add_argument("--hogs", type=int, default=0,
                    help="keep N busy loops running meanwhile (CPU load)")
    a = ap.parse_args()
    BUILD = os.path.abspath(a.build_dir)
    PTLEAK = os.path.abspath(os.environ.get("PTLEAK") or os.path.join(BUILD, "ptleak"))
    TIMEOUT = a.timeout
    VERBOSE = a.verbose
    # ptleak's unwind-table cache: the build's, not the user's
    os.environ.setdefault("PTLEAK_CACHE_DIR", os.path.join(BUILD, "cache"))
    # live reports checked against held ones (DEBUG_DEFAULT)
    os.environ.setdefault("PTLEAK_DEBUG", DEBUG_DEFAULT)
    load_case_files()
    if a.valgrind:
        cases = [("valgrind:" + n, valgrind_case(n, args), True) for n, args in VALGRIND_TARGETS]
        cases += [(n, f, True) for n, f in VALGRIND_CASES]
        label = "valgrind"
    else:
        cases = CASES
        label = "integration"
    cases = [(n, f) for n, f in expand_engines(cases, a.engine) if a.substring in n]
    hogs = cpu_hogs(a.hogs)
    try:
        return 1 if run_cases(cases, label, max(1, a.repeat)) else 0
    finally:
        stop_hogs(hogs)


if __name__ == "__main__":
    sys.exit(main())
