#!/bin/sh
# report_late.sh - a leak first seen after the peak is named, with its exact
# figures, by every reader: samples/late_leak.c (a 1 MiB peak, then 4 KiB
# leaked from late_leak()) recorded three ways,
#   base       the leak alone after the peak;
#   plugin     then a library, built here from tests/e2e/late_plugin.c and
#              dlopen'ed after the peak, leaks 8 KiB from plugin_leak();
#   snapshot   snapshots "freed" (0 B) and "leaked" (4 KiB) after the peak;
# and read through `memtrail report` (the default report: summary, peak and
# leaks trees), `report --diff peak end`, `report --show-leaks --format
# json` and `--format collapsed`, and `memtrail view` in tmux (the leaks
# view, the end, each snapshot, the diff from a mark at the peak to the
# end). Each must show the leak under late_leak (and plugin_leak) at the
# line that allocates it, with 4,096 B (8,192 B) in 1 block, the peak
# under big_buffer with 1,048,576 B in 1 block, and no frame that memtrail
# could not name: no "?" (a stack it lost), no bare address (no module),
# and no "module+0xOFF" in the sample or the library (both have symbols and
# line tables).
#
# The figures are the sample's, worked out in its top comment; line
# numbers are looked up in the sources. dlopen's own blocks (glibc's, not
# counted by hand) are only required to sit under a dlopen frame and to
# make up the rest of the leak.
#
# Not for: the summary's figures in general (accuracy_samples.sh), the
# agreement of report and view on every node (view_report_points.sh).

[ -z "${MT_TMP:-}" ] && own_tmp=1
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3 cc
mt_have_memtrail || mt_skip "memtrail not built"
BIN=$MT_SAMPLES/late_leak
[ -x "$BIN" ] || mt_skip "samples not built (make samples): no $MT_SAMPLES/late_leak"
trap 'mt_tmux_stop; [ -n "${own_tmp:-}" ] && rm -rf "$MT_TMP"' EXIT
cd "$MT_TMP" || exit 1
ROWS="python3 $MT_TOP/tests/e2e/tree_rows.py"
SRC=$MT_TOP/samples/late_leak.c
PSRC=$MT_TOP/tests/e2e/late_plugin.c
PLUG=$MT_TMP/liblateplug.so
cc -shared -fPIC -g -O0 -o "$PLUG" "$PSRC" || mt_skip "cannot build a shared library"

# ---- the truth: the sample's figures and its source lines -------------------
PEAK=1048576 LEAK=4096 PLEAK=8192
line() { grep -n -F -e "$2" "$1" | head -n 1 | cut -d: -f1; }
L_BIG=$(line "$SRC" "char *p = malloc(BIG_SIZE);")
L_LEAK=$(line "$SRC" "kept = malloc(LEAK_SIZE);")
L_MAIN_BIG=$(line "$SRC" "big = big_buffer();")
L_MAIN_LEAK=$(line "$SRC" "	late_leak();")
L_MAIN_PLUG=$(line "$SRC" "load_plugin(argv[2]);")
L_CALL_PLUG=$(line "$SRC" "plugin_block = fn();")
L_PLUG=$(line "$PSRC" "void *p = malloc(8192);")
# the labels as extended regexes: "function [FILE:LINE]", FILE as compiled
lab() { printf '%s \\[([^]]*/)?%s:%s\\]' "$1" "$(printf '%s' "$2" | sed 's/\./\\./g')" "$3"; }
BIG_PATH="malloc \| $(lab big_buffer late_leak.c "$L_BIG") \| $(lab main late_leak.c "$L_MAIN_BIG")"
LEAK_PATH="malloc \| $(lab late_leak late_leak.c "$L_LEAK") \| $(lab main late_leak.c "$L_MAIN_LEAK")"
PLUG_PATH="malloc \| $(lab plugin_leak late_plugin.c "$L_PLUG") \| $(lab load_plugin late_leak.c "$L_CALL_PLUG") \| $(lab main late_leak.c "$L_MAIN_PLUG")"

