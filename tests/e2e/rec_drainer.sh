#!/bin/sh
# rec_drainer.sh - the drainer process (recorder/core.c): the process that
# drains the rings, keeps the live table and writes the log, so that the
# program's memory holds none of it. Checked against rec_prog.c's own
# count of its calls, and against MEMTRAIL_DRAINER=0 (the program drains):
# - what the program sees: its descriptors (no log descriptor at all: the
#   in-program mode's is the one of 900 and more), waitpid(-1) finds no
#   child, no thread of ours (the drainer ticks: glibc's malloc stays in
#   its single-threaded mode, as natively; draining in the program, and
#   with a snapshot signal, the helper thread is there), the same figures
#   in both modes, exactly the program's;
# - its peak RSS with a million live blocks of 24 B: at most 4 MiB over
#   the native run's (the rings, the thread's stack table and the
#   unwinder's caches: about 1.6 MiB here), and at least 10 MiB under the
#   in-program mode's (its live table: 10-byte slots at most 80 % full,
#   12.5 MiB for a million blocks);
# - the drainer: named memtrail-drain, not the program's child, and its
#   spare, memtrail-spare, neither: both gone once the program has ended;
# - the drainer killed mid-run: its spare (memtrail-spare) takes its
#   place and forks a spare of its own, the log is whole, the figures
#   exact; the drainer killed, then the spare that took its place: the
#   new spare takes over, and the same holds; the spare killed: the
#   drainer forks another; the spare and the drainer killed (the drainer
#   stopped first, so that it forks no other): the program drains again
#   itself, and the same holds;
# - either killed while threads start and end (the drainer drains then):
#   the program ends, the figures exact;
# - an exec: END(EXEC) in the first log, and its drainer ends.
. "$(dirname "$0")/lib.sh"
mt_need_recorder
cd "$MT_TMP" || exit 1
PROG=$MT_TMP/rec_prog
mt_build_rec_prog "$PROG"

# "allocs frees end truncated" of log FILE (rec_decode.py).
log_of() {
	$DEC "$1" >"$1.dec" 2>"$1.dec.err" || { echo "undecodable: $(tail -n 1 "$1.dec.err")"; return; }
	echo "$(mt_val allocs "$1.dec") $(mt_val frees "$1.dec") $(mt_val end "$1.dec") $(mt_val truncated "$1.dec")"
}
expect_of() {
	sed -n 's/^expect allocs=\([0-9]*\) frees=\([0-9]*\) .*/\1 \2/p' "$1" | tail -n 1
}

# ---- what the program sees ------------------------------------------------------
"$PROG" probe >n.out 2>n.err
MEMTRAIL_OUTPUT=$MT_TMP/d.data LD_PRELOAD=$REC "$PROG" probe >d.out 2>d.err
MEMTRAIL_DRAINER=0 MEMTRAIL_OUTPUT=$MT_TMP/p.data LD_PRELOAD=$REC "$PROG" probe >p.out 2>p.err
fds_d=$(sed -n 's/^fds //p' d.out)
fds_p=$(sed -n 's/^fds //p' p.out | tr ' ' '\n' | awk '$1 < 900' | tr '\n' ' ' | sed 's/ $//')
high_p=$(sed -n 's/^fds //p' p.out | tr ' ' '\n' | awk '$1 >= 900' | wc -l)
[ -n "$fds_d" ] && [ "$fds_d" = "$fds_p" ] && [ "$high_p" = 1 ] &&
	mt_ok "descriptors: '$fds_d' with the drainer; the same and the log's with MEMTRAIL_DRAINER=0" ||
	mt_fail "descriptors: drainer '$fds_d', in-program '$(sed -n 's/^fds //p' p.out)'"
for m in n d p; do
	[ "$(sed -n 's/^wait //p' $m.out)" = "-1 ECHILD" ] || mt_fail "$m: waitpid(-1): $(sed -n 's/^wait //p' $m.out)"
