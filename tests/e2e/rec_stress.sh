#!/bin/sh
# rec_stress.sh - no deadlock and a valid log when threads churn the heap
# while the main thread forks (children that exec or exit), takes signals
# whose handler calls memtrail_snapshot, and reallocs: three runs, each
# within a time limit, each log complete (END), every FREE matching a live
# block and no address live twice.
. "$(dirname "$0")/lib.sh"
REC=$MT_BUILD/recorder/libmemtrail.so
[ -f "$REC" ] || mt_skip "recorder/libmemtrail.so not built"
mt_need_cmd cc python3 timeout
DEC="python3 $MT_TOP/tests/e2e/rec_decode.py"
cd "$MT_TMP" || exit 1
cc -O2 -g -pthread -I"$MT_TOP/include" -o rec_prog "$MT_TOP/tests/e2e/rec_prog.c" -ldl ||
	mt_skip "cannot build rec_prog"
val() { sed -n "s/^$1=//p" "$2" | head -n 1; }
for run in 1 2 3; do
	MEMTRAIL_OUTPUT=$MT_TMP/s.data timeout 60 env LD_PRELOAD="$REC" ./rec_prog stress >s.out 2>s.err
	rc=$?
	if [ $rc != 3 ] || ! grep -q '^stress ok$' s.out; then
		mt_fail "run $run: status $rc (124: hung), $(cat s.out)"
		continue
	fi
	$DEC s.data >s.dec 2>s.dec.err || { mt_fail "run $run: $(tail -n 1 s.dec.err)"; continue; }
	got="$(val end s.dec) $(val ignored_frees s.dec) $(val double_allocs s.dec) $(val truncated s.dec)"
	[ "$got" = "(0, 3) 0 0 0" ] &&
		mt_ok "run $run: $(val allocs s.dec) allocations, $(val snapshots s.dec) snapshots, valid order, END" ||
		mt_fail "run $run: end/stray frees/double allocs/truncated = $got"
done
mt_finish
