#!/bin/sh
# rec_ring.sh - a bounded log (memtrail record --max-size): a run long
# enough to fill a 1 MiB ring several times over (tests/e2e/ring_prog.c,
# whose top comment works out every figure below) leaves segments
# FILE.seg<N> whose total stays within the size plus one segment, the
# oldest dropped; `memtrail report FILE` gives the program's exact totals,
# peak (long before the kept log: from BASE) and live-at-exit figures, with
# the long-lived blocks' stacks symbolized, and says once that the events
# before a time were dropped; `memtrail dump` shows BASE with those blocks;
# `memtrail view` opens it. Also: --max-size with --snapshot-interval and
# with --follow-children (samples/forker), the
# usage errors, an earlier run's files cleared, and hostile segment sets
# (a middle one missing, the newest cut mid-chunk, the oldest's BASE
# damaged) warn or fail cleanly, never crash.
# Not for: the segment naming and BASE decoding in detail (test_reader,
# test_replay).
[ -z "${MT_TMP:-}" ] && own_tmp=1
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd python3 cc
mt_have_memtrail || mt_skip "memtrail not built"

cd "$MT_TMP" || exit 1
trap 'mt_tmux_stop; [ -n "${own_tmp:-}" ] && rm -rf "$MT_TMP"' EXIT
cc -O0 -g -o ring_prog "$MT_TOP/tests/e2e/ring_prog.c" || { mt_fail "cannot build ring_prog.c"; mt_finish; }

N=2097152
SIZE=1048576

# An earlier run's files under the same name: the recording clears them.
echo stale >r.data
echo stale >r.data.seg999
env MEMTRAIL_MAX_SIZE= timeout "$MT_TIMEOUT" "$MEMTRAIL" record --max-size 1M -o r.data \
	./ring_prog $N >rec.out 2>rec.err </dev/null
rc=$?
[ "$rc" = 0 ] || mt_fail "record --max-size 1M: exit $rc: $(cat rec.err)"
[ ! -e r.data ] && [ ! -e r.data.seg999 ] &&
	mt_ok "the earlier run's r.data and r.data.seg999 are gone" ||
	mt_fail "an earlier run's file is still there: $(ls r.data*)"
grep -q '^memtrail: 2,098,192 allocations, 1.9 MiB peak, 11.4 KiB leaked in 15 blocks' rec.err &&
	mt_ok "closing line: $(grep '^memtrail: 2,098' rec.err)" ||
	mt_fail "closing line: $(cat rec.err)"

# The segments on disk: contiguous numbers, the first ones gone, the total
# within the size plus the largest segment.
python3 - "$SIZE" r.data.seg* >segs.txt <<'EOF'
import os, sys
size = int(sys.argv[1])
nums = sorted(int(f.rsplit(".seg", 1)[1]) for f in sys.argv[2:])
sizes = [os.path.getsize("r.data.seg%d" % n) for n in nums]
print("segments", " ".join(map(str, nums)))
print("contiguous", int(nums == list(range(nums[0], nums[-1] + 1))))
print("first", nums[0])
print("total", sum(sizes))
print("bound", size + max(sizes))
EOF
cat segs.txt
first=$(sed -n 's/^first //p' segs.txt)
total=$(sed -n 's/^total //p' segs.txt)
bound=$(sed -n 's/^bound //p' segs.txt)
[ "$(sed -n 's/^contiguous //p' segs.txt)" = 1 ] && mt_ok "kept segments are contiguous" ||
	mt_fail "kept segments not contiguous: $(cat segs.txt)"
[ "$first" -gt 3 ] && mt_ok "old segments dropped: the oldest kept is seg$first" ||
	mt_fail "the oldest kept segment is seg$first: the ring did not turn several times"
[ "$total" -le "$bound" ] && mt_ok "on disk $total B <= $SIZE B + one segment = $bound B" ||
	mt_fail "on disk $total B > $bound B"

