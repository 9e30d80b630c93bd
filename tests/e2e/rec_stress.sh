#!/bin/sh
# rec_stress.sh - no deadlock and a valid log when threads churn the heap
# while the main thread forks (children that exec or exit), takes signals
# whose handler calls memtrail_snapshot, and reallocs: three runs, each
# within a time limit, each log complete (END), every FREE matching a live
# block and no address live twice.
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd cc python3 timeout
cd "$MT_TMP" || exit 1
mt_build_rec_prog rec_prog -O2
for run in 1 2 3; do
	MEMTRAIL_OUTPUT=$MT_TMP/s.data timeout 60 env LD_PRELOAD="$REC" ./rec_prog stress >s.out 2>s.err
	rc=$?
	if [ $rc != 3 ] || ! grep -q '^stress ok$' s.out; then
		mt_fail "run $run: status $rc (124: hung), $(cat s.out)"
		continue
	fi
	$DEC s.data >s.dec 2>s.dec.err || { mt_fail "run $run: $(tail -n 1 s.dec.err)"; continue; }
	got="$(mt_val end s.dec) $(mt_val ignored_frees s.dec) $(mt_val double_allocs s.dec) $(mt_val truncated s.dec) $(mt_val block_mismatch s.dec)"
	[ "$got" = "(0, 3) 0 0 0 0" ] &&
		mt_ok "run $run: $(mt_val allocs s.dec) allocations, $(mt_val snapshots s.dec) snapshots, valid order, END" ||
		mt_fail "run $run: end/stray frees/double allocs/truncated/frees naming another block = $got"
done
mt_finish
