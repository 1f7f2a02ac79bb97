# The documentation against the code: design.md's module table names every
# source file (and no file that is gone), every option of --help is in the
# manual page and docs/usage.md, the manual page formats without a warning.
# Exec'd in run.py's namespace (case, Check, run_cmd, ROOT, ...).

import glob


def doc_text(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def design_modules():
    """docs/design.md's '## Modules' section."""
    text = doc_text("docs/design.md")
    start = text.index("\n## Modules\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


@case("docs_modules")
def t_docs_modules():
    """design.md's module table names every src/**/*.c and arch/x86_64/*.c
    file, and every .c file it names exists."""
    ck = Check()
    table = design_modules()
    files = sorted(glob.glob(os.path.join(ROOT, "src", "**", "*.c"), recursive=True) +
                   glob.glob(os.path.join(ROOT, "arch", "x86_64", "*.c")))
    ck.true("source files found (%d)" % len(files), len(files) > 40)
    named = set(re.findall(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.c)\b", table))
    ck.eq("source files the module table does not name",
          [os.path.relpath(f, ROOT) for f in files
           if os.path.basename(f) not in {os.path.basename(n) for n in named}], [])
    ck.eq(".c files the module table names that do not exist",
          sorted(n for n in named
                 if not any(os.path.relpath(f, ROOT).endswith(n) for f in files)), [])
    ck.done()


def help_options():
    """The options `ptleak --help` lists: long ones without their dashes,
    short ones as letters."""
    need_ptleak()
    rc, out, _ = run_cmd([PTLEAK, "--help"])
    if rc != 0:
        raise Fail("ptleak --help exits %d" % rc)
    longs = sorted(set(re.findall(r"(?<![\w-])--([a-z][a-z-]*[a-z])", out)))
    shorts = sorted(set(re.findall(r"(?:^|\s)-([a-zA-Z]),", out)))
    return longs, shorts


def code_options():
    """The long options getopt_long is given (src/cli/options.c,
    include/cli/vgopts.h)."""
    names = set()
    for rel in ("src/cli/options.c", "include/cli/vgopts.h"):
        names |= set(re.findall(r'\{ "([a-z][a-z-]*)", (?:no|required|optional)_argument',
                                doc_text(rel)))
    return sorted(names)


def man_has(man, opt):
    """Is long option OPT (no dashes) in the manual page's text, as
    \\-\\-OPT not followed by more of a name?"""
    return re.search(r"\\-\\-%s(?![\w]|\\-)" % re.escape(opt).replace("\\-", "\\\\-"),
                     man) is not None


@case("docs_options")
def t_docs_options():
    """Every option `ptleak --help` lists is in docs/ptleak.1 and in
    docs/usage.md; every long option the code takes is in ptleak.1."""
    longs, shorts = help_options()
    code = code_options()
    ck = Check()
    ck.true("--help lists options (%d long, %d short)" % (len(longs), len(shorts)),
            len(longs) > 30 and len(shorts) >= 4)
    ck.true("the code takes options (%d)" % len(code), len(code) > len(longs))
    ck.eq("options of --help the code does not take", [o for o in longs if o not in code], [])
    man = doc_text("docs/ptleak.1")
    usage = doc_text("docs/usage.md")
    ck.true("man_has finds --xml-file, not --xml-fil",
            man_has("\\-\\-xml\\-file=", "xml-file") and not man_has("\\-\\-xml\\-file=", "xml-fil")
            and not man_has("\\-\\-xml\\-file=", "xml"))
    ck.eq("options of the code missing from ptleak.1",
          [o for o in code if not man_has(man, o)] +
          [o for o in shorts if not re.search(r"\\-%s\b" % o, man)], [])
    ck.eq("options of --help missing from usage.md",
          [o for o in longs if not re.search(r"--%s(?![\w-])" % re.escape(o), usage)] +
          [o for o in shorts if not re.search(r"`-%s\b" % o, usage)], [])
    ck.done()


@case("docs_man_groff")
def t_docs_man_groff():
    """groff -man -ww -z docs/ptleak.1: no warning."""
    if not shutil.which("groff"):
        raise Skip("groff not installed")
    rc, _, err = run_cmd(["groff", "-man", "-ww", "-z", os.path.join(ROOT, "docs", "ptleak.1")])
    ck = Check()
    ck.eq("groff's exit status", rc, 0)
    ck.eq("groff's warnings", err.splitlines(), [])
    ck.done()


@case("docs_trace_children_skip")
def t_docs_trace_children_skip():
    """--trace-children-skip is refused saying what ptleak does (-f follows
    every child), not that this build follows none (before -f existed)."""
    need_ptleak()
    rc, out, err = run_cmd([PTLEAK, "--trace-children-skip=*sh", "/bin/true"])
    ck = Check()
    ck.eq("exit status", rc, 64)
    ck.eq("stdout", out, "")
    ck.eq("stderr", err, "ptleak: --trace-children-skip=*sh cannot be honoured: "
          "ptleak's -f (--trace-children=yes) follows every child, it has no skip list\n")
    ck.done()
