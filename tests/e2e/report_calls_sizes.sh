#!/bin/sh
# report_calls_sizes.sh - `memtrail report --show-calls` and `--show-sizes`
# on samples/sizes.c: every allocation call of the run by call site (calls,
# bytes, average, percentages of calls, most calls first), the same counts
# in the collapsed and JSON exports, the size histogram bucket by bucket
# (text and JSON), -i/-x restricting it to the stacks they keep, the totals
# equal to the summary's allocations and bytes allocated, and the usage
# errors of formats that cannot hold them.
#
# The figures are the sample's (derived in its top comment from its code)
# and the line numbers come from grepping its source; none is read from
# memtrail's output. Not for: the trees of live memory (report_phases.sh).
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3
mt_have_memtrail || mt_skip "memtrail not built"
SRC=$MT_TOP/samples/sizes.c
BIN=$MT_SAMPLES/sizes
[ -x "$BIN" ] || mt_skip "$BIN not built (make samples)"
cd "$MT_TMP" || exit 1

line_of() { grep -n -F -- "$1" "$SRC" | head -n 1 | cut -d: -f1; }
commas() { echo "$1" | sed ':a;s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/;ta'; }
pct() { awk -v p="$1" -v t="$2" 'BEGIN { printf "%.2f", 100 * p / t }'; }
has() {
	if grep -q -F -- "$2" "$1"; then mt_ok "$1: $2"; else mt_fail "$1 lacks: $2"; fi
}
# calls_line FILE CALLS BYTES AVG LABEL: "-> P% (BYTES, CALLSx, avg AVGB): LABEL"
calls_line() {
	has "$1" "-> $(pct "$2" $CALLS)% ($(commas "$3")B, $(commas "$2")x, avg $(commas "$4")B): $5"
}

mt_record sizes.data rec "$BIN"
[ "$(cat rec.rc)" = 0 ] || { cat rec.err; mt_fail "record failed"; mt_finish; }
mt_summary sizes.data summary.json || { cat summary.json.err; mt_fail "summary failed"; mt_finish; }

F=samples/sizes.c
L_CHURN=$(line_of 'char *p = malloc(24);')
L_EDGES=$(line_of 'void *p = malloc(sizes[i]);')
L_TABLE=$(line_of 'char *t = calloc(10, 100);')
L_XMALLOC=$(line_of 'void *p = malloc(n);')
L_GROW=$(line_of 'char *p = xmalloc(16);')
L_REALLOC=$(line_of 'char *q = realloc(p, n);')
L_BIG=$(line_of 'char *b = malloc(1 << 20);')

# ---- the calls tree: the sample's "per entry point" and call sites ----------
CALLS=1018
BYTES=1083824
"$MEMTRAIL" report sizes.data --show-calls -t 0 >calls.txt 2>calls.err ||
	mt_fail "report --show-calls failed: $(cat calls.err)"
[ "$(sed -n 1p calls.txt)" = "calls: 1,018 allocations (1,083,824B)" ] ||
	mt_fail "calls: header is $(sed -n 1p calls.txt)"
[ "$(sed -n 2p calls.txt)" = "  -> $(pct 1011 $CALLS)% (1,080,808B, 1,011x, avg 1,069B): malloc" ] ||
	mt_fail "calls: the first entry is not malloc's 1,011 calls: $(sed -n 2p calls.txt)"
