# The source tree against docs/design.md's map: each folder is a layer that
# calls (by symbol, in the built objects) and includes (by "FOLDER/x.h")
# only the layers its row says it may call; no two files call each other
# round a circle; no source file over 800 lines; at most 20 entries
# directly in src/.
# Exec'd in run.py's namespace (case, Check, ROOT, BUILD, ...).

import collections
import glob
import subprocess

LAYOUT_MAX_LINES = 800
LAYOUT_MAX_TOP = 20
# The recorder's ABI with its hooks: freestanding definitions (layouts,
# constants, inline walkers), no code of the recorder's behind them.  Any
# layer may include them (the arch's half of the hooks, the descriptor
# probes that tell the hooks what a call is, the scan that skips the
# recorder's mapping); calls into the recorder are checked all the same.
LAYOUT_ABI_HEADERS = {"recorder/ring.h", "recorder/rechook.h", "recorder/unwtab.h",
                      "recorder/unwtab_walk.h", "recorder/recblob.h", "recorder/cfi.h"}


def layout_folder(rel):
    """The layer a path is in: 'session' for src/session/x.c and
    include/session/x.h, 'arch' for arch/ARCH/..."""
    parts = rel.split("/")
    if parts[0] == "arch":
        return "arch"
    return parts[1]


def layout_map():
    """design.md's map: {folder: (layer, set of folders it may call)}."""
    with open(os.path.join(ROOT, "docs", "design.md")) as f:
        text = f.read()
    start = text.index("\n## The map\n")
    end = text.index("\n## ", start + 1)
    rows = {}
    for m in re.finditer(r"^\| (\d+) \| `(src/\w+/|arch/\w+/)` \| .* \| ([^|]*) \|$",
                         text[start:end], re.M):
        folder = "arch" if m.group(2).startswith("arch/") else m.group(2).split("/")[1]
        rows[folder] = (int(m.group(1)), m.group(3))
    names = set(rows)
    may = {}
    for folder, (layer, says) in rows.items():
        if "every layer below" in says:
            may[folder] = {g for g in names if rows[g][0] < layer}
        else:
            may[folder] = {w for w in re.findall(r"\w+", says) if w in names}
    return {f: (rows[f][0], may[f]) for f in rows}


def layout_sources():
    """ptleak's C files, relative to ROOT: src/**/*.c but the freestanding
    hooks and build tools (src/recorder/hooks/), and arch/ARCH/*.c."""
    files = glob.glob(os.path.join(ROOT, "src", "**", "*.c"), recursive=True)
    files += glob.glob(os.path.join(ROOT, "arch", "*", "*.c"))
    rels = [os.path.relpath(f, ROOT) for f in files]
    return sorted(r for r in rels if not r.startswith("src/recorder/hooks/"))


def layout_calls():
    """{file: {file it calls or reads a global of}} from the objects make
    built (nm), files as paths relative to ROOT without '.c'."""
    defs, uses = {}, {}
    for rel in layout_sources():
        obj = os.path.join(BUILD, "obj", rel[:-2] + ".o")
        if not os.path.exists(obj):
            raise Fail("%s: not built (make builds every source file)" % obj)
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True,
                             check=True).stdout
        name = rel[:-2]
        uses[name] = set()
        for ln in out.splitlines():
            p = ln.split()
            if len(p) < 2:
                continue
            if p[1] == "U":
                uses[name].add(p[0])
            elif p[1] in "TDBRVW":
                defs.setdefault(p[0], name)
    return {n: {defs[s] for s in us if s in defs and defs[s] != n}
            for n, us in uses.items()}


def layout_cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


@case("layout_no_file_cycles")
def t_layout_no_file_cycles():
    """No circle of calls between ptleak's files (the session's event loop
    calls its handlers through struct event_ops, nothing calls back up)."""
    ck = Check()
    graph = layout_calls()
    ck.true("objects read (%d)" % len(graph), len(graph) > 60)
    ck.true("calls found (%d)" % sum(len(v) for v in graph.values()),
            sum(len(v) for v in graph.values()) > 200)
    ck.eq("circles of calls between files", layout_cycles(graph), [])
    ck.done()