commas() {   # commas N [+]: 362624 -> 362,624 (+362,624 with + and N > 0)
	python3 -c 'import sys; v=int(sys.argv[1]); s=f"{v:,}"
print(("+" + s) if len(sys.argv) > 2 and v > 0 else s)' "$@"
}
re_quote() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g'; }
check() {   # check DESCRIPTION COMMAND...
	_d=$1; shift
	if "$@"; then mt_ok "$_d"; else mt_fail "$_d"; fi
}
# node ROWS PATH_RE BYTES BLOCKS: ROWS (tree_rows.py output) has a node
# whose path starts with PATH_RE, with exactly these bytes and blocks
node() {
	grep -qE -- "^$2	$3	$4	" "$1" ||
		{ echo "--- no /$2/ with $3 B, $4 blocks in $1:"; cut -f1-3 "$1" | head -n 30; return 1; }
}
# named LABELS-FILE: every label (one a line) is a frame memtrail named
named() {
	_bad=$(grep -E -e '^\?$' -e '^0x[0-9a-f]+$' -e '^(late_leak|liblateplug\.so)\+0x' "$1")
	[ -z "$_bad" ] || { echo "--- unnamed frames in $1:"; echo "$_bad" | head -n 5; return 1; }
}
labels_of_rows() { tail -n +2 "$1" | cut -f1 | sed 's/ | /\n/g' | sort -u; }

