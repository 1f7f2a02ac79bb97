# Real Debian programs compared with valgrind live (make check-valgrind,
# not make check).  Exec'd in run.py's namespace.
#
# valgrind gives its client an environment of its own: the Debian wrapper
# script adds LD_LIBRARY_PATH=/usr/lib/debug, GLIBCPP_FORCE_NEW=1 and
# GLIBCXX_FORCE_NEW=1, the shell it runs in PWD, and the core LD_PRELOAD.
# Programs allocate per variable (python3's os.environ, perl's %ENV), so
# ptleak's run gets the same variables, of the same lengths, with
# LD_PRELOAD renamed (a real one would load valgrind's preloads).  Both
# runs are started from `env -i PATH=/usr/bin:/bin`, in the same directory.

VG_PRELOAD = ("/usr/libexec/valgrind/vgpreload_core-amd64-linux.so:"
              "/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so")

MP_POOL = """\
import multiprocessing as mp
if __name__ == '__main__':
    with mp.Pool(2) as p:
        print(sum(p.map(abs, range(100))))
"""

# (name, argv): the leak check of each must give valgrind's classes
VALGRIND_PROGRAMS = [
    ("python3-json", ["/usr/bin/python3", "-c", "import json"]),
    ("python3-mp-pool", ["/usr/bin/python3", "-c", MP_POOL]),
    ("perl", ["/usr/bin/perl", "-e", "1"]),
    ("sqlite3", ["/usr/bin/sqlite3", ":memory:",
                 "create table t(a); insert into t values (1), (2); select sum(a) from t;"]),
]


def valgrind_client_env(cwd):
    """The environment valgrind's wrapper gives a client started by
    `env -i PATH=/usr/bin:/bin` in CWD (preloads included)."""
    return {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/usr/lib/debug",
            "GLIBCPP_FORCE_NEW": "1", "GLIBCXX_FORCE_NEW": "1", "PWD": cwd,
            "LD_PRELOAD": VG_PRELOAD}


def ptleak_like_valgrind_env(cwd):
    """The same variables for ptleak's run, LD_PRELOAD renamed."""
    env = valgrind_client_env(cwd)
    env["LD_PRELOAX"] = env.pop("LD_PRELOAD")
    return env


def valgrind_program_case(argv):
    def fn():
        if not os.access(argv[0], os.X_OK):
            raise Skip("%s not installed" % argv[0])
        with tempfile.TemporaryDirectory(prefix="ptleak-vgp.") as d:
            vin, vtot, vclasses = valgrind_run(argv, env={"PATH": "/usr/bin:/bin"}, cwd=d)
            r = ptleak(argv, env=ptleak_like_valgrind_env(d), cwd=d)
        rep = need_json(r)
        h = rep["heap"]
        ck = Check()
        ck.eq("in use (bytes, blocks) vs valgrind",
              (h["in_use"]["bytes"], h["in_use"]["blocks"]), vin)
        got = {k: {"bytes": h["summary"][k]["bytes"], "blocks": h["summary"][k]["blocks"]}
               for k in vclasses}
        ck.eq("leak classes vs valgrind", got, vclasses)
        ck.done()
    return fn


VALGRIND_CASES.extend(("valgrind:" + n, valgrind_program_case(a)) for n, a in VALGRIND_PROGRAMS)
