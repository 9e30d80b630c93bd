#!/bin/sh
# robust_fork.sh - forking from a multi-threaded program under memtrail
# must not deadlock, and the children must leave the parent's log alone.
#
# tests/robust/forkstress.c: a thread allocates without pause (its blocks
# freed by the main thread: cross-thread frees) while the main thread forks
# 200 times; each child allocates and frees a 777 B block and ends with
# _exit or exit; with --snapshot-signal USR2 the parent also signals itself
# 10 times. Three rounds, each bounded by a timeout: a hang is a failure;
# the third keeps the runtime's memory at exit (--keep-runtime).
# For each: stdout and status equal the native run's; the log replays
# cleanly; the parent's figures are those the program's logic gives
# (forkstress.c's top comment, with the count of blocks it reports on
# stderr); no child event (no 777 B block, no third thread) is in it.
#
# Not for: --follow-children (cli_record.sh), figures of real programs
# (robust_realprogs.sh).
. "$(dirname "$0")/lib.sh"
mt_need_cmd gcc
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
MT_TIMEOUT=60
FORKS=200

gcc -g -O0 -fno-omit-frame-pointer -pthread -o "$MT_TMP/forkstress" \
	"$MT_TOP/tests/robust/forkstress.c" || { mt_fail "cannot build forkstress"; mt_finish; }

mt_run "$MT_TMP/native" "$MT_TMP/forkstress" $FORKS
if [ "$(cat "$MT_TMP/native.rc")" != 0 ]; then
	mt_fail "forkstress fails natively:"; cat "$MT_TMP/native.out" "$MT_TMP/native.err"
	mt_finish
fi

for round in 1 2 3; do
	w=$MT_TMP/r$round
	start=$(date +%s)
	keep=; [ $round = 3 ] && keep=--keep-runtime
	timeout "$MT_TIMEOUT" "$MEMTRAIL" record -o "$w.data" --snapshot-signal USR2 $keep -- \
		"$MT_TMP/forkstress" $FORKS signals >"$w.out" 2>"$w.err" </dev/null
	echo $? >"$w.rc"
	secs=$(( $(date +%s) - start ))
	if [ "$(cat "$w.rc")" = 124 ]; then
		mt_fail "round $round: still running after ${MT_TIMEOUT}s (deadlock?)"
		continue
	fi
	mt_same_run "round $round (${secs}s): native vs memtrail record" "$MT_TMP/native" "$w"
	n=$(sed -n 's/^allocated \([0-9]*\)$/\1/p' "$w.err")
	if [ -z "$n" ]; then
		mt_fail "round $round: no 'allocated N' line on stderr:"; cat "$w.err"; continue
	fi
	if ! mt_summary "$w.data" "$w.json" || [ -s "$w.json.err" ]; then
		mt_fail "round $round: the log does not replay cleanly:"; cat "$w.json.err"; continue
	fi
	got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["allocations"], d["frees"], d["leaked_blocks"], d["threads"], len(d["snapshots"]))' "$w.json")
	# The thread's DTV, freed at exit with glibc's stack cache, or kept.
	want="$((n + 1)) $((n + 1)) 0 2 $((FORKS / 20))"
	[ -n "$keep" ] && want="$((n + 1)) $n 1 2 $((FORKS / 20))"
	if [ "$got" = "$want" ]; then
		mt_ok "round $round: allocations, frees, leaked blocks, threads, snapshots = $got"
	else
		mt_fail "round $round: allocations, frees, leaked blocks, threads, snapshots = $got, expected $want"
	fi
	"$MEMTRAIL" dump "$w.data" >"$w.dump" 2>"$w.dump.err"
	if grep -q " size=777 " "$w.dump"; then
		mt_fail "round $round: a child's 777 B block is in the parent's log"
	else
		mt_ok "round $round: no child event in the log"
	fi
	if grep -q "^end clean=1 how=exit code=0 " "$w.dump" && [ ! -s "$w.dump.err" ]; then
		mt_ok "round $round: the log ends with the parent's END"
	else
		mt_fail "round $round: end line '$(grep '^end' "$w.dump")', stderr: $(head -n 2 "$w.dump.err")"
	fi
	if [ "$(grep -c '^memtrail: snapshot' "$w.err")" = $((FORKS / 20)) ]; then
		mt_ok "round $round: $((FORKS / 20)) snapshot lines on stderr"
	else
		mt_fail "round $round: $(grep -c '^memtrail: snapshot' "$w.err") snapshot lines, expected $((FORKS / 20))"
	fi
	echo "round $round: $n blocks from the thread, log $(wc -c <"$w.data") bytes"
done
mt_finish