calls_line calls.txt 1000 24000 24 "churn [$F:$L_CHURN]"
calls_line calls.txt 9 8216 913 "edges [$F:$L_EDGES]"
calls_line calls.txt 1 1048576 1048576 "big [$F:$L_BIG]"
calls_line calls.txt 1 16 16 "xmalloc [$F:$L_XMALLOC]"
calls_line calls.txt 1 16 16 "grow [$F:$L_GROW]"
calls_line calls.txt 6 2016 336 "realloc"
calls_line calls.txt 6 2016 336 "grow [$F:$L_REALLOC]"
calls_line calls.txt 1 1000 1000 "calloc"
calls_line calls.txt 1 1000 1000 "table [$F:$L_TABLE]"
# most calls first: malloc, then realloc (6), then calloc (1)
mt_chain calls.txt "): malloc" "): realloc" "): calloc" && mt_ok "calls: entry points by calls"
# under malloc: churn (1,000) before edges (9) before the single calls
mt_chain calls.txt "churn [" "edges [" "big [" && mt_ok "calls: call sites by calls"
# the default 1% threshold folds everything below 10.18 calls of 1,018:
# under malloc edges (9, 8,216 B), big (1, 1,048,576 B) and grow's xmalloc
# (1, 16 B): 11 calls, 1,056,808 B, avg 96,073.5 -> 96,073; at the top
# realloc (6, 2,016 B) and calloc (1, 1,000 B): 7 calls, 3,016 B, avg 431
"$MEMTRAIL" report sizes.data --show-calls >calls1.txt 2>/dev/null
has calls1.txt "-> $(pct 11 $CALLS)% (1,056,808B, 11x, avg 96,073B) in 3 places, all below the 1% threshold"
has calls1.txt "-> $(pct 7 $CALLS)% (3,016B, 7x, avg 431B) in 2 places, all below the 1% threshold"

# ---- the totals are the summary's -------------------------------------------
python3 - summary.json <<EOF || mt_fail "calls total differs from the summary"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["allocations"] == $CALLS and s["bytes_allocated"] == $BYTES, s
print("ok: the summary counts $CALLS allocations, $BYTES bytes: the calls tree's total")
EOF

# ---- exports count calls --------------------------------------------------------
"$MEMTRAIL" report sizes.data --show-calls --format collapsed >calls.col 2>/dev/null ||
	mt_fail "--show-calls --format collapsed failed"
sum=$(awk '{ s += $NF } END { print s + 0 }' calls.col)
if [ "$sum" = $CALLS ]; then mt_ok "collapsed: the lines sum to $CALLS calls"
else mt_fail "collapsed: the lines sum to $sum, not $CALLS"; fi
if grep -q "churn \[$F:$L_CHURN\];malloc 1000$" calls.col; then mt_ok "collapsed: churn's 1000 calls"
else mt_fail "collapsed: no line for churn's 1000 calls"; fi
if grep -q "grow \[$F:$L_REALLOC\];realloc 6$" calls.col; then mt_ok "collapsed: grow's 6 reallocs"
else mt_fail "collapsed: no line for grow's 6 reallocs"; fi
"$MEMTRAIL" report sizes.data --show-calls --format json >calls.json 2>/dev/null ||
	mt_fail "--show-calls --format json failed"
python3 - calls.json <<EOF || mt_fail "json: calls"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["costs"] == [{"description": "Allocation calls", "unit": "calls"}], j["costs"]
assert sum(e["cost"][0] for e in j["events"]) == $CALLS
names = [f["name"] for f in j["functions"]]
churn = [e["cost"][0] for e in j["events"] if names[e["callchain"][1]].startswith("churn [")]
assert churn == [1000], churn
print("ok: json: $CALLS calls in all, churn's 1000")
EOF

# ---- sizes: the sample's bucket table ---------------------------------------------
"$MEMTRAIL" report sizes.data --show-sizes >sizes.txt 2>sizes.err ||
	mt_fail "report --show-sizes failed: $(cat sizes.err)"
