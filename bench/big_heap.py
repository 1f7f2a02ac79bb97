#!/usr/bin/env python3
"""bench/big_heap.py B [OPTIONS] - issue 26's figures, one run, side by side:
reports on big heaps (bench/big_heap: N live blocks of 32-80 bytes) under
native, ptleak, heaptrack and valgrind; ptleak's own memory per live block,
launched and attached; the scan's rate on 1 KiB and 48-byte blocks
(bench/scan_direct); the gawk workload; the target's longest stall at an
attach (the census) and at a live report (SIGUSR1 to ptleak), for heaps of
10^5, 10^6 and 10^7 blocks.

B is the absolute build directory (B/ptleak, B/bench/big_heap and
scan_direct: bench/Makefile builds them).  Nothing here asserts a time;
a tool that is missing is skipped with one line.  The machine's load is
printed before and after (the figures of a loaded machine are slower,
the CPU figures of scan_direct less so).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Timeout, loadavg, machine, run_timed  # noqa: E402

GAWK_PROG = '{a[$1]=$1 "x"} END {print length(a)}'


def timed(argv, timeout, env=None, stderr_path=None):
    """(wall seconds, exit status), or (None, 'timeout')."""
    saved = dict(os.environ)
    try:
        if env:
            os.environ.update(env)
        return run_timed(argv, timeout=timeout, stderr_path=stderr_path)
    except Timeout:
        return None, "timeout"
    finally:
        os.environ.clear()
        os.environ.update(saved)


def ptleak_stats(path):
    """What PTLEAK_DEBUG=stats said: report seconds, scan bytes and MB/s,
    ptleak's peak RSS in KiB."""
    with open(path, errors="replace") as f:
        text = f.read()
    out = {}
    m1 = re.search(r"time ([\d.]+) ms: exit report starts", text)
    m2 = re.search(r"time ([\d.]+) ms: exit report written", text)
    if m1 and m2:
        out["report_s"] = (float(m2.group(1)) - float(m1.group(1))) / 1e3
    m = re.search(r"scan: (\d+) blocks, (\d+) bytes read in ([\d.]+) s \((\d+) MB/s\)", text)
    if m:
        out["scan_mb"] = int(m.group(2)) / 1e6
        out["scan_s"] = float(m.group(3))
        out["scan_rate"] = int(m.group(4))
    m = re.search(r"ptleak's peak RSS: (\d+) KiB", text)
    if m:
        out["rss_kb"] = int(m.group(1))
    return out


def fmt_s(t):
    return "%.2f s" % t if isinstance(t, float) else "> timeout"


def launched(a, prog, n):
    """ptleak -q PROG N with stats: (wall, stats)."""
    err = os.path.join(a.tmp, "pt.err")
    t, _ = timed([a.ptleak, "-q", prog, str(n)], a.timeout,
                 env={"PTLEAK_DEBUG": "stats"}, stderr_path=err)
    return t, ptleak_stats(err)


def attach(a, pid, opts=()):
    """ptleak -p PID [OPTS], its stderr to a file: the Popen, once it says
    it attached (or None after the timeout)."""
    err = open(os.path.join(a.tmp, "at.err"), "w+")
    pt = subprocess.Popen([a.ptleak, "-p", str(pid)] + list(opts),
                          stdout=subprocess.DEVNULL, stderr=err)
    end = time.time() + a.timeout
    while time.time() < end and pt.poll() is None:
        err.seek(0)
        if "attached to process" in err.read():
            err.close()
            return pt
        time.sleep(0.05)
    err.close()
    pt.kill()
    pt.wait()
    return None


