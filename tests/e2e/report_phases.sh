#!/bin/sh
# report_phases.sh - the trees of `memtrail report` on samples/phases.c: the
# maximum, leaks, snapshot, diff and delta trees name the right functions at
# the right file:line with the figures the sample documents; --diff 0 2 is
# the difference of its documented snapshots; --diff start end is the leaks;
# every tree total agrees with `report --summary`; --temporary finds the
# scratch buffer; --timeline marks the peak and lists the snapshots.
#
# The expected figures come from the sample's own comment (its heap is
# derived there from its code) and the line numbers from grepping its
# source, never from memtrail's output. Not for: export formats
# (report_formats.sh), symbolization details (report_symbols.sh).
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3
mt_have_memtrail || mt_skip "memtrail not built"
SRC=$MT_TOP/samples/phases.c
BIN=$MT_SAMPLES/phases
[ -x "$BIN" ] || mt_skip "$BIN not built (make samples)"
cd "$MT_TMP" || exit 1

# Line of the first source line containing STRING.
line_of() { grep -n -F -- "$1" "$SRC" | head -n 1 | cut -d: -f1; }
# 1234567 -> 1,234,567 (a leading sign kept).
commas() { echo "$1" | sed ':a;s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/;ta'; }
# PART TOTAL -> percentage with 2 decimals.
pct() { awk -v p="$1" -v t="$2" 'BEGIN { printf "%.2f", 100 * p / t }'; }
# has FILE STRING: FILE holds STRING on one line.
has() {
	if grep -q -F -- "$2" "$1"; then mt_ok "$1: $2"; else mt_fail "$1 lacks: $2"; fi
}
# tree_line FILE BYTES BLOCKS TOTAL LABEL: "-> P% (BYTES, Nx): LABEL".
tree_line() {
	has "$1" "-> $(pct "$2" "$4")% ($(commas "$2")B, ${3}x): $5"
}

mt_record phases.data rec "$BIN"
[ "$(cat rec.rc)" = 0 ] || { cat rec.err; mt_fail "record failed"; mt_finish; }
mt_summary phases.data summary.json || { cat summary.json.err; mt_fail "summary failed"; mt_finish; }

# Lines of the source (the return addresses' lines).
L_XMALLOC=$(line_of 'void *p = malloc(n);')
L_CONFIG=$(line_of 'config = xmalloc(sizeof(*config));')
L_ENTRY=$(line_of 'config->entries[i] = xmalloc(256);')
L_TABLE=$(line_of 'rows = xmalloc(NROWS * sizeof(*rows));')
L_ROW=$(line_of 'rows[i] = xmalloc(ROW_SIZE);')
L_REALLOC=$(line_of 'char *p = realloc(rows[i], 2 * ROW_SIZE);')
L_SCRATCH=$(line_of 'scratch = xmalloc(SCRATCH_SIZE);')
L_REPLACE=$(line_of 'rows[i] = xmalloc(ROW_SIZE / 2);')
L_MAIN_REPORT=$(line_of 'sum = make_report();')
L_MAIN_GROW=$(line_of 'grow_rows();')
L_MAIN_INDEX=$(line_of '	build_index();')
L_MAIN_CONFIG=$(line_of '	load_config();')
F=samples/phases.c

# ---- maximum: the documented heap at the peak ------------------------------
# config 1,024 (1) + entries 4 x 256 (4) + row table 128 (1) + rows 8..15
# 8 x 4,096 (8) + rows 0..7 realloc'ed to 8,192 (8) + scratch 262,144 (1)
PEAK=362624
"$MEMTRAIL" report phases.data --show-maximum -t 0 >max.txt 2>max.err ||
	mt_fail "report --show-maximum failed: $(cat max.err)"
has max.txt "maximum: $(commas $PEAK)B"
tree_line max.txt $((1024 + 1024 + 128 + 32768 + 262144)) 15 $PEAK "malloc"
tree_line max.txt $((1024 + 1024 + 128 + 32768 + 262144)) 15 $PEAK "xmalloc [$F:$L_XMALLOC]"
tree_line max.txt 262144 1 $PEAK "make_report [$F:$L_SCRATCH]"
tree_line max.txt 262144 1 $PEAK "main [$F:$L_MAIN_REPORT]"
tree_line max.txt 32768 8 $PEAK "build_index [$F:$L_ROW]"
tree_line max.txt 128 1 $PEAK "build_index [$F:$L_TABLE]"
tree_line max.txt 1024 1 $PEAK "load_config [$F:$L_CONFIG]"
tree_line max.txt 1024 4 $PEAK "load_config [$F:$L_ENTRY]"
tree_line max.txt 65536 8 $PEAK "realloc"
tree_line max.txt 65536 8 $PEAK "grow_rows [$F:$L_REALLOC]"
tree_line max.txt 65536 8 $PEAK "main [$F:$L_MAIN_GROW]"
# the default threshold folds the three below 1% (1,024 + 1,024 + 128)
"$MEMTRAIL" report phases.data --show-maximum >max1.txt 2>/dev/null
has max1.txt "-> $(pct 2176 $PEAK)% (2,176B, 6x) in 3 places, all below the 1% threshold"
# the first line of the tree is the largest entry point
[ "$(sed -n 2p max1.txt)" = "  -> $(pct 297088 $PEAK)% (297,088B, 15x): malloc" ] ||
	mt_fail "maximum: first entry is not malloc: $(sed -n 2p max1.txt)"

