#!/bin/sh
# view_report_points.sh - `memtrail report` and `memtrail view` give the
# same figures at every point of every sample: for each program in samples/
# (recorded with `memtrail record`), at the peak, at the end and at each
# snapshot, the viewer's live tree, fully expanded on a tall tmux screen,
# has exactly the nodes of the report's tree at that point (`report -t 0
# --show-maximum / --show-leaks / --show-snapshots`), with the same bytes,
# blocks and percentages, and its title the summary's bytes and blocks;
# the viewer's diff from the start (d, no mark) at each point is
# `report --diff start POINT`; its leaks view (l) is `--show-leaks`; the
# diff from a mark at the peak to the end is `--diff peak end`, and with
# two snapshots or more, from the first to the last is `--diff 0 LAST`.
# The viewer opens on the allocation sites (`report --sites`), compared at
# the peak; e then switches it to the report's default layout (the entry
# points first) for everything else.
#
# Why the real viewer in tmux rather than a unit test on its model: the
# point each key names (p, End, N; the viewer asks its session by event
# number, the report by point kind), the mode's tree and the drawn numbers
# are what users see, and they are only all together on the screen. The
# model's own logic is tests/test_view_model.c's.
#
# The report has no other points (no --at): start is covered through the
# diffs from the start, times between events only by the viewer.
#
# Not for: the figures themselves (accuracy_samples.sh checks the samples'
# worked-out figures; this test only checks that the two readers agree),
# or the viewer's keys and layout (view_tmux.sh).
#
# With SAMPLES="a b" only those samples run.

[ -z "${MT_TMP:-}" ] && own_tmp=1
. "$(dirname "$0")/lib.sh"
mt_need_cmd tmux python3
mt_have_memtrail || mt_skip "memtrail not built"

names=""
for s in "$MT_TOP"/samples/*.c "$MT_TOP"/samples/*.cpp; do
	[ -f "$s" ] || continue
	n=${s##*/}; n=${n%.*}
	if [ -n "${SAMPLES:-}" ]; then
		case " $SAMPLES " in *" $n "*) ;; *) continue;; esac
	fi
	[ -x "$MT_SAMPLES/$n" ] || mt_skip "samples not built (make samples): no $MT_SAMPLES/$n"
	names="$names $n"
done
[ -n "$names" ] || mt_skip "no sample"
# from here on '*' is a key to send, never a pattern
set -f

trap 'mt_tmux_stop; [ -n "${own_tmp:-}" ] && rm -rf "$MT_TMP"' EXIT
cd "$MT_TMP" || exit 1
ROWS="python3 $MT_TOP/tests/e2e/tree_rows.py"

# A tall, wide terminal: every sample's whole tree fits in the tree pane
# (tree_rows.py fails when it may not), and no label is cut.
mt_tmux_start 300 200 || mt_skip "tmux cannot start"
commas() {   # commas N [+]: 362624 -> 362,624 (+362,624 with + and N > 0)
	python3 -c 'import sys; v=int(sys.argv[1]); s=f"{v:,}"
print(("+" + s) if len(sys.argv) > 2 and v > 0 else s)' "$@"
}
# compare NAME SCREEN REPORT HEADER TITLE_RE: the screen's tree against the
# report's section HEADER, the screen's title against TITLE_RE
compare() {
	_name=$1 _scr=$2 _rep=$3 _hdr=$4 _title=$5
	if ! $ROWS report "$_rep" "$_hdr" >"$_rep.rows"; then
		mt_fail "$_name: report section '$_hdr' not read"
		return
	fi
	if ! $ROWS screen "$_scr" >"$_scr.rows"; then
		mt_fail "$_name: viewer screen not read"
		return
	fi
	tail -n +2 "$_rep.rows" >"$_rep.nodes"
	tail -n +2 "$_scr.rows" >"$_scr.nodes"
	if cmp -s "$_rep.nodes" "$_scr.nodes"; then
		mt_ok "$_name: the same $(wc -l <"$_scr.nodes") nodes (path, bytes, blocks, %)"
	else
		mt_fail "$_name: the trees differ (< report, > view):"
		diff "$_rep.nodes" "$_scr.nodes" | head -n 12
	fi
	# a live title ends with the resident set sampled at the cursor
	if sed -n 1p "$_scr.rows" |
	    grep -qE -- "^TITLE	$_title( \(resident set [0-9.]+ (B|KiB|MiB|GiB)\))?\$"; then
		mt_ok "$_name: title /$_title/"
	else
		mt_fail "$_name: title '$(sed -n 1p "$_scr.rows" | cut -f2)', expected /$_title/"
	fi
	# the report's own total and its top rows' blocks agree with the title
	_rb=$(sed -n 's/^TOTAL	//p' "$_rep.rows")
	_rk=$(awk -F'\t' 'index($1, " | ") == 0 { s += $3 } END { print s + 0 }' "$_rep.nodes")
	_sign=""
	case $_hdr in *" - "*) _sign=+;; esac
	case $(sed -n 1p "$_scr.rows" | sed -E 's/ \(resident set [^)]*\)$//') in
	*" $(commas "$_rb" $_sign) B"*"$(commas "$_rk" $_sign) blocks") ;;
	*) mt_fail "$_name: the report's total $_rb B in $_rk blocks is not the title's";;
	esac
}
re_quote() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g'; }

