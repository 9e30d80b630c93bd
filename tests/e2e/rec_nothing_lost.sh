#!/bin/sh
# rec_nothing_lost.sh - the runs that die keep their events. Each case
# compares the log (read by the independent decoder rec_decode.py) with the
# program's own count of its calls (rec_prog.c):
# - idle: 10,000 allocations, then asleep; SIGKILL 2 s later: every event
#   is in the log and END(SIGNAL 9) (the drainer process writes it); with
#   MEMTRAIL_DRAINER=0 every event, no END (the helper thread ends an idle
#   chunk within a second);
# - busy: ~30,000 events a second, SIGKILL after 3.5 s: the log holds
#   everything the program had done by its last report, and END(SIGNAL 9);
#   with MEMTRAIL_DRAINER=0, at least what it had done one second before;
#   with the drainer killed at 0.5 s, all of it and END still (its spare
#   takes its place), and the events' times move on with the program's;
# - every signal whose default action terminates (ALRM, USR1, USR2, HUP,
#   PIPE, XCPU, PROF, VTALRM, SIGRTMIN), left at SIG_DFL: the program's own
#   exit status, END(SIGNAL, sig), every event; the program sees SIG_DFL;
# - SIGPIPE through a real pipe into head, for rec_prog and for perl under
#   `memtrail record`;
# - descriptor hygiene: close_range, closefrom, close() of 3..1023, dup2
#   onto 3..1023, a raw close_range system call, and an exec after closing
#   everything: complete log, clean END;
# - a full disk (a 1 MiB tmpfs; skipped where mounting is refused): the log
#   is cut back to its last whole chunk and ends with STOP and END(STOPPED),
#   the program runs to its end with its own exit status.
# Prints "kept/made" for each case (events in the log / events the program
# made up to its end or the point the contract names).
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd cc perl head
cd "$MT_TMP" || exit 1
PROG=$MT_TMP/rec_prog
mt_build_rec_prog "$PROG"

# The program's "expect" figures of FILE: allocs frees.
expect_of() {
	sed -n 's/^expect allocs=\([0-9]*\) frees=\([0-9]*\) .*/\1 \2/p' "$1" | tail -n 1
}
# The log's allocs frees end truncated.
log_of() {
	$DEC "$1" >"$1.dec" 2>"$1.dec.err" || { echo "undecodable: $(tail -n 1 "$1.dec.err")"; return; }
	echo "$(mt_val allocs "$1.dec") $(mt_val frees "$1.dec") $(mt_val end "$1.dec") $(mt_val truncated "$1.dec")"
}
# env execs the program: in the background, $! is the program itself.
run_rec() {
	_out=$1; shift
	env MEMTRAIL_OUTPUT="$MT_TMP/$_out" LD_PRELOAD="$REC" "$@"
}

# kill_after DR NAME MODE SECONDS: rec_prog MODE recording into NAME.data,
# with MEMTRAIL_DRAINER=DR, killed (SIGKILL) after SECONDS; returns once
# its drainer, if any, has written the rest.
kill_after() {
	rm -f "$2.data"
	env MEMTRAIL_DRAINER=$1 MEMTRAIL_OUTPUT="$MT_TMP/$2.data" LD_PRELOAD="$REC" "$PROG" "$3" \
		>"$2.out" 2>"$2.err" &
	_pid=$!
	sleep "$4"
	kill -KILL $_pid
	wait $_pid
	mt_wait_drained "$MT_TMP/$2.data"
}

# ---- idle, then SIGKILL ----------------------------------------------------------
# With the drainer process (the default) the log is whole: every event and
# END(SIGNAL 9). With MEMTRAIL_DRAINER=0, the program's complete chunks:
# every event, no END.
for dr in 1 0; do
	kill_after $dr i idle 2
	set -- $(expect_of i.out)
	got=$(log_of i.data)
	end="(2, 9)"
	[ $dr = 0 ] && end=None
	[ "$got" = "$1 $2 $end 0" ] &&
		mt_ok "idle then SIGKILL (MEMTRAIL_DRAINER=$dr): kept $(($1 + $2))/$(($1 + $2)) events, END $end" ||
		mt_fail "idle then SIGKILL (MEMTRAIL_DRAINER=$dr): log '$got', program made $1 allocs $2 frees"
done