# ---- leaks: config (1,024) and rows 14, 15 (2 x 4,096) ----------------------
"$MEMTRAIL" report phases.data --show-leaks >leaks.txt 2>/dev/null ||
	mt_fail "report --show-leaks failed"
has leaks.txt "leaked: 9,216B"
tree_line leaks.txt 8192 2 9216 "build_index [$F:$L_ROW]"
tree_line leaks.txt 1024 1 9216 "load_config [$F:$L_CONFIG]"
tree_line leaks.txt 8192 2 9216 "main [$F:$L_MAIN_INDEX]"
tree_line leaks.txt 1024 1 9216 "main [$F:$L_MAIN_CONFIG]"

# ---- snapshots ----------------------------------------------------------------
"$MEMTRAIL" report phases.data --show-snapshots -t 0 >snaps.txt 2>/dev/null ||
	mt_fail "report --show-snapshots failed"
has snaps.txt "snapshot 0 (loaded): 67,712B"
has snaps.txt "snapshot 1 (grown): 92,288B"
has snaps.txt "snapshot 2 (freed): 9,216B"
# snapshot 1: 4 rows replaced by 2,048 B blocks from replace_rows
tree_line snaps.txt 8192 4 92288 "replace_rows [$F:$L_REPLACE]"

# ---- diff 0 2 = snapshot 2 - snapshot 0, stack by stack --------------------
# rows: 8,192 - 65,536 (2 - 16 blocks); table: -128; entries: -1,024 (4)
"$MEMTRAIL" report phases.data --diff 0 2 -t 0 >diff02.txt 2>/dev/null ||
	mt_fail "report --diff 0 2 failed"
has diff02.txt "snapshot 0 - snapshot 2: $(commas $((9216 - 67712)))B"
GROSS=$((57344 + 128 + 1024))
has diff02.txt "-> -$(pct 57344 $GROSS)% (-57,344B, -14x): build_index [$F:$L_ROW]"
has diff02.txt "-> -$(pct 128 $GROSS)% (-128B, -1x): build_index [$F:$L_TABLE]"
has diff02.txt "-> -$(pct 1024 $GROSS)% (-1,024B, -4x): load_config [$F:$L_ENTRY]"
grep -q "load_config \[$F:$L_CONFIG\]" diff02.txt &&
	mt_fail "diff 0 2: the config block did not change but is listed"

# ---- diff start end = the leaks ----------------------------------------------
"$MEMTRAIL" report phases.data --diff start end >diffse.txt 2>/dev/null ||
	mt_fail "report --diff start end failed"
has diffse.txt "start - end: +9,216B"
"$MEMTRAIL" report phases.data --diff start end --format collapsed >diffse.col 2>/dev/null
"$MEMTRAIL" report phases.data --show-leaks --format collapsed >leaks.col 2>/dev/null
if [ -s leaks.col ] && cmp -s diffse.col leaks.col; then
	mt_ok "diff start end: the same stacks and bytes as the leaks"
else
	mt_fail "diff start end differs from the leaks"; diff diffse.col leaks.col | head
fi
# and peak - start is the maximum
"$MEMTRAIL" report phases.data --diff start peak --format collapsed >diffsp.col 2>/dev/null
"$MEMTRAIL" report phases.data --show-maximum --format collapsed >max.col 2>/dev/null
cmp -s diffsp.col max.col && mt_ok "diff start peak = maximum" || mt_fail "diff start peak differs from the maximum"

# ---- deltas: each one the difference of consecutive documented snapshots ----
"$MEMTRAIL" report phases.data --show-snapshot-deltas >deltas.txt 2>/dev/null ||
	mt_fail "report --show-snapshot-deltas failed"
has deltas.txt "start - snapshot 0: +67,712B"
has deltas.txt "snapshot 0 - snapshot 1: +$(commas $((92288 - 67712)))B"
has deltas.txt "snapshot 1 - snapshot 2: $(commas $((9216 - 92288)))B"

