#!/bin/sh
# rec_snapshot.sh - memtrail_snapshot() under the preload prints exactly
# "memtrail: snapshot N: LIVE bytes (+DELTA)" with the live bytes the program
# holds (rec_prog snap: 1,000 + 24, then 24, then 24 + 4,096), writes
# numbered SNAPSHOT records whose replayed live bytes equal the printed ones,
# and the signal (MEMTRAIL_SNAPSHOT_SIGNAL) and interval
# (MEMTRAIL_SNAPSHOT_INTERVAL) snapshots share the numbering.
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd cc python3
cd "$MT_TMP" || exit 1
PROG=$MT_TMP/rec_prog
mt_build_rec_prog "$PROG"

MEMTRAIL_OUTPUT=$MT_TMP/s.data LD_PRELOAD=$REC "$PROG" snap >s.out 2>s.err
cat >s.exp <<'X'
memtrail: snapshot 0: 1024 bytes (+1024)
memtrail: snapshot 1: 24 bytes (-1000)
memtrail: snapshot 2: 4120 bytes (+4096)
X
cmp -s s.exp s.err && mt_ok "API snapshots: $(tr '\n' '|' <s.err)" ||
	{ mt_fail "API snapshot lines differ:"; diff s.exp s.err; }
$DEC s.data >s.dec
printf 'snapshot=0  1024 2\nsnapshot=1 after 24 1\nsnapshot=2  4120 2\n' >s.dexp
grep '^snapshot=' s.dec | cmp -s s.dexp - && mt_ok "SNAPSHOT records: index, label, replayed live bytes" ||
	{ mt_fail "SNAPSHOT records differ:"; grep '^snapshot=' s.dec; }

# A signal snapshot, taken by the helper thread, comes after the three.
REC_SIGNAL=1 MEMTRAIL_SNAPSHOT_SIGNAL=USR2 MEMTRAIL_OUTPUT=$MT_TMP/g.data LD_PRELOAD=$REC "$PROG" snap >g.out 2>g.err
rc=$?
echo 'memtrail: snapshot 3: 4120 bytes (+0)' >>s.exp
[ $rc = 3 ] && cmp -s s.exp g.err && mt_ok "SIGUSR2 snapshot 3: 4120 bytes (+0)" ||
	{ mt_fail "signal snapshot (status $rc):"; diff s.exp g.err; }
$DEC g.data >g.dec
grep -q '^snapshot=3 signal 4120 2$' g.dec && mt_ok "signal SNAPSHOT record" || mt_fail "no signal SNAPSHOT record"

# Interval snapshots every 0.1 s during the program's 0.3 s pause: numbered
# in order with the API ones; each printed LIVE equals the replayed one, and
# each DELTA is the difference with the line before.
REC_SIGNAL=1 MEMTRAIL_SNAPSHOT_SIGNAL=SIGUSR2 MEMTRAIL_SNAPSHOT_INTERVAL=0.1 \
	MEMTRAIL_OUTPUT=$MT_TMP/i.data LD_PRELOAD=$REC "$PROG" snap >i.out 2>i.err
$DEC i.data >i.dec
sed -n 's/^memtrail: snapshot \([0-9]*\): \([0-9]*\) bytes (\([-+][0-9]*\))$/\1 \2 \3/p' i.err >i.lines
sed -n 's/^snapshot=\([0-9]*\) [a-z]* *\([0-9]*\) [0-9]*$/\1 \2/p' i.dec >i.recs
n=$(wc -l <i.lines)
ok=$(awk 'NR == FNR { live[$1] = $2; next }
	{ if ($1 != FNR - 1 || live[$1] != $2 || $3 != $2 - prev) bad = 1; prev = $2 }
	END { print bad ? "no" : "yes" }' i.recs i.lines)
[ "$n" -ge 4 ] && [ "$ok" = yes ] && [ "$(wc -l <i.recs)" = "$n" ] &&
	mt_ok "$n snapshots (API, interval, signal) numbered 0..$((n - 1)), figures match the log" ||
	{ mt_fail "interval snapshots:"; cat i.err; cat i.recs; }
grep -q '^snapshot=[0-9]* interval ' i.dec && mt_ok "interval SNAPSHOT records" || mt_fail "no interval record"
mt_finish