# ---- busy, then SIGKILL: all but the last second -----------------------------
# (With the drainer: everything done up to the last report, and END.)
for dr in 1 0; do
	kill_after $dr b busy 3.5
	last=$(sed -n 's/^at \([0-9]*\) .*/\1/p' b.out | tail -n 1)
	# What the program had done one second before its last report (reports
	# come every 100 ms, so the last is at most 0.1 s before the kill).
	due=$(awk -v t=$((last - 1000)) '$1 == "at" && $2 <= t { a = $3 } END { sub("allocs=", "", a); print a }' b.out)
	made=$(sed -n 's/^at [0-9]* allocs=\([0-9]*\) .*/\1/p' b.out | tail -n 1)
	set -- $(log_of b.data)
	end="(2, 9) 0"      # END, truncated
	if [ $dr = 0 ]; then
		end="None 0"
	else
		due=$made
	fi
	if [ -n "$due" ] && [ "$1" -ge "$due" ] && [ "$1" -le "$((made + 2000))" ] &&
	   [ "$(echo "$*" | cut -d' ' -f3-)" = "$end" ]; then
		mt_ok "busy then SIGKILL at ${last} ms (MEMTRAIL_DRAINER=$dr): kept $1 allocations, $due required, $made by $last ms"
	else
		mt_fail "busy then SIGKILL (MEMTRAIL_DRAINER=$dr): log '$*', $due allocations required, $made made by $last ms"
	fi
done

# ---- busy, its drainer killed at 0.5 s, then SIGKILL at 3.5 s ----------------------
# The spare drainer takes the drainer's place: the log holds everything up
# to the last report and END(SIGNAL 9), as if nothing had been killed, and
# its times go on: from the report at 1 s to the last, the log's times
# (of the allocations the program had counted at each) move as the
# program's clock did, within 5 % (a drainer's clock tick left standing
# would make them stand still).
rm -f bk.data
env MEMTRAIL_OUTPUT="$MT_TMP/bk.data" LD_PRELOAD="$REC" "$PROG" busy >bk.out 2>bk.err &
pid=$!
sleep 0.5
dr=$(mt_drainer_of "$MT_TMP/bk.data")
[ -n "$dr" ] && kill -KILL $dr
sleep 3
kill -KILL $pid
wait $pid
mt_wait_drained "$MT_TMP/bk.data"
last=$(sed -n 's/^at \([0-9]*\) .*/\1/p' bk.out | tail -n 1)
made=$(sed -n 's/^at [0-9]* allocs=\([0-9]*\) .*/\1/p' bk.out | tail -n 1)
first=$(awk '$1 == "at" && $2 >= 1000 { sub("allocs=", "", $3); print $2, $3; exit }' bk.out)
set -- $(log_of bk.data)
# the log's time of the Nth allocation, in ms
t_of() {
	$DEC -v bk.data 2>/dev/null | awk -v n="$1" '$1 == "ALLOC" && ++k == n { printf "%d", $2 / 1000000; exit }'
}
t1=$(t_of "${first#* }")
t2=$(t_of "$made")
prog=$((last - ${first% *}))
logd=$((t2 - t1))
if [ -n "$dr" ] && [ -n "$made" ] && [ "$1" -ge "$made" ] && [ "$1" -le "$((made + 2000))" ] &&
   [ "$3 $4 $5" = "(2, 9) 0" ] && [ -n "$t1" ] && [ -n "$t2" ] &&
   [ $((logd * 100)) -ge $((prog * 95)) ] && [ $((logd * 100)) -le $((prog * 105)) ]; then
	mt_ok "busy, drainer killed at 0.5 s, SIGKILL at ${last} ms: kept $1 allocations, $made by $last ms, END(SIGNAL 9); ${first% *} to $last ms: log $logd ms"
else
	mt_fail "busy, drainer '$dr' killed, SIGKILL at ${last} ms: log '$*', $made allocations made; ${first% *} to $last ms: log '$t1' to '$t2' ms"
fi