# ---- no option: the summary, then the maximum and the leaks trees -----------
"$MEMTRAIL" report phases.data -o default.txt 2>/dev/null || mt_fail "report (no option) failed"
sed -n '/^maximum: /,$p' default.txt >default.trees
"$MEMTRAIL" report phases.data --show-maximum --show-leaks >maxleaks.txt 2>/dev/null
if [ -s default.trees ] && cmp -s default.trees maxleaks.txt && grep -q '^peak: ' default.txt; then
	mt_ok "no option: summary then the maximum and leaks trees"
else
	mt_fail "no option: the trees differ from --show-maximum --show-leaks"
fi

# ---- a missing snapshot is an error ------------------------------------------
"$MEMTRAIL" report phases.data --diff 0 7 >/dev/null 2>missing.err
rc=$?
[ $rc -ne 0 ] && mt_ok "--diff 0 7: exit $rc ($(cat missing.err))" || mt_fail "--diff 0 7 succeeded"

# ---- every tree total agrees with the summary --------------------------------
python3 - summary.json max.txt leaks.txt snaps.txt <<'EOF' || mt_fail "trees disagree with the summary"
import json, re, sys
s = json.load(open(sys.argv[1]))
def num(x): return int(x.replace(",", ""))
def header(path, name):
    for l in open(path):
        m = re.match(r"^%s: ([-+0-9,]+)B$" % re.escape(name), l.rstrip("\n"))
        if m: return num(m.group(1))
    sys.exit("%s: no '%s' header" % (path, name))
def top_blocks(path, name):
    # sum of the blocks of the top-level entries under the header
    out, on = 0, False
    for l in open(path):
        l = l.rstrip("\n")
        if l.startswith(name + ":"): on = True; continue
        if on and not l.startswith("  "): break
        m = re.match(r"^  -> [-+0-9.]+% \(([-+0-9,]+)B, ([-+0-9,]+)x\)", l)
        if on and m: out += num(m.group(2))
    return out
assert header(sys.argv[2], "maximum") == s["peak_bytes"], "maximum vs peak_bytes"
assert top_blocks(sys.argv[2], "maximum") == s["peak_blocks"], "maximum blocks vs peak_blocks"
assert header(sys.argv[3], "leaked") == s["leaked_bytes"], "leaked vs leaked_bytes"
assert top_blocks(sys.argv[3], "leaked") == s["leaked_blocks"], "leaked blocks"
for sn in s["snapshots"]:
    name = "snapshot %d (%s)" % (sn["index"], sn["label"]) if sn["label"] else "snapshot %d" % sn["index"]
    assert header(sys.argv[4], name) == sn["live_bytes"], name
    assert top_blocks(sys.argv[4], name) == sn["live_blocks"], name + " blocks"
print("ok: every tree total equals the summary's figure")
EOF

# ---- temporary: make_report's scratch buffer is malloc'ed, used, freed with
# no allocation in between; no other block of the sample is freed right
# after its own allocation ---------------------------------------------------
"$MEMTRAIL" report phases.data --temporary >temp.txt 2>/dev/null || mt_fail "--temporary failed"
has temp.txt "temporary: 1 allocation (262,144B)"
has temp.txt "-> 100.00% (262,144B, 1x): make_report [$F:$L_SCRATCH]"

# ---- timeline: one peak column, the three snapshots in the table ------------
"$MEMTRAIL" report phases.data --timeline >tl.txt 2>/dev/null || mt_fail "--timeline failed"
has tl.txt "timeline: peak 362,624B in 23 blocks at"
python3 - tl.txt <<'EOF' || mt_fail "timeline layout"
import sys
lines = open(sys.argv[1]).read().split("\n")
graph = [l for l in lines if len(l) >= 10 and l[9] in "^|"]
assert len(graph) == 20, "20 rows, got %d" % len(graph)
cols = [set(l[10:82]) for l in graph]
peak_cols = {i for l in graph for i, c in enumerate(l[10:]) if c == "#"}
assert len(peak_cols) == 1, "one peak column, got %s" % sorted(peak_cols)
assert "#" in graph[0], "the peak column reaches the top row"
assert lines[1].strip() == "KiB", "unit KiB for a 354 KiB peak: %r" % lines[1]
assert graph[0].startswith("    354.1^"), graph[0]
head = [i for i, l in enumerate(lines) if l.split()[:2] == ["index", "label"]]
assert len(head) == 1, "one snapshot table header"
rows = [l.split() for l in lines[head[0] + 1:] if l.strip()]
assert [(r[0], r[1], r[3], r[4]) for r in rows] == [
    ("0", "loaded", "67,712", "22"), ("1", "grown", "92,288", "22"),
    ("2", "freed", "9,216", "3")], rows
print("ok: timeline graph and snapshot table")
EOF
mt_finish
