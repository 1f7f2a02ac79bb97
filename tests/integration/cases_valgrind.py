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

# Hash seeds fixed: perl and python3 size their hash tables per run
# otherwise (perl -e 1: 177,899 to 178,091 bytes in use, run to run).
PERL_SEED = {"PERL_HASH_SEED": "0", "PERL_PERTURB_KEYS": "0"}
PY_SEED = {"PYTHONHASHSEED": "0"}

# ld.so's _dl_find_object keeps a pointer to each segment it mallocs
# (_dlfo_loaded_mappings[i]), the segment being the block's start rounded
# up to its alignment: with glibc's malloc here the 2,304-byte block of
# python3's dlopen starts aligned, so the pointer is a start pointer (still
# reachable; gdb at _exit: _dlfo_loaded_mappings[1] == its to_free ==
# the block); valgrind's allocator places it 16 bytes off, so valgrind sees
# only an interior pointer (possibly lost).  Not a difference of the scan:
# (bytes, valgrind's class, ptleak's class) moved before comparing.
PY_DLFO_SEGMENT = [(2304, "possibly_lost", "still_reachable")]

# (name, argv, extra variables, known moves): each must give valgrind's
# classes
VALGRIND_PROGRAMS = [
    ("python3-json", ["/usr/bin/python3", "-c", "import json"], PY_SEED, PY_DLFO_SEGMENT),
    ("python3-mp-pool", ["/usr/bin/python3", "-c", MP_POOL], PY_SEED, []),
    ("perl", ["/usr/bin/perl", "-e", "1"], PERL_SEED, []),
    ("sqlite3", ["/usr/bin/sqlite3", ":memory:",
                 "create table t(a); insert into t values (1), (2); select sum(a) from t;"],
     {}, []),
]


def valgrind_client_env(cwd, extra):
    """The environment valgrind's wrapper gives a client started by
    `env -i PATH=/usr/bin:/bin EXTRA...` in CWD (preloads included)."""
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/usr/lib/debug",
           "GLIBCPP_FORCE_NEW": "1", "GLIBCXX_FORCE_NEW": "1", "PWD": cwd,
           "LD_PRELOAD": VG_PRELOAD}
    env.update(extra)
    return env


def ptleak_like_valgrind_env(cwd, extra):
    """The same variables for ptleak's run, LD_PRELOAD renamed."""
    env = valgrind_client_env(cwd, extra)
    env["LD_PRELOAX"] = env.pop("LD_PRELOAD")
    return env


def move_classes(classes, moves):
    """CLASSES with each (bytes, from, to) of MOVES applied (one block)."""
    c = {k: dict(v) for k, v in classes.items()}
    for nbytes, src, dst in moves:
        c[src]["bytes"] -= nbytes
        c[src]["blocks"] -= 1
        c[dst]["bytes"] += nbytes
        c[dst]["blocks"] += 1
    return c


def valgrind_program_case(argv, extra, moves):
    def fn():
        if not os.access(argv[0], os.X_OK):
            raise Skip("%s not installed" % argv[0])
        with tempfile.TemporaryDirectory(prefix="ptleak-vgp.") as d:
            env = {"PATH": "/usr/bin:/bin"}
            env.update(extra)
            vin, vtot, vclasses = valgrind_run(argv, env=env, cwd=d)
            r = ptleak(argv, env=ptleak_like_valgrind_env(d, extra), cwd=d)
        rep = need_json(r)
        h = rep["heap"]
        ck = Check()
        ck.eq("in use (bytes, blocks) vs valgrind",
              (h["in_use"]["bytes"], h["in_use"]["blocks"]), vin)
        got = {k: {"bytes": h["summary"][k]["bytes"], "blocks": h["summary"][k]["blocks"]}
               for k in vclasses}
        ck.eq("leak classes vs valgrind%s" % (" (moved: %s)" % moves if moves else ""),
              got, move_classes(vclasses, moves))
        ck.done()
    return fn


VALGRIND_CASES.extend(("valgrind:" + n, valgrind_program_case(a, x, m))
                      for n, a, x, m in VALGRIND_PROGRAMS)