# ---- terminating signals at their default ----------------------------------------
while read -r sig num; do
	run_rec s.data "$PROG" signal "$sig" >s.out 2>s.err
	rc=$?
	set -- $(expect_of s.out)
	got=$(log_of s.data)
	if [ $rc = $((128 + num)) ] && [ "$got" = "$1 $2 (2, $num) 0" ] && ! grep -q 'not SIG_DFL' s.out; then
		mt_ok "SIG$sig: status $rc, END(SIGNAL, $num), kept $(($1 + $2))/$(($1 + $2)) events"
	else
		mt_fail "SIG$sig: status $rc, log '$got', program '$1 $2' $(cat s.out)"
	fi
done <<EOF
ALRM 14
USR1 10
USR2 12
HUP 1
PIPE 13
XCPU 24
PROF 27
VTALRM 26
RTMIN $(kill -l RTMIN 2>/dev/null || echo 34)
EOF

# ---- SIGPIPE through a real pipe ---------------------------------------------------
REC_COUNTS=$MT_TMP/cnt run_rec p.data "$PROG" pipe 2>p.err | head -n 1 >p.head
set -- $(/usr/bin/python3 -c "import struct; print(*struct.unpack('qq', open('$MT_TMP/cnt', 'rb').read(16)))")
got=$(log_of p.data)
[ "$got" = "$1 $2 (2, 13) 0" ] && [ "$(cat p.head)" = line ] &&
	mt_ok "SIGPIPE into head: END(SIGNAL, 13), kept $(($1 + $2))/$(($1 + $2)) events" ||
	mt_fail "SIGPIPE into head: log '$got', program '$1 $2'"

timeout 60 "$MEMTRAIL" record -o "$MT_TMP/perl.data" -- perl -e 'for (;;) { my @a = (1) x 50; print "x" x 100, "\n" }' \
	2>perl.err | head -n 1 >/dev/null
set -- $(log_of perl.data)
[ "$3 $4 $5" = "(2, 13) 0" ] && [ "$1" -gt 1000 ] &&
	mt_ok "perl | head under memtrail record: END(SIGNAL, 13), $1 allocations kept" ||
	mt_fail "perl | head: log '$*' $(cat perl.err)"

# ---- descriptor hygiene ---------------------------------------------------------------
for how in close_range closefrom closeloop dup2loop rawclose; do
	run_rec f.data "$PROG" fd $how >f.out 2>f.err
	rc=$?
	set -- $(expect_of f.out)
	got=$(log_of f.data)
	[ $rc = 0 ] && [ "$got" = "$1 $2 (0, 0) 0" ] && ! grep -q failed f.out && [ ! -s f.err ] &&
		mt_ok "$how: END(EXIT, 0), kept $(($1 + $2))/$(($1 + $2)) events" ||
		mt_fail "$how: status $rc, log '$got', program '$1 $2' $(cat f.out f.err)"
done
REC_EXEC=1 run_rec x.data "$PROG" fd closeloop >x.out 2>x.err
rc=$?
set -- $(expect_of x.out)
got=$(log_of x.data)
[ $rc = 0 ] && [ "$got" = "$1 $2 (3, 0) 0" ] &&
	mt_ok "close 3..1023 then exec: END(EXEC), kept $(($1 + $2))/$(($1 + $2)) events" ||
	mt_fail "close then exec: status $rc, log '$got', program '$1 $2'"

# ---- a full disk --------------------------------------------------------------------------
mkdir small
if mount -t tmpfs -o size=1m tmpfs small 2>/dev/null; then
	run_rec small/d.data "$PROG" fill 2000000 >d.out 2>d.err
	rc=$?
	set -- $(expect_of d.out)
	got=$(log_of small/d.data)
	stop=$(mt_val stop small/d.data.dec)
	umount small
	set -- $got "$1" "$2"
	# A few chunks fit in 1 MiB; the rest of the 4,000,000 events cannot.
	if [ $rc = 0 ] && [ "$3 $4 $5" = "(4, 0) 0" ] && [ "$1" -gt 0 ] && [ "$1" -lt "$6" ] &&
	   [ "$stop" = "cannot write the log: No space left on device" ] &&
	   grep -q 'No space left on device; recording stopped' d.err; then
		mt_ok "disk full: STOP '$stop', END(STOPPED), status 0, kept $(($1 + $2))/$(($6 + $7)) events"
	else
		mt_fail "disk full: status $rc, log '$got', stop '$stop', program '$6 $7' $(cat d.err)"
	fi
else
	echo "skipped: disk full (cannot mount a tmpfs here)"
fi
mt_finish
