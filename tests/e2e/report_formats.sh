#!/bin/sh
# report_formats.sh - the export formats of `memtrail report` on
# samples/phases.c: --format massif is read by ms_print and follows massif's
# layout strictly, with exactly one peak snapshot whose size is the
# documented peak; --format collapsed sums to the tree total, root first;
# --format json parses and follows gprof2dot's schema; -o writes the file.
#
# The peak (362,624 B) and leak (9,216 B) figures are the sample's own
# documented ones. Not for: tree contents (report_phases.sh).
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3
mt_have_memtrail || mt_skip "memtrail not built"
BIN=$MT_SAMPLES/phases
[ -x "$BIN" ] || mt_skip "$BIN not built (make samples)"
cd "$MT_TMP" || exit 1
PEAK=362624
LEAKED=9216

mt_record phases.data rec "$BIN"
[ "$(cat rec.rc)" = 0 ] || { cat rec.err; mt_fail "record failed"; mt_finish; }

# ---- massif -----------------------------------------------------------------
"$MEMTRAIL" report phases.data --format massif -o massif.out >massif.stdout 2>massif.err ||
	mt_fail "--format massif failed: $(cat massif.err)"
[ -s massif.stdout ] && mt_fail "-o: something written to stdout"
[ -s massif.out ] && mt_ok "-o massif.out written" || mt_fail "massif.out empty"
if command -v ms_print >/dev/null 2>&1; then
	if ms_print massif.out >ms.txt 2>ms.err; then
		mt_ok "ms_print reads massif.out"
		grep -q "(peak)" ms.txt && mt_ok "ms_print sees the peak" || mt_fail "ms_print: no peak"
	else
		mt_fail "ms_print rejects massif.out: $(head -n 3 ms.err)"
	fi
else
	echo "ms_print not installed: layout checked only"
fi
python3 - massif.out $PEAK $LEAKED <<'EOF' || mt_fail "massif layout"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
peak, leaked = int(sys.argv[2]), int(sys.argv[3])
assert lines[-1] == "", "ends with a newline"
lines = lines[:-1]
assert all(l.strip() for l in lines), "no blank lines"
assert lines[0].startswith("desc: "), lines[0]
assert not lines[1].startswith("desc:"), "exactly one desc line"
assert lines[1].startswith("cmd: ") and lines[1].endswith("phases"), lines[1]
assert lines[2] == "time_unit: ms", lines[2]
i, n, peaks, last_time, snaps = 3, 0, [], -1.0, []
node = re.compile(r"^( *)n(\d+): (\d+) (.+)$")
while i < len(lines):
    assert lines[i:i + 3] == ["#-----------", "snapshot=%d" % n, "#-----------"], lines[i:i + 3]
    i += 3
    fields = {}
    for key in ("time", "mem_heap_B", "mem_heap_extra_B", "mem_stacks_B", "heap_tree"):
        k, v = lines[i].split("=", 1)
        assert k == key, "expected %s=, got %r" % (key, lines[i])
        fields[key] = v
        i += 1
    t = float(fields["time"])
    assert re.match(r"^\d+(\.\d+)?$", fields["time"]), fields["time"]
    assert t >= last_time, "times never decrease"
    last_time = t
    assert fields["mem_heap_extra_B"] == "0" and fields["mem_stacks_B"] == "0"
    heap = int(fields["mem_heap_B"])
    assert 0 <= heap <= peak, "heap %d within the peak" % heap
    kind = fields["heap_tree"]
    assert kind in ("empty", "detailed", "peak"), kind
    if kind == "peak":
        peaks.append(heap)
    if kind != "empty":
        # the tree: one space per level; nK = K children; sizes sorted
        stack = []   # (indent, children expected, children seen, bytes, child sum, last bytes)
        m = node.match(lines[i])
        assert m and m.group(1) == "", "root line: %r" % lines[i]
        assert m.group(4) == "(heap allocation functions) malloc/new/new[], --alloc-fns, etc.", m.group(4)
        assert int(m.group(3)) == heap, "root %s = mem_heap_B %d" % (m.group(3), heap)
        def close(s):
            assert s[2] == s[1], "node at indent %d: n%d but %d children" % (s[0], s[1], s[2])
            assert s[4] <= s[3], "children (%d) above their parent (%d)" % (s[4], s[3])
        stack.append([0, int(m.group(2)), 0, int(m.group(3)), 0, None])
        i += 1
        while i < len(lines) and not lines[i].startswith("#"):
            m = node.match(lines[i])
            assert m, "node line: %r" % lines[i]
            ind, k, b = len(m.group(1)), int(m.group(2)), int(m.group(3))
            while stack and stack[-1][0] >= ind:
                close(stack.pop())
            assert stack and stack[-1][0] == ind - 1, "indent %d under %d" % (ind, stack[-1][0])
            p = stack[-1]
            p[2] += 1
            p[4] += b
            if " below massif's threshold" not in m.group(4):
                assert p[5] is None or b <= p[5], "siblings sorted by size"
                p[5] = b
                assert re.match(r"^0x[0-9A-F]+: .+", m.group(4)), m.group(4)
            else:
                assert k == 0
            stack.append([ind, k, 0, b, 0, None])
            i += 1
        while stack:
            close(stack.pop())
    snaps.append((kind, heap))
    n += 1
