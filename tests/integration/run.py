#!/usr/bin/env python3
"""Integration tests of ptleak: run it on the programs of tests/targets and
check exact numbers (measured with valgrind, see each case).

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
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC_DIR = os.path.join(ROOT, "tests", "targets")

BUILD = None		# absolute BUILD_DIR
PTLEAK = None		# the ptleak binary under test
TIMEOUT = 60		# seconds per process run; a timeout is a failure
VERBOSE = False

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

# Kinds of record ("kind" in JSON) and their words in the text report.
KIND_WORDS = {
    "definitely_lost": "definitely lost",
    "indirectly_lost": "indirectly lost",
    "possibly_lost": "possibly lost",
    "still_reachable": "still reachable",
    "unclassified": "unclassified",
}
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
    return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


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


def need_json(r):
    if r.json is None:
        raise Fail("%s (exit %d; stderr: %s)" % (r.json_error, r.rc, short(r.stderr.strip()[-500:], 500)))
    return check_shape(r.json)


def expected_text(name, rep_in_use, totals, peak, records):
    """The text report: list of exact strings or ('re', pattern)."""
    lines = ["HEAP SUMMARY:",
             "    in use at exit: %s bytes in %s" % (fmt(rep_in_use[0]), blocks(rep_in_use[1])),
             "  total heap usage: %s allocs, %s frees, %s bytes allocated" % tuple(fmt(x) for x in totals),
             "  peak: %s bytes in use" % fmt(peak),
             ""]
    recs = sorted(records, key=lambda e: (e.bytes, e.blocks), reverse=True)
    for i, e in enumerate(recs, 1):
        lines.append("%s bytes in %s are %s in loss record %d of %d" % (
            fmt(e.bytes), blocks(e.blocks), KIND_WORDS[e.kind], i, len(recs)))
        lines.append(("re", r"   at 0x[0-9a-f]+: %s \(.*\)" % re.escape(e.allocator)))
        for f in e.head:
            lines.append(("re", r"   by 0x[0-9a-f]+: %s \(%s:%d\)" % (
                re.escape(f.function), re.escape(os.path.basename(source_path(name))),
                line(name, f.marker))))
        lines.append("")
    lines.append("LEAK SUMMARY:")
    for c, label in ((DEF, "   definitely lost"), (IND, "   indirectly lost"),
                     (POS, "     possibly lost"), (REACH, "   still reachable")):
        b = sum(e.bytes for e in records if e.kind == c)
        n = sum(e.blocks for e in records if e.kind == c)
        lines.append("%s: %s bytes in %s" % (label, fmt(b), blocks(n)))
    b = sum(e.bytes for e in records if e.kind == U)
    n = sum(e.blocks for e in records if e.kind == U)
    if n:
        lines.append(("re", r"      unclassified: %s bytes in %s( \(.*\))?" % (
            re.escape(fmt(b)), re.escape(blocks(n)))))
    else:
        lines.append("        suppressed: 0 bytes in 0 blocks")
    return lines


def check_text(ck, where, text, pid, expected):
    got = report_lines(text)
    if not got:
        ck.err("%s: no 'ptleak[PID]: ' report lines (%s)" % (where, short((text or "").strip()[-300:])))
        return
    pids = sorted(set(p for p, _ in got))
    ck.eq("%s: PID of the report lines" % where, pids, [pid])
    content = [c for _, c in got]
    if "HEAP SUMMARY:" not in content:
        ck.err("%s: no HEAP SUMMARY: line" % where)
        return
    content = content[content.index("HEAP SUMMARY:"):]
    for i, want in enumerate(expected):
        g = content[i] if i < len(content) else None
        if isinstance(want, tuple):
            ok = g is not None and re.fullmatch(want[1], g)
            want_s = "/%s/" % want[1]
        else:
            ok = g == want
            want_s = repr(want)
        if not ok:
            ck.err("%s: report line %d is %s, want %s" % (where, i + 1, short(g, 120), want_s))
            return
    for g in content[len(expected):]:
        if re.search(r"bytes in [\d,]+ blocks? are ", g):
            ck.err("%s: extra record line after LEAK SUMMARY: %r" % (where, g))
            return


def run_heap(name, args=(), in_use=None, totals=None, peak=None, records=(), exit=0,
             opts=(), native=True, normalize=None, text=False, env=None, exhaustive=True):
    """The skeleton of a heap case: ptleak [OPTS] TARGET ARGS, then the
    target's stdout and status as natively (unless NATIVE is false), exit
    status EXIT (128+N: signal N), the JSON's target and heap part
    (check_heap: IN_USE, TOTALS, PEAK, RECORDS, all of the records when
    EXHAUSTIVE; TOTALS may be a function of the Result).  Returns (ck, r, rep) for what the case checks more;
    the case ends with ck.done()."""
    tgt = need_target(name)
    argv = [tgt] + list(args)
    r = ptleak(argv, opts=opts, want_text=text, env=env)
    ck = Check()
    if native:
        check_native(ck, name, list(args), r, normalize)
    ck.eq("exit status", r.rc, exit)
    rep = need_json(r)
    check_target(ck, rep, argv, exit_json(exit))
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
# Test cases

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


def h_basic_records(kinds):
    return [
        Rec("big", 1000, 1, "malloc", kinds["big"],
            [T("leak_big", "big"), T("main", "call_big")], exact=True),
        Rec("table", 300, 1, "calloc", kinds["table"],
            [T("leak_table", "table"), T("main", "call_table")], exact=True),
        Rec("grow", 200, 1, "realloc", kinds["grow"],
            [T("grow_buffer", "grow"), T("main", "call_grow")], exact=True),
        Rec("twice", 128, 2, "malloc", kinds["twice"],
            [T("leak_twice", "twice"), T("main", "call_twice")], exact=True),
        Rec("level3", 24, 1, "malloc", kinds["level3"],
            [T("level3", "level3"), T("level2", "level2"), T("level1", "level1"),
             T("main", "call_level1")], exact=True),
    ]


# valgrind (stdout to a pipe/file, --run-libc-freeres=no):
#   in use at exit: 1,652 bytes in 6 blocks
#   total heap usage: 1,109 allocs, 1,103 frees, 66,804 bytes allocated
#   definitely lost: 1,652 bytes in 6 blocks (every record)
# peak (massif, and gdb counting like ptleak): 1,652
H_BASIC = dict(in_use=(1652, 6), totals=(1109, 1103, 66804), peak=1652)


@case("h_basic", engines=True)
def t_h_basic():
    """JSON records in full and the text report line for line."""
    name = "h_basic"
    # Kinds: the one place to change when the reachability scan lands
    # (valgrind: all definitely lost).
    kinds = dict(big=DEF, table=DEF, grow=DEF, twice=DEF, level3=DEF)
    recs = h_basic_records(kinds)
    ck, r, rep = run_heap(name, records=recs, text=True, **H_BASIC)
    if r.text is None:
        ck.err("-o FILE: no text report file written")
    else:
        check_text(ck, "-o file", r.text, rep["target"]["pid"],
                   expected_text(name, H_BASIC["in_use"], H_BASIC["totals"], H_BASIC["peak"], recs))
    ck.done()


@case("h_basic_stderr", engines=True)
def t_h_basic_stderr():
    """Without -o the text report goes to stderr."""
    name = "h_basic"
    kinds = dict(big=DEF, table=DEF, grow=DEF, twice=DEF, level3=DEF)
    recs = h_basic_records(kinds)
    tgt = need_target(name)
    r = ptleak([tgt])
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    check_text(ck, "stderr", r.stderr, rep["target"]["pid"],
               expected_text(name, H_BASIC["in_use"], H_BASIC["totals"], H_BASIC["peak"], recs))
    ck.done()


@case("output_file", engines=True)
def t_output_file():
    """-o FILE: the report goes to FILE, stderr has none of it."""
    name = "h_basic"
    tgt = need_target(name)
    r = ptleak([tgt], want_json=False, want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    if r.text is None:
        ck.err("no text report file written")
    else:
        c = [x for _, x in report_lines(r.text)]
        ck.true("report file has no HEAP SUMMARY: (%s)" % short(r.text[-300:]), "HEAP SUMMARY:" in c)
        ck.true("report file has no 'in use at exit: 1,652 bytes in 6 blocks'",
                "    in use at exit: 1,652 bytes in 6 blocks" in c)
    ck.eq("report lines on stderr", [x for _, x in report_lines(r.stderr)], [])
    ck.true("stderr mentions HEAP SUMMARY", "HEAP SUMMARY" not in r.stderr)
    ck.done()


@case("quiet")
def t_quiet():
    """-q: nothing on stderr but the report."""
    name = "h_basic"
    tgt = need_target(name)
    r = ptleak([tgt], opts=["-q"], want_json=False)
    ck = Check()
    check_native(ck, name, [], r)
    other = [l for l in r.stderr.splitlines() if not re.match(r"ptleak\[\d+\]:( |$)", l)]
    ck.eq("stderr lines other than the report", other, [])
    ck.true("no HEAP SUMMARY: on stderr", any(c == "HEAP SUMMARY:" for _, c in report_lines(r.stderr)))
    ck.done()


@case("depth_2", engines=True)
def t_depth_2():
    """--depth 2: every stack is the allocator and its caller."""
    name = "h_basic"
    tgt = need_target(name)
    r = ptleak([tgt], opts=["--depth", "2"])
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    # kind None: kinds are checked by the h_basic case
    recs = [
        Rec("big", 1000, 1, "malloc", None, [T("leak_big", "big")], exact=True),
        Rec("table", 300, 1, "calloc", None, [T("leak_table", "table")], exact=True),
        Rec("grow", 200, 1, "realloc", None, [T("grow_buffer", "grow")], exact=True),
        Rec("twice", 128, 2, "malloc", None, [T("leak_twice", "twice")], exact=True),
        Rec("level3", 24, 1, "malloc", None, [T("level3", "level3")], exact=True),
    ]
    # --depth counts the allocator's own frame (the text's "at" line), which
    # the JSON stack leaves to "allocator": one caller remains
    for rr in rep["heap"]["records"]:
        ck.eq("JSON stack length of the %d-byte record" % rr["bytes"], len(rr["stack"]), 1)
    check_heap(ck, name, rep, H_BASIC["in_use"], H_BASIC["totals"], H_BASIC["peak"], recs,
               lib_of(name, "libc.so.6"), depth=2, check_summary=False)
    ck.done()


# valgrind: in use at exit: 4,279 bytes in 5 blocks
#           total heap usage: 209 allocs, 204 frees, 22,886 bytes allocated
#           definitely lost 183 bytes in 4 blocks, still reachable 4,096 (stdout)
# peak: 4,279
DEMO_KINDS = dict(stdout_buf=REACH, table=DEF, append=DEF, greeting=DEF, owner=DEF)
# valgrind: stdout_buf still_reachable, the rest definitely_lost
heap_case("demo", in_use=(4279, 5), totals=(209, 204, 22886), peak=4279, records=[
    stdout_buffer(DEMO_KINDS["stdout_buf"]),
    Rec("table", 128, 1, "calloc", DEMO_KINDS["table"], [T("main", "table")], exact=True),
    Rec("append", 30, 1, "realloc", DEMO_KINDS["append"],
        [T("append_word", "append"), T("main", "call_append")], exact=True),
    Rec("greeting", 14, 1, "malloc", DEMO_KINDS["greeting"],
        [T("make_greeting", "greeting"), T("main", "call_greeting")], exact=True),
    Rec("owner", 11, 1, "malloc", DEMO_KINDS["owner"],
        [L({"strdup", "__strdup"}, "libc.so.6"), T("main", "owner")], exact=True),
])


# valgrind, on `h_family no-pvalloc` (valgrind aborts at pvalloc):
#   in use at exit: 720 bytes in 9 blocks
#   total heap usage: 23 allocs, 14 frees, 5,043 bytes allocated
#   every block definitely lost
# plus the two pvalloc calls (from the source; gdb counting agrees):
# pvalloc(4096) freed, pvalloc(8192) leaked: +2 allocs, +1 free,
# +12,288 bytes.  Failed calls (malloc(PTRDIFF_MAX), calloc overflow,
# posix_memalign EINVAL, reallocarray overflow, realloc to a huge size)
# are not counted.  peak: 8,912 (at exit).
def h_family_records():
    k = {x: DEF for x in ["malloc", "calloc", "realloc", "reallocarray", "realloc_fail",
                        "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc"]}
    # valgrind: all definitely_lost

    def leak(key, nbytes, allocator):
        return Rec(key, nbytes, 1, allocator, k[key], [T("leaks", key), T("main", "call_leaks")],
                   exact=True)
    return [
        leak("pvalloc", 8192, "pvalloc"),
        leak("aligned_alloc", 256, MEMALIGN_NAMES),
        leak("valloc", 123, "valloc"),
        leak("memalign", 99, MEMALIGN_NAMES),
        leak("posix_memalign", 77, "posix_memalign"),
        Rec("realloc_fail", 55, 1, "malloc", k["realloc_fail"],
            [T("failed_realloc", "realloc_fail"), T("main", "call_failed_realloc")], exact=True),
        leak("reallocarray", 45, "reallocarray"),
        leak("realloc", 33, "realloc"),
        leak("calloc", 21, "calloc"),
        leak("malloc", 11, "malloc"),
    ]


heap_case("h_family", in_use=(8912, 10), totals=(25, 15, 17331), peak=8912,
          records=h_family_records())


def threads_expect(n, m):
    """h_threads N M: N*M work pairs, N leaks of 100+t bytes, N DTVs of 272
    bytes (glibc's pthread_create, never freed), the stdout buffer."""
    work = sum(1 + (i * 37 + t * 101) % 1024 for t in range(n) for i in range(m))
    leaks = sum(100 + t for t in range(n))
    in_use = (leaks + 272 * n + 4096, 2 * n + 1)
    totals = (n * m + 2 * n + 1, n * m, work + leaks + 272 * n + 4096)
    return in_use, totals, leaks


# valgrind, h_threads 8 10000:
#   in use at exit: 7,100 bytes in 17 blocks
#   total heap usage: 80,017 allocs, 80,000 frees, 41,008,060 bytes allocated
#   thread_leak 828 bytes in 8 blocks definitely lost; pthread_create's
#   DTVs 2,176 bytes in 8 blocks possibly lost; stdout 4,096 reachable
# peak depends on the interleaving: between 7,100 and 7,100 + 8 * 1,024.
H_THREADS_IN_USE, H_THREADS_TOTALS, H_THREADS_LEAKS = threads_expect(8, 10000)
assert H_THREADS_IN_USE == (7100, 17) and H_THREADS_TOTALS == (80017, 80000, 41008060)
H_THREADS_KINDS = dict(stdout_buf=REACH, dtv=POS, thread_leak=DEF)
# valgrind: stdout_buf still_reachable, dtv possibly_lost, thread_leak definitely_lost
heap_case("h_threads", args=["8", "10000"], in_use=H_THREADS_IN_USE, totals=H_THREADS_TOTALS,
          peak=(H_THREADS_IN_USE[0], H_THREADS_IN_USE[0] + 8 * 1024), records=[
    stdout_buffer(H_THREADS_KINDS["stdout_buf"]),
    Rec("dtv", 272 * 8, 8, "calloc", H_THREADS_KINDS["dtv"], tail=[T("main", "pthread_create")]),
    # one stack for all threads: one record of 8 blocks (different sizes)
    Rec("thread_leak", H_THREADS_LEAKS, 8, "malloc", H_THREADS_KINDS["thread_leak"],
        [T("thread_leak", "thread_leak"), T("worker", "call_thread_leak")]),
])


# valgrind:
#   in use at exit: 76,896 bytes in 4 blocks
#   total heap usage: 39 allocs, 35 frees, 90,333 bytes allocated
#   definitely lost: 96 bytes in 2 blocks (new int[10], new Widget)
#   still reachable: 76,800 bytes in 2 blocks (libstdc++'s 72,704-byte
#   emergency pool, allocated by its constructor before main; stdout)
# peak (massif, gdb): 78,949, while the vector grows to 1,024 ints.
H_CXX_KINDS = dict(pool=REACH, stdout_buf=REACH, widget=DEF, array=DEF)
# valgrind: pool and stdout_buf still_reachable, widget and array definitely_lost
CXX = "libstdc++.so.6"


def h_cxx_new_array(ck, r, rep):
    for rr in rep["heap"]["records"]:
        if rr["bytes"] == 40:
            fns = [f.get("function") for f in rr["stack"][:-2]]
            ck.true("new[] record: frames between malloc and main are not operator new: %s" % fns,
                    all(f in (OPNEW, OPNEW_ARRAY) for f in fns))


heap_case("h_cxx", in_use=(76896, 4), totals=(39, 35, 90333), peak=78949, records=[
    Rec("pool", 72704, 1, "malloc", H_CXX_KINDS["pool"], [L(None, CXX)]),
    stdout_buffer(H_CXX_KINDS["stdout_buf"]),
    Rec("widget", 56, 1, "malloc", H_CXX_KINDS["widget"],
        [L(OPNEW, CXX), T("make_widget(int)", "new_widget"),
         T("leak_some()", "call_make_widget"), T("main", "call_leaks")],
        exact=True),
    # operator new[] tail-calls operator new: its frame may not be there
    Rec("array", 40, 1, "malloc", H_CXX_KINDS["array"], [L({OPNEW, OPNEW_ARRAY}, CXX)],
        tail=[T("leak_some()", "new_array"), T("main", "call_leaks")], maxlen=5),
], extra=h_cxx_new_array)


# valgrind (the program dies of SIGSEGV):
#   in use at exit: 4,696 bytes in 4 blocks
#   total heap usage: 54 allocs, 50 frees, 10,921 bytes allocated
#   definitely lost 500 bytes in 2 blocks; still reachable 4,196 in 2
#   (stdout and the calloc'd block main still points to)
# peak: 4,696 (at death)
H_SEGV_KINDS = dict(stdout_buf=REACH, leak300=DEF, leak200=DEF, calloc=REACH)
# valgrind: stdout_buf and calloc still_reachable, leak300/leak200 definitely_lost


def h_segv_text(ck, r, rep):
    c = [x for _, x in report_lines(r.stderr)]
    ck.true("no text report on stderr", "HEAP SUMMARY:" in c)
    ck.true("text report lacks 'in use at exit: 4,696 bytes in 4 blocks'",
            "    in use at exit: 4,696 bytes in 4 blocks" in c)


heap_case("h_segv", exit=139, in_use=(4696, 4), totals=(54, 50, 10921), peak=4696, records=[
    stdout_buffer(H_SEGV_KINDS["stdout_buf"]),
    Rec("leak300", 300, 1, "malloc", H_SEGV_KINDS["leak300"],
        [T("leak", "segv_leak"), T("main", "call_leak300")], exact=True),
    Rec("leak200", 200, 1, "malloc", H_SEGV_KINDS["leak200"],
        [T("leak", "segv_leak"), T("main", "call_leak200")], exact=True),
    Rec("calloc", 100, 1, "calloc", H_SEGV_KINDS["calloc"], [T("main", "segv_calloc")], exact=True),
], extra=h_segv_text)


# valgrind (exit(3) five calls deep):
#   in use at exit: 4,863 bytes in 4 blocks
#   total heap usage: 24 allocs, 20 frees, 6,783 bytes allocated
#   definitely lost 250 bytes in 1 block; still reachable 4,613 in 3
#   (stdout, the strdup kept in a global, the 500 bytes depth5 holds)
# peak: 4,863
H_EXIT_DEEP_KINDS = dict(stdout_buf=REACH, deep=REACH, main_leak=DEF, strdup=REACH)
# valgrind: main_leak definitely_lost, the rest still_reachable
heap_case("h_exit_deep", exit=3, in_use=(4863, 4), totals=(24, 20, 6783), peak=4863, records=[
    stdout_buffer(H_EXIT_DEEP_KINDS["stdout_buf"]),
    Rec("deep", 500, 1, "malloc", H_EXIT_DEEP_KINDS["deep"],
        [T("depth5", "deep_leak"), T("depth4", "d4"), T("depth3", "d3"), T("depth2", "d2"),
         T("depth1", "d1"), T("main", "call_depth1")], exact=True),
    Rec("main_leak", 250, 1, "malloc", H_EXIT_DEEP_KINDS["main_leak"], [T("main", "main_leak")],
        exact=True),
    Rec("strdup", 17, 1, "malloc", H_EXIT_DEEP_KINDS["strdup"],
        [L({"strdup", "__strdup"}, "libc.so.6"), T("main", "strdup")], exact=True),
])


# The executable defines malloc/calloc/realloc/free: the first definer in
# link-map order, so libc's own allocations (the stdout buffer) are its
# too.  Their -O2 entries are rip-relative (mov top(%rip),%rax): executed
# out of line from a scratch page mapped near the executable.  valgrind
# replaces these functions, so the numbers come from the source:
# 100 malloc(32)+free, 2 x keep(40), calloc(3, 10) realloc'd to 50 (its
# inner malloc and free are nested, not counted), the stdout buffer.
H_OWN_KINDS = dict(stdout_buf=REACH, own=DEF, realloc=REACH)
# keep()'s blocks are dropped; the realloc'd one is in a global
heap_case("h_own_malloc", in_use=(4226, 4), totals=(105, 101, 7456), peak=4226, records=[
    Rec("stdout_buf", 4096, 1, "malloc", H_OWN_KINDS["stdout_buf"],
        tail=[T("main", "own_printf")]),
    Rec("realloc", 50, 1, "realloc", H_OWN_KINDS["realloc"],
        [T("main", "own_realloc")], exact=True),
    Rec("keep1", 40, 1, "malloc", H_OWN_KINDS["own"],
        [T("keep", "own_leak"), T("main", "own_keep1")], exact=True),
    Rec("keep2", 40, 1, "malloc", H_OWN_KINDS["own"],
        [T("keep", "own_leak"), T("main", "own_keep2")], exact=True),
])


# The executable's malloc leaves by longjmp for 13 bytes: ten hijacked
# returns are never taken, and the malloc(24) that follows each one,
# from the same frame, reuses the return slot.  From the source: ten
# 24-byte blocks, the stdout buffer, nothing freed.
heap_case("h_longjmp", in_use=(4336, 11), totals=(11, 0, 4336), peak=4336, records=[
    Rec("stdout_buf", 4096, 1, "malloc", REACH, tail=[T("main", "jmp_printf")]),
    Rec("after_jump", 240, 10, "malloc", DEF, [T("main", "after_jump")], exact=True),
])


# valgrind (exit(5) while three threads are blocked in pause()):
#   in use at exit: 1,043 bytes in 7 blocks
#   total heap usage: 7 allocs, 0 frees, 1,043 bytes allocated
#   77 still reachable (main), 150 in 3 still reachable (threads),
#   816 in 3 possibly lost (pthread_create's DTVs)
heap_case("h_exit_threads", exit=5, in_use=(1043, 7), totals=(7, 0, 1043), peak=1043, records=[
    Rec("dtv", 816, 3, "calloc", POS, tail=[T("main", "create")]),
    Rec("thread_leak", 150, 3, "malloc", REACH, [T("blocked", "thread_leak")]),
    Rec("main_leak", 77, 1, "malloc", REACH, [T("main", "main_leak")], exact=True),
])


# valgrind (main calls pthread_exit; three workers go on, 1,000 pairs
# each, and return malloc(33)):
#   in use at exit: 5,041 bytes in 12 blocks
#   total heap usage: 3,013 allocs, 3,001 frees, 183,549 bytes allocated
# pthread_exit dlopens libgcc_s (2,304 + 1,238 + 456 + 56 + 36 + 36
# bytes in 6 blocks), the DTVs 816 in 3, the workers' 99 in 3.
# valgrind: 2,304 and the DTVs possibly lost, the rest still reachable
# (the exited main thread's stack is dead memory, as in valgrind)
heap_case("h_leader_exit", in_use=(5041, 12), totals=(3013, 3001, 183549), peak=None, records=[
    Rec("dlopen_%d" % i, b, 1, {"malloc", "calloc"}, POS if b == 2304 else REACH)
    for i, b in enumerate((2304, 1238, 456, 56, 36, 36))] + [
    Rec("dtv", 816, 3, "calloc", POS, tail=[T("main", "create")]),
    Rec("worker_leak", 99, 3, "malloc", REACH, [T("work", "worker_leak")]),
])


def greeting_frames(rep, module):
    """Frames 1.. of demo's make_greeting record (14 bytes, 1 block)."""
    for rec in rep["heap"]["records"]:
        if rec["bytes"] == 14 and rec["blocks"] == 1:
            return [(f["function"], f["file"], f["line"], f["module"]) for f in rec["stack"]]
    raise Fail("no 14-byte record (make_greeting) in the report")


@case("debuglink", engines=True)
def t_debuglink():
    """Debug info in a separate file found by .gnu_debuglink (and by
    build-id under a debug directory); a stripped object gives function
    (object) without lines."""
    if not shutil.which("objcopy"):
        raise Skip("objcopy missing")
    src = need_target("demo")
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        linked = os.path.join(d, "demo_linked")
        stripped = os.path.join(d, "demo_stripped")
        for cmd in (["objcopy", "--only-keep-debug", src, linked + ".debug"],
                    ["objcopy", "--strip-debug", "--add-gnu-debuglink=" + linked + ".debug",
                     src, linked],
                    ["objcopy", "--strip-debug", src, stripped]):
            if subprocess.run(cmd).returncode != 0:
                raise Fail("%s failed" % " ".join(cmd))
        os.chmod(linked, 0o755)
        os.chmod(stripped, 0o755)
        r = ptleak([linked])
        ck.eq("frames with a debuglink", greeting_frames(need_json(r), linked),
              [("make_greeting", "demo.c", line("demo", "greeting"), linked),
               ("main", "demo.c", line("demo", "call_greeting"), linked)])
        r = ptleak([stripped])
        rep = need_json(r)
        ck.eq("frames without debug info", greeting_frames(rep, stripped),
              [("make_greeting", None, None, stripped), ("main", None, None, stripped)])
        r = ptleak([stripped], want_json=False, want_text=True)
        want = "   by 0x[0-9a-f]+: make_greeting \\(demo_stripped\\)$"
        ck.true("text frame 'make_greeting (demo_stripped)' missing",
                any(re.search(want, l) for l in (r.text or "").splitlines()))
    ck.done()


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
            live = None
            for _ in range(500):
                if os.path.exists(js):
                    with open(js) as f:
                        live = json.load(f)
                    break
                time.sleep(0.01)
            if live is None:
                raise Fail("no JSON report 5 s after SIGUSR1")
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
            open(go, "w").close()
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        ck.eq("exit status", p.returncode, 0)
        ck.eq("stderr", err, b"")
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


@case("unwritable_output")
def t_unwritable_output():
    """-o or --json into a missing directory: one line, exit 1, and the
    target never runs."""
    tgt = need_target("demo")
    ck = Check()
    for opts in (["-o", "/nonexistent-dir/r.txt"], ["--json", "/nonexistent-dir/r.json"]):
        r = ptleak([tgt], opts=opts, want_json=False)
        ck.eq("%s: exit status" % opts[0], r.rc, 1)
        ck.eq("%s: stdout (the target must not run)" % opts[0], r.stdout, "")
        ck.eq("%s: stderr" % opts[0], r.stderr,
              "ptleak: cannot write %s: No such file or directory\n" % opts[1])
    ck.done()


@case("h_daemon", engines=True)
def t_h_daemon():
    """The parent exits at once after fork (daemon(3)); the child must be
    released before ptleak exits and live on: it creates a file 0.3 s
    later.  From the source: the parent's 64 bytes."""
    name = "h_daemon"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        flag = os.path.join(d, "child-was-here")
        r = ptleak([tgt, flag])
        ck.eq("exit status", r.rc, 0)
        rep = need_json(r)
        check_target(ck, rep, [tgt, flag], {"code": 0})
        check_heap(ck, name, rep, (64, 1), (1, 0, 64), 64,
                   # held by main's live frame when the parent _exits
                   [Rec("parent", 64, 1, "malloc", REACH, [T("main", "parent_leak")], exact=True)],
                   lib_of(name, "libc.so.6"))
        for _ in range(300):
            if os.path.exists(flag):
                break
            time.sleep(0.01)
        ck.true("the forked child did not survive ptleak's exit", os.path.exists(flag))
    ck.done()


# clone(CLONE_VM | SIGCHLD) is reported as a fork but shares memory: the
# target's breakpoints stay.  From the source: 1,001 before, 2,002 after,
# the stdout buffer; the child's malloc/free is not recorded (a child
# sharing the memory runs traced but unrecorded).
# The child's free(malloc(10)) runs in the target's heap: the recorder's
# hooks see it (it cannot tell the child from its parent); the breakpoint
# engine steps over a memory-sharing child's calls unrecorded.
heap_case("h_clone_vm", in_use=(7099, 3),
          totals={"recorder": (4, 1, 7109), None: (3, 0, 7099)}, peak=7099, records=[
    stdout_buffer(REACH, "printf"),
    # held only by main's frame, dead when exit() runs
    Rec("after", 2002, 1, "malloc", DEF, [T("main", "after")], exact=True),
    Rec("before", 1001, 1, "malloc", DEF, [T("main", "before")], exact=True),
])


# A non-leader thread execs: tracing starts over in the new image (the
# old image's blocks went with it) and the report is made at the new
# image's exit, after one of its threads came and went.  From the
# source: 4,242 leaked, a DTV of 272 bytes, the stdout buffer.
heap_case("h_exec_thread", in_use=(8610, 3), totals=(3, 0, 8610), peak=8610, records=[
    Rec("new_image", 4242, 1, "malloc", DEF, [T("main", "new_image_leak")], exact=True),
    stdout_buffer(REACH, "printf"),
    Rec("dtv", 272, 1, "calloc", POS),
])


def classes_records():
    # valgrind --leak-check=full --show-leak-kinds=all, h_classes:
    #   96 (32 direct, 64 indirect) bytes in 1 blocks are definitely lost
    #   64 bytes in 2 blocks are indirectly lost   (the list's other nodes)
    #   300 bytes in 1 blocks are possibly lost    (interior pointer only)
    #   still reachable: 100 (global), 200 (TLS), 16 and 50 (held by a
    #   reachable block)
    return [
        Rec("list_head", 96, 1, "malloc", DEF, [T("lose_list", "list_node"), T("main", "call_list")],
            exact=True, indirect=64),
        Rec("list_nodes", 64, 2, "malloc", IND, [T("lose_list", "list_node"), T("main", "call_list")],
            exact=True),
        Rec("interior", 300, 1, "malloc", POS, [T("main", "interior")], exact=True),
        Rec("tls", 200, 1, "malloc", REACH, [T("main", "tls")], exact=True),
        Rec("global", 100, 1, "malloc", REACH, [T("main", "global")], exact=True),
        Rec("chained", 50, 1, "malloc", REACH, [T("main", "chained")], exact=True),
        Rec("chain", 16, 1, "malloc", REACH, [T("main", "chain")], exact=True),
    ]


@case("h_classes", engines=True)
def t_h_classes():
    """Each class as valgrind gives it: a lost list (head definitely lost
    with its nodes' bytes as indirect), an interior pointer, blocks held by
    a global, by TLS, by a reachable block."""
    ck, r, rep = run_heap("h_classes", in_use=(762, 8), totals=(8, 0, 762), peak=762,
                          records=classes_records())
    # the summary counts direct bytes: 32 definitely lost, not 96
    h = rep["heap"]
    ck.eq("summary", {k: h["summary"][k] for k in SUMMARY_CLASSES},
          {DEF: {"bytes": 32, "blocks": 1}, IND: {"bytes": 64, "blocks": 2},
           POS: {"bytes": 300, "blocks": 1}, REACH: {"bytes": 366, "blocks": 4}})
    for rec in h["records"]:
        if rec["kind"] == DEF:
            ck.eq("definitely lost record direct/indirect",
                  (rec["bytes"], rec["direct_bytes"], rec["indirect_bytes"]), (96, 32, 64))
    ck.done()


@case("reachable_hidden", engines=True)
def t_reachable_hidden():
    """Without --show-reachable the still reachable records are not
    listed (text or JSON) but the summary counts them; the loss record
    numbers count them too."""
    name = "h_classes"
    tgt = need_target(name)
    r = ptleak([tgt], want_text=True, show_reachable=False)
    ck = Check()
    rep = need_json(r)
    kinds = sorted(rec["kind"] for rec in rep["heap"]["records"])
    ck.eq("listed kinds", kinds, [DEF, IND, POS])
    ck.eq("summary still reachable", rep["heap"]["summary"][REACH], {"bytes": 366, "blocks": 4})
    heads = [l.split(": ", 1)[1] for l in (r.text or "").splitlines() if " are " in l]
    ck.eq("text records", heads, [
        "300 bytes in 1 block are possibly lost in loss record 1 of 7",
        "96 (32 direct, 64 indirect) bytes in 1 block are definitely lost in loss record 4 of 7",
        "64 bytes in 2 blocks are indirectly lost in loss record 5 of 7"])
    ck.done()


@case("no_scan", engines=True)
def t_no_scan():
    """--no-scan: every record unclassified, the classes 0, the reason said."""
    tgt = need_target("h_classes")
    r = ptleak([tgt], opts=["--no-scan"], want_text=True)
    ck = Check()
    rep = need_json(r)
    ck.eq("kinds", sorted(set(rec["kind"] for rec in rep["heap"]["records"])), [U])
    ck.eq("summary classes", [rep["heap"]["summary"][k]["bytes"] for k in SUMMARY_CLASSES],
          [0, 0, 0, 0])
    ck.true("no '(--no-scan)' reason in the text",
            any(l.endswith("unclassified: 762 bytes in 8 blocks (--no-scan)")
                for l in (r.text or "").splitlines()))
    ck.done()


@case("error_exitcode", engines=True)
def t_error_exitcode():
    """--error-exitcode N: N when definitely, indirectly or possibly lost
    bytes were found, else the target's own status."""
    ck = Check()
    r = ptleak([need_target("h_classes")], opts=["--error-exitcode", "42"])
    ck.eq("with leaks", r.rc, 42)
    # h_daemon's only block is still reachable: no leak
    with tempfile.TemporaryDirectory() as d:
        r = ptleak([need_target("h_daemon"), os.path.join(d, "f")], opts=["--error-exitcode", "42"])
        ck.eq("without leaks", r.rc, 0)
    r = ptleak([need_target("h_exit_deep")], opts=["--error-exitcode", "42"])
    ck.eq("with leaks, target exits 3", r.rc, 42)
    r = ptleak([need_target("h_classes")], opts=["--error-exitcode", "42", "--no-scan"])
    ck.eq("--no-scan: nothing known lost", r.rc, 0)
    ck.done()


@case("suppressions", engines=True)
def t_suppressions():
    """leak:GLOB against a function, a source file, a module: the records
    go to summary.suppressed and the 'Suppressions used' table."""
    name = "h_classes"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        sf = os.path.join(d, "supp")
        with open(sf, "w") as f:
            f.write("# the lost list, by function\nleak:lose_*\n\n"
                    "leak:nomatch.c\n")
        r = ptleak([tgt], opts=["--suppressions", sf], want_text=True)
        rep = need_json(r)
        s = rep["heap"]["summary"]
        ck.eq("suppressed", s["suppressed"], {"bytes": 96, "blocks": 3})
        ck.eq("definitely/indirectly lost left", (s[DEF], s[IND]),
              ({"bytes": 0, "blocks": 0}, {"bytes": 0, "blocks": 0}))
        ck.eq("possibly lost untouched", s[POS], {"bytes": 300, "blocks": 1})
        lines = [l.split(": ", 1)[1] if ": " in l else "" for l in (r.text or "").splitlines()]
        i = lines.index("Suppressions used:") if "Suppressions used:" in lines else -1
        ck.eq("table", lines[i:i + 3] if i >= 0 else None,
              ["Suppressions used:", "  count      bytes template",
               "      2         96 lose_*"])
        # by source file and by module: everything of h_classes.c
        with open(sf, "w") as f:
            f.write("leak:h_classes.c\n")
        rep = need_json(ptleak([tgt], opts=["--suppressions", sf]))
        ck.eq("by file: records left", rep["heap"]["records"], [])
        with open(sf, "w") as f:
            f.write("leak:*/h_cl?sses\n")
        rep = need_json(ptleak([tgt], opts=["--suppressions", sf]))
        ck.eq("by module: suppressed", rep["heap"]["summary"]["suppressed"],
              {"bytes": 762, "blocks": 8})
        # malformed: file:line, exit 1, the target never runs
        with open(sf, "w") as f:
            f.write("leak:ok\n# fine\nleek:typo\n")
        r = ptleak([tgt], opts=["--suppressions", sf], want_json=False)
        ck.eq("malformed: exit status", r.rc, 1)
        ck.eq("malformed: stderr", r.stderr,
              "ptleak: %s:3: expected leak:GLOB or fd:GLOB, got 'leek:typo'\n" % sf)
    ck.done()


# At exit valgrind does not scan the exiting thread's registers (its
# leak check runs after the thread is gone): a block known only to r12
# at exit_group is definitely lost, as the block known to nobody.  And
# glibc's arena pointer to the next chunk header, inside the 24-byte
# block, is not a pointer to it.  valgrind: definitely lost: 72 bytes in
# 2 blocks.
heap_case("h_register", in_use=(72, 2), totals=(2, 0, 72), peak=72, records=[
    Rec("in_register", 48, 1, "malloc", DEF, [T("main", "in_register")], exact=True),
    Rec("lost", 24, 1, "malloc", DEF, [T("main", "lost")], exact=True),
])


# A std::vector<std::string> leaked as a whole.  valgrind: 322 (24
# direct, 298 indirect) bytes in 1 block definitely lost (the vector),
# 128 in 1 (its array of 4 strings) and 170 in 4 (the strings' buffers,
# 41-44 bytes) indirectly lost; libstdc++'s pool reachable.
heap_case("h_vector", in_use=(73026, 7), totals=None, peak=None, records=[
    Rec("pool", 72704, 1, "malloc", REACH, [L(None, CXX)]),
    Rec("vector", 322, 1, "malloc", DEF,
        [L(OPNEW, CXX), T("leak_vector()", "vector"), T("main", "call_leak")],
        exact=True, indirect=298),
    Rec("strings", 170, 4, "malloc", IND, [L(OPNEW, CXX)]),
    Rec("array", 128, 1, "malloc", IND, [L(OPNEW, CXX)]),
])


@case("static_basic", engines=True)
def t_static_basic():
    # valgrind does not see a static executable's malloc: derived from the
    # source, and confirmed by counting with gdb breakpoints:
    #   main: 100 malloc/free pairs (1..100 bytes, 5,050), realloc 100 -> 200
    #   -> 300 (3 allocs, 2 frees, 600 bytes), 777 leaked, calloc(5, 11),
    #   the 4,096-byte stdout buffer;
    #   static glibc's startup (__libc_init_first -> _dl_non_dynamic_init),
    #   before main: _dl_get_origin malloc(strlen(directory of the
    #   executable) + 2), _dl_new_object calloc(1225, 1), _dl_init_paths
    #   malloc(40) and malloc(320), _dl_find_object_init malloc(160) - all
    #   kept.  (LD_LIBRARY_PATH would add more: run.py removes it.)
    # With the executable in /work/main/build/targets (origin 26 bytes):
    #   in use 6,999 bytes in 9 blocks; 111 allocs, 102 frees, 12,349 bytes;
    #   peak 6,999.
    name = "static_basic"
    tgt = need_target(name)
    d = os.path.dirname(os.path.realpath(tgt))
    origin = len(d) + (1 if d == "/" else 2)
    in_use = (6973 + origin, 9)
    totals = (111, 102, 12323 + origin)
    # valgrind cannot say (it does not see a static allocator); the same
    # source linked dynamically, under valgrind: 777, 300 and 55 bytes
    # definitely lost (1,132 in 3 blocks), the stdout buffer still
    # reachable.  glibc's start-up blocks are still reachable: static
    # glibc points to them from its RELRO data (__rtld_search_dirs,
    # _dlfo_nodelete_mappings in .data.rel.ro, read-only after start-up:
    # before the fix ptleak missed them and called the 160 and 40 bytes
    # definitely lost).
    kinds = dict(stdout_buf=REACH, startup=REACH, leak=DEF, realloc=DEF, calloc=DEF)
    recs = [
        stdout_buffer(kinds["stdout_buf"]),
        Rec("dl_new_object", 1225, 1, "calloc", kinds["startup"]),
        Rec("leak", 777, 1, "malloc", kinds["leak"],
            [T("leak_static", "static_leak"), T("main", "call_static_leak")], exact=True),
        Rec("dl_init_paths_320", 320, 1, "malloc", kinds["startup"]),
        Rec("realloc", 300, 1, "realloc", kinds["realloc"], [T("main", "static_realloc")], exact=True),
        Rec("dl_find_object", 160, 1, "malloc", kinds["startup"]),
        Rec("calloc", 55, 1, "calloc", kinds["calloc"], [T("main", "static_calloc")], exact=True),
        Rec("dl_init_paths_40", 40, 1, "malloc", kinds["startup"]),
        Rec("dl_get_origin", origin, 1, "malloc", kinds["startup"]),
    ]
    ck, r, rep = run_heap(name, in_use=in_use, totals=totals, peak=in_use[0], records=recs)
    ck.done()


# valgrind, the parent's report (its children's are their own):
#   in use at exit: 4,429 bytes in 3 blocks
#   total heap usage: 3 allocs, 0 frees, 4,429 bytes allocated
#   definitely lost 333 bytes in 2 blocks; stdout 4,096 still reachable
# the forked child's 1,000 pairs and its 999-byte leak are not the parent's.
# peak: 4,429
H_CHILDREN_KINDS = dict(stdout_buf=REACH, leak1=DEF, leak2=DEF)
# valgrind: stdout_buf still_reachable, leak1 and leak2 definitely_lost
heap_case("h_children", in_use=(4429, 3), totals=(3, 0, 4429), peak=4429, records=[
    stdout_buffer(H_CHILDREN_KINDS["stdout_buf"]),
    Rec("leak2", 222, 1, "calloc", H_CHILDREN_KINDS["leak2"], [T("main", "parent_leak2")],
        exact=True),
    Rec("leak1", 111, 1, "malloc", H_CHILDREN_KINDS["leak1"], [T("main", "parent_leak1")],
        exact=True),
])


def sighandler_counts(out):
    m = re.search(r"h_sighandler: main (\d+) handler (\d+)", out)
    if not m:
        raise Fail("h_sighandler printed no counters: %s" % short(out))
    return int(m.group(1)), int(m.group(2))


# valgrind (one run; the counts vary with time):
#   h_sighandler: main 283864 handler 20
#   in use at exit: 4,160 bytes in 2 blocks
#   total heap usage: 283,888 allocs, 283,886 frees, 11,362,960 bytes allocated
#   = main + handler + 2 priming + 1 leak + 1 stdout allocs,
#     main + handler + 2 frees, 40 main + 200 handler + 40 + 200 + 64 + 4096 bytes
#   definitely lost 64 bytes; stdout still reachable
H_SIGHANDLER_KINDS = dict(stdout_buf=REACH, leak=DEF)
# valgrind: stdout_buf still_reachable, leak definitely_lost


def h_sighandler_totals(r):
    nm, nh = sighandler_counts(r.stdout)
    return (nm + nh + 4, nm + nh + 2, 40 * nm + 200 * nh + 40 + 200 + 64 + 4096)


def h_sighandler_ran(ck, r, rep):
    nh = sighandler_counts(r.stdout)[1]
    ck.true("handler ran %d times, want >= 20" % nh, nh >= 20)


heap_case("h_sighandler", normalize=lambda s: re.sub(r"\d+", "N", s), in_use=(4160, 2),
          totals=h_sighandler_totals, peak=None, records=[
    stdout_buffer(H_SIGHANDLER_KINDS["stdout_buf"]),
    Rec("leak", 64, 1, "malloc", H_SIGHANDLER_KINDS["leak"], [T("main", "sig_leak")], exact=True),
], extra=h_sighandler_ran)


# --- file descriptors ---------------------------------------------------------

class Fd:
    """An expected fd record: TARGET a string or ("re", pattern); HEAD the
    frames expected from frame 1 on (the JSON stack); EXACT: nothing
    more (an empty HEAD with EXACT: no stack at all)."""

    def __init__(self, fd, type_, target, opened_by, head=(), exact=True, text_suffix=""):
        self.fd, self.type, self.target, self.opened_by = fd, type_, target, opened_by
        self.head, self.exact, self.text_suffix = list(head), exact, text_suffix


def _target_ok(got, want):
    if isinstance(want, tuple):
        return isinstance(got, str) and re.fullmatch(want[1], got) is not None
    return got == want


INHERITED = 3	# run_cmd: stdin, stdout, stderr


def check_fds(ck, name, rep, records, inherited=INHERITED, open_=None):
    """REP's fds object: OPEN_ open (default: inherited + the records),
    INHERITED, and exactly RECORDS, by fd."""
    f = rep.get("fds")
    if not isinstance(f, dict):
        ck.err("fds is %s, want an object" % short(f))
        return
    if open_ is None:
        open_ = inherited + len(records)
    ck.eq("fds (open, inherited)", (f["open"], f["inherited"]), (open_, inherited))
    got = f["records"]
    ck.eq("fd records' numbers", [r["fd"] for r in got], [e.fd for e in records])
    for r, e in zip(got, records):
        w = "fd %d" % e.fd
        ck.eq("%s type" % w, r["type"], e.type)
        if not _target_ok(r["target"], e.target):
            ck.err("%s target %s, want %s" % (w, short(r["target"]), short(e.target)))
        ck.eq("%s opened_by" % w, r["opened_by"], e.opened_by)
        st = [{"function": r["opened_by"]}] + r["stack"]	# frame 0 = the function
        for i, fe in enumerate(e.head, 1):
            if i >= len(st):
                ck.err("%s: stack has %d frames, want at least %d" % (w, len(st), len(e.head) + 1))
                break
            for m in frame_errors(name, i, st[i], fe):
                ck.err("%s: %s" % (w, m))
        if e.exact and len(st) != len(e.head) + 1:
            ck.err("%s: stack %s, want %d frames" % (
                w, [x.get("function") for x in st], len(e.head) + 1))


def expected_fd_text(name, records, inherited=INHERITED, label="open at exit", open_=None):
    if open_ is None:
        open_ = inherited + len(records)
    lines = ["FILE DESCRIPTORS: %d %s (%d inherited)" % (open_, label, inherited)]
    for e in records:
        if isinstance(e.target, tuple):
            lines.append(("re", r"fd %d -> %s, opened by %s%s" % (
                e.fd, e.target[1], re.escape(e.opened_by), re.escape(e.text_suffix))))
        else:
            lines.append("fd %d -> %s, opened by %s%s" % (e.fd, e.target, e.opened_by, e.text_suffix))
        if e.head or not e.exact:
            lines.append(("re", r"   at 0x[0-9a-f]+: %s \(.*\)" % re.escape(e.opened_by)))
        for fe in e.head:
            lines.append(("re", r"   by 0x[0-9a-f]+: %s \(%s:%d\)" % (
                re.escape(fe.function), re.escape(os.path.basename(source_path(name))),
                line(name, fe.marker))))
        if e.exact:
            lines.append("")
    return lines


def check_fd_text(ck, where, text, expected):
    """The text report's FILE DESCRIPTORS section starts with EXPECTED
    (exact strings or ("re", pattern)); with a non-exact record, the
    lines up to its blank are skipped."""
    content = [c for _, c in report_lines(text)]
    heads = [i for i, c in enumerate(content) if c.startswith("FILE DESCRIPTORS:")]
    if len(heads) != 1:
        ck.err("%s: %d 'FILE DESCRIPTORS:' lines, want 1" % (where, len(heads)))
        return
    content = content[heads[0]:]
    i = 0
    for want in expected:
        g = content[i] if i < len(content) else None
        if isinstance(want, tuple):
            ok = g is not None and re.fullmatch(want[1], g)
        else:
            ok = g == want
        if not ok:
            ck.err("%s: FILE DESCRIPTORS line %d is %s, want %s" % (where, i + 1, short(g, 120),
                                                                   short(want, 120)))
            return
        i += 1
    rest = [c for c in content[i:] if c.startswith("fd ")]
    if rest:
        ck.err("%s: extra fd records: %s" % (where, short(rest)))


def f_basic_fds():
    return [
        Fd(3, "file", "/dev/null", "open", [T("keep_null", "open_leak"), T("main", "call_keep_null")]),
        Fd(4, "socket", ("re", r"socket:\[\d+\]"), "socket",
           [T("leak_socket", "socket"), T("main", "call_socket")]),
        Fd(5, "pipe", ("re", r"pipe:\[\d+\]"), "pipe",
           [T("leak_pipe_end", "pipe"), T("main", "call_pipe")]),
        Fd(6, "file", "/etc/hostname", "fopen", [T("leak_file", "fopen"), T("main", "call_fopen")]),
    ]


@case("f_basic", engines=True)
def t_f_basic():
    """An open/close loop with one kept, a pipe's write end, a socket, a
    FILE from fopen (named after fopen, its caller next); the fclose'd
    FILE and the closedir'd DIR are gone (glibc closes them with
    __close_nocancel).  The heap part is unchanged: the leaked FILE's 472
    bytes, malloc'd inside fopen, are seen."""
    name = "f_basic"
    tgt = need_target(name)
    r = ptleak([tgt], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    check_target(ck, rep, [tgt], {"code": 0})
    recs = f_basic_fds()
    check_fds(ck, name, rep, recs)
    # the leaked FILE stays in glibc's list of streams (valgrind: still
    # reachable)
    check_heap(ck, name, rep, (472, 1), (3, 2, 472 * 2 + 32816), None,
               [Rec("file", 472, 1, "malloc", REACH, tail=[T("leak_file", "fopen"), T("main", "call_fopen")])],
               lib_of(name, "libc.so.6"))
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    ck.done()


@case("f_dup")
def t_f_dup():
    """dup2 onto an open descriptor replaces its record, dup and fcntl
    F_DUPFD create, dup2(fd, fd) does nothing."""
    name = "f_dup"
    tgt = need_target(name)
    r = ptleak([tgt], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    recs = [Fd(4, "file", "/dev/null", "dup2", [T("main", "dup2")]),
            Fd(10, "file", "/dev/null", "fcntl", [T("main", "fcntl")])]
    check_fds(ck, name, rep, recs)
    ck.eq("heap in use", rep["heap"]["in_use"], {"bytes": 0, "blocks": 0})
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    ck.done()


@case("f_raw")
def t_f_raw():
    """syscall(SYS_openat): found in /proc at the report, opened_by
    "unknown", no stack; an fd closed by a raw close is dropped."""
    name = "f_raw"
    tgt = need_target(name)
    r = ptleak([tgt], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    recs = [Fd(3, "file", "/dev/zero", "unknown")]
    check_fds(ck, name, rep, recs)
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    ck.done()


@case("f_kinds")
def t_f_kinds():
    """One leak from each other creating function, with its type and
    target; calls that create nothing (signalfd on an fd, F_GETFL, failed
    opens) add nothing."""
    name = "f_kinds"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        r = ptleak([tgt, d])
        ck.eq("exit status", r.rc, 0)
        rep = need_json(r)
        sock = ("re", r"socket:\[\d+\]")
        recs = [
            Fd(3, "socket", sock, "socketpair", [T("main", "socketpair")]),
            Fd(4, "socket", sock, "socketpair", [T("main", "socketpair")]),
            Fd(5, "anon", "anon_inode:[eventfd]", "eventfd", [T("main", "eventfd")]),
            Fd(6, "anon", "anon_inode:[timerfd]", "timerfd_create", [T("main", "timerfd")]),
            Fd(7, "anon", "anon_inode:[signalfd]", "signalfd", [T("main", "signalfd")]),
            Fd(8, "anon", "anon_inode:[eventpoll]", "epoll_create1", [T("main", "epoll_create1")]),
            Fd(9, "anon", "anon_inode:[eventpoll]", "epoll_create", [T("main", "epoll_create")]),
            Fd(10, "anon", "anon_inode:inotify", "inotify_init1", [T("main", "inotify_init1")]),
            Fd(11, "anon", "anon_inode:inotify", "inotify_init", [T("main", "inotify_init")]),
            Fd(12, "file", "/memfd:f_kinds (deleted)", "memfd_create", [T("main", "memfd")]),
            Fd(13, "file", os.path.join(d, "created"), "creat", [T("main", "creat")]),
            Fd(14, "file", "/dev/null", "openat", [T("main", "openat")]),
            Fd(17, "socket", sock, "accept4", [T("main", "accept4")]),
        ]
        check_fds(ck, name, rep, recs)
    ck.done()


@case("f_range")
def t_f_range():
    """close_range closes a range, marks it with CLOSE_RANGE_CLOEXEC,
    nothing when it fails; closefrom closes the rest."""
    name = "f_range"
    tgt = need_target(name)
    r = ptleak([tgt])
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    check_fds(ck, name, rep, [Fd(fd, "file", "/dev/null", "open", [T("main", "open")])
                              for fd in (3, 7, 8, 9)])
    ck.done()


@case("f_exec")
def t_f_exec():
    """Across an exec: O_CLOEXEC, fopen "re" and FD_CLOEXEC descriptors
    are gone, the one without survives (opened before an exec: its stack
    named the old image, it has none); the new image's are traced."""
    name = "f_exec"
    tgt = need_target(name)
    r = ptleak([tgt], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    check_target(ck, rep, [tgt], {"code": 0})
    recs = [Fd(3, "file", "/dev/urandom", "open", [T("main", "after_exec")]),
            Fd(4, "file", "/dev/zero", "open", text_suffix=" before an exec")]
    check_fds(ck, name, rep, recs)
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    ck.done()


@case("f_threads")
def t_f_threads():
    """4 threads open and close concurrently (2 x 2000 descriptors
    each); exactly the 4 each kept are left, with the numbers the threads
    got."""
    name = "f_threads"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d, \
            tempfile.TemporaryDirectory(prefix="ptleak-it.") as nd:
        r = ptleak([tgt, d])
        # the native run in a directory of its own: it writes DIR/fds too
        nrc, nout, _ = run_cmd([tgt, nd])
        ck.eq("target stdout under ptleak (vs native run)", r.stdout, nout)
        ck.eq("exit status (vs native run)", r.rc, nrc)
        rep = need_json(r)
        with open(os.path.join(d, "fds")) as f:
            kept = sorted((int(fd), int(i)) for i, fd in (l.split() for l in f))
        recs = [Fd(fd, "file", os.path.join(d, "leak%d" % i), "open",
                   [T("leak", "thread_leak"), T("worker", "call_leak")], exact=False)
                for fd, i in kept]
        ck.eq("kept descriptors", len(kept), 4)
        check_fds(ck, name, rep, recs)
    ck.done()


@case("f_fork")
def t_f_fork():
    """A forked child's closes and opens, a posix_spawn child's file
    actions and a vfork child's close are not the parent's."""
    name = "f_fork"
    tgt = need_target(name)
    r = ptleak([tgt])
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    check_fds(ck, name, rep, [Fd(3, "file", "/dev/null", "open", [T("main", "parent_null")]),
                              Fd(4, "file", "/dev/full", "open", [T("main", "parent_full")])])
    ck.done()


@case("fd_only")
def t_fd_only():
    """--fd-only: no allocator breakpoint, JSON heap null, no heap text."""
    name = "f_basic"
    tgt = need_target(name)
    r = ptleak([tgt], opts=["--fd-only"], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    ck.eq("heap", rep["heap"], None)
    recs = f_basic_fds()
    check_fds(ck, name, rep, recs)
    content = [c for _, c in report_lines(r.text)]
    ck.true("HEAP SUMMARY in the text", "HEAP SUMMARY:" not in content)
    ck.true("LEAK SUMMARY in the text", "LEAK SUMMARY:" not in content)
    check_fd_text(ck, "-o file", r.text, expected_fd_text(name, recs))
    ck.true("first text line is not the banner: %s" % short(content[:1]),
            re.fullmatch(r"report 1 at exit, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d, \d+\.\d{3} s after "
                         r"tracing started", content[0] if content else ""))
    ck.eq("second text line", content[1:2], ["FILE DESCRIPTORS: 7 open at exit (3 inherited)"])
    ck.done()


@case("heap_only", engines=True)
def t_heap_only():
    """--heap-only: no descriptor breakpoint, JSON fds null, no fd text;
    the heap as by default."""
    name = "f_basic"
    tgt = need_target(name)
    r = ptleak([tgt], opts=["--heap-only"], want_text=True)
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    ck.eq("fds", rep["fds"], None)
    ck.eq("heap in use", rep["heap"]["in_use"], {"bytes": 472, "blocks": 1})
    ck.true("FILE DESCRIPTORS in the text",
            not any(c.startswith("FILE DESCRIPTORS") for _, c in report_lines(r.text)))
    ck.true("no HEAP SUMMARY in the text",
            "HEAP SUMMARY:" in [c for _, c in report_lines(r.text)])
    ck.done()


@case("fd_suppressions", engines=True)
def t_fd_suppressions():
    """fd:GLOB against a function and a source file; leak: patterns do
    not touch descriptors; the 'Suppressions used' table lists both."""
    name = "f_basic"
    tgt = need_target(name)
    ck = Check()
    with tempfile.TemporaryDirectory() as d:
        sf = os.path.join(d, "supp")
        with open(sf, "w") as f:
            f.write("fd:leak_s*\nleak:leak_file\nleak:keep_null\n")
        r = ptleak([tgt], opts=["--suppressions", sf], want_text=True)
        rep = need_json(r)
        recs = [e for e in f_basic_fds() if e.fd != 4]
        # still open: 7, of which 3 inherited
        check_fds(ck, name, rep, recs, open_=7)
        ck.eq("heap suppressed", rep["heap"]["summary"]["suppressed"], {"bytes": 472, "blocks": 1})
        lines = [l.split(": ", 1)[1] if ": " in l else "" for l in (r.text or "").splitlines()]
        i = lines.index("Suppressions used:") if "Suppressions used:" in lines else -1
        ck.eq("table", lines[i:i + 4] if i >= 0 else None,
              ["Suppressions used:", "  count      bytes template",
               "      1          0 leak_s*", "      1        472 leak_file"])
        ck.true("table after the FILE DESCRIPTORS section",
                i > lines.index("FILE DESCRIPTORS: 7 open at exit (3 inherited)"))
        with open(sf, "w") as f:
            f.write("fd:f_basic.c\n")
        rep = need_json(ptleak([tgt], opts=["--suppressions", sf]))
        check_fds(ck, name, rep, [], open_=7)
    ck.done()


@case("fd_error_exitcode")
def t_fd_error_exitcode():
    """--error-exitcode N with descriptor leaks only (f_dup allocates
    nothing): N; with them suppressed or not tracked: the target's own."""
    tgt = need_target("f_dup")
    ck = Check()
    r = ptleak([tgt], opts=["--error-exitcode", "42"])
    ck.eq("fd leaks", r.rc, 42)
    r = ptleak([tgt], opts=["--error-exitcode", "42", "--heap-only"])
    ck.eq("--heap-only", r.rc, 0)
    with tempfile.TemporaryDirectory() as d:
        sf = os.path.join(d, "supp")
        with open(sf, "w") as f:
            f.write("fd:main\n")
        r = ptleak([tgt], opts=["--error-exitcode", "42", "--suppressions", sf])
        ck.eq("suppressed", r.rc, 0)
    ck.done()


# --- errors -----------------------------------------------------------------

def one_error_line(ck, r, want_rc, want_line=None, pattern=None):
    ck.eq("exit status", r.rc, want_rc)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    if want_line is not None:
        ck.eq("stderr", lines, [want_line])
    else:
        ck.true("stderr is not one 'ptleak: ' line: %s" % short(lines),
                len(lines) == 1 and lines[0].startswith("ptleak: "))
        if pattern and lines:
            ck.true("stderr %r does not match %s" % (lines[0], pattern),
                    re.search(pattern, lines[0], re.I))
    ck.eq("stdout", r.stdout, "")


@case("error_no_such_program")
def t_err_nosuch():
    r = ptleak(["nosuchprog"], want_json=False)
    ck = Check()
    one_error_line(ck, r, 1, "ptleak: cannot execute 'nosuchprog': No such file or directory")
    ck.done()


@case("error_not_executable")
def t_err_notexec():
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        p = os.path.join(d, "notexec")
        with open(p, "w") as f:
            f.write("#!/bin/sh\necho hi\n")
        os.chmod(p, 0o644)
        r = ptleak([p], want_json=False)
    ck = Check()
    one_error_line(ck, r, 1, "ptleak: cannot execute '%s': Permission denied" % p)
    ck.done()


@case("error_exec_format")
def t_err_format():
    # an executable text file without #!: execve says ENOEXEC (a shell
    # would run it with sh, ptleak must not)
    with tempfile.TemporaryDirectory(prefix="ptleak-it.") as d:
        p = os.path.join(d, "script")
        with open(p, "w") as f:
            f.write("echo should-not-run\n")
        os.chmod(p, 0o755)
        r = ptleak([p], want_json=False)
    ck = Check()
    one_error_line(ck, r, 1, "ptleak: cannot execute '%s': Exec format error" % p)
    ck.done()


@case("error_already_traced")
def t_err_traced():
    """ptleak under strace -f: its child is already traced."""
    strace = shutil.which("strace")
    if not strace:
        raise Skip("strace not installed")
    need_ptleak()
    tgt = need_target("h_basic")
    rc, out, err = run_cmd([strace, "-f", "-o", "/dev/null", PTLEAK, tgt])
    ck = Check()
    ck.eq("exit status", rc, 1)
    ck.true("no 'ptleak: ' line with 'ptrace' and 'already traced' on stderr: %s"
            % short(err.strip()[-400:]),
            any(l.startswith("ptleak: ") and "ptrace" in l.lower() and "already traced" in l.lower()
                for l in err.splitlines()))
    ck.done()


@case("error_bogus_option")
def t_err_bogus():
    tgt = need_target("h_basic")
    r = ptleak(["--bogus", tgt], want_json=False)
    ck = Check()
    one_error_line(ck, r, 64, "ptleak: unrecognized option '--bogus'")
    ck.done()


@case("error_no_program")
def t_err_noprog():
    r = ptleak([], want_json=False)
    ck = Check()
    ck.eq("exit status", r.rc, 64)
    ck.true("nothing on stderr", r.stderr.strip())
    ck.true("stderr does not start with 'ptleak: ' or 'usage': %s" % short(r.stderr[:200]),
            r.stderr.lstrip().lower().startswith(("ptleak: ", "usage")))
    ck.done()


# ---------------------------------------------------------------------------
# Attach (-p PID), live reports, detach

import queue
import threading


class Lines:
    """Lines of a pipe read by a thread, to wait for with a timeout."""

    def __init__(self, f):
        self.q = queue.Queue()
        self.seen = []
        t = threading.Thread(target=self._read, args=(f,), daemon=True)
        t.start()

    def _read(self, f):
        for l in iter(f.readline, b""):
            self.q.put(l.decode("utf-8", "replace").rstrip("\n"))
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
            raise Fail("%s; its threads' states %s, TracerPid %s" % (
                e, "".join(sorted(thread_states(self.p.pid))), tracer_pid(self.p.pid)))
        return self.p.wait(timeout=timeout)

    def kill(self):
        if self.p.poll() is None:
            _kill_group(self.p.pid)
            self.p.wait()


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
                0 <= r["age_s"]["youngest"] <= r["age_s"]["oldest"])
    ck.true("%s: no definitely lost leak_one record (%s)" % (where, [r["kind"] for r in recs]),
            any(r["kind"] == DEF for r in recs))
    if not attached:
        return
    # the descriptors open at the attach are the program's: none is listed
    ck.eq("%s: fd records" % where, rep["fds"]["records"], [])
    ck.eq("%s: fds open == inherited" % where, rep["fds"]["open"], rep["fds"]["inherited"])


@case("attach_cycles", engines=True)
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
                ck.true(w + ": no unknown frees", live["heap"]["totals"]["unknown_frees"] > 0)
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
        os.environ["PTLEAK_DEBUG"] = "die-on-report"
        try:
            at = Attached(srv.p.pid)
        finally:
            del os.environ["PTLEAK_DEBUG"]
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


@case("launch_detach", engines=True)
def t_launch_detach():
    """Launched, SIGUSR1 to ptleak makes a scanned live report; SIGTERM to
    ptleak reports and detaches: the program runs on untraced, ptleak
    exits 0."""
    need_ptleak()
    d = tempfile.mkdtemp(prefix="ptleak-at.")
    js = os.path.join(d, "r.json")
    srv = Server(ptleak_cmd() + ["-q", "--json", js])
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
        srv.out.expect(r"pong \d+ 0")
        srv.out.expect(r"pong \d+ 0")
        ck.eq("target exit status", srv.quit(), 0)
    finally:
        srv.kill()
    ck.done()


def attach_error(ck, pid, want_line, user=None):
    """ptleak -p PID fails with exit 1 and exactly WANT_LINE (a regex)."""
    need_ptleak()
    pre = None
    if user is not None:
        def pre():
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)
    p = subprocess.run([PTLEAK, "-p", str(pid)], capture_output=True, text=True,
                       timeout=30, preexec_fn=pre)
    ck.eq("exit status of ptleak -p %d" % pid, p.returncode, 1)
    lines = p.stderr.splitlines()
    ck.true("stderr is not one line /%s/: %s" % (want_line, short(lines)),
            len(lines) == 1 and re.fullmatch(want_line, lines[0]))


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
                     r"ptleak CAP_SYS_PTRACE\)" % srv.p.pid, user=65534)
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

def load_case_files():
    """Cases kept in tests/integration/cases_*.py, each run in this module's
    namespace (so they use case(), ptleak(), Check... as the cases above
    do), in name order after the cases of this file."""
    here = os.path.dirname(os.path.abspath(__file__))
    for fn in sorted(os.listdir(here)):
        if fn.startswith("cases_") and fn.endswith(".py"):
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
        try:
            fn()
        except Skip as e:
            print("SKIP %s: %s" % (name, e), flush=True)
            skipped += 1
        except Fail as e:
            print("FAIL %s: %s" % (name, e), flush=True)
            failed += 1
            fails[name] = fails.get(name, 0) + 1
        except Exception as e:	# a bug here, or a report shaped unexpectedly
            tb = traceback.extract_tb(sys.exc_info()[2])[-1]
            print("FAIL %s: internal error %s: %s (run.py line %d)" % (
                name, type(e).__name__, e, tb.lineno), flush=True)
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
