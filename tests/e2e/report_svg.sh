#!/bin/sh
# report_svg.sh - `memtrail report --format svg` on samples/phases.c, loaded
# in headless Chromium: the DOM after the script ran has one frame per
# function with the widths the sample's figures give (peak, leaks, a
# snapshot, a diff in two colours; an icicle with --inverted), the search
# (#s=RE) highlights exactly the matches and sums them, a zoom (#z=N)
# spreads a frame over the whole width; screenshots show the flame colours
# and the highlight.
#
# The figures come from the sample's own comment, never from memtrail's
# output. Skips (exit 77) when chromium is not installed. Not for: the SVG
# text itself (test_export.c), the other formats (report_formats.sh).
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3
mt_have_memtrail || mt_skip "memtrail not built"
command -v chromium >/dev/null 2>&1 ||
	mt_skip "chromium not installed (apt-get install chromium): the SVG flame graph is not checked"
BIN=$MT_SAMPLES/phases
[ -x "$BIN" ] || mt_skip "$BIN not built (make samples)"
CHECK="python3 $MT_TOP/tests/e2e/svg_check.py"
cd "$MT_TMP" || exit 1

# chrome ARGS...: headless Chromium with its own profile in the temp dir.
chrome() {
	timeout 120 chromium --headless --disable-gpu --no-sandbox --hide-scrollbars \
		--user-data-dir="$MT_TMP/chrome" "$@" 2>>chrome.err </dev/null
}
# dom SVG FRAGMENT OUT: the DOM of SVG once its script ran, then its frames.
dom() {
	chrome --dump-dom "file://$MT_TMP/$1$2" >"$3" || mt_fail "chromium: no DOM for $1$2"
	$CHECK frames "$3" >"$3.frames" || mt_fail "$3: not XML"
}
# sum FRAMES PREFIX: the widths (figure units) of the frames whose label starts so.
sum() {
	awk -v p="$2" '{ l = $0; for (i = 1; i < 10; i++) sub(/^[^ ]* /, "", l) }
		index(l, p) == 1 { s += $4 } END { print s + 0 }' "$1"
}
# is WHAT GOT WANT
is() { if [ "$2" = "$3" ]; then mt_ok "$1: $3"; else mt_fail "$1: $2, not $3"; fi; }
# widths FRAMES TOTAL: every frame's rect is W / TOTAL of 1,180 px wide, from
# 10 + X / TOTAL of it (to the 2 decimals written).
widths() {
	bad=$(awk -v t="$2" '{ w = $4 / t * 1180; x = 10 + $3 / t * 1180
		if ($9 - w > 0.006 || w - $9 > 0.006 || $8 - x > 0.006 || x - $8 > 0.006) print }' "$1")
	if [ -z "$bad" ]; then mt_ok "$1: widths and places are figure / $2 x 1180 px"
	else mt_fail "$1: frames out of proportion: $bad"; fi
}

mt_record phases.data rec "$BIN"
[ "$(cat rec.rc)" = 0 ] || { cat rec.err; mt_fail "record failed"; mt_finish; }
"$MEMTRAIL" report phases.data --format svg -o peak.svg 2>peak.err ||
	{ cat peak.err; mt_fail "report --format svg failed"; mt_finish; }

# Self-contained: nothing to fetch.
if grep -q 'href\|src=\|@import\|url(' peak.svg; then mt_fail "peak.svg refers to other files"
else mt_ok "peak.svg refers to no other file"; fi
is "peak.svg: http only in the namespace" "$(grep -o 'http[^"]*' peak.svg | sort -u)" \
	"http://www.w3.org/2000/svg"

# The peak: 362,624 B; make_report's scratch buffer 262,144 B; grow_rows'
# reallocs 8 x 8,192 = 65,536 B; build_index rows 8..15 (4,096 B each, 0..7
# were reallocated) and the 128 B row table; load_config 1,024 + 4 x 256 B.
dom peak.svg "" peak.dom
is "peak: root width" "$(awk '$1 == "f0" { print $4 }' peak.dom.frames)" 362624
is "peak: make_report" "$(sum peak.dom.frames make_report)" 262144
is "peak: grow_rows" "$(sum peak.dom.frames grow_rows)" 65536
is "peak: build_index" "$(sum peak.dom.frames build_index)" 32896
is "peak: load_config" "$(sum peak.dom.frames load_config)" 2048
is "peak: all allocation through realloc" "$(sum peak.dom.frames realloc)" 65536
widths peak.dom.frames 362624
is "peak: title" "$($CHECK text peak.dom title)" "memtrail: live at the peak: $BIN"