# ---- one recording, every report ---------------------------------------------
# report_checks V LEAKED LEAKED_BLOCKS: the report side of variant V
report_checks() {
	v=$1 lk=$2 lkb=$3
	r() { timeout "$MT_TIMEOUT" "$MEMTRAIL" report "$v.data" "$@"; }

	# the default report: summary, then the peak and the leaks trees
	r -t 0 >"$v.default.txt" 2>"$v.default.err" || mt_fail "$v: report failed: $(cat "$v.default.err")"
	check "$v: report: summary peak 1,048,576 B in 1 blocks" \
		grep -q "^peak: *1,048,576 B (1.0 MiB) in 1 blocks at " "$v.default.txt"
	check "$v: report: summary leaked $(commas "$lk") B in $lkb blocks" \
		grep -q "^leaked: *$(commas "$lk") B .* in $lkb blocks\$" "$v.default.txt"
	$ROWS report "$v.default.txt" "maximum:" >"$v.max.rows" || mt_fail "$v: no peak tree"
	$ROWS report "$v.default.txt" "leaked:" >"$v.leak.rows" || mt_fail "$v: no leaks tree"
	check "$v: report: peak tree total $PEAK" grep -qx "TOTAL	$PEAK" "$v.max.rows"
	check "$v: report: big_buffer holds the peak" node "$v.max.rows" "$BIG_PATH" $PEAK 1
	check "$v: report: leaks tree total $lk" grep -qx "TOTAL	$lk" "$v.leak.rows"
	check "$v: report: late_leak leaks 4,096 B in 1 block" node "$v.leak.rows" "$LEAK_PATH" $LEAK 1
	if [ "$v" = plugin ]; then
		check "$v: report: plugin_leak leaks 8,192 B in 1 block" node "$v.leak.rows" "$PLUG_PATH" $PLEAK 1
	else
		# every node is on late_leak's branch: malloc, late_leak, main, ...
		check "$v: report: the leaks tree is late_leak's branch alone" \
			sh -c "! tail -n +2 '$v.leak.rows' | grep -vE -e '^$LEAK_PATH' \
				-e '^malloc	' -e '^malloc \| $(lab late_leak late_leak.c "$L_LEAK")	' | grep -q ."
	fi
	{ labels_of_rows "$v.max.rows"; labels_of_rows "$v.leak.rows"; } >"$v.report.labels"
	check "$v: report: every frame named" named "$v.report.labels"

	# --diff peak end: the peak's block gone, the late leaks come
	r -t 0 --diff peak end >"$v.diff.txt" 2>&1 || mt_fail "$v: --diff peak end failed: $(cat "$v.diff.txt")"
	$ROWS report "$v.diff.txt" "peak - end:" >"$v.diff.rows" || mt_fail "$v: no diff tree"
	check "$v: --diff peak end: total $(commas $((lk - PEAK)) +) B" \
		grep -qx "TOTAL	$((lk - PEAK))" "$v.diff.rows"
	check "$v: --diff peak end: big_buffer -1,048,576 B, -1 block" node "$v.diff.rows" "$BIG_PATH" -$PEAK -1
	check "$v: --diff peak end: late_leak +4,096 B, +1 block" node "$v.diff.rows" "$LEAK_PATH" $LEAK 1
	[ "$v" = plugin ] &&
		check "$v: --diff peak end: plugin_leak +8,192 B, +1 block" node "$v.diff.rows" "$PLUG_PATH" $PLEAK 1
	labels_of_rows "$v.diff.rows" >"$v.diff.labels"
	check "$v: --diff peak end: every frame named" named "$v.diff.labels"

	# --show-leaks --format json (gprof2dot): per stack, caller last
	r --show-leaks --format json >"$v.json" 2>&1 || mt_fail "$v: --format json failed"
	python3 - "$v.json" "$v" "$lk" "$L_LEAK" "$L_PLUG" "$BIN" "$PLUG" >"$v.json.check" 2>&1 <<'EOF'
import json, re, sys
path, v, lk, l_leak, l_plug, binary, plug = sys.argv[1:]
d = json.load(open(path))
fns = d["functions"]
bad = []
total = 0
seen = {}
for e in d["events"]:
    names = [fns[i]["name"] for i in e["callchain"]]
    mods = [fns[i].get("module", "") for i in e["callchain"]]
    total += e["cost"][0]
    for n in names:
        if n == "?" or re.fullmatch(r"0x[0-9a-f]+", n) or re.match(r"(late_leak|liblateplug\.so)\+0x", n):
            bad.append(n)
    if names[0] != "malloc" and names[0] != "calloc" and names[0] != "realloc":
        bad.append("allocator " + names[0])
    if re.fullmatch(r"late_leak \[(.*/)?late_leak\.c:%s\]" % l_leak, names[1]):
        seen["late_leak"] = (e["cost"][0], mods[1] == binary)
    elif re.fullmatch(r"plugin_leak \[(.*/)?late_plugin\.c:%s\]" % l_plug, names[1]):
        seen["plugin_leak"] = (e["cost"][0], mods[1] == plug)
    elif not any(re.match(r"_*dlopen", n) for n in names):
        bad.append("a leak neither late nor dlopen's: " + ";".join(names))
want = {"late_leak": (4096, True)}
if v == "plugin":
    want["plugin_leak"] = (8192, True)
print("total %d (want %s)" % (total, lk))
print("seen %s (want %s)" % (sorted(seen.items()), sorted(want.items())))
print("bad %s" % bad[:5])
ok = total == int(lk) and seen == want and not bad
print("ok" if ok else "mismatch")
EOF
	check "$v: --format json: late_leak 4,096 B$([ "$v" = plugin ] && echo ", plugin_leak 8,192 B") in their modules, total $lk, every frame named" \
		sh -c "tail -n 1 '$v.json.check' | grep -qx ok || { cat '$v.json.check'; exit 1; }"

	# --show-leaks --format collapsed: "caller;...;malloc BYTES"
	r --show-leaks --format collapsed >"$v.collapsed" 2>&1 || mt_fail "$v: --format collapsed failed"
	sum=$(awk '{ s += $NF } END { print s + 0 }' "$v.collapsed")
	check "$v: --format collapsed: lines add up to $lk" [ "$sum" = "$lk" ]
	check "$v: --format collapsed: ...;late_leak [late_leak.c:$L_LEAK];malloc 4096" \
		grep -qE "^_start;.*;$(lab main late_leak.c "$L_MAIN_LEAK");$(lab late_leak late_leak.c "$L_LEAK");malloc $LEAK\$" "$v.collapsed"
	[ "$v" = plugin ] &&
		check "$v: --format collapsed: ...;plugin_leak [late_plugin.c:$L_PLUG];malloc 8192" \
			grep -qE "^_start;.*;$(lab load_plugin late_leak.c "$L_CALL_PLUG");$(lab plugin_leak late_plugin.c "$L_PLUG");malloc $PLEAK\$" "$v.collapsed"
	sed 's/ [0-9]*$//' "$v.collapsed" | tr ';' '\n' | sort -u >"$v.collapsed.labels"
	check "$v: --format collapsed: every frame named" named "$v.collapsed.labels"
}

