#!/usr/bin/env python3
# tree_rows.py - turns a call tree as `memtrail report` prints it (text) and
# as `memtrail view` draws it (a tmux capture-pane of a fully expanded tree)
# into the same plain list, one line per node:
#
#     PATH<TAB>BYTES<TAB>BLOCKS<TAB>PERCENT
#
# PATH is the labels from the top of the tree down to the node, joined by
# " | "; numbers without commas or units, signed as printed. The lines are
# sorted, so two readers agree when the lists are equal, whatever order
# each shows siblings in. A percentage loses its "+" (the report signs a
# diff's, the viewer does not: the same figure).
#
# For: tests/e2e/view_report_points.sh and tests/e2e/report_late.sh. Not
# for: checking either format's layout (cli_report.sh, view_tmux.sh do).
#
#   tree_rows.py report FILE HEADER    the tree of FILE's section whose
#                                      header line starts with HEADER (e.g.
#                                      "maximum:", "snapshot 1 ",
#                                      "start - peak:"); the first line of
#                                      output is "TOTAL<TAB>BYTES" from the
#                                      header
#   tree_rows.py screen FILE           the tree rows of a captured screen;
#                                      the first line is "TITLE<TAB>..." (the
#                                      line above the column heads)
#
# Exit status 0, or 2 when the input is not what is expected (the section is
# missing, a report line is folded below the threshold, a screen row is
# still folded or the tree does not fit the screen); the reason on stderr.

import re
import sys

SEP = " | "


def die(msg):
    print("tree_rows.py: " + msg, file=sys.stderr)
    sys.exit(2)


def num(s):
    return int(s.replace(",", "").replace("+", ""))


def report(path, header):
    lines = open(path, encoding="utf-8").read().split("\n")
    # "NAME: 1,234B" (signed for a diff); not a summary line ("leaked:   1,234 B ...")
    hdr = re.compile(r": ([-+]?[\d,]+)B$")
    start = next((i for i, l in enumerate(lines)
                  if l.startswith(header) and hdr.search(l)), None)
    if start is None:
        die("%s: no section starting with '%s'" % (path, header))
    m = hdr.search(lines[start])
    out = ["TOTAL\t%d" % num(m.group(1))]
    stack = []
    rows = []
    for l in lines[start + 1:]:
        if not l.strip() or not l.startswith(" "):
            if not l.startswith(" "):
                break
            continue
        if re.match(r"^[ |]*$", l):
            continue
        m = re.match(r"^((?:  |\| )*)-> ([-+]?[\d.]+)% \(([-+]?[\d,]+)B, ([-+]?[\d,]+)x\)(.*)$", l)
        if not m:
            die("%s: cannot read '%s'" % (path, l))
        if not m.group(5).startswith(": "):
            die("%s: folded line '%s' (use -t 0)" % (path, l))
        depth = len(m.group(1)) // 2 - 1
        del stack[depth:]
        stack.append(m.group(5)[2:])
        rows.append("%s\t%d\t%d\t%s%%" % (SEP.join(stack), num(m.group(3)),
                                          num(m.group(4)), m.group(2).lstrip("+")))
    return out + sorted(rows)


# bytes % blocks allocs (or, in the leaks view on a narrow screen, the
# kinds tag), then the label; the leaks view's wide layout has four kind
# columns in the allocs column's stead.
ROW = re.compile(r"^([> ]) *([-+]?[\d,]+) +(\S+) +([-+]?[\d,]+) +([\d,]+|[-DIPR]{4})  ( *)([-+ ] )(.*)$")
ROW_KINDS = re.compile(r"^([> ]) *([-+]?[\d,]+) +(\S+) +([-+]?[\d,]+) +((?:[\d,]+ +){3}[\d,]+)  ( *)([-+ ] )(.*)$")


def screen(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    head = next((i for i, l in enumerate(lines) if re.search(r"bytes +% ", l)), None)
    if head is None or head == 0:
        die("%s: no tree on the screen" % path)
    out = ["TITLE\t" + lines[head - 1].rstrip()]
    kinds = re.search(r" blocks +definite +indirect +possible +reachable ", lines[head]) is not None
    stack = []
    rows = []
    body = lines[head + 1:]
    while body and not body[-1].strip():
        body.pop()
    # the last line is the status line; a full pane means the tree may not fit
    if len(body) < 2:
        die("%s: no status line" % path)
    status = body.pop()
    for l in body:
        if not l.strip() or l.strip() == "(nothing here)":
            continue
        m = (ROW_KINDS if kinds else ROW).match(l)
        if not m:
            die("%s: cannot read '%s'" % (path, l))
        if m.group(7) == "+ ":
            die("%s: a folded row '%s'" % (path, l.strip()))
        depth = len(m.group(6)) // 2
        del stack[depth:]
        stack.append(m.group(8).rstrip())
        rows.append("%s\t%d\t%d\t%s" % (SEP.join(stack), num(m.group(2)),
                                        num(m.group(4)), m.group(3)))
    if body and body[-1].strip():
        die("%s: the tree fills the pane: it may go on below (%s)" % (path, status.strip()))
    return out + sorted(rows)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "report":
        out = report(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "screen":
        out = screen(sys.argv[2])
    else:
        die("usage: tree_rows.py report FILE HEADER | screen FILE")
    print("\n".join(out))


main()