# Search: everything but the reallocs went through xmalloc: 362,624 -
# 65,536 = 297,088 B, 81.93 %; matches highlighted, nothing else.
dom peak.svg "#s=%5Exmalloc" search.dom
is "search: matched" "$($CHECK root search.dom data-matched)" 297088
is "search: matched text" "$($CHECK text search.dom matched)" "Matched: 81.93%"
is "search: highlighted frames" "$(awk '$7 == 1 { print $6, substr($10, 1, 8) }' search.dom.frames |
	sort -u)" "rgb(230,0,230) xmalloc"
is "search: frames not highlighted" "$(awk '$7 == 0 && index($10, "xmalloc") == 1' search.dom.frames)" ""

# Zoom on make_report: it and its callees take the whole width, its
# callers too (faded), the rest is hidden.
z=$(awk 'index($10, "make_report") == 1 { print substr($1, 2) }' peak.dom.frames)
dom peak.svg "#z=$z" zoom.dom
is "zoom: make_report" "$(awk -v id="f$z" '$1 == id { print $8, $9 }' zoom.dom.frames)" "10.00 1180.00"
is "zoom: malloc above it" "$(awk '$10 == "malloc" { print $8, $9 }' zoom.dom.frames)" "10.00 1180.00"
is "zoom: root" "$(awk '$1 == "f0" { print $8, $9 }' zoom.dom.frames)" "10.00 1180.00"
is "zoom: grow_rows hidden" "$(sum zoom.dom.frames grow_rows)" 0

# 8 levels of 16 px from y = 54 (all, _start ... main, make_report,
# xmalloc, malloc): a flame graph has the root at the bottom, the entry
# point of make_report's block on top; --inverted draws an icicle, the
# other way up, with the same frames.
mr=$(awk '$10 == "malloc" && $4 == 262144 { print $1 }' peak.dom.frames)
is "flame: root at the bottom, malloc on top" \
	"$($CHECK rect peak.dom f0 y) $($CHECK rect peak.dom "$mr" y)" "166 54"
"$MEMTRAIL" report phases.data --inverted --format svg -o icicle.svg 2>/dev/null ||
	mt_fail "--inverted --format svg failed"
dom icicle.svg "" icicle.dom
is "icicle: root on top, malloc at the bottom" \
	"$($CHECK rect icicle.dom f0 y) $($CHECK rect icicle.dom "$mr" y)" "54 166"
if [ "$(cut -d' ' -f1-5,10- icicle.dom.frames)" = "$(cut -d' ' -f1-5,10- peak.dom.frames)" ]
then mt_ok "icicle: the same $(wc -l <icicle.dom.frames) frames"
else mt_fail "icicle: not the flame graph's frames"; fi

# Leaks: 9,216 B, the 1,024 B config and rows 14 and 15.
"$MEMTRAIL" report phases.data --show-leaks --format svg -o leaks.svg 2>/dev/null ||
	mt_fail "--show-leaks --format svg failed"
dom leaks.svg "" leaks.dom
is "leaks: root" "$(awk '$1 == "f0" { print $4 }' leaks.dom.frames)" 9216
is "leaks: load_config" "$(sum leaks.dom.frames load_config)" 1024
is "leaks: build_index" "$(sum leaks.dom.frames build_index)" 8192
widths leaks.dom.frames 9216

# A snapshot: --show-snapshots draws the last one, "freed": 9,216 B too.
"$MEMTRAIL" report phases.data --show-snapshots --format svg -o snap.svg 2>/dev/null ||
	mt_fail "--show-snapshots --format svg failed"
dom snap.svg "" snap.dom
is "snapshot: root" "$(awk '$1 == "f0" { print $4 }' snap.dom.frames)" 9216
is "snapshot: title" "$($CHECK text snap.dom title)" "memtrail: live at snapshot 2 (freed): $BIN"

# A diff from "loaded" (67,712 B) to "grown" (92,288 B): net +24,576 B.
# Grown: grow_rows +65,536, replace_rows +8,192 (4 x 2,048), red. Shrunk:
# build_index -49,152 (rows 0..7 reallocated, 8..11 replaced), blue. The
# root is as wide as all that changed: 65,536 + 8,192 + 49,152 = 122,880.
"$MEMTRAIL" report phases.data --diff loaded grown --format svg -o diff.svg 2>/dev/null ||
	mt_fail "--diff --format svg failed"
dom diff.svg "" diff.dom
is "diff: title" "$($CHECK text diff.dom title)" \
	"memtrail: change from snapshot 0 (loaded) to snapshot 1 (grown): $BIN"
is "diff: root" "$(awk '$1 == "f0" { print $4, $5 }' diff.dom.frames)" "122880 24576"
is "diff: grow_rows" "$(awk 'index($10, "grow_rows") == 1 { print $5, $6 }' diff.dom.frames)" \
	"65536 rgb(240,60,60)"
is "diff: replace_rows" "$(awk 'index($10, "replace_rows") == 1 { print $5, $6 }' diff.dom.frames)" \
	"8192 rgb(240,60,60)"