# ---- the viewer ------------------------------------------------------------------
# view_checks V LEAKED LEAKED_BLOCKS: the viewer on V's log
view_checks() {
	v=$1 lk=$2 lkb=$3
	mt_tmux_keys clear Enter
	mt_tmux_keys "'$MEMTRAIL' view '$MT_TMP/$v.data'; echo view-stat\"\"us=\$?" Enter
	mt_tmux_wait "^Live at peak: " 20 || { mt_fail "$v: the viewer did not start"; return; }
	check "$v: view: live at peak 1,048,576 B in 1 blocks" \
		grep -q "^Live at peak: 1,048,576 B in 1 blocks" "$MT_TMP/tmux.cur"
	# the paths below are the report's: the entry points first (e)
	mt_tmux_keys e
	mt_tmux_wait " callee first, sorted by " || mt_fail "$v: view: e does not show the entry points"

	# leaks view, then live at the end: the same rows
	for where in leaks end; do
		if [ $where = leaks ]; then
			mt_tmux_keys l
			title="Leaked (live at the end): $(commas "$lk") B in $(commas "$lkb") blocks"
		else
			mt_tmux_keys End
			title="Live at end: $(commas "$lk") B in $(commas "$lkb") blocks"
		fi
		mt_tmux_wait "^$(re_quote "$title")" || { mt_fail "$v: view: no '$title'"; continue; }
		mt_tmux_expand_all 250 || mt_fail "$v: view: keys not handled"
		mt_tmux_screen "$v.$where.scr"
		$ROWS screen "$v.$where.scr" >"$v.$where.vrows" || { mt_fail "$v: view: $where tree not read"; continue; }
		check "$v: view $where: title '$title'" grep -qF "TITLE	$title" "$v.$where.vrows"
		check "$v: view $where: late_leak 4,096 B in 1 block" node "$v.$where.vrows" "$LEAK_PATH" $LEAK 1
		[ "$v" = plugin ] &&
			check "$v: view $where: plugin_leak 8,192 B in 1 block" node "$v.$where.vrows" "$PLUG_PATH" $PLEAK 1
		labels_of_rows "$v.$where.vrows" >"$v.$where.labels"
		check "$v: view $where: every frame named" named "$v.$where.labels"
		[ $where = leaks ] && mt_tmux_keys l
	done

	# snapshots: from the end, N goes back one
	if [ "$v" = snapshot ]; then
		mt_tmux_keys End N
		mt_tmux_wait "^Live at snapshot 1 leaked: 4,096 B in 1 blocks" ||
			mt_fail "$v: view: snapshot 1 is not 4,096 B in 1 blocks"
		mt_tmux_expand_all 250
		mt_tmux_screen "$v.s1.scr"
		$ROWS screen "$v.s1.scr" >"$v.s1.vrows" || mt_fail "$v: view: snapshot 1 tree not read"
		check "$v: view snapshot 1: late_leak 4,096 B in 1 block" node "$v.s1.vrows" "$LEAK_PATH" $LEAK 1
		mt_tmux_keys N
		mt_tmux_wait "^Live at snapshot 0 freed: 0 B in 0 blocks" ||
			mt_fail "$v: view: snapshot 0 is not 0 B in 0 blocks"
		check "$v: view snapshot 0: nothing live" grep -q "^  (nothing here)" "$MT_TMP/tmux.cur"
	fi

	# a mark at the peak, the cursor at the end, d
	mt_tmux_keys p m End
	mt_tmux_wait "^Live at end: " || mt_fail "$v: view: End"
	mt_tmux_keys d
	title="Diff from peak to end: $(commas $((lk - PEAK)) +) B, $(commas $((lkb - 1)) +) blocks"
	if mt_tmux_wait "^$(re_quote "$title")"; then
		mt_tmux_expand_all 250
		mt_tmux_screen "$v.diff.scr"
		$ROWS screen "$v.diff.scr" >"$v.diff.vrows" || mt_fail "$v: view: diff tree not read"
		check "$v: view diff peak to end: big_buffer -1,048,576 B, -1 block" node "$v.diff.vrows" "$BIG_PATH" -$PEAK -1
		check "$v: view diff peak to end: late_leak +4,096 B, +1 block" node "$v.diff.vrows" "$LEAK_PATH" $LEAK 1
		[ "$v" = plugin ] &&
			check "$v: view diff peak to end: plugin_leak +8,192 B, +1 block" node "$v.diff.vrows" "$PLUG_PATH" $PLEAK 1
		labels_of_rows "$v.diff.vrows" >"$v.vdiff.labels"
		check "$v: view diff: every frame named" named "$v.vdiff.labels"
	else
		mt_fail "$v: view: no '$title'"
	fi
	mt_tmux_keys q
	mt_tmux_wait "^view-status=0" 10 || mt_fail "$v: view: q does not end the viewer with status 0"
}

