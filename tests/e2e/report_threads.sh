#!/bin/sh
# report_threads.sh - per-thread figures and the thread filter, exactly:
# samples/thread_names.c (alpha, beta and gamma, run one after another, each
# with its own allocations, frees and leaks; gamma still runs at exit) read
# through `memtrail dump` (a THREAD_NAME per thread: a name the thread gave
# itself, one its creator gave it, the program's for main, gamma's read at
# the end), `report --by-thread` (text and JSON: allocations, frees, bytes
# allocated, live at the peak and leaked of the blocks each allocated) and
# `report --thread TID` (the peak and leaks trees, collapsed and text, of
# one thread's blocks: their totals are that thread's figures, and every
# stack runs through that thread's function). The figures are worked out
# in the sample's top comment; main's DTV grows by 16 B per TLS module the
# recorder adds (tests/expect.py adjust_dtv).
#
# The viewer's T key: the tree at the peak of each thread's blocks in turn
# (its total in the tree's title), then every thread's again.
#
# Also: a version 2 log (tests/e2e/cli_phases.data, no THREAD_NAME) still
# reads, its threads unnamed; bad --thread values are one-line errors.
#
# Not for: the run's totals (accuracy_samples.sh checks the expect block).

[ -z "${MT_TMP:-}" ] && own_tmp=1
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3 readelf
mt_have_memtrail || mt_skip "memtrail not built"
BIN=$MT_SAMPLES/thread_names
[ -x "$BIN" ] || mt_skip "samples not built (make samples): no $BIN"
trap 'mt_tmux_stop; [ -n "${own_tmp:-}" ] && rm -rf "$MT_TMP"' EXIT
cd "$MT_TMP" || exit 1

mt_record tn.data tn "$BIN"
if [ "$(cat tn.rc)" = 0 ] && [ "$(cat tn.out)" = "done" ]; then
	mt_ok "thread_names runs under memtrail record"
else
	mt_fail "thread_names under memtrail: rc $(cat tn.rc), stdout $(cat tn.out)"
fi
tls=$(( $(mt_tls_modules "$MT_RECORDER" "$BIN") - $(mt_tls_modules "$BIN") ))
dtv=$((272 + 16 * tls))

# dump: every thread named once.
"$MEMTRAIL" dump tn.data >dump.txt 2>dump.err
names=$(sed -n 's/^thread_name [0-9]* name="\(.*\)"$/\1/p' dump.txt | sort | tr '\n' ' ')
if [ "$names" = "alpha beta gamma thread_names " ] && [ "$(grep -c '^thread ' dump.txt)" = 4 ]; then
	mt_ok "dump: 4 threads, named alpha, beta, gamma and thread_names"
else
	mt_fail "dump: thread names '$names', $(grep -c '^thread ' dump.txt) threads"
fi

# --by-thread as JSON: each thread's figures.
"$MEMTRAIL" report --by-thread --format json tn.data >thr.json 2>thr.err
if python3 - "$dtv" <<'PY'
import json, sys
dtv = int(sys.argv[1])
t = json.load(open("thr.json"))["threads"]
want = [
    # name, allocations, frees, bytes, peak bytes, peak blocks, leaked bytes, leaked blocks
    ("thread_names", 2, 2, 50000 + dtv, 50000 + dtv, 2, dtv, 1),
    ("alpha", 10, 4, 1000, 300, 3, 300, 3),
    ("beta", 2, 4, 6000, 4000, 1, 0, 0),
    ("gamma", 1, 0, 500, 500, 1, 500, 1),
]
keys = ("name", "allocations", "frees", "bytes_allocated", "peak_bytes", "peak_blocks",
        "leaked_bytes", "leaked_blocks")
bad = len(t) != 4
for i, w in enumerate(want):
    got = tuple(t[i][k] for k in keys) if i < len(t) else None
    if got != w:
        print("thread %d: expected %s, got %s" % (i, w, got))
        bad = True
    elif t[i]["index"] != i:
        print("thread %d: index %s" % (i, t[i]["index"]))
        bad = True
with open("tids", "w") as f:
    for x in t:
        f.write("%s %d\n" % (x["name"], x["tid"]))
sys.exit(1 if bad else 0)
PY
then
	mt_ok "--by-thread --format json: every thread's figures and name"
else
	mt_fail "--by-thread --format json ($MT_TMP/thr.json)"
fi
tid_of() { sed -n "s/^$1 //p" tids; }

# --by-thread as text: the same figures in columns.
"$MEMTRAIL" report --by-thread tn.data >thr.txt 2>thr.err
row=$(grep " alpha\$" thr.txt | tr -s ' ')
if [ "$row" = " $(tid_of alpha) 10 4 1,000B 300B 3 300B 3 alpha" ] &&
    head -n 1 thr.txt | grep -q '^threads: 4 ' &&
    grep -q "^ *$(tid_of beta) *2 *4 *6,000B *4,000B *1 *0B *0  beta\$" thr.txt; then
	mt_ok "--by-thread: a line per thread"