def attached_rss(a, prog, n):
    """ptleak -p on PROG N (hold), SIGINT once attached: ptleak's peak RSS
    in KiB (wait4), or None."""
    p = subprocess.Popen([prog, str(n), "600"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        if "ready" not in p.stdout.readline():
            return None
        pt = attach(a, p.pid, ["-o", os.devnull])
        if not pt:
            return None
        pt.send_signal(signal.SIGINT)
        _, _, ru = os.wait4(pt.pid, 0)
        return ru.ru_maxrss
    finally:
        p.terminate()
        p.wait()


def section_reports(a):
    print("\n## Reports on big heaps (bench/big_heap N: N live blocks of 32-80 bytes)\n")
    print("| N | native | ptleak | ptleak's exit report | scan | heaptrack | valgrind |")
    print("|---|---|---|---|---|---|---|")
    hasht = shutil.which("heaptrack")
    hasvg = shutil.which("valgrind") and not a.no_valgrind
    rss = {}
    for n in a.sizes:
        tn, _ = timed([a.big_heap, str(n)], a.timeout)
        tp, st = launched(a, a.big_heap, n)
        rss[n] = st.get("rss_kb")
        th = timed(["heaptrack", "-o", os.path.join(a.tmp, "ht"), a.big_heap, str(n)],
                   a.timeout)[0] if hasht else None
        tv = timed(["valgrind", "-q", "--leak-check=full", a.big_heap, str(n)],
                   a.timeout)[0] if hasvg else None
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            "{:,}".format(n), fmt_s(tn), fmt_s(tp),
            "%.2f s" % st["report_s"] if "report_s" in st else "?",
            "%.0f MB in %.2f s, %d MB/s" % (st["scan_mb"], st["scan_s"], st["scan_rate"])
            if "scan_mb" in st else "?",
            fmt_s(th) if hasht else "not installed",
            fmt_s(tv) if hasvg else "skipped"))
    return rss


def section_memory(a, rss):
    print("\n## ptleak's memory per live block (peak RSS, the report included)\n")
    base = a.mem_base
    print("Bytes a live block: (peak RSS at N - peak RSS at %s) / (N - %s), "
          "so that the fixed part cancels.\n" % ("{:,}".format(base), "{:,}".format(base)))
    print("| N | launched: peak RSS | bytes a block | attached: peak RSS | bytes a block |")
    print("|---|---|---|---|---|")
    _, st = launched(a, a.big_heap, base)
    lb = st.get("rss_kb")
    ab = attached_rss(a, a.big_heap, base)
    print("| %s | %s KiB | (base) | %s KiB | (base) |" % ("{:,}".format(base), lb, ab))
    for n in a.sizes:
        l = rss.get(n)
        at = attached_rss(a, a.big_heap, n)
        per = lambda v, b: "%.1f" % ((v - b) * 1024.0 / (n - base)) if v and b else "?"
        print("| %s | %s KiB | %s | %s KiB | %s |" % ("{:,}".format(n), l, per(l, lb), at,
                                                     per(at, ab)))


def section_scan(a):
    print("\n## The scan alone (bench/scan_direct: wall and ptleak's CPU)\n")
    print("| heap | read | wall | CPU |")
    print("|---|---|---|---|")
    for args, what in ((["1000000", "1024"], "10^6 x 1 KiB, two lists"),
                       (["5000000", "48", "array"], "5*10^6 x 48 bytes, one array")):
        out = subprocess.run([a.scan_direct] + args, capture_output=True, text=True,
                             timeout=a.timeout).stdout
        m = re.search(r"(\d+) bytes read in ([\d.]+) s \((\d+) MB/s\), CPU ([\d.]+) s "
                      r"\((\d+) MB/s\)", out)
        if m:
            print("| %s | %.0f MB | %s s, %s MB/s | %s s, %s MB/s |" % (
                what, int(m.group(1)) / 1e6, m.group(2), m.group(3), m.group(4), m.group(5)))
        else:
            print("| %s | ? | %s | |" % (what, out.strip()[-80:]))


def section_gawk(a):
    print("\n## gawk '%s' on %s lines\n" % (GAWK_PROG, "{:,}".format(a.gawk_lines)))
    gawk = shutil.which("gawk")
    if not gawk:
        print("gawk not installed (make bench-deps): skipped")
        return
    data = os.path.join(a.tmp, "gawk.txt")
    with open(data, "w") as f:
        for i in range(a.gawk_lines):
            f.write("key%d value%d\n" % (i, i))
    argv = [gawk, GAWK_PROG, data]
    print("| native | ptleak | ptleak's exit report | heaptrack | valgrind |")
    print("|---|---|---|---|---|")
    tn, _ = timed(argv, a.timeout)
    err = os.path.join(a.tmp, "gawk.err")
    tp, _ = timed([a.ptleak, "-q"] + argv, a.timeout, env={"PTLEAK_DEBUG": "stats"},
                  stderr_path=err)
    st = ptleak_stats(err)
    th = timed(["heaptrack", "-o", os.path.join(a.tmp, "htg")] + argv,
               a.timeout)[0] if shutil.which("heaptrack") else None
    tv = timed(["valgrind", "-q", "--leak-check=full"] + argv, a.timeout)[0] \
        if shutil.which("valgrind") and not a.no_valgrind else None
    print("| %s | %s | %s | %s | %s |" % (
        fmt_s(tn), fmt_s(tp), "%.2f s" % st["report_s"] if "report_s" in st else "?",
        fmt_s(th) if th is not None else "-", fmt_s(tv) if tv is not None else "-"))