for name in $names; do
	echo "== $name"
	bin=$MT_SAMPLES/$name
	w=$MT_TMP/$name
	mt_record "$w.data" "$w.rec" "$bin"
	if [ ! -s "$w.data" ]; then
		mt_fail "$name: no log (record exit $(cat "$w.rec.rc"))"
		continue
	fi
	r() { timeout "$MT_TIMEOUT" "$MEMTRAIL" report "$w.data" -t 0 "$@"; }
	mt_summary "$w.data" "$w.sum.json" || { mt_fail "$name: no summary"; continue; }
	js() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$w.sum.json" "$1"; }
	pk=$(js 'd["peak_bytes"]'); pkb=$(js 'd["peak_blocks"]')
	lk=$(js 'd["leaked_bytes"]'); lkb=$(js 'd["leaked_blocks"]')
	nsnap=$(js 'len(d["snapshots"])')
	r --show-maximum >"$w.max.txt"
	r --show-leaks >"$w.leaks.txt"
	r --show-snapshots >"$w.snaps.txt"
	nodes=$(cat "$w.max.txt" "$w.leaks.txt" "$w.snaps.txt" | grep -c -- '-> ')

	mt_tmux_keys clear Enter
	mt_tmux_keys "'$MEMTRAIL' view '$w.data'; echo view-stat\"\"us=\$?" Enter
	if ! mt_tmux_wait "^Live at peak: " 20; then
		mt_fail "$name: the viewer did not start"
		mt_tmux_keys q
		continue
	fi

	# one point: at KEYS, titled WHAT, against report section HEADER of FILE,
	# then its diff from the start against `report --diff start AT`
	point() {
		_keys=$1 _what=$2 _hdr=$3 _file=$4 _at=$5 _bytes=$6 _blocks=$7
		# shellcheck disable=SC2086
		mt_tmux_keys $_keys
		mt_tmux_wait "^Live at $(re_quote "$_what"): " || { mt_fail "$name: no $_what"; return; }
		mt_tmux_expand_all "$nodes" || { mt_fail "$name: $_what: keys not handled"; return; }
		mt_tmux_screen "$w.$_at.scr"
		compare "$name at $_what" "$w.$_at.scr" "$_file" "$_hdr" \
			"$(re_quote "Live at $_what: $(commas "$_bytes") B in $(commas "$_blocks") blocks")"
		r --diff start "$_at" >"$w.d-$_at.txt"
		mt_tmux_keys d
		mt_tmux_wait "^Diff from start to $(re_quote "$_what"): " || { mt_fail "$name: no diff at $_what"; return; }
		mt_tmux_expand_all "$nodes" || { mt_fail "$name: diff at $_what: keys not handled"; return; }
		mt_tmux_screen "$w.d-$_at.scr"
		compare "$name diff start to $_what" "$w.d-$_at.scr" "$w.d-$_at.txt" \
			"$(head -n 1 "$w.d-$_at.txt" | sed 's/: .*/:/')" \
			"$(re_quote "Diff from start to $_what: $(commas "$_bytes" +) B, $(commas "$_blocks" +) blocks")"
		mt_tmux_keys d
		mt_tmux_wait "^Live at " || mt_fail "$name: d does not go back"
	}

	# the viewer opens on the allocation sites: report --sites' layout
	r --show-maximum --sites >"$w.sites.txt"
	mt_tmux_expand_all "$(grep -c -- '-> ' "$w.sites.txt")" ||
		mt_fail "$name: sites: keys not handled"
	mt_tmux_screen "$w.sites.scr"
	compare "$name at peak, sites first" "$w.sites.scr" "$w.sites.txt" "maximum:" \
		"$(re_quote "Live at peak: $(commas "$pk") B in $(commas "$pkb") blocks")"
	# the rest in the report's default layout: the entry points first
	mt_tmux_keys e
	mt_tmux_wait " callee first, sorted by " || mt_fail "$name: e does not show the entry points"

	point p peak "maximum:" "$w.max.txt" peak "$pk" "$pkb"
	point End end "leaked:" "$w.leaks.txt" end "$lk" "$lkb"
	i=$((nsnap - 1))
	while [ "$i" -ge 0 ]; do
		label=$(js "d['snapshots'][$i]['label']")
		idx=$(js "d['snapshots'][$i]['index']")
		sb=$(js "d['snapshots'][$i]['live_bytes']")
		sk=$(js "d['snapshots'][$i]['live_blocks']")
		# from the end, N once per snapshot back
		k="End"; j=$i
		while [ "$j" -lt "$nsnap" ]; do k="$k N"; j=$((j + 1)); done
		if [ -n "$label" ]; then
			point "$k" "snapshot $idx $label" "snapshot $idx (" "$w.snaps.txt" "$idx" "$sb" "$sk"
		else
			point "$k" "snapshot $idx" "snapshot $idx:" "$w.snaps.txt" "$idx" "$sb" "$sk"
		fi
		i=$((i - 1))
	done

	# the leaks view
	mt_tmux_keys l
	if mt_tmux_wait "^Leaked \(live at the end\): "; then
		mt_tmux_expand_all "$nodes"
		mt_tmux_screen "$w.l.scr"
		compare "$name leaks view" "$w.l.scr" "$w.leaks.txt" "leaked:" \
			"$(re_quote "Leaked (live at the end): $(commas "$lk") B in $(commas "$lkb") blocks")"
		mt_tmux_keys l
		mt_tmux_wait "^Live at " || mt_fail "$name: l does not go back"
	else
		mt_fail "$name: no leaks view"
	fi

	# diffs between two points: peak to end, first to last snapshot
	diffpair() {
		_from=$1 _fwhat=$2 _to=$3 _twhat=$4 _a=$5 _b=$6
		r --diff "$_a" "$_b" >"$w.d-$_a-$_b.txt"
		# shellcheck disable=SC2086
		mt_tmux_keys $_from m $_to
		mt_tmux_wait "^Live at $(re_quote "$_twhat"): " || { mt_fail "$name: no $_twhat"; return; }
		mt_tmux_keys d
		mt_tmux_wait "^Diff from $(re_quote "$_fwhat") to $(re_quote "$_twhat"): " ||
			{ mt_fail "$name: no diff from $_fwhat to $_twhat"; return; }
		mt_tmux_expand_all "$nodes"
		mt_tmux_screen "$w.d-$_a-$_b.scr"
		compare "$name diff $_fwhat to $_twhat" "$w.d-$_a-$_b.scr" "$w.d-$_a-$_b.txt" \
			"$(head -n 1 "$w.d-$_a-$_b.txt" | sed 's/: .*/:/')" "Diff from .*"
		mt_tmux_keys d
		mt_tmux_wait "^Live at " || mt_fail "$name: d does not go back"
	}
	diffpair p peak End end peak end
	if [ "$nsnap" -ge 2 ]; then
		first=$(js "d['snapshots'][0]['index']")
		last=$(js "d['snapshots'][-1]['index']")
		fl=$(js "d['snapshots'][0]['label']"); ll=$(js "d['snapshots'][-1]['label']")
		k="End"; j=0
		while [ "$j" -lt "$nsnap" ]; do k="$k N"; j=$((j + 1)); done
		diffpair "$k" "snapshot $first${fl:+ $fl}" "End N" "snapshot $last${ll:+ $ll}" "$first" "$last"
	fi

	mt_tmux_keys q
	mt_tmux_wait "^view-status=0" 10 || mt_fail "$name: q does not end the viewer with status 0"
done

mt_finish