# The figures: ring_prog.c's top comment.
"$MEMTRAIL" report --summary --format json r.data >sum.json 2>sum.err ||
	mt_fail "report --summary: $(cat sum.err)"
python3 - "$N" sum.json >figs.txt <<'EOF'
import json, sys
n = int(sys.argv[1])
j = json.load(open(sys.argv[2]))
want = {"allocations": n + 1040, "frees": n + 1025, "bytes_allocated": 268 * n + 2077201,
        "peak_bytes": 2010000, "peak_blocks": 11, "leaked_bytes": 11665, "leaked_blocks": 15}
for k, v in want.items():
    print("%s %s %s %s" % ("ok" if j.get(k) == v else "bad", k, j.get(k), v))
k = j.get("kept_from_s", -1)
print("%s kept_from_s %s (0, %s)" % ("ok" if 0 < k < j["duration_s"] else "bad", k, j["duration_s"]))
EOF
while read -r st key got want; do
	[ "$st" = ok ] && mt_ok "$key $got" || mt_fail "$key $got, want $want"
done <figs.txt
n=$(grep -c 'a bounded log: the events before .* were dropped' sum.err)
[ "$n" = 1 ] && mt_ok "report says once on stderr: $(cat sum.err)" ||
	mt_fail "report's note on stderr ($n times): $(cat sum.err)"

"$MEMTRAIL" report r.data >rep.txt 2>rep.err || mt_fail "report: $(cat rep.err)"
grep -q '^kept from: .*a bounded log: the events before were dropped' rep.txt &&
	mt_ok "the summary header says where the kept log begins" ||
	mt_fail "no 'kept from' line in the summary header"
# the leaked tree: the long-lived blocks (allocated before every kept
# segment, known from BASE) and the leaks, symbolized, no unknown frame
sed -n '/^leaked: /,/^$/p' rep.txt >leaked.txt
grep -q '(10,000B, 10x): keep_forever \[[^]]*ring_prog\.c:' leaked.txt &&
	mt_ok "long-lived blocks: keep_forever, 10,000 B in 10 blocks" ||
	mt_fail "no keep_forever 10,000 B in the leaked tree: $(cat leaked.txt)"
grep -q '(1,665B, 5x): leak_some \[[^]]*ring_prog\.c:' leaked.txt &&
	mt_ok "leaks: leak_some, 1,665 B in 5 blocks" || mt_fail "no leak_some 1,665 B in the leaked tree"
grep -q -e '?' -e '0x[0-9a-f]' leaked.txt && mt_fail "an unknown frame in the leaked tree" ||
	mt_ok "every frame of the leaked tree symbolized"

# dump: BASE first (with the long-lived blocks), and it agrees with itself
"$MEMTRAIL" dump r.data >dump.txt 2>dump.err || mt_fail "dump: $(cat dump.err)"
python3 - dump.txt <<'EOF' >base.txt
import sys
lines = open(sys.argv[1]).read().splitlines()
b = [l for l in lines if l.startswith("base ")]
f = dict(w.split("=", 1) for w in b[0].split()[1:]) if b else {}
st = [dict(w.split("=") for w in l.split()[1:]) for l in lines if l.startswith("base_stack ")]
first_ev = next((l for l in lines if l.startswith(("alloc ", "free ", "realloc "))), "")
ev = dict(w.split("=", 1) for w in first_ev.split()[1:]) if first_ev else {}
print("bases", len(b))
print("seq_sum", int(int(f.get("allocations", -1)) + int(f.get("frees", -1)) == int(f.get("seq", -2))))
print("first_event_seq", int(ev.get("seq", -1) == f.get("seq")))
print("kept", int(any(s["bytes"] == "10000" and s["blocks"] == "10" for s in st)))
print("peak", f.get("peak_bytes"), f.get("peak_blocks"))
EOF
grep -q '^bases 1$' base.txt && grep -q '^seq_sum 1$' base.txt && grep -q '^first_event_seq 1$' base.txt &&
	mt_ok "dump: one BASE, allocations + frees = its seq = the first kept event's" ||
	mt_fail "dump's BASE: $(cat base.txt)"
