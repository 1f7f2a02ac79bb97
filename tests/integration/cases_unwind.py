# Stacks from the breakpoint engine's unwinder (exec'd in run.py's
# namespace: case, ptleak, Check, Rec, T, ... are run.py's).

@case("h_deep_frame", engines=True)
def t_h_deep_frame():
    # Two blocks of 19 bytes from g(), one through x1 and one through x2,
    # g's frame 100 KB deep: two records with their own stacks.  valgrind
    # (--leak-check=full --run-libc-freeres=no): 2 x "19 bytes in 1 blocks
    # are definitely lost", by g / x1 (resp. x2) / main; the stdout buffer
    # still reachable.
    name = "h_deep_frame"
    tgt = need_target(name)
    recs = [
        stdout_buffer(REACH),
        Rec("via_x1", 19, 1, "malloc", DEF,
            [T("g", "g_malloc"), T("x1", "x1_call"), T("main", "main_x1")], exact=True),
        Rec("via_x2", 19, 1, "malloc", DEF,
            [T("g", "g_malloc"), T("x2", "x2_call"), T("main", "main_x2")], exact=True),
    ]
    r = ptleak([tgt])
    ck = Check()
    check_native(ck, name, [], r)
    rep = need_json(r)
    check_target(ck, rep, [tgt], {"code": 0})
    check_heap(ck, name, rep, (4096 + 38, 3), (3, 0, 4096 + 38), 4096 + 38, recs, tgt)
    ck.done()
