"""Helpers shared by bench/run and bench/side_by_side."""
import os
import platform
import re
import signal
import subprocess
import threading
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
        # a blocking wait, the timeout from a timer thread: Popen.wait
        # with a timeout polls (sleeps of up to 50 ms), which made every
        # time a multiple of ~50 ms
        expired = []

        def kill():
            expired.append(1)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        try:
            rc = p.wait()
        finally:
            if timer:
                timer.cancel()
        dt = time.perf_counter() - t0
        if expired:
            raise Timeout()
        return dt, rc
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
