#!/bin/sh
# rec_unwind.sh - the incremental unwinder (MEMTRAIL_UNWIND=incremental,
# the default, recorder/unwind.c) gives every stack exactly as libunwind's
# full walk does. Each program is recorded three times:
#   check        both unwinders on every event, and the incremental one's
#                stack hash against one computed over the frames: the
#                recorder says at exit "unwind check: N stacks, R reused,
#                S same, F fallbacks, M mismatches", and at once on each
#                stack that differs; M must be 0, and R > 0 where the
#                program allocates from the same frames twice (the reuse
#                was taken, not only the fallback to libunwind). S counts
#                the captures the walk found unchanged since the thread's
#                last one (tbuf.c then takes the last one's stack id
#                without a lookup): each is also compared with libunwind's
#                walk of the capture before, a difference a mismatch; S > 0
#                for python3, which allocates from one place in a row; so are
#                the outer frames a walk calls the capture before's (tbuf.c
#                finds a stack again by its other frames then)
#   full, incremental
#                the same stdout and exit status as the native run, and the
#                same figures: report --summary (times, resident set and
#                leak kinds aside: threads.c's depend on which message its
#                queue keeps, a matter of scheduling, under memcheck too;
#                leak_memcheck.sh tests the kinds) and every
#                allocation call by symbolized stack (--show-calls
#                --format collapsed) equal
# on every sample, a C++ program throwing through allocating frames
# (rec_unwind_cxx.cpp), a program leaving frames by longjmp, swapcontext,
# signal handlers and exiting threads (rec_unwind.c), one loading and
# unloading two libraries whose code lands at the same addresses with
# other unwind rules (rec_unwind.c reload), and python3. And without
# libunwind, full mode's stacks have no frames: the same figures.
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3 c++ cc
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
cd "$MT_TMP" || exit 1
# python3 allocates the same from run to run only with a fixed hash seed.
PYTHONHASHSEED=0
export PYTHONHASHSEED

cc -O0 -g -pthread -o rec_unwind "$MT_TOP/tests/e2e/rec_unwind.c" || mt_skip "cannot build rec_unwind"
c++ -O0 -g -o rec_unwind_cxx "$MT_TOP/tests/e2e/rec_unwind_cxx.cpp" ||
	mt_skip "cannot build rec_unwind_cxx"
cc -O1 -g -shared -fPIC -DFRAME=32 -DPAD=0 -o plug_a.so "$MT_TOP/tests/e2e/rec_unwind_plugin.c" &&
	cc -O1 -g -shared -fPIC -DFRAME=4000 -DPAD=600 -o plug_b.so \
		"$MT_TOP/tests/e2e/rec_unwind_plugin.c" || mt_skip "cannot build rec_unwind_plugin.c"
# In a directory of its own: python3 lists its script's directory, where
# the recordings pile up.
mkdir -p py
cat >py/unwind.py <<'PY'
import json, re
def rec(n):
    if n == 0:
        return [str(i) * 3 for i in range(50)]
    d = {i: rec(n - 1) if i == 0 else [i] * n for i in range(3)}
    return d[0] + [json.dumps(d[1])]
out = []
for k in range(300):
    try:
        out.append(len(rec(k % 12)))
        if k % 7 == 0:
            raise ValueError("x" * k)
    except ValueError as e:
        out.append(len(re.sub("x", "yy", str(e))))
print(sum(out))
PY

# The summary without the fields that are measurements of the run (times,
# resident set), not heap figures.
untimed() {
	python3 -c '
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items()
                if "time" not in k and "duration" not in k and "rss" not in k and
                "_lost_" not in k and not k.startswith("reachable_")}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True))' "$1"
}