grep -q '^kept 1$' base.txt && mt_ok "BASE holds the 10 long-lived blocks (10,000 B)" ||
	mt_fail "BASE lacks the long-lived blocks: $(grep '^base' dump.txt | head)"
grep -q '^peak 2010000 11$' base.txt && mt_ok "BASE carries the run's peak" ||
	mt_fail "BASE's peak: $(grep '^peak' base.txt)"

# --snapshot-interval with --max-size: the kept log's snapshots (the kept
# megabyte holds the last 30-50 ms of the run: an interval well below)
env MEMTRAIL_MAX_SIZE= timeout "$MT_TIMEOUT" "$MEMTRAIL" record --max-size 1M \
	--snapshot-interval 0.005 -o s.data ./ring_prog $N >srec.out 2>srec.err </dev/null ||
	mt_fail "record --max-size --snapshot-interval: $(cat srec.err)"
"$MEMTRAIL" dump s.data 2>/dev/null | grep -c '^snapshot ' >snaps.txt
[ "$(cat snaps.txt)" -ge 1 ] && mt_ok "snapshots in the kept log: $(cat snaps.txt)" ||
	mt_fail "no snapshot in the kept log"
"$MEMTRAIL" report --summary --format json s.data >s.json 2>/dev/null
python3 -c 'import json,sys; j=json.load(open("s.json")); sys.exit(j["leaked_bytes"] != 11665 or j["allocations"] != int(sys.argv[1]) + 1040)' "$N" &&
	mt_ok "with snapshots: the same figures" || mt_fail "with snapshots: $(cat s.json)"

# usage errors
"$MEMTRAIL" record --max-size 512k -o u.data ./ring_prog 64 >u.out 2>u.err
rc=$?
[ "$rc" = 2 ] && grep -q "^memtrail: error: --max-size: '512k' is not a size of at least 1M$" u.err &&
	mt_ok "--max-size 512k: $(cat u.err)" || mt_fail "--max-size 512k: exit $rc: $(cat u.err)"
"$MEMTRAIL" record --max-size 1M --sample 4k -o u.data ./ring_prog 64 >u.out 2>u.err
rc=$?
[ "$rc" = 2 ] && grep -q '^memtrail: error: --max-size and --sample do not go together$' u.err &&
	mt_ok "--max-size with --sample: $(cat u.err)" || mt_fail "--max-size --sample: exit $rc: $(cat u.err)"

# children (--follow-children): each its own bounded log FILE.PID.seg<N>,
# listed after the closing line with the same figures as in one file
if [ -x "$MT_SAMPLES/forker" ]; then
	mkdir ch && (cd ch &&
		"$MEMTRAIL" record --follow-children -o p.data "$MT_SAMPLES/forker" >p.out 2>p.err </dev/null
		"$MEMTRAIL" record --follow-children --max-size 1M -o r.data "$MT_SAMPLES/forker" \
			>r.out 2>r.err </dev/null)
	sed -n 's/^memtrail: child [0-9]* \(.*\), p\.data\.[0-9]* written.*/\1/p' ch/p.err >ch/p.lines
	sed -n 's/^memtrail: child [0-9]* \(.*\), r\.data\.[0-9]* written.*/\1/p' ch/r.err >ch/r.lines
	if [ -s ch/p.lines ] && cmp -s ch/p.lines ch/r.lines && ls ch/r.data.*.seg1 >/dev/null 2>&1; then
		mt_ok "children: $(wc -l <ch/r.lines) bounded logs FILE.PID.seg1, the same lines as one file each"
	else
		mt_fail "children: $(cat ch/r.err) vs $(cat ch/p.err)"
	fi
fi