is "diff: build_index" "$(awk 'index($10, "build_index") == 1 { print $5, $6 }' diff.dom.frames)" \
	"-49152 rgb(60,60,240)"
widths diff.dom.frames 122880

# Screenshots (the window as large as the SVG: 1,200 x 210 px for 8
# levels): the flame colours; with the search, its highlight, over the
# 297,088 / 362,624 of 1,180 px x 15 px rows the matches cover, less the
# labels' glyphs and the frames' rounded corners.
chrome --window-size=1200,210 --screenshot="$MT_TMP/plain.png" "file://$MT_TMP/peak.svg" >/dev/null
chrome --window-size=1200,210 --screenshot="$MT_TMP/search.png" "file://$MT_TMP/peak.svg#s=%5Exmalloc" >/dev/null
set -- $($CHECK png plain.png 230 0 230)
is "screenshot: size" "$1x$2" 1200x210
is "screenshot: no highlight without a search" "$3" 0
warm=$($CHECK warm plain.png)
# most of the 1,180 x 8 x 15 px of frames (all of the bottom four rows)
if [ "$warm" -ge $((1180 * 4 * 15 * 3 / 4)) ]; then mt_ok "screenshot: $warm px of flame colours"
else mt_fail "screenshot: $warm px of flame colours only"; fi
set -- $($CHECK png search.png 230 0 230)
full=$((297088 * 1180 / 362624 * 15))
if [ "$3" -ge $((full * 3 / 4)) ] && [ "$3" -le "$full" ]; then
	mt_ok "screenshot: $3 px highlighted (at most $full)"
else mt_fail "screenshot: $3 px highlighted, not 3/4 to all of $full"; fi

# Real programs. python3: 8 bytearrays of 1,000,000 B, each a malloc of
# 1,000,001 B (the size and its NUL) by PyByteArray_Resize, all live at
# the peak: 8,000,008 B there, found by the search too. A C++ program
# (samples/cxx_new.cpp): a peak of 74,544 B, 96 B of it (the vector's
# arrays of 32 and 64 B) under labels with templates' '<', '>' and '&'.
# Both files are XML as written, and Chromium shows as many frames as
# they hold once the script ran.
# same_frames SVG DOM: the frames written are those shown.
same_frames() {
	n=$($CHECK frames "$1" | wc -l)
	if [ "$n" -gt 0 ] && [ "$n" = "$(wc -l <"$2.frames")" ]; then mt_ok "$1: $n frames, all shown"
	else mt_fail "$1: $n frames written, $(wc -l <"$2.frames") shown"; fi
}
mt_record py.data py /usr/bin/python3 -c "x = [bytearray(1000000) for i in range(8)]"
"$MEMTRAIL" report py.data --format svg -o py.svg 2>/dev/null || mt_fail "python3: --format svg failed"
dom py.svg "#s=%5EPyByteArray_Resize%24" py.dom
same_frames py.svg py.dom
is "python3: PyByteArray_Resize" "$(sum py.dom.frames PyByteArray_Resize)" 8000008
is "python3: matched" "$($CHECK root py.dom data-matched)" 8000008
peak=$("$MEMTRAIL" report py.data --summary --format json | python3 -c \
	'import json, sys; print(json.load(sys.stdin)["peak_bytes"])')
is "python3: root, the summary's peak" "$(awk '$1 == "f0" { print $4 }' py.dom.frames)" "$peak"
widths py.dom.frames "$peak"
if [ -x "$MT_SAMPLES/cxx_new" ]; then
	mt_record cxx.data cxx "$MT_SAMPLES/cxx_new"
	"$MEMTRAIL" report cxx.data --format svg -o cxx.svg 2>/dev/null || mt_fail "C++: --format svg failed"
	dom cxx.svg "" cxx.dom
	same_frames cxx.svg cxx.dom
	is "C++: root" "$(awk '$1 == "f0" { print $4 }' cxx.dom.frames)" 74544
	is "C++: std::vector<int>::push_back" \
		"$(sum cxx.dom.frames 'std::vector<int, std::allocator<int> >::push_back')" 96
	widths cxx.dom.frames 74544
	if grep -q '_M_realloc_insert&lt;int const&amp;&gt;' cxx.svg; then
		mt_ok "C++: '<', '&', '>' escaped"
	else mt_fail "C++: no escaped _M_realloc_insert<int const&> in cxx.svg"; fi
fi

# Bad combinations: one tree, not the summary.
if "$MEMTRAIL" report phases.data --summary --format svg >/dev/null 2>bad.err; then
	mt_fail "--summary --format svg accepted"
else is "--summary --format svg" "$(cat bad.err)" \
	"memtrail: error: --summary is written as --format text or json only"; fi
mt_finish
