# Paths that hold spaces, quotes and non-ASCII letters: a program run
# from such a directory gets the frames it gets from any other (exec'd in
# run.py's namespace: case, ptleak, Check, line, h_basic_records, ... are
# run.py's and cases_heap.py's).

import xml.etree.ElementTree as ET

# a space, a quote, an e-acute: what cut paths (a shell word, a
# sscanf %s, a length in characters) got wrong
ODD_DIR = "pt leak x'\u00e9"


def odd_build(name, d):
    """Target NAME compiled in directory D as make builds it, from its
    source copied to D/src (the debug info names D too): its path."""
    src = os.path.join(d, "src")
    os.mkdir(src)
    shutil.copy(source_path(name), src)
    exe = os.path.join(d, name)
    p = subprocess.run(["cc", "-O0", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", exe,
                        os.path.join("src", os.path.basename(source_path(name)))],
                       capture_output=True, text=True, cwd=d, timeout=TIMEOUT)
    if p.returncode != 0:
        raise Fail("cc %s in %r failed: %s" % (name, d, p.stderr.strip()))
    return exe


def json_frames(rep):
    """{(bytes, blocks): [(function, file, line, module)]} of REP's heap
    records, the allocator first (its module left out)."""
    return {(r["bytes"], r["blocks"]):
            [(r["allocator"], None, None, None)] +
            [(f["function"], f["file"], f["line"], f["module"]) for f in r["stack"]]
            for r in rep["heap"]["records"]}


@case("odd_path", engines=True)
def t_odd_path():
    """h_basic built and run in a directory named "pt leak x'\u00e9"
    (ptleak run from there too): every record's frames (function, file,
    marked line) are those of build/targets/h_basic, each frame's module
    is the path exactly as the directory is named (JSON, XML's <obj>); a
    valgrind suppression naming that path (obj:) suppresses exactly the
    records whose first caller is in it; -o with %p writes into that
    directory; a stripped copy's frames are '??? (h_basic_s+0xOFF)' at
    the marked lines (addr2line on the unstripped one)."""
    for tool in ("cc", "strip", "addr2line"):
        if not shutil.which(tool):
            raise Skip("%s missing" % tool)
    name = "h_basic"
    recs = h_basic_records(dict(big=DEF, table=DEF, grow=DEF, twice=DEF, level3=DEF))
    ck = Check()
    top = tempfile.mkdtemp(prefix="ptleak-it.")
    try:
        d = os.path.join(top, ODD_DIR)
        os.mkdir(d)
        exe = odd_build(name, d)
        txt = os.path.join(d, "report \u00e9 %p.txt")
        r = ptleak([exe], opts=["-o", txt], cwd=d)
        rep = need_json(r)
        pid = rep["target"]["pid"]
        ck.eq("exit status, stdout", (r.rc, r.stdout), (0, "h_basic: done\n"))
        ck.eq("argv", rep["target"]["argv"], [exe])
        check_heap(ck, name, rep, H_BASIC["in_use"], H_BASIC["totals"], H_BASIC["peak"], [],
                   None, exhaustive=False)
        ck.eq("records (bytes, blocks, kind)",
              [(x["bytes"], x["blocks"], x["kind"]) for x in rep["heap"]["records"]],
              [(e.bytes, e.blocks, e.kind) for e in recs])
        got = json_frames(rep)
        libc = lib_of(name, "libc.so.6")
        for e in recs:
            want = [(e.allocator, None, None, None)] + [
                (t.function, "h_basic.c", line(name, t.marker), exe) for t in e.head]
            ck.eq("%s: frames" % e.desc(), got.get((e.bytes, e.blocks)), want)
        # the same as from build/targets, the module aside
        r0 = ptleak([need_target(name)])
        strip_mod = lambda fr: {k: [f[:3] for f in v] for k, v in fr.items()}
        ck.eq("frames vs build/targets/h_basic", strip_mod(got),
              strip_mod(json_frames(need_json(r0))))
        # -o D/"report é %p.txt", the text's frames
        path = os.path.join(d, "report \u00e9 %d.txt" % pid)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise Fail("no text report %r: %s" % (path, e))
        tr = text_records(text)
        for e in recs:
            ck.eq("text: %s: callers" % e.desc(),
                  [re.sub(r"^by 0x[0-9a-f]+: ", "", l) for l in tr.get((e.bytes, e.blocks), [])[1:]],
                  ["%s (h_basic.c:%d)" % (t.function, line(name, t.marker)) for t in e.head])

        # XML: every frame's <obj>, the allocator's libc
        xml = os.path.join(d, "v'g.xml")
        rc, _, err = run_cmd(ptleak_cmd() + ["-q", "-o", os.devnull, "--xml=yes", "--xml-file=" + xml,
                                             exe], cwd=d)
        ck.eq("XML run: exit status, stderr", (rc, err), (0, ""))
        root = ET.parse(xml).getroot()
        objs = sorted({(f.findtext("fn"), f.findtext("obj"))
                       for e in root.findall("error") for f in e.findall("stack/frame")})
        ck.eq("XML (fn, obj)", objs, sorted({(e.allocator, libc) for e in recs} |
                                            {(t.function, exe) for e in recs for t in e.head}))

        # a suppression naming the path: malloc called from h_basic
        supp = os.path.join(d, "it's.supp")
        with open(supp, "w", encoding="utf-8") as f:
            f.write("{\n   odd\n   Memcheck:Leak\n   fun:malloc\n   obj:%s\n}\n" % exe)
        r = ptleak([exe], opts=["--suppressions=" + supp], cwd=d)
        s = need_json(r)["heap"]["summary"]
        ck.eq("suppressed (malloc from %s)" % exe,
              (s["suppressed"], s["definitely_lost"]),
              ({"bytes": 1000 + 128 + 24, "blocks": 4}, {"bytes": 300 + 200, "blocks": 2}))

        # stripped, in the same directory
        stripped = os.path.join(d, "h_basic_s")
        p = subprocess.run(["strip", "-o", stripped, exe], capture_output=True, text=True)
        if p.returncode != 0:
            raise Fail("strip failed: %s" % p.stderr.strip())
        check_stripped(ck, name, exe, stripped, recs)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    ck.done()
