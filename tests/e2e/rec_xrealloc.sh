#!/bin/sh
# rec_xrealloc.sh - a realloc's two halves against other threads:
# tests/e2e/rec_xrealloc.c's threads malloc the addresses other threads'
# reallocs give up inside the call, and realloc into the addresses other
# threads have just freed, in one shared arena (no tcache) that hands a
# released chunk straight to the next request. Three runs, each within a
# time limit: the log is complete and, replayed by the independent
# decoder, has no free of a block not live, no allocation over a live
# block and no free naming another block; the program's own allocations,
# frees and bytes (frame 0 in the program) are exactly those it counted,
# none left live, and none freed or reallocated by a thread other than
# the one that allocated it (the program's truth, see its comment: a
# misplaced realloc half breaks it even where the log stays consistent);
# END's totals equal the decoder's replay. The same with
# --depth 1, whose few distinct stacks make the threads' events denser.
. "$(dirname "$0")/lib.sh"
mt_need_cmd cc python3 timeout
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
cd "$MT_TMP" || exit 1
cc -g -O1 -pthread -o xr "$MT_TOP/tests/e2e/rec_xrealloc.c" || { mt_fail "cannot build rec_xrealloc"; mt_finish; }
DECODE="python3 $MT_TOP/tests/e2e/rec_decode.py"
for run in 1 2 3 4; do
	depth=64
	[ $run = 4 ] && depth=1
	MALLOC_ARENA_MAX=1 GLIBC_TUNABLES=glibc.malloc.tcache_count=0 timeout 120 \
		"$MEMTRAIL" record -o x.data --depth $depth -- ./xr 4 30000 >x.out 2>x.err
	rc=$?
	if [ $rc != 0 ]; then
		mt_fail "run $run: status $rc (124: hung): $(cat x.err)"
		continue
	fi
	$DECODE x.data >x.dec 2>x.dec.err || { mt_fail "run $run: $(tail -n 1 x.dec.err)"; continue; }
	want="$(sed -n 's/^allocations //p' x.out) $(sed -n 's/^frees //p' x.out) $(sed -n 's/^bytes //p' x.out) 0 0 0 0 0 0 (0, 0)"
	got="$(mt_val exe_allocs x.dec) $(mt_val exe_frees x.dec) $(mt_val exe_bytes x.dec) $(mt_val exe_live_blocks x.dec) $(mt_val ignored_frees x.dec) $(mt_val double_allocs x.dec) $(mt_val block_mismatch x.dec) $(mt_val truncated x.dec) $(mt_val exe_xthread_frees x.dec) $(mt_val end x.dec)"
	if [ "$got" != "$want" ]; then
		mt_fail "run $run: allocs/frees/bytes/live/stray frees/double allocs/frees naming another block/truncated/frees of another thread's block/end = $got, want $want"
		continue
	fi
	if [ "$(mt_val end_totals x.dec)" != "$(mt_val replayed_totals x.dec)" ]; then
		mt_fail "run $run: END's totals $(mt_val end_totals x.dec) differ from the replay's $(mt_val replayed_totals x.dec)"
		continue
	fi
	mt_ok "run $run (--depth $depth): $(mt_val exe_allocs x.dec) allocations in order ($(sed -n 's/^moved //p' x.err) mallocs of a realloc's old address, $(sed -n 's/^freed //p' x.err) reallocs into a just freed one, across threads)"
done
mt_finish