# threads with reallocs (tests/e2e/ring_threads.c): segments begin
# between a realloc's halves and amid other threads' events; the replay
# from BASE ends with END's figures, as the recorder counted them
if cc -O1 -g -pthread -o ring_threads "$MT_TOP/tests/e2e/ring_threads.c"; then
	"$MEMTRAIL" record --max-size 1M -o t.data ./ring_threads >t.out 2>t.err </dev/null ||
		mt_fail "record ring_threads: $(cat t.err)"
	"$MEMTRAIL" dump t.data 2>/dev/null | grep '^totals ' >t.end
	"$MEMTRAIL" report --summary --format json t.data >t.json 2>t.json.err
	python3 - t.end t.json >t.cmp <<'PY'
import json, sys
e = dict(w.split("=") for w in open(sys.argv[1]).read().split()[1:])
j = json.load(open(sys.argv[2]))
keys = ["allocations", "frees", "bytes_allocated", "peak_bytes", "peak_blocks",
        "leaked_bytes", "leaked_blocks"]
print(" ".join("%s=%s/%s" % (k, e.get(k), j.get(k)) for k in keys))
print("same" if all(int(e[k]) == j[k] for k in keys) and "kept_from_s" in j else "differ")
PY
	if grep -q '^same$' t.cmp && ls t.data.seg* | grep -qv 't.data.seg1$'; then
		mt_ok "4 threads with reallocs: replay from BASE = END: $(head -n 1 t.cmp)"
	else
		mt_fail "4 threads with reallocs: END/replay $(cat t.cmp) $(cat t.json.err)"
	fi
else
	mt_fail "cannot build ring_threads.c"
fi

# the viewer opens it
if command -v tmux >/dev/null 2>&1; then
	mt_tmux_start 120 30
	mt_tmux_keys "$MEMTRAIL view r.data" Enter
	if mt_tmux_wait 'leaked 11,665 B \| r\.data' 15; then
		mt_ok "view opens the bounded log: leaked 11,665 B"
	else
		mt_fail "view did not show the bounded log"
	fi
	mt_tmux_keys q
	mt_tmux_stop
fi

# Hostile segment sets: a warning or an error, never a crash.
hostile() {   # hostile NAME: report on h/r.data; exit below 128 and a word on stderr
	"$MEMTRAIL" report --summary h/r.data >h.out 2>h.err
	rc=$?
	if [ "$rc" -lt 128 ] && grep -Eq 'warning:|error:' h.err; then
		mt_ok "$1: exit $rc, $(grep -E 'warning:|error:' h.err | head -n 1)"
	else
		mt_fail "$1: exit $rc: $(cat h.err)"
	fi
}
set -- r.data.seg*
nums=$(for f in "$@"; do echo "${f##*.seg}"; done | sort -n)
oldest=$(echo "$nums" | head -n 1)
newest=$(echo "$nums" | tail -n 1)
rm -rf h && mkdir h && cp r.data.seg* h/
rm "h/r.data.seg$((oldest + 1))"
hostile "middle segment missing"
grep -q 'a segment of the bounded log is missing' h.err &&
	mt_ok "middle segment missing: said so" || mt_fail "middle segment missing: $(cat h.err)"
rm -rf h && mkdir h && cp r.data.seg* h/
sz=$(wc -c <"h/r.data.seg$newest")
python3 -c 'import os,sys; os.truncate(sys.argv[1], int(sys.argv[2]))' "h/r.data.seg$newest" $((sz - 100))
hostile "newest segment cut mid-chunk"
rm -rf h && mkdir h && cp r.data.seg* h/
python3 - "h/r.data.seg$oldest" <<'EOF'
import sys
# a byte in the oldest segment's first chunk (its BASE) flipped
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
hl = 28 + int.from_bytes(b[24:28], "little")
b[hl + 40] ^= 0xFF
open(p, "wb").write(b)
EOF
hostile "oldest segment's first chunk damaged"
mt_finish
