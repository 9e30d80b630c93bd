#!/bin/sh
# view_leak_kinds.sh - the viewer's leaks view (l) shows each row's bytes
# per leak kind: on samples/leak_kinds.c, whose sites' kinds are worked
# out in its comments, every site's row has its figures in the definite,
# indirect, possible and reachable columns; each column's rows add up to
# `memtrail report`'s kind totals on the same log; K (one kind at a time)
# takes the columns away, and they come back with the filter on every
# block; an 80-column terminal, too narrow for the columns, shows a tag
# per row instead (D, I, P, R: the kinds the row has bytes of).
#
# Not for: the kinds themselves (leak_memcheck.sh), the model's other
# state (test_view_model.c).
[ -z "${MT_TMP:-}" ] && own_tmp=1
. "$(dirname "$0")/lib.sh"
mt_need_cmd tmux python3
mt_have_memtrail || mt_skip "memtrail not built"
[ -x "$MT_SAMPLES/leak_kinds" ] || mt_skip "samples not built (make samples)"
trap 'mt_tmux_stop; [ -n "${own_tmp:-}" ] && rm -rf "$MT_TMP"' EXIT
cd "$MT_TMP" || exit 1

mt_record kinds.data rec "$MT_SAMPLES/leak_kinds"
[ "$(cat rec.rc)" = 0 ] || { cat rec.err; mt_fail "recording leak_kinds failed"; mt_finish; }
mt_summary kinds.data sum.json || mt_fail "report --summary --format json failed"
totals=$(python3 -c 'import json; d=json.load(open("sum.json"))
print(" ".join(str(d[k + "_bytes"]) for k in ("definitely_lost", "indirectly_lost", "possibly_lost", "reachable")))')

# rows SCREEN: "bytes definite indirect possible reachable label" per tree
# row under the kinds' heading (commas dropped), or nothing.
rows() {
	python3 - "$1" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
head = [i for i, l in enumerate(lines) if re.search(r"bytes +% +blocks +definite +indirect +possible +reachable ", l)]
if not head:
    sys.exit(0)
for l in lines[head[0] + 1:]:
    m = re.match(r"^[> ] *([\d,]+) +\S+ +([\d,]+) +([\d,]+) +([\d,]+) +([\d,]+) +([\d,]+)  +[-+ ] ?(.*)$", l)
    if not m:
        break
    n = [x.replace(",", "") for x in m.groups()[:6]]
    print(n[0], " ".join(n[2:6]), m.group(7).strip())
EOF
}

# site SCREEN LABEL: the kind figures of the first row whose label starts
# with LABEL
site() {
	rows "$1" | python3 -c '
import sys
for l in sys.stdin:
    f = l.split(" ", 5)
    if len(f) == 6 and f[5].startswith(sys.argv[1]):
        print(" ".join(f[1:5]))
        break' "$2"
}

view() {   # the viewer on the log, in the leaks view
	mt_tmux_keys "'$MEMTRAIL' view kinds.data" Enter
	mt_tmux_wait "^Live at peak: " 20 || { mt_fail "the viewer did not start"; mt_finish; }
	mt_tmux_keys l
	mt_tmux_wait "^Leaked \\(live at the end\\): " 10 || mt_fail "l: no leaks view"
	mt_tmux_wait " definite +indirect +possible +reachable " 10 || mt_fail "l: no kind columns"
}

mt_tmux_start 160 40 || mt_skip "tmux cannot start"
view
mt_tmux_screen all.txt
# The sample's sites (samples/leak_kinds.c): definite indirect possible reachable
check_site() {
	got=$(site all.txt "$1 [samples/leak_kinds.c:$2] via ")
	[ "$got" = "$3" ] && mt_ok "site $1:$2: $3" || mt_fail "site $1:$2: '$got', not '$3'"
}
check_site overwritten 57 "1000 0 0 0"
check_site lost_list 65 "48 96 0 0"
check_site interior 74 "0 0 200 0"
check_site in_mmap 83 "0 0 0 400"
check_site in_tls 88 "0 0 0 500"
check_site overwritten 58 "0 0 0 10"
# Top-level rows only (the tree opens on the dominant chain: deeper rows
# repeat their site's figures): their columns add up to the report's.
sums=$(rows all.txt | awk '$0 ~ / via / {
	for (i = 2; i <= 5; i++) s[i] += $i
	t += $1
	if ($1 != $2 + $3 + $4 + $5) bad = 1
} END { print s[2] + 0, s[3] + 0, s[4] + 0, s[5] + 0, (bad ? "row-mismatch" : "") }')
[ "$sums" = "$totals " ] && mt_ok "columns add up to report's kinds: $totals" ||
	mt_fail "columns '$sums' vs report's kinds '$totals'"

# K: one kind at a time, no columns; back to every block: columns again.
mt_tmux_keys K
mt_tmux_wait "^Leaked, definitely lost \\(at the end\\): 1,048 B in 2 blocks" 10 &&
	mt_ok "K: definitely lost, 1,048 B" || mt_fail "K: not the definitely lost view"
mt_tmux_screen one.txt
grep -q ' definite  *indirect ' one.txt && mt_fail "K: the kind columns stay with one kind shown" ||
	mt_ok "K: one kind, no kind columns"
mt_tmux_keys K K K K
mt_tmux_wait "^Leaked \\(live at the end\\): 2,254 B in 8 blocks" 10 &&
	mt_tmux_wait " definite +indirect +possible +reachable " 10 &&
	mt_ok "K back to every block: the columns again" || mt_fail "K: the columns do not come back"
mt_tmux_keys l
mt_tmux_wait "^Live at " 10 && mt_tmux_screen live.txt
grep -q ' definite  *indirect ' live.txt && mt_fail "l: kind columns outside the leaks view" ||
	mt_ok "l: out of the leaks view, no kind columns"
mt_tmux_keys q

# 80 columns: a tag per row, the kinds the row has bytes of.
view_small() {
	mt_tmux_wait "mt-prompt" 10 || mt_fail "q: the viewer did not quit"
	$MT_TMUX resize-window -t mt -x 80 -y 24
	mt_tmux_keys clear Enter
	mt_tmux_keys "'$MEMTRAIL' view kinds.data" Enter
	mt_tmux_wait "^Live at peak: " 20 || { mt_fail "the viewer did not start"; mt_finish; }
	mt_tmux_keys l
	mt_tmux_wait "^ +bytes +% +blocks +kinds " 10 || mt_fail "80 columns: no kinds tag column"
}
view_small
mt_tmux_screen small.txt
tag() {   # tag LABEL: the kinds tag of the first row whose label starts with LABEL
	python3 -c '
import re, sys
for l in open("small.txt"):
    m = re.match(r"^[> ] *[\d,]+ +\S+ +[\d,]+ +([-DIPR]{4})  +[-+ ] ?(.*)$", l)
    if m and m.group(2).startswith(sys.argv[1]):
        print(m.group(1))
        break' "$1"
}
for want in "lost_list DI--" "interior --P-" "in_tls ---R" "in_mmap ---R"; do
	got=$(tag "${want% *}")
	[ "$got" = "${want#* }" ] && mt_ok "80 columns: ${want% *} tagged $got" ||
		mt_fail "80 columns: ${want% *} tagged '$got', not ${want#* }"
done
mt_tmux_keys q
mt_finish
