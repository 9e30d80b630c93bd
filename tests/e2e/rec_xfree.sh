#!/bin/sh
# rec_xfree.sh - the order of events across threads: tests/robust/xfree.c's
# threads free each other's blocks while one shared arena (no tcache) hands
# each freed address straight to the next malloc, whichever thread makes
# it; main forks and takes snapshots meanwhile. Three runs, each within a
# time limit: the log is complete and, replayed by the independent decoder,
# has no free of a block not live and no allocation over a live block; the
# program's own allocations, frees and bytes (frame 0 in the program) are
# exactly those it counted, none left live; the snapshots are the 4 API
# calls and the 4 signals; no child event (no 777 B block) is in the log;
# END's totals equal the decoder's replay.
. "$(dirname "$0")/lib.sh"
mt_need_cmd cc python3 timeout
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
cd "$MT_TMP" || exit 1
cc -g -O1 -pthread -o xfree "$MT_TOP/tests/robust/xfree.c" || { mt_fail "cannot build xfree"; mt_finish; }
DECODE="python3 $MT_TOP/tests/e2e/rec_decode.py"
for run in 1 2 3; do
	MALLOC_ARENA_MAX=1 GLIBC_TUNABLES=glibc.malloc.tcache_count=0 timeout 120 \
		"$MEMTRAIL" record -o x.data --snapshot-signal USR2 -- ./xfree 4 40000 >x.out 2>x.err
	rc=$?
	if [ $rc != 0 ]; then
		mt_fail "run $run: status $rc (124: hung): $(cat x.err)"
		continue
	fi
	$DECODE x.data >x.dec 2>x.dec.err || { mt_fail "run $run: $(tail -n 1 x.dec.err)"; continue; }
	want="$(sed -n 's/^allocations //p' x.out) $(sed -n 's/^frees //p' x.out) $(sed -n 's/^bytes //p' x.out) 0 0 0 0 0 8 (0, 0)"
	got="$(mt_val exe_allocs x.dec) $(mt_val exe_frees x.dec) $(mt_val exe_bytes x.dec) $(mt_val exe_live_blocks x.dec) $(mt_val ignored_frees x.dec) $(mt_val double_allocs x.dec) $(mt_val block_mismatch x.dec) $(mt_val truncated x.dec) $(mt_val snapshots x.dec) $(mt_val end x.dec)"
	if [ "$got" != "$want" ]; then
		mt_fail "run $run: allocs/frees/bytes/live/stray frees/double allocs/frees naming another block/truncated/snapshots/end = $got, want $want"
		continue
	fi
	if [ "$(mt_val end_totals x.dec)" != "$(mt_val replayed_totals x.dec)" ]; then
		mt_fail "run $run: END's totals $(mt_val end_totals x.dec) differ from the replay's $(mt_val replayed_totals x.dec)"
		continue
	fi
	if "$MEMTRAIL" dump x.data | grep -q ' size=777 '; then
		mt_fail "run $run: a child's block is in the parent's log"
		continue
	fi
	mt_ok "run $run: $(mt_val exe_allocs x.dec) allocations and frees in order ($(sed -n 's/^reused //p' x.err) handed across threads; $(mt_val stale_entries x.dec) frees at an address their thread had held), $(mt_val snapshots x.dec) snapshots, END"
done
mt_finish