have_tmux=0
command -v tmux >/dev/null 2>&1 && mt_tmux_start 300 300 && have_tmux=1
[ $have_tmux = 1 ] || echo "tmux not usable: the viewer's half is skipped"

for v in base snapshot plugin; do
	echo "== $v"
	case $v in
	base) mt_record "$v.data" "$v.rec" "$BIN";;
	snapshot) mt_record "$v.data" "$v.rec" "$BIN" snapshot;;
	plugin) mt_record "$v.data" "$v.rec" "$BIN" plugin "$PLUG";;
	esac
	if [ "$(cat "$v.rec.rc")" != 0 ] || ! grep -qx "late_leak: done" "$v.rec.out"; then
		mt_fail "$v: recording failed (exit $(cat "$v.rec.rc")): $(cat "$v.rec.out" "$v.rec.err")"
		continue
	fi
	mt_summary "$v.data" "$v.sum.json" || { mt_fail "$v: no summary"; continue; }
	js() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$v.sum.json" "$1"; }
	check "$v: summary: peak $PEAK B in 1 block" [ "$(js 'd["peak_bytes"], d["peak_blocks"]')" = "($PEAK, 1)" ]
	if [ $v = plugin ]; then
		# dlopen's own blocks come on top: the rest is checked to be theirs
		lk=$(js 'd["leaked_bytes"]'); lkb=$(js 'd["leaked_blocks"]')
		check "$v: summary: leaked $lk B in $lkb blocks, at least the 2 late leaks" \
			[ "$lk" -gt $((LEAK + PLEAK)) -a "$lkb" -gt 2 ]
	else
		lk=$LEAK lkb=1
		check "$v: summary: 2 allocations, 1 free, 1,052,672 B, leaked 4,096 B in 1 block" \
			[ "$(js 'd["allocations"], d["frees"], d["bytes_allocated"], d["leaked_bytes"], d["leaked_blocks"]')" = \
			  "(2, 1, 1052672, 4096, 1)" ]
	fi
	if [ $v = snapshot ]; then
		check "$v: summary: snapshots freed 0 B / 0, leaked 4,096 B / 1" \
			[ "$(js '[(s["index"], s["label"], s["live_bytes"], s["live_blocks"]) for s in d["snapshots"]]')" = \
			  "[(0, 'freed', 0, 0), (1, 'leaked', 4096, 1)]" ]
		timeout "$MT_TIMEOUT" "$MEMTRAIL" report -t 0 --show-snapshots "$v.data" >"$v.snaps.txt" 2>&1
		$ROWS report "$v.snaps.txt" "snapshot 0 (freed):" >"$v.s0.rows" ||
			mt_fail "$v: --show-snapshots: no snapshot 0"
		check "$v: --show-snapshots: snapshot 0 empty" [ "$(cat "$v.s0.rows")" = "TOTAL	0" ]
		$ROWS report "$v.snaps.txt" "snapshot 1 (leaked):" >"$v.s1.rows" ||
			mt_fail "$v: --show-snapshots: no snapshot 1"
		check "$v: --show-snapshots: snapshot 1 is late_leak's 4,096 B in 1 block" \
			node "$v.s1.rows" "$LEAK_PATH" $LEAK 1
		timeout "$MT_TIMEOUT" "$MEMTRAIL" report -t 0 --diff 0 1 "$v.data" >"$v.d01.txt" 2>&1
		$ROWS report "$v.d01.txt" "snapshot 0 - snapshot 1:" >"$v.d01.rows" ||
			mt_fail "$v: --diff 0 1: not read"
		check "$v: --diff 0 1: late_leak +4,096 B, +1 block" node "$v.d01.rows" "$LEAK_PATH" $LEAK 1
	fi
	report_checks "$v" "$lk" "$lkb"
	[ $have_tmux = 1 ] && view_checks "$v" "$lk" "$lkb"
done

mt_finish