else
	mt_fail "--by-thread text ($MT_TMP/thr.txt): alpha's row '$row'"
fi

# --thread TID: the trees of one thread's blocks.
sum() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
check_thread() {
	_name=$1 _fn=$2 _peak=$3 _leak=$4
	_tid=$(tid_of "$_name")
	"$MEMTRAIL" report --thread "$_tid" --show-maximum --format collapsed tn.data \
		>"max.$_name" 2>"max.$_name.err"
	"$MEMTRAIL" report --thread "$_tid" --show-leaks --format collapsed tn.data \
		>"leak.$_name" 2>"leak.$_name.err"
	if [ "$(sum "max.$_name")" = "$_peak" ] && [ "$(sum "leak.$_name")" = "$_leak" ] &&
	    ! cat "max.$_name" "leak.$_name" | grep -v -F -e "$_fn [" | grep -q .; then
		mt_ok "--thread $_name: $_peak B at the peak, $_leak B leaked, all under $_fn"
	else
		mt_fail "--thread $_name: peak $(sum "max.$_name") (want $_peak), leaked $(sum "leak.$_name") (want $_leak) ($MT_TMP/max.$_name)"
	fi
}
check_thread alpha ';alpha' 300 300
check_thread beta ';beta' 4000 0
check_thread gamma ';gamma_main' 500 500
check_thread thread_names ';main' $((50000 + dtv)) "$dtv"

"$MEMTRAIL" report --thread "$(tid_of alpha)" tn.data >alpha.txt 2>alpha.err
if grep -qx "maximum of thread $(tid_of alpha) (alpha): 300B" alpha.txt &&
    grep -qx "leaked of thread $(tid_of alpha) (alpha): 300B" alpha.txt &&
    grep -q "^allocations: *15\$" alpha.txt; then
	mt_ok "--thread: the trees are named after the thread; the summary is the run's"
else
	mt_fail "--thread text ($MT_TMP/alpha.txt)"
fi

# Errors.
"$MEMTRAIL" report --thread 999999999 tn.data >e1.out 2>e1.err
if [ -s e1.out ] || [ "$(cat e1.err)" != "memtrail: error: --thread: no thread with tid 999999999 in tn.data" ]; then
	mt_fail "--thread with an unknown tid: $(cat e1.err)"
else
	mt_ok "--thread with an unknown tid: one-line error, nothing printed"
fi
for bad in 0 -3 x; do
	if "$MEMTRAIL" report --thread "$bad" tn.data >e2.out 2>e2.err ||
	    [ "$(wc -l <e2.err)" -lt 1 ] || ! head -n 1 e2.err | grep -q '^memtrail: error: '; then
		mt_fail "--thread $bad: $(cat e2.err)"
	else
		mt_ok "--thread $bad: an error"
	fi
done
if "$MEMTRAIL" report --by-thread --format massif tn.data >e3.out 2>e3.err; then
	mt_fail "--by-thread --format massif accepted"
else
	mt_ok "--by-thread --format massif: an error"
fi

# The viewer: T steps through the threads.
if command -v tmux >/dev/null 2>&1 && mt_tmux_start 120 40; then
	mt_tmux_keys "'$MEMTRAIL' view '$MT_TMP/tn.data'" Enter
	if mt_tmux_wait "^Live at peak: 55,[0-9]{3} B in 7 blocks" 20; then
		ok=1
		mb=$(printf '%d' $((50000 + dtv)) | sed 's/\(..\)\(...\)$/\1,\2/')
		for step in "thread_names:$mb B in 2 blocks" "alpha:300 B in 3 blocks" \
		    "beta:4,000 B in 1 blocks" "gamma:500 B in 1 blocks"; do
			name=${step%%:*}
			mt_tmux_keys T
			if ! mt_tmux_wait "trees of thread $(tid_of "$name") \\($name\\)'s blocks" 10 ||
			    ! mt_tmux_wait "^Live at peak: ${step#*:}" 10; then
				ok=0
				mt_fail "view: T for $name"
			fi
		done
		mt_tmux_keys T
		mt_tmux_wait "trees of every thread's blocks" 10 || { ok=0; mt_fail "view: T back to every thread"; }
		mt_tmux_wait "^Live at peak: 55,[0-9]{3} B in 7 blocks" 10 || ok=0
		[ $ok = 1 ] && mt_ok "view: T shows each thread's blocks at the peak, then every thread's"
	else
		mt_fail "view: did not start"
	fi
	mt_tmux_keys q
	mt_tmux_stop
fi

# A version 2 log: read, its thread unnamed.
"$MEMTRAIL" report --by-thread "$MT_TOP/tests/e2e/cli_phases.data" >v2.txt 2>v2.err
if head -n 1 v2.txt | grep -q '^threads: 1 ' && tail -n 1 v2.txt | grep -q ' -$'; then
	mt_ok "a version 2 log: --by-thread reads it, the thread unnamed"
else
	mt_fail "version 2 log ($MT_TMP/v2.txt): $(cat v2.err)"
fi
mt_finish