@case("layout_layers")
def t_layout_layers():
    """Every call between folders and every "FOLDER/x.h" include goes to a
    folder the map (docs/design.md) says the caller may call."""
    ck = Check()
    lm = layout_map()
    ck.eq("folders in the map", sorted(lm),
          sorted({layout_folder(r) for r in layout_sources()}))
    bad = collections.defaultdict(set)
    for a, callees in layout_calls().items():
        fa = layout_folder(a)
        for b in callees:
            fb = layout_folder(b)
            if fa != fb and fb not in lm.get(fa, (0, set()))[1]:
                bad["%s -> %s" % (fa, fb)].add("%s calls %s" % (a, b))
    files = glob.glob(os.path.join(ROOT, "src", "**", "*.[ch]"), recursive=True)
    files += glob.glob(os.path.join(ROOT, "include", "**", "*.h"), recursive=True)
    files += glob.glob(os.path.join(ROOT, "arch", "*", "**", "*.[chS]"), recursive=True)
    for path in files:
        rel = os.path.relpath(path, ROOT)
        if rel.startswith("src/recorder/hooks/"):
            continue
        fa = layout_folder(rel)
        with open(path) as f:
            for inc in re.findall(r'^\s*#\s*include\s+"(\w+)/([\w.]+)"', f.read(), re.M):
                fb, hdr = inc[0], "%s/%s" % inc
                if fb in (fa, "..") or hdr in LAYOUT_ABI_HEADERS:
                    continue
                if fb not in lm.get(fa, (0, set()))[1]:
                    bad["%s -> %s" % (fa, fb)].add("%s includes %s" % (rel, hdr))
    ck.eq("calls and includes the map does not allow",
          {k: sorted(v) for k, v in sorted(bad.items())}, {})
    ck.done()


@case("layout_sizes")
def t_layout_sizes():
    """No source file over 800 lines; at most 20 entries directly in
    src/ (the rest in folders by role)."""
    ck = Check()
    big = []
    for pat in ("src/**/*.[ch]", "include/**/*.h", "arch/**/*.[chS]"):
        for path in glob.glob(os.path.join(ROOT, pat), recursive=True):
            with open(path, errors="replace") as f:
                n = sum(1 for _ in f)
            if n > LAYOUT_MAX_LINES:
                big.append("%s: %d lines" % (os.path.relpath(path, ROOT), n))
    ck.eq("files over %d lines" % LAYOUT_MAX_LINES, sorted(big), [])
    top = os.listdir(os.path.join(ROOT, "src"))
    ck.true("%d entries directly in src/ (at most %d)" % (len(top), LAYOUT_MAX_TOP),
            len(top) <= LAYOUT_MAX_TOP)
    ck.done()


@case("layout_unit_tests")
def t_layout_unit_tests():
    """Each unit test is named after the module it tests:
    tests/unit/test_MODULE[_FACET].c, MODULE a source file or header of
    ptleak (or 'arch', the arch layer; 'fuzz', the fuzzers' corpus
    replayed)."""
    ck = Check()
    modules = {"arch", "fuzz"}	# fuzz: tests/fuzz's harnesses, replayed
    for pat in ("src/**/*.[ch]", "include/**/*.h", "arch/**/*.[chS]"):
        for path in glob.glob(os.path.join(ROOT, pat), recursive=True):
            modules.add(os.path.splitext(os.path.basename(path))[0])
    tests = sorted(os.path.basename(p)[5:-2] for p in
                   glob.glob(os.path.join(ROOT, "tests", "unit", "test_*.c")))
    ck.true("unit tests found (%d)" % len(tests), len(tests) > 30)
    words = lambda n: ["_".join(n.split("_")[:k]) for k in range(1, n.count("_") + 2)]
    ck.eq("unit tests named after no module",
          [t for t in tests if not any(w in modules for w in words(t))], [])
    ck.done()