# bucket calls bytes: the sample's table, 8,192 .. 1,048,575 empty
cat >want.tab <<'EOF'
0 1 0
1 1 1
2 - 3 2 5
4 - 7 2 11
8 - 15 1 8
16 - 31 1001 24016
32 - 63 1 32
64 - 127 1 64
128 - 255 1 128
256 - 511 1 256
512 - 1,023 2 1512
1,024 - 2,047 1 1024
2,048 - 4,095 1 4095
4,096 - 8,191 1 4096
8,192 - 16,383 0 0
16,384 - 32,767 0 0
32,768 - 65,535 0 0
65,536 - 131,071 0 0
131,072 - 262,143 0 0
262,144 - 524,287 0 0
524,288 - 1,048,575 0 0
1,048,576 - 2,097,151 1 1048576
EOF
# the expected lines, spaces squeezed: range, calls, % of calls, bytes, a bar
# of 40 marks for the fullest bucket (1,001 calls), at least one otherwise
while read -r line; do
	n=$(echo "$line" | awk '{ print $(NF - 1) }')
	bytes=$(echo "$line" | awk '{ print $NF }')
	range=$(echo "$line" | awk '{ NF -= 2; print }')
	bar=$(awk -v n="$n" 'BEGIN { b = int((n * 40 + 1000) / 1001); s = ""
		for (i = 0; i < b; i++) s = s "#"; print s }')
	echo "$range $(commas "$n") $(pct "$n" $CALLS)% $(commas "$bytes")B $bar" | sed 's/ $//'
done <want.tab >want.txt
{ echo "sizes: 1,018 allocations (1,083,824B)"; echo "size calls % calls bytes"; cat want.txt; } >want.all
sed 's/^ *//; s/  */ /g' sizes.txt >got.txt
if cmp -s want.all got.txt; then
	mt_ok "sizes: every bucket as the sample works it out"
else
	mt_fail "sizes: the histogram differs"; diff want.all got.txt
fi
"$MEMTRAIL" report sizes.data --show-sizes --format json >sizes.json 2>/dev/null ||
	mt_fail "--show-sizes --format json failed"
python3 - sizes.json want.tab <<'EOF' || mt_fail "sizes json"
import json, sys
got = json.load(open(sys.argv[1]))["sizes"]
want = []
for l in open(sys.argv[2]):
    w = l.split()
    lo = int(w[0].replace(",", ""))
    hi = int(w[2].replace(",", "")) if len(w) == 5 else lo
    if int(w[-2]):
        want.append({"min": lo, "max": hi, "calls": int(w[-2]), "bytes": int(w[-1])})
assert got == want, (got, want)
print("ok: sizes json: the %d buckets with calls" % len(want))
EOF

# ---- -i / -x: the stacks they keep ----------------------------------------------
"$MEMTRAIL" report sizes.data --show-sizes -i churn >churn.txt 2>/dev/null
has churn.txt "sizes: 1,000 allocations (24,000B)"
if [ "$(sed 's/^ *//; s/  */ /g' churn.txt | sed -n 3p)" = "16 - 31 1,000 100.00% 24,000B $(printf '%040d' 0 | tr 0 '#')" ]; then
	mt_ok "-i churn: one bucket, 16 - 31"
else
	mt_fail "-i churn: $(sed -n 3p churn.txt)"
fi
[ "$(wc -l <churn.txt)" -eq 3 ] || mt_fail "-i churn: more than one bucket"
"$MEMTRAIL" report sizes.data --show-sizes -x 'churn|edges' >rest.txt 2>/dev/null
# grow's 16 + 6 reallocs, the table and big: 1 + 6 + 1 + 1 calls
has rest.txt "sizes: 9 allocations ($(commas $((16 + 2016 + 1000 + 1048576)))B)"
"$MEMTRAIL" report sizes.data --show-sizes --include-module nosuchmodule >none.txt 2>/dev/null
if [ "$(cat none.txt)" = "sizes: 0 allocations (0B)" ]; then
	mt_ok "a filter keeping nothing: 0 allocations"
else
	mt_fail "a filter keeping nothing: $(cat none.txt)"
fi

# ---- formats that cannot hold them --------------------------------------------------
usage() {   # usage NAME ARGS...: exit status 2 and one "memtrail: error:" line
	"$MEMTRAIL" report sizes.data "$@" >/dev/null 2>u.err
	rc=$?
	if [ $rc -eq 2 ] && grep -q '^memtrail: error: ' u.err; then
		mt_ok "$*: usage error ($(head -n 1 u.err))"
	else
		mt_fail "$*: exit $rc, $(cat u.err)"
	fi
}
usage --show-sizes --format collapsed
usage --show-sizes --format massif
usage --show-sizes --show-leaks --format json
usage --show-calls --format massif
mt_finish
