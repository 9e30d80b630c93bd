#!/bin/sh
# view_tmux.sh - drives `memtrail view` in a real terminal (tmux, private
# socket) on a fresh recording of samples/phases.c and checks the screen:
# the graph and its peak label, the snapshot markers, the peak tree's top
# rows and a subtree (the first screen: allocation sites first, the
# dominant chain open and folded; e for the entry points first), search,
# inversion, sorting, the leak, diff and
# temporary and calls views, the flat list (f), the help screen, a resize to 80x24, TERM=vt100, and that
# q and Ctrl-C leave a usable shell with the terminal modes restored.
#
# Expected figures come from the sample's memtrail-expect block (read with
# tests/expect.py) and from `memtrail report` on the same log; none is
# written here. Every wait is bounded (polling capture-pane).
# Not for: the model's logic in detail (tests/test_view_model.c).

[ -z "${MT_TMP:-}" ] && own_tmp=1
. "$(dirname "$0")/lib.sh"
mt_need_cmd tmux python3
mt_have_memtrail || mt_skip "memtrail not built"
[ -x "$MT_SAMPLES/phases" ] || mt_skip "samples not built (make samples)"

T="tmux -L mt-$$"
trap '$T kill-server 2>/dev/null; [ -n "${own_tmp:-}" ] && rm -rf "$MT_TMP"' EXIT
cd "$MT_TMP" || exit 1

# ---- the truth: the sample's expect block, and report on the same log ----
mt_record phases.data rec "$MT_SAMPLES/phases"
[ "$(cat rec.rc)" = 0 ] || { cat rec.err; mt_fail "recording phases failed"; mt_finish; }
python3 "$MT_TOP/tests/expect.py" expect "$MT_TOP/samples/phases.c" >expect.json ||
	mt_skip "no memtrail-expect block in samples/phases.c"
ex() {   # ex KEY [SNAPSHOT]: a figure of the expect block
	python3 -c 'import json,sys; e=json.load(open("expect.json"))
k=sys.argv[1]
print(e["snapshots"][int(sys.argv[2])][k] if len(sys.argv) > 2 else e[k])' "$@"
}
commas() {   # 362624 -> 362,624; -5 -> -5; "+" as a second argument signs positives
	python3 -c 'import sys; v=int(sys.argv[1]); s=f"{v:,}"
print(("+" + s) if len(sys.argv) > 2 and v > 0 else s)' "$@"
}
peak=$(ex peak_bytes); peak_blocks=$(ex peak_blocks)
leak=$(ex leaked_bytes); leak_blocks=$(ex leaked_blocks)
s0=$(ex live_bytes 0); s1=$(ex live_bytes 1)
b0=$(ex live_blocks 0); b1=$(ex live_blocks 1)
l0=$(ex label 0); l1=$(ex label 1)
nsnap=$(python3 -c 'import json; print(len(json.load(open("expect.json"))["snapshots"]))')

# ---- a shell in a 100x30 terminal ------------------------------------------
$T new-session -d -s mt -x 100 -y 30 "env PS1='mt-prompt\$ ' sh" || mt_skip "tmux cannot start"
$T set-option -g status off >/dev/null
$T resize-window -t mt -x 100 -y 30 2>/dev/null