done
mt_ok "waitpid(-1) finds no child, with or without the drainer"
MEMTRAIL_SNAPSHOT_SIGNAL=USR2 MEMTRAIL_OUTPUT=$MT_TMP/g.data LD_PRELOAD=$REC "$PROG" probe >g.out 2>g.err
th="$(sed -n 's/^threads //p' n.out), $(sed -n 's/^threads //p' d.out), $(sed -n 's/^threads //p' p.out), $(sed -n 's/^threads //p' g.out)"
[ "$th" = "1 single 1, 1 single 1, 2 single 0, 2 single 0" ] &&
	mt_ok "threads (native, drainer, in-program, snapshot signal): $th" ||
	mt_fail "threads (native, drainer, in-program, snapshot signal): '$th', expected '1 single 1, 1 single 1, 2 single 0, 2 single 0'"
set -- $(expect_of d.out)
for m in d p; do
	got=$(log_of $m.data)
	[ "$got" = "$1 $2 (0, 3) 0" ] && mt_ok "$m: log $got, as the program counted" ||
		mt_fail "$m: log '$got', program made $1 allocs $2 frees"
done
hn=$(sed -n 's/^hwm //p' n.out)
hd=$(sed -n 's/^hwm //p' d.out)
hp=$(sed -n 's/^hwm //p' p.out)
[ -n "$hn" ] && [ -n "$hd" ] && [ "$hd" -le $((hn + 4096)) ] &&
	mt_ok "peak RSS with the drainer: $hd KiB, native $hn KiB" ||
	mt_fail "peak RSS with the drainer: $hd KiB, native $hn KiB (at most 4 MiB more)"
[ -n "$hp" ] && [ "$hp" -ge $((hd + 10240)) ] &&
	mt_ok "peak RSS draining in the program: $hp KiB (the live table)" ||
	mt_fail "peak RSS draining in the program: $hp KiB, with the drainer $hd KiB (10 MiB less expected)"

# ---- the drainer process ------------------------------------------------------------
MEMTRAIL_OUTPUT=$MT_TMP/s.data LD_PRELOAD=$REC "$PROG" steady >s.out 2>s.err &
pid=$!
sleep 0.5
dr=$(mt_drainer_of "$MT_TMP/s.data")
if [ -z "$dr" ]; then
	mt_fail "no memtrail-drain process for s.data"
else
	ppid=$(sed 's/.*) //' /proc/$dr/stat | cut -d' ' -f2)
	[ "$ppid" != "$pid" ] && mt_ok "drainer $dr: not the program's child (parent $ppid)" ||
		mt_fail "drainer $dr is the program's child"
fi
sp=$(mt_drainer_of "$MT_TMP/s.data" memtrail-spare)
[ -n "$sp" ] && [ "$sp" != "$dr" ] && [ "$(sed 's/.*) //' /proc/$sp/stat | cut -d' ' -f2)" != "$pid" ] &&
	mt_ok "spare $sp: not the program's child" || mt_fail "spare '$sp' (drainer $dr)"
wait $pid
mt_wait_drained "$MT_TMP/s.data"
i=0
while [ -n "$(mt_drainer_of "$MT_TMP/s.data" memtrail-spare)" ] && [ $i -lt 20 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -z "$(mt_drainer_of "$MT_TMP/s.data")" ] && [ -z "$(mt_drainer_of "$MT_TMP/s.data" memtrail-spare)" ] &&
	mt_ok "drainer and spare gone after the program's end" ||
	mt_fail "drainer or spare still there after the program's end"
set -- $(expect_of s.out)
got=$(log_of s.data)
[ "$got" = "$1 $2 (0, 3) 0" ] && mt_ok "steady: log $got" || mt_fail "steady: log '$got', program made $1 allocs $2 frees"

