"""Helpers shared by bench/run and bench/side_by_side."""
import os
import platform
import re
import signal
import subprocess
import time


class Timeout(Exception):
    pass


def run_timed(argv, timeout=None, stderr_path=None):
    """Run ARGV with stdout to /dev/null (stderr to STDERR_PATH if given);
    return (wall seconds, exit status).  Raise Timeout after killing its
    whole process group."""
    err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            raise Timeout()
        return time.perf_counter() - t0, rc
    finally:
        if stderr_path:
            err.close()


def vg_heap_usage(path):
    """(allocs, frees) from valgrind's 'total heap usage' line, or None."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees", text)
    if not m:
        return None
    return tuple(int(x.replace(",", "")) for x in m.groups())


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    libc = " ".join(platform.libc_ver())
    return (f"{os.cpu_count()} CPUs ({cpu}), kernel {platform.release()}, "
            f"{libc}")


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()