# one NAME REUSE CMD...: REUSE 1 if the check run must reuse frames, 2 if
# it must also find captures unchanged.
one() {
	n=$1; reuse=$2; shift 2
	mt_run "$n.native" "$@"
	MT_RECORD_ENV=MEMTRAIL_UNWIND=check mt_record "$n.check.data" "$n.check" "$@"
	mt_same_run "$n: native vs check" "$n.native" "$n.check"
	line=$(grep '^memtrail: unwind check: ' "$n.check.err")
	if grep -q '^memtrail: unwind check: a stack differs' "$n.check.err"; then
		mt_fail "$n: stacks differ: $line"
	elif [ -z "$line" ]; then
		mt_ok "$n: no stack differs (the program ends without exit handlers: no count)"
	elif ! printf '%s\n' "$line" | grep -q ', 0 mismatches$'; then
		mt_fail "$n: $line"
	elif [ "$reuse" -ge 1 ] && printf '%s\n' "$line" | grep -q ' 0 reused'; then
		mt_fail "$n: nothing reused: $line"
	elif [ "$reuse" = 2 ] && printf '%s\n' "$line" | grep -q ' 0 same'; then
		mt_fail "$n: no capture found unchanged: $line"
	else
		mt_ok "$n: $(printf '%s\n' "$line" | sed 's/^memtrail: unwind check: //' | tr '\n' ';')"
	fi
	for m in full incremental; do
		MT_RECORD_ENV=MEMTRAIL_UNWIND=$m mt_record "$n.$m.data" "$n.$m" "$@"
		mt_same_run "$n: native vs $m" "$n.native" "$n.$m"
		mt_summary "$n.$m.data" "$n.$m.json" || { mt_fail "$n: $m: no summary"; return; }
		untimed "$n.$m.json" >"$n.$m.figures"
		"$MEMTRAIL" report --show-calls --format collapsed "$n.$m.data" >"$n.$m.calls" 2>&1
	done
	if cmp -s "$n.full.figures" "$n.incremental.figures" &&
	    cmp -s "$n.full.calls" "$n.incremental.calls"; then
		mt_ok "$n: full and incremental: same figures, same $(wc -l <"$n.full.calls") call stacks"
	else
		mt_fail "$n: full and incremental recordings differ"
		diff "$n.full.figures" "$n.incremental.figures" | head -n 4
		diff "$n.full.calls" "$n.incremental.calls" | head -n 6
	fi
}

for b in "$MT_SAMPLES"/*; do
	[ -x "$b" ] || continue
	one "sample_${b##*/}" 0 "$b"
done
one cxx 1 ./rec_unwind_cxx
for m in longjmp context signal threads alternate follow; do
	one "$m" 1 ./rec_unwind "$m"
done
one reload 1 ./rec_unwind reload "$MT_TMP/plug_a.so" "$MT_TMP/plug_b.so"
one python3 2 /usr/bin/python3 py/unwind.py

# Without libunwind's walk (an empty libunwind.so.8 found first), full
# mode records stacks of no frames: every event all the same (a thread's
# first such stack once stopped the recording: "out of memory for the
# stack table"), as many as in the recording with stacks. (Counts of
# events and blocks: the bytes may differ, as each thread's TLS vector
# is sized by the libraries loaded.)
counts() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["allocations"], d["frees"], d["peak_blocks"], d["leaked_blocks"], d["threads"],
      [s["live_blocks"] for s in d["snapshots"]])' "$1"
}
mkdir nounwind && cc -shared -fPIC -o nounwind/libunwind.so.8 -x c /dev/null ||
	mt_skip "cannot build an empty libunwind.so.8"
for b in sizes threads; do
	n=nounwind_$b
	MT_RECORD_ENV="MEMTRAIL_UNWIND=full LD_LIBRARY_PATH=$MT_TMP/nounwind" \
		mt_record "$n.data" "$n" "$MT_SAMPLES/$b"
	if grep -q "recording stopped" "$n.err"; then
		mt_fail "$n: $(grep "recording stopped" "$n.err" | head -n 1)"
		continue
	fi
	mt_summary "$n.data" "$n.json" || { mt_fail "$n: no summary"; continue; }
	a=$(counts "sample_$b.incremental.json") b=$(counts "$n.json")
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		mt_ok "$n: no frames, the same events and blocks as with them: $b"
	else
		mt_fail "$n: events and blocks '$b', with stacks '$a'"
	fi
done
mt_finish