# ---- the drainer killed mid-run: its spare takes its place; killed again: --------
# ---- the next spare does; both killed: the program drains again itself ---------
for who in drainer twice spare both; do
	MEMTRAIL_OUTPUT=$MT_TMP/k.data LD_PRELOAD=$REC "$PROG" steady >k.out 2>k.err &
	pid=$!
	sleep 0.5
	dr=$(mt_drainer_of "$MT_TMP/k.data")
	sp=$(mt_drainer_of "$MT_TMP/k.data" memtrail-spare)
	sp2=
	if [ $who = both ]; then
		[ -n "$dr" ] && [ -n "$sp" ] && kill -STOP $dr && kill -KILL $sp && kill -KILL $dr
		want=""
	elif [ $who = spare ]; then
		[ -n "$sp" ] && kill -KILL $sp
		want=$dr
		sleep 0.3
		sp2=$(mt_drainer_of "$MT_TMP/k.data" memtrail-spare)
		[ -n "$sp2" ] && [ "$sp2" != "$sp" ] || want="$dr and a new spare, not '$sp2',"
	else
		[ -n "$dr" ] && kill -KILL $dr
		want=$sp
		sleep 0.3
		# the spare that took over stands a spare of its own by
		sp2=$(mt_drainer_of "$MT_TMP/k.data" memtrail-spare)
		if [ -z "$sp2" ] || [ "$sp2" = "$sp" ]; then
			want="a new spare, not '$sp2',"
		elif [ $who = twice ]; then
			[ -n "$sp" ] && kill -KILL $sp
			want=$sp2
		fi
	fi
	sleep 0.3
	now=$(mt_drainer_of "$MT_TMP/k.data")
	wait $pid
	rc=$?
	mt_wait_drained "$MT_TMP/k.data"
	set -- $(expect_of k.out)
	got=$(log_of k.data)
	[ -n "$dr" ] && [ -n "$sp" ] && [ "$now" = "$want" ] && [ $rc = 3 ] && [ "$got" = "$1 $2 (0, 3) 0" ] &&
		mt_ok "$who killed (drainer $dr, spare $sp, next spare '$sp2'): drainer then '$now', the program went on (exit $rc), log $got" ||
		mt_fail "$who killed (drainer '$dr', spare '$sp', next spare '$sp2'): drainer then '$now' ($want expected), exit $rc, log '$got', program made $1 allocs $2 frees"
done

# ---- killed while threads start and end ------------------------------------------
# A join frees the thread's TLS inside glibc, under its lock of thread
# stacks: the death must be met there without starting a thread (which
# takes that lock). Drainer alone, then both; 3 s of work, 60 s allowed.
# (Threads' events drained together soon make the drainer drain.) The
# figures: those of a run left alone, which are the program's own count
# and 4 blocks more (glibc's, for its threads).
MEMTRAIL_OUTPUT=$MT_TMP/t0.data LD_PRELOAD=$REC "$PROG" shortthreads 10000 >t0.out 2>t0.err
want=$(log_of t0.data)
set -- $(expect_of t0.out)
[ "$want" = "$(($1 + 4)) $(($2 + 4)) (0, 3) 0" ] && mt_ok "shortthreads left alone: log $want" ||
	mt_fail "shortthreads left alone: log '$want', program made $1 allocs $2 frees"
for who in drainer both; do
	MEMTRAIL_OUTPUT=$MT_TMP/t.data LD_PRELOAD=$REC "$PROG" shortthreads 10000 >t.out 2>t.err &
	pid=$!
	sleep 0.4
	dr=$(mt_drainer_of "$MT_TMP/t.data")
	if [ $who = both ]; then
		kill -STOP $dr      # (so that it forks no other spare)
		dr="$(mt_drainer_of "$MT_TMP/t.data" memtrail-spare) $dr"
	fi
	kill -KILL $dr
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 $pid 2>/dev/null; then
		kill -KILL $pid
		mt_fail "$who killed during shortthreads: the program hangs"
		continue
	fi
	wait $pid
	rc=$?
	mt_wait_drained "$MT_TMP/t.data"
	got=$(log_of t.data)
	[ $rc = 3 ] && [ "$got" = "$want" ] &&
		mt_ok "$who killed during shortthreads: the program ended (exit $rc), log $got" ||
		mt_fail "$who killed during shortthreads: exit $rc, log '$got', left alone '$want'"
done

# ---- exec ---------------------------------------------------------------------------------
MEMTRAIL_OUTPUT=$MT_TMP/e.data LD_PRELOAD=$REC "$PROG" exec >e.out 2>e.err
rc=$?
set -- $(expect_of e.out)
got=$(log_of e.data)
sleep 0.3
[ $rc = 6 ] && [ "$got" = "$1 $2 (3, 0) 0" ] && [ -z "$(mt_drainer_of "$MT_TMP/e.data")" ] &&
	mt_ok "exec: exit $rc, log $got, its drainer gone" ||
	mt_fail "exec: exit $rc, log '$got' (program: $1 allocs $2 frees), drainer '$(mt_drainer_of "$MT_TMP/e.data")'"
mt_finish