assert peaks == [peak], "exactly one peak snapshot, of %d B: %s" % (peak, peaks)
assert snaps[-1] == ("detailed", leaked), "the last snapshot is the end: %s" % (snaps[-1],)
print("ok: massif layout, %d snapshots, one peak of %d B" % (n, peak))
EOF

# ---- collapsed ----------------------------------------------------------------
for what in show-maximum:$PEAK show-leaks:$LEAKED; do
	opt=${what%%:*}; total=${what#*:}
	"$MEMTRAIL" report phases.data --$opt --format collapsed >col.txt 2>col.err ||
		mt_fail "collapsed --$opt: $(cat col.err)"
	python3 - col.txt "$total" <<'EOF' || mt_fail "collapsed --$opt"
import re, sys
total = 0
for l in open(sys.argv[1]):
    m = re.match(r"^([^ ;][^;]*(;[^;]+)*) (-?\d+)$", l.rstrip("\n"))
    assert m, "line %r" % l
    frames = m.group(1).split(";")
    assert frames[0] == "_start", "root (outermost caller) first: %r" % frames[0]
    assert frames[-1] in ("malloc", "realloc"), "the entry point last: %r" % frames[-1]
    total += int(m.group(3))
assert total == int(sys.argv[2]), "sum %d, tree total %s" % (total, sys.argv[2])
print("ok: collapsed sums to %d" % total)
EOF
done

# ---- gprof2dot JSON -------------------------------------------------------------
"$MEMTRAIL" report phases.data --show-maximum --format json -o max.json 2>json.err ||
	mt_fail "--format json: $(cat json.err)"
python3 - max.json $PEAK <<'EOF' || mt_fail "gprof2dot JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"version", "costs", "functions", "events"}, sorted(d)
assert d["version"] == 0
assert d["costs"] == [{"description": "Memory", "unit": "bytes"}], d["costs"]
fns = d["functions"]
assert fns and all(isinstance(f, dict) and isinstance(f.get("name"), str) for f in fns)
assert all(set(f) <= {"name", "module"} for f in fns)
assert len({f["name"] for f in fns}) == len(fns), "one function per name"
total = 0
for e in d["events"]:
    assert set(e) == {"callchain", "cost"}, e
    assert e["callchain"] and all(isinstance(i, int) and 0 <= i < len(fns) for i in e["callchain"])
    assert fns[e["callchain"][0]]["name"] in ("malloc", "realloc"), "innermost first"
    assert fns[e["callchain"][-1]]["name"] == "_start", "outermost last"
    assert len(e["cost"]) == 1 and isinstance(e["cost"][0], int)
    total += e["cost"][0]
assert total == int(sys.argv[2]), "costs sum to %d, not %s" % (total, sys.argv[2])
names = {f["name"] for f in fns}
assert any(n.startswith("make_report [") for n in names), "make_report listed"
print("ok: gprof2dot JSON, %d functions, %d events, %d bytes" % (len(fns), len(d["events"]), total))
EOF
mt_finish
