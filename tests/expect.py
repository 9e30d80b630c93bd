#!/usr/bin/env python3
# expect.py - figures for the accuracy tests: reads a sample's memtrail-expect
# block, valgrind memcheck's output, and memtrail's JSON summary, and compares
# them field by field, printing one line per mismatch.
#
# For: tests/e2e/accuracy_*.sh and tests/e2e/realprog_*.sh. Not for: anything
# the product itself runs (memtrail never needs python).
#
#   expect.py expect SAMPLE.c                  the expect block as JSON
#   expect.py memcheck LOG                     memcheck's HEAP SUMMARY as JSON
#   expect.py trace LOG                        figures recomputed from a
#                                              --trace-malloc=yes log, as JSON
#   expect.py check-memcheck SAMPLE.c LOG [EXTRA_TLS]
#                                              expect block vs memcheck (totals,
#                                              leaks; peak too if LOG has a
#                                              trace); EXTRA_TLS: stand-in TLS
#                                              modules preloaded (adjust_dtv)
#   expect.py check-memtrail SAMPLE.c JSON [EXTRA_TLS]
#                                              expect block vs memtrail's
#                                              `report --summary --format json`;
#                                              EXTRA_TLS: TLS modules the
#                                              preload adds (see adjust_dtv)
#   expect.py check-stderr SAMPLE.c ERRFILE [EXTRA_TLS]
#                                              the `memtrail: snapshot N: LIVE
#                                              bytes (+DELTA)` lines of `memtrail
#                                              record` vs the expect block
#   expect.py compare NAME A.json B.json KEY[:TOL]...
#                                              KEY of A and B equal within TOL
#
# With --keep-runtime anywhere on the command line, the sample's figures
# are those of a run that leaves the C and C++ runtimes' memory allocated
# at exit (`memtrail record --keep-runtime`, memcheck's
# --run-libc-freeres=no --run-cxx-freeres=no): its `keep-runtime KEY N`
# lines replace the figures they name. Without it, the runtimes free their
# memory before the end (both tools' default), and the plain lines hold.
#
# Exit status: 0 all equal, 1 a mismatch (each printed as
# "MISMATCH <what>: <field> expected X, got Y"), 2 bad input.
#
# memcheck's log may hold several processes (a forked child under valgrind
# prints its own summary): only the first process in the log, the one
# valgrind started, is read.

import json
import re
import sys

FIELDS = ("allocations", "frees", "bytes_allocated", "peak_bytes",
          "peak_blocks", "leaked_bytes", "leaked_blocks")