def stall(lines):
    """The next "big_heap: stall N ms" line's N."""
    while True:
        line = lines.readline()
        if not line:
            return None
        m = re.match(r"big_heap: stall ([\d.]+) ms", line)
        if m:
            return float(m.group(1))


def section_pauses(a):
    print("\n## The target's longest stall (big_heap's 1 ms heartbeat)\n")
    print("At the attach (ptleak -p: the census of the heap), then at a live "
          "report (SIGUSR1 to ptleak), then at the detach (SIGINT: a report).\n")
    print("| N | attach | live report | detach |")
    print("|---|---|---|---|")
    for n in a.pause_sizes:
        js = os.path.join(a.tmp, "live.json")
        if os.path.exists(js):
            os.unlink(js)
        p = subprocess.Popen([a.big_heap, str(n), "600"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, bufsize=1)
        row = []
        try:
            if "ready" not in p.stdout.readline():
                raise RuntimeError("big_heap did not start")
            pt = attach(a, p.pid, ["--json", js, "-o", os.devnull])
            if not pt:
                raise RuntimeError("ptleak did not attach")
            time.sleep(0.2)
            p.send_signal(signal.SIGUSR2)
            row.append(stall(p.stdout))
            pt.send_signal(signal.SIGUSR1)
            end = time.time() + a.timeout
            while time.time() < end:
                try:
                    with open(js) as f:
                        if re.search(r'"number": *1\b', f.read(4096)):
                            break
                except OSError:
                    pass
                time.sleep(0.05)
            time.sleep(0.2)
            p.send_signal(signal.SIGUSR2)
            row.append(stall(p.stdout))
            pt.send_signal(signal.SIGINT)
            pt.wait(timeout=a.timeout)
            time.sleep(0.2)
            p.send_signal(signal.SIGUSR2)
            row.append(stall(p.stdout))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            row.append(str(e))
        finally:
            p.terminate()
            p.wait()
        print("| %s | %s |" % ("{:,}".format(n), " | ".join(
            "%.1f ms" % v if isinstance(v, float) else str(v) for v in row)))


def main():
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--sizes", default="1000000,5000000")
    ap.add_argument("--mem-base", type=int, default=100000)
    ap.add_argument("--pause-sizes", default="100000,1000000,10000000")
    ap.add_argument("--gawk-lines", type=int, default=200000)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--no-valgrind", action="store_true")
    ap.add_argument("--only", default="reports,memory,scan,gawk,pauses")
    a = ap.parse_args()
    a.ptleak = os.path.join(a.build, "ptleak")
    a.big_heap = os.path.join(a.build, "bench", "big_heap")
    a.scan_direct = os.path.join(a.build, "bench", "scan_direct")
    a.sizes = [int(x) for x in a.sizes.split(",") if x]
    a.pause_sizes = [int(x) for x in a.pause_sizes.split(",") if x]
    only = a.only.split(",")
    a.tmp = tempfile.mkdtemp(prefix="ptleak-bh.")
    print("# Issue 26: big heaps\n")
    print("%s; load average %s at the start" % (machine(), loadavg()))
    try:
        rss = section_reports(a) if "reports" in only or "memory" in only else {}
        if "memory" in only:
            section_memory(a, rss)
        if "scan" in only:
            section_scan(a)
        if "gawk" in only:
            section_gawk(a)
        if "pauses" in only:
            section_pauses(a)
    finally:
        shutil.rmtree(a.tmp, ignore_errors=True)
    print("\nload average %s at the end" % loadavg())


if __name__ == "__main__":
    main()