screen() { $T capture-pane -p -t mt >"$1"; }
keys() { $T send-keys -t mt "$@"; sleep 0.2; }
# wait_for TEXT [SECONDS]: poll the screen until it shows TEXT (fixed string)
wait_for() {
	_n=$(( ${2:-10} * 5 ))
	while [ "$_n" -gt 0 ]; do
		screen cur.txt
		grep -qF -- "$1" cur.txt && return 0
		sleep 0.2
		_n=$((_n - 1))
	done
	echo "--- screen while waiting for '$1':"; cat cur.txt
	return 1
}
# rows FILE: the tree rows on a captured screen, "depth<TAB>bytes<TAB>blocks
# <TAB>allocs<TAB>selected<TAB>marker<TAB>label" (numbers without commas;
# marker "+" folded, "-" expanded, "" a leaf)
rows() {
	python3 - "$1" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
head = next(i for i, l in enumerate(lines) if re.search(r"bytes +% ", l))
for l in lines[head + 1:]:
    m = re.match(r"^([> ]) *([-+]?[\d,]+) +(\S+) +([-+]?[\d,]+) +([\d,]+)  ( *)([-+ ] )(.*)$", l)
    if not m:
        continue
    print("\t".join([str(len(m.group(6)) // 2), m.group(2).replace(",", ""),
                     m.group(4).replace(",", ""), m.group(5).replace(",", ""),
                     "1" if m.group(1) == ">" else "0", m.group(7).strip(),
                     m.group(8).rstrip()]))
EOF
}
check() {   # check DESCRIPTION COMMAND...: ok or fail
	_d=$1; shift
	if "$@"; then mt_ok "$_d"; else mt_fail "$_d"; fi
}
has() { grep -qF -- "$1" "$2"; }

keys "cd '$MT_TMP'" Enter
keys "'$MEMTRAIL' view phases.data" Enter
wait_for "Live at peak:" 15 || { mt_fail "the viewer did not start"; mt_finish; }
screen peak.txt

# ---- the timeline -----------------------------------------------------------
check "title: live at peak, $peak B in $peak_blocks blocks" \
	has "Live at peak: $(commas "$peak") B in $(commas "$peak_blocks") blocks" peak.txt
check "graph: peak label $peak B" has "peak $(commas "$peak") B" peak.txt
check "graph: filled columns" sh -c "head -n 8 peak.txt | grep -q '#'"
snaps=$(grep '^ *snap |' peak.txt | sed 's/^ *snap |//')
i=0
while [ "$i" -lt "$nsnap" ]; do
	check "graph: snapshot $i marked" sh -c "echo '$snaps' | tr -c '0-9\n' ' ' | tr ' ' '\n' | grep -qx $i"
	i=$((i + 1))
done
check "status: peak and leaked totals" \
	has "peak $(commas "$peak") B | leaked $(commas "$leak") B" peak.txt

# ---- the tree at the peak ------------------------------------------------------
rows peak.txt >peak.rows
top_sum=$(awk -F'\t' '$1 == 0 { s += $2 } END { print s + 0 }' peak.rows)
check "tree: the top rows add up to the peak ($top_sum)" [ "$top_sum" = "$peak" ]
# The first screen: allocation sites first, the dominant chain open.
# phases.c at the peak: xmalloc's malloc calls hold the config (1,024), the
# entries (1,024), the row table (128), rows 8..15 (8 x 4,096) and the
# scratch (262,144) = 297,088 B in 15 blocks after 22 + 1 calls; grow_rows'
# realloc calls hold rows 0..7: 65,536 B in 8 blocks. xmalloc's biggest
# caller, make_report (262,144 B, more than half of it), is opened; its
# callers main ... _start are one chain with its figures: main is a row,
# the frames after it one "... N frames ..." row, then the last frame, a
# leaf, where the chain stops and the cursor rests.
python3 - peak.rows <<'EOF' >first.check
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
want = [["0", "297088", "15", "23", "0", "-", "xmalloc [samples/phases.c:94] via malloc"],
        ["1", "262144", "1", "1", "0", "-", "make_report [samples/phases.c:142]"],
        ["2", "262144", "1", "1", "0", "-", "main [samples/phases.c:200]"]]
bad = [str(r) for r, w in zip(rows, want) if r != w]
fold, end = rows[3], rows[4]
if not (fold[0] == "3" and fold[1:5] == ["262144", "1", "1", "0"] and fold[5] == "+" and
        fold[6].startswith("... ") and fold[6].endswith(" frames ...")):
    bad.append("fold " + str(fold))
if not (end[0] == "4" and end[1:5] == ["262144", "1", "1", "1"] and end[5] == ""):
    bad.append("end " + str(end))
if sum(r[4] == "1" for r in rows) != 1:
    bad.append("not one row selected")
if rows[-1] != ["0", "65536", "8", "8", "0", "+", "grow_rows [samples/phases.c:130] via realloc"]:
    bad.append("last " + str(rows[-1]))
print("ok" if not bad else "bad " + "; ".join(bad))
EOF
check "tree: sites first, make_report's chain open, the cursor at its end ($(cat first.check))" \
	sh -c "grep -q '^ok' first.check"
check "tree: the heading says allocation sites first" has "allocation sites first, sorted by bytes" peak.txt
# Nothing touched in the tree yet: another point opens its own chain. At
# the end (9,216 B: the config's 1,024 from load_config, rows 14 and 15's
# 8,192 from build_index, all through xmalloc) build_index holds more than
# half of xmalloc's: its chain is open, the cursor at its end, make_report
# gone; back at the peak (p), make_report's chain again.
keys End
wait_for ": $(commas "$leak") B in " || true
screen end.txt
rows end.txt >end.rows
check "tree: at the end, build_index's chain open, the cursor at its end" \
	sh -c "head -n 2 end.rows | cut -f1,2,6,7 | tr '\t\n' ' /' |
	         grep -qx '0 $leak - xmalloc \[samples/phases.c:94\] via malloc/1 8192 - build_index \[samples/phases.c:[0-9]*\]/' &&
	       awk -F'\t' '\$5 == 1 && \$2 == 8192 && \$6 == \"\"' end.rows | grep -q . &&
	       ! grep -q make_report end.rows"
keys p
wait_for "Live at peak:" || true
sleep 0.3
screen peak2.txt
rows peak2.txt >peak2.rows
check "tree: p, the peak's first screen again" cmp -s peak.rows peak2.rows
# Enter on the fold shows its N frames as rows, each with the chain's figures
nfold=$(sed -n '4s/.*\.\.\. \([0-9]*\) frames \.\.\..*/\1/p' peak.rows)
keys Up
keys Enter
sleep 0.3
screen unfolded.txt
rows unfolded.txt >unfolded.rows
unfolded_ok() {
	[ "$(wc -l <unfolded.rows)" = "$(( $(wc -l <peak.rows) - 1 + ${nfold:-0} ))" ] &&
	! grep -q ' frames \.\.\.$' unfolded.rows &&
	[ "$(awk -F'\t' -v n="${nfold:-0}" 'NR >= 4 && NR < 4 + n && $2 == 262144 && $6 == "-"' \
		unfolded.rows | wc -l)" = "${nfold:-x}" ]
}
check "tree: Enter shows the ${nfold:-?} folded frames" unfolded_ok
# e: the entry points first (the report's layout), again on its dominant chain
keys e
wait_for "callee first, sorted by bytes" || true
screen entries.txt
rows entries.txt >entries.rows
check "tree: e shows the entry points first, malloc and xmalloc open" \
	[ "$(head -n 2 entries.rows | cut -f1,2,6,7 | tr '\t\n' ' /')" = "0 297088 - malloc/1 297088 - xmalloc [samples/phases.c:94]/" ]
# from the top, malloc folded
keys PPage
keys -
wait_for "  + malloc" || true
screen entries2.txt
rows entries2.txt >peak.rows
check "tree: malloc first, folded, selected" \
	sh -c "head -n 1 peak.rows | awk -F'\t' '\$5 == 1 && \$6 == \"+\" && \$7 == \"malloc\"' | grep -q ."
# expand malloc, then the row under it
keys Enter
keys Down
keys Enter
wait_for "make_report" || true
screen expanded.txt
rows expanded.txt >expanded.rows
python3 - expanded.rows <<'EOF' >expanded.check
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
# the depth-1 row is expanded: its depth-2 children add up to it
i = next(i for i, r in enumerate(rows) if r[0] == "1")
kids = []
for r in rows[i + 1:]:
    if int(r[0]) <= 1:
        break
    if r[0] == "2":
        kids.append(r)
ok = kids and sum(int(r[1]) for r in kids) == int(rows[i][1])
print("ok" if ok and rows[i][5] == "-" else "bad", len(kids), kids[0][6] if kids else "")
EOF
check "tree: a subtree's rows add up to its parent ($(cat expanded.check))" \
	sh -c "grep -q '^ok' expanded.check"
check "tree: make_report holds the largest part of it" \
	sh -c "grep -q 'make_report' expanded.check"
cp expanded.txt screen-100x30.txt

# ---- search, invert, sort --------------------------------------------------------
keys Up Up
keys / ; keys -l "load_config"; keys Enter
wait_for "found: load_config" || true
screen search.txt
rows search.txt | awk -F'\t' '$5 == 1' >search.sel
check "search: / selects load_config" grep -q "load_config" search.sel
keys g
screen search2.txt
rows search2.txt | awk -F'\t' '$5 == 1' >search2.sel
check "search: g goes to the other load_config" \
	sh -c "grep -q load_config search2.sel && ! cmp -s search.sel search2.sel"
keys i
wait_for "caller first" || true
screen inv.txt
rows inv.txt >inv.rows
inv_sum=$(awk -F'\t' '$1 == 0 { s += $2 } END { print s + 0 }' inv.rows)
check "invert: caller first, same total ($inv_sum)" [ "$inv_sum" = "$peak" ]
check "invert: malloc no longer at the top" sh -c "! awk -F'\t' '\$1 == 0 && \$7 == \"malloc\"' inv.rows | grep -q ."
keys i
keys s
wait_for "sorted by blocks" || true
screen sort.txt
check "sort: s sorts by blocks" has "sorted by blocks" sort.txt
keys s; keys s; keys s
wait_for "sorted by bytes" || true

# ---- focus: Left/Right move the tree or the cursor ---------------------------------
keys Down; keys Right
screen right.txt
rows right.txt | awk -F'\t' '$5 == 1' >right.sel
check "tree focus: Right expands the selected row" sh -c "awk -F'\t' '\$6 == \"-\"' right.sel | grep -q ."
keys Left
screen left.txt
rows left.txt | awk -F'\t' '$5 == 1' >left.sel
check "tree focus: Left folds it again" sh -c "awk -F'\t' '\$6 == \"+\"' left.sel | grep -q ."
keys Tab; keys Left
wait_for "Live at t=" || true
screen moved.txt
check "timeline focus: Left moves the cursor off the peak" has "Live at t=" moved.txt
keys p; keys Tab
wait_for "Live at peak" || mt_fail "p: back to the peak"

# ---- leaks, diff, temporary --------------------------------------------------------
keys l
wait_for "Leaked" || true
screen leaks.txt
check "leaks: $leak B in $leak_blocks blocks" \
	has "Leaked (live at the end): $(commas "$leak") B in $(commas "$leak_blocks") blocks" leaks.txt
keys l
keys Home; keys n; keys m; keys n; keys d
wait_for "Diff from" || true
screen diff.txt
want="$(commas $((s1 - s0)) +) B, $(commas $((b1 - b0)) +) blocks"
check "diff: snapshot 0 to 1 is $want" has "Diff from snapshot 0 $l0 to snapshot 1 $l1: $want" diff.txt
timeout "$MT_TIMEOUT" "$MEMTRAIL" report --diff 0 1 phases.data >rdiff.txt 2>&1
rtotal=$(head -n 1 rdiff.txt | sed 's/.*: //; s/B$//')
check "diff: the same total as report --diff 0 1 ($rtotal)" has ": $rtotal B," diff.txt
keys d
keys t
wait_for "Temporary" || true
screen temp.txt
timeout "$MT_TIMEOUT" "$MEMTRAIL" report --temporary phases.data >rtemp.txt 2>&1
# "temporary: 1 allocation (262,144B)"
rt=$(head -n 1 rtemp.txt | sed -n 's/^temporary: \([0-9,]*\) allocations* (\([0-9,]*\)B).*/\1 in \2 B/p')
check "temporary: the same as report --temporary ($rt)" has "Temporary allocations: $rt" temp.txt
keys t
keys c
wait_for "Allocation calls" || true
screen calls.txt
check "calls: every call of the run ($(ex allocations) for $(ex bytes_allocated) B)" \
	has "Allocation calls of the whole run: $(commas "$(ex allocations)") for $(commas "$(ex bytes_allocated)") B" calls.txt
check "calls: sorted by calls" has "sorted by allocations" calls.txt
timeout "$MT_TIMEOUT" "$MEMTRAIL" report --show-calls phases.data >rcalls.txt 2>&1
# "  -> 77.14% (338,048B, 27x, avg 12,520B): malloc": its figures on the first row
rc1=$(sed -n '2s/^  -> \([0-9.]*%\) (\([0-9,]*\)B, \([0-9,]*\)x, avg \([0-9,]*\)B): \(.*\)$/\2 \1 \3 \4 \5/p' rcalls.txt | tr -d ,)
vc1=$(rows calls.txt | awk -F'\t' '$1 == 0 { print $2, "", $3, $4, $7; exit }')
vp1=$(awk '/bytes +% +calls +avg B/ { getline; sub(/^>/, ""); print $2; exit }' calls.txt)
check "calls: the first row is report --show-calls' first entry ($rc1)" \
	[ "$(echo "$rc1" | awk '{ print $1, $3, $4, $5 }')" = "$(echo "$vc1" | awk '{ print $1, $2, $3, $4 }')" ]
check "calls: percentages of calls ($vp1)" [ "$vp1" = "$(echo "$rc1" | awk '{ print $2 }')" ]
keys c
keys s; keys s
wait_for "sorted by bytes" || true

# ---- help ----------------------------------------------------------------------------
keys "?"
wait_for "memtrail view - keys" || true
screen help.txt
for k in "Left / Right" "Home / End" "n / N" "Enter / +" "*" "i " "s " "/ " "g " "l " "d " "t " "c " "m " "p " "? " "q "; do
	check "help: lists '$k'" awk -v k="$k" 'index($0, "  " k) == 1 { f = 1 } END { exit !f }' help.txt
done
keys x
wait_for "Live at" || mt_fail "help: a key goes back"

# ---- resize to 80x24 -------------------------------------------------------------------
$T resize-window -t mt -x 80 -y 24
sleep 0.5
wait_for "Live at" || true
screen small.txt
check "resize: 24 lines" [ "$(wc -l <small.txt)" -le 24 ]
check "resize: nothing wider than 80 columns" [ "$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' small.txt)" -le 80 ]
check "resize: the peak label is still drawn" has "peak $(commas "$peak") B" small.txt
check "resize: the status line is on line 24" sh -c "sed -n 24p small.txt | grep -q 'leaked $(commas "$leak") B'"
$T resize-window -t mt -x 100 -y 30

# ---- q leaves a usable terminal --------------------------------------------------------
keys q
# (the output differs from the typed line, so waiting for it waits for the run)
keys "stty -a | tr ' ;' '\n\n' | grep -x -e icanon -e echo | tr '\n' ' '; echo done-\$((1 + 1))q" Enter
wait_for "done-2q" 5 || true
screen after-q.txt
check "q: the shell runs again, icanon and echo back on" \
	sh -c "grep -q '^icanon echo done-2q' after-q.txt"

# ---- Ctrl-C ------------------------------------------------------------------------------
keys clear Enter
keys "'$MEMTRAIL' view phases.data; echo stat\"\"us=\$?" Enter
wait_for "Live at peak" 15 || true
keys C-c
wait_for "status=" 5 || true
keys "stty -a | tr ' ;' '\n\n' | grep -x -e icanon -e echo | tr '\n' ' '; echo done-\$((1 + 1))c" Enter
wait_for "done-2c" 5 || true
screen after-c.txt
check "Ctrl-C: exits 130" has "status=130" after-c.txt
check "Ctrl-C: icanon and echo back on" sh -c "grep -q '^icanon echo done-2c' after-c.txt"

# ---- the flat list (f) --------------------------------------------------------------
# At the peak by self bytes, the two allocation sites (the first screen's
# figures): xmalloc 297,088 B in 15 blocks after 23 calls, grow_rows 65,536
# B in 8 after 8, each its own total too; by total (s), make_report holds
# its scratch buffer, 262,144 B in 1 block, and nothing itself; Enter on it
# selects its place in the tree.
keys clear Enter
keys "'$MEMTRAIL' view phases.data; echo stat\"\"us=\$?" Enter
wait_for "Live at peak" 15 || true
keys f
wait_for "function, by self bytes" || true
screen flat.txt
# flat_rows FILE: "selected self_B self% self_K self_calls total_B total% total_K
# total_calls name"
flat_rows() {
	awk '/function, by / { on = 1; next }
	     on && /^[> ] *[-+]?[0-9]/ { s = 0; if (substr($0, 1, 1) == ">") { s = 1; sub(/^>/, "") }
	                     gsub(/,/, ""); print s, $0 }' "$1" | tr -s ' '
}
flat_rows flat.txt >flat.rows
check "flat: by self, xmalloc then grow_rows" \
	[ "$(cat flat.rows)" = "1 297088 81.93% 15 23 297088 81.93% 15 23 xmalloc
0 65536 18.07% 8 8 65536 18.07% 8 8 grow_rows" ]
keys s
wait_for "function, by total bytes" || true
screen flat2.txt
flat_rows flat2.txt >flat2.rows
check "flat: by total, make_report 262,144 B in 1 block, none itself" \
	grep -qx "0 0 0.00% 0 0 262144 72.29% 1 1 make_report" flat2.rows
# the selection stayed on xmalloc; down to make_report, Enter
sel=$(grep -n '^1 ' flat2.rows | cut -d: -f1)
mr=$(grep -n ' make_report$' flat2.rows | cut -d: -f1)
i=${sel:-1}
while [ "$i" -lt "${mr:-0}" ]; do keys Down; i=$((i + 1)); done
keys Enter
wait_for "found: make_report" || true
screen flat3.txt
check "flat: Enter selects make_report in the tree" \
	sh -c "grep -q '^>.* make_report \[samples/phases.c:[0-9]*\]\$' flat3.txt"
# s goes on: self blocks (xmalloc's 15 first), total blocks, self calls,
# total calls (main's 31: xmalloc's 23 and grow_rows' 8), self bytes
keys f s
wait_for "function, by self blocks" || true
screen flat4.txt
flat_rows flat4.txt >flat4.rows
check "flat: s, by self blocks, xmalloc's 15 first" \
	sh -c "head -1 flat4.rows | grep -q ' 15 23 297088 81.93% 15 23 xmalloc\$'"
keys s s s
wait_for "function, by total calls" || true
screen flat5.txt
flat_rows flat5.txt >flat5.rows
check "flat: s s s, by total calls, main's 31" \
	grep -qx "[01] 0 0.00% 0 0 362624 100.00% 23 31 main" flat5.rows
keys s
wait_for "function, by self bytes" || mt_fail "flat: s comes back to self bytes"
keys q
wait_for "status=0" 5 || mt_fail "flat: q exits 0"

# ---- the flat list of the leaks and of a diff -------------------------------------------
# With the list up, l shows the leaks' functions (phases.c: xmalloc's
# config and rows 14 and 15, 9,216 B in 3 blocks, after 1 + 16 calls of
# load_config and build_index); N m n d the diff from snapshot 0 to 1:
# grow_rows +65,536 B in +8 blocks (8 calls), xmalloc -40,960 B in -8
# blocks (rows 0..7 went to realloc, rows 8..11 4,096 -> 2,048; 4 calls).
keys clear Enter
keys "'$MEMTRAIL' view phases.data; echo stat\"\"us=\$?" Enter
wait_for "Live at peak" 15 || true
keys f
wait_for "function, by self bytes" || true
keys l
wait_for "Leaked (live at the end)" || true
screen flat-leaks.txt
flat_rows flat-leaks.txt >flat-leaks.rows
check "flat: l, the leaks' functions, xmalloc 9,216 B in 3 blocks, 17 calls" \
	[ "$(cat flat-leaks.rows)" = "1 9216 100.00% 3 17 9216 100.00% 3 17 xmalloc" ]
keys l N m n d
wait_for "function, by self bytes" || true
wait_for "Diff from" || true
screen flat-diff.txt
flat_rows flat-diff.txt >flat-diff.rows
check "flat: a diff, grow_rows grown, then xmalloc shrunk" \
	sh -c "head -2 flat-diff.rows | cut -d' ' -f2- | tr -d '+' | awk '{ print \$1, \$3, \$4, \$9 }' |
	       tr '\n' ';' | grep -qx '65536 8 8 grow_rows;-40960 -8 4 xmalloc;'"
keys q
wait_for "status=0" 5 || mt_fail "flat: q exits 0"

# ---- TERM=vt100 (no colours) and a missing file ---------------------------------------------
keys clear Enter
keys "TERM=vt100 '$MEMTRAIL' view phases.data; echo stat\"\"us=\$?" Enter
wait_for "Live at peak" 15 || true
screen vt100.txt
check "vt100: draws the graph and the tree" \
	sh -c "grep -q 'peak $(commas "$peak") B' vt100.txt && grep -q '> .*_start' vt100.txt"
keys q
wait_for "status=0" 5 || mt_fail "vt100: q exits 0"
keys clear Enter
keys "'$MEMTRAIL' view missing.data; echo stat\"\"us=\$?" Enter
wait_for "status=" 5 || true
screen missing.txt
check "missing file: an error line, exit 1" \
	sh -c "grep -q '^memtrail: error: missing.data: ' missing.txt && grep -q '^status=1' missing.txt"

$T kill-server 2>/dev/null
mt_finish