def die(msg):
    print("expect.py: error: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_expect(path, keep_runtime=False):
    """The memtrail-expect block of a sample's top comment.

    Lines `KEY INT`, `snapshot N [label L] live_bytes X live_blocks Y`,
    `memcheck skip REASON...` (memcheck cannot run this sample),
    `exit N` (the sample's exit status, default 0), `dtv N` (N threads
    were created, each with a DTV of 16 x (TLS modules + 16) bytes counted
    with libc as the only TLS module; see adjust_dtv()), `dtv_leaked N`
    (N of those DTVs are still live at the end, default 0) and
    `keep-runtime KEY N` (KEY is N when the runtimes keep their memory at
    exit: only with keep_runtime)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"memtrail-expect:\s*\n(.*?)(?:\n\s*\*?\s*\n|\*/)", text, re.S)
    if not m:
        die(path + ": no memtrail-expect block")
    exp = {"snapshots": [], "exit": 0}
    kept = {}
    for raw in m.group(1).splitlines():
        line = raw.strip().lstrip("*").strip()
        if not line:
            continue
        w = line.split()
        if w[0] == "snapshot":
            snap = {"index": int(w[1])}
            i = 2
            while i + 1 < len(w):
                k, v = w[i], w[i + 1]
                snap[k] = v if k == "label" else int(v)
                i += 2
            snap.setdefault("label", "")
            exp["snapshots"].append(snap)
        elif w[0] == "memcheck":
            exp["memcheck"] = " ".join(w[1:])
        elif len(w) == 2 and (w[0] in FIELDS or w[0] in ("exit", "dtv", "dtv_leaked")):
            exp[w[0]] = int(w[1])
        elif len(w) == 3 and w[0] == "keep-runtime" and (w[1] in FIELDS or w[1] == "dtv_leaked"):
            kept[w[1]] = int(w[2])
        else:
            die("%s: bad expect line: %s" % (path, line))
    if keep_runtime:
        exp.update(kept)
    missing = [k for k in FIELDS if k not in exp]
    if missing:
        die("%s: expect block lacks %s" % (path, " ".join(missing)))
    for i, s in enumerate(exp["snapshots"]):
        if s["index"] != i or "live_bytes" not in s or "live_blocks" not in s:
            die("%s: bad snapshot line %d" % (path, i))
    return exp


def main_pid(text):
    m = re.search(r"^(?:==|--)(\d+)(?:==|--)", text, re.M)
    if not m:
        die("not a valgrind log")
    return m.group(1)


def num(s):
    return int(s.replace(",", ""))


def parse_memcheck(path):
    """memcheck's `in use at exit` and `total heap usage` of the first process,
    and its LEAK SUMMARY's four kinds when it has one."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    pid = main_pid(text)
    use = re.search(r"^==%s==\s+in use at exit: ([\d,]+) bytes in ([\d,]+) blocks"
                    % pid, text, re.M)
    tot = re.search(r"^==%s==\s+total heap usage: ([\d,]+) allocs, ([\d,]+) frees, "
                    r"([\d,]+) bytes allocated" % pid, text, re.M)
    if not use or not tot:
        die(path + ": no HEAP SUMMARY for process " + pid)
    r = {"allocations": num(tot.group(1)), "frees": num(tot.group(2)),
         "bytes_allocated": num(tot.group(3)),
         "leaked_bytes": num(use.group(1)), "leaked_blocks": num(use.group(2))}
    # The LEAK SUMMARY's kinds, under memtrail's JSON keys (nothing live:
    # memcheck prints no LEAK SUMMARY, every kind is 0).
    kinds = (("definitely lost", "definitely_lost"), ("indirectly lost", "indirectly_lost"),
             ("possibly lost", "possibly_lost"), ("still reachable", "reachable"))
    if re.search(r"^==%s==\s+All heap blocks were freed" % pid, text, re.M):
        for _, key in kinds:
            r[key + "_bytes"] = r[key + "_blocks"] = 0
    # the last LEAK SUMMARY: the one at exit (a VALGRIND_DO_LEAK_CHECK
    # during the run prints one of its own before)
    for label, key in kinds:
        m = re.findall(r"^==%s==\s+%s: ([\d,]+) bytes in ([\d,]+) blocks" % (pid, label),
                       text, re.M)
        if m:
            r[key + "_bytes"] = num(m[-1][0])
            r[key + "_blocks"] = num(m[-1][1])
    return r


CALL = re.compile(r"([A-Za-z_]\w*)\(([^()]*)\)(?: = (0x[0-9A-Fa-f]+))?")
FISHY = re.compile(r"Argument '\w+' of function \w+ has a fishy \(possibly negative\) "
                   r"value: -?\d+")


def parse_trace(path):
    """Recomputes every figure from memcheck's --trace-malloc=yes lines of the
    first process: the same counting rules as memtrail's (SPEC section 2),
    peak evaluated after each call, a realloc as one step. Returns None if
    the log has no trace."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    pid = main_pid(text)
    prefix = "--%s-- " % pid
    # A call and its result may be split over two lines when memcheck warns
    # in between: join the payloads, then drop the warnings.
    stream = "\n".join(FISHY.sub("", l[len(prefix):]) for l in text.splitlines()
                       if l.startswith(prefix))
    stream = stream.replace("\n = 0x", " = 0x")
    calls = CALL.findall(stream)
    if not calls:
        return None
    live = {}
    r = dict.fromkeys(FIELDS, 0)
    cur = 0

    def alloc(addr, size):
        nonlocal cur
        live[addr] = size
        cur += size
        r["allocations"] += 1
        r["bytes_allocated"] += size

    def free(addr):
        nonlocal cur
        if addr in live:
            cur -= live.pop(addr)
            r["frees"] += 1

    for name, args, res in calls:
        a = [x.strip() for x in args.split(",")] if args else []
        ret = int(res, 16) if res else None
        if name in ("free", "cfree") or name.startswith("_Zd"):
            free(int(a[0], 16))
        elif name == "realloc":
            if ret is None:
                continue        # realloc(0x0,n) reports a nested malloc
            if ret:
                free(int(a[0], 16))
                alloc(ret, int(a[1]))
        elif ret:
            if name == "calloc":
                size = int(a[0]) * int(a[1])
            elif len(a) == 1:
                size = int(a[0])          # malloc, _Znwm, _Znam, nothrow
            else:
                kv = dict(x.split() for x in a)   # "al 64", "size 100"
                size = int(kv["size"])
            alloc(ret, size)
        else:
            continue
        if cur > r["peak_bytes"]:
            r["peak_bytes"] = cur
            r["peak_blocks"] = len(live)
    r["leaked_bytes"] = cur
    r["leaked_blocks"] = len(live)
    return r


def compare(what, exp, got, keys):
    bad = 0
    for k in keys:
        if exp.get(k) != got.get(k):
            print("MISMATCH %s: %s expected %s, got %s" % (what, k, exp.get(k), got.get(k)))
            bad = 1
    return bad


def adjust_dtv(exp, extra_tls):
    """A new thread's DTV is calloc(TLS modules + 16, 16) (glibc's ld.so),
    so a preloaded profiler with its own TLS modules makes each 16 B larger
    per extra module. The expect block counts libc alone; add the difference
    to every byte figure taken after the threads were created (a sample with
    a `dtv` line creates its threads before any snapshot), and to the leak
    for the `dtv_leaked` ones still live at the end."""
    d = 16 * exp.get("dtv", 0) * extra_tls
    if d:
        for k in ("bytes_allocated", "peak_bytes"):
            exp[k] += d
        for s in exp["snapshots"]:
            s["live_bytes"] += d
    exp["leaked_bytes"] += 16 * exp.get("dtv_leaked", 0) * extra_tls
    return exp


def check_memtrail(src, path, extra_tls=0, keep_runtime=False):
    exp = adjust_dtv(parse_expect(src, keep_runtime), extra_tls)
    try:
        with open(path, encoding="utf-8") as f:
            got = json.load(f)
    except (OSError, ValueError) as e:
        print("MISMATCH %s memtrail: cannot read JSON summary: %s" % (src, e))
        return 1
    what = src + " memtrail"
    bad = compare(what, exp, got, FIELDS)
    snaps = got.get("snapshots")
    if not isinstance(snaps, list):
        print("MISMATCH %s: snapshots missing or not a list" % what)
        return 1
    if len(snaps) != len(exp["snapshots"]):
        print("MISMATCH %s: number of snapshots expected %d, got %d"
              % (what, len(exp["snapshots"]), len(snaps)))
        bad = 1
    for e, g in zip(exp["snapshots"], snaps):
        bad |= compare("%s snapshot %d" % (what, e["index"]), e, g,
                       ("index", "label", "live_bytes", "live_blocks"))
    return bad


SNAPLINE = re.compile(r"^memtrail: snapshot (\d+): (\d+) bytes \(([+-]\d+)\)$", re.M)


def check_stderr(src, path, extra_tls=0, keep_runtime=False):
    """The recorder's own live count at each snapshot, as printed on stderr
    (SPEC section 3), against the expect block; DELTA is the change since
    the previous snapshot (since 0 for the first)."""
    exp = adjust_dtv(parse_expect(src, keep_runtime), extra_tls)
    with open(path, encoding="utf-8", errors="replace") as f:
        got = SNAPLINE.findall(f.read())
    what = src + " memtrail stderr"
    bad = 0
    if len(got) != len(exp["snapshots"]):
        print("MISMATCH %s: snapshot lines expected %d, got %d"
              % (what, len(exp["snapshots"]), len(got)))
        bad = 1
    prev = 0
    for e, (idx, live, delta) in zip(exp["snapshots"], got):
        want = (e["index"], e["live_bytes"], e["live_bytes"] - prev)
        have = (int(idx), int(live), int(delta))
        if want != have:
            print("MISMATCH %s: snapshot line expected (index, live, delta) %s, got %s"
                  % (what, want, have))
            bad = 1
        prev = e["live_bytes"]
    return bad


def check_memcheck(src, log, extra_tls=0, keep_runtime=False):
    exp = adjust_dtv(parse_expect(src, keep_runtime), extra_tls)
    what = src + " memcheck" + (" (%d stand-in TLS modules)" % extra_tls if extra_tls else "")
    bad = compare(what, exp, parse_memcheck(log),
                  ("allocations", "frees", "bytes_allocated",
                   "leaked_bytes", "leaked_blocks"))
    tr = parse_trace(log)
    if tr is not None:
        bad |= compare(what + " trace", exp, tr, FIELDS)
    return bad


def compare_files(name, a, b, specs):
    with open(a, encoding="utf-8") as f:
        ja = json.load(f)
    with open(b, encoding="utf-8") as f:
        jb = json.load(f)
    bad = 0
    for spec in specs:
        key, _, tol = spec.partition(":")
        tol = int(tol or 0)
        va, vb = ja.get(key), jb.get(key)
        if va is None or vb is None or abs(va - vb) > tol:
            print("MISMATCH %s: %s %s vs %s (tolerance %d)" % (name, key, va, vb, tol))
            bad = 1
        else:
            print("ok %s: %s %s vs %s (tolerance %d)" % (name, key, va, vb, tol))
    return bad


def main(argv):
    keep = "--keep-runtime" in argv
    argv = [a for a in argv if a != "--keep-runtime"]
    if len(argv) < 3:
        die("usage: expect.py expect|memcheck|trace|check-memcheck|check-memtrail|compare ...")
    cmd = argv[1]
    if cmd == "expect":
        print(json.dumps(parse_expect(argv[2], keep), indent=1))
    elif cmd == "memcheck":
        print(json.dumps(parse_memcheck(argv[2]), indent=1))
    elif cmd == "trace":
        print(json.dumps(parse_trace(argv[2]), indent=1))
    elif cmd == "check-memcheck" and len(argv) in (4, 5):
        return check_memcheck(argv[2], argv[3], int(argv[4]) if len(argv) == 5 else 0, keep)
    elif cmd == "check-memtrail" and len(argv) in (4, 5):
        return check_memtrail(argv[2], argv[3], int(argv[4]) if len(argv) == 5 else 0, keep)
    elif cmd == "check-stderr" and len(argv) in (4, 5):
        return check_stderr(argv[2], argv[3], int(argv[4]) if len(argv) == 5 else 0, keep)
    elif cmd == "compare" and len(argv) >= 6:
        return compare_files(argv[2], argv[3], argv[4], argv[5:])
    else:
        die("bad command line")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
