#!/bin/sh
# cli_record.sh - `memtrail record` end to end: exit status passed through,
# death by signal reported as 128+signo, signals sent to the launcher
# forwarded, the -o placeholders, the closing line against the log's own
# summary, a program that writes no log, and LD_PRELOAD kept.
. "$(dirname "$0")/lib.sh"
mt_have_memtrail || mt_skip "memtrail or libmemtrail.so not built"
mt_need_cmd python3
cd "$MT_TMP" || exit 1
PHASES=$MT_SAMPLES/phases

# rec NAME STATUS ARGS...: memtrail record ARGS into o / e, checks the status.
rec() {
	_n=$1; _s=$2; shift 2
	timeout "$MT_TIMEOUT" "$MEMTRAIL" record "$@" >o 2>e </dev/null
	_rc=$?
	[ "$_rc" = "$_s" ] && mt_ok "$_n: exit $_rc" || { mt_fail "$_n: exit $_rc, expected $_s"; cat e; }
}

# Exit status and output of the program are its own.
rec "exit status" 7 -o st.data sh -c 'echo out; echo err >&2; exit 7'
[ "$(cat o)" = out ] && mt_ok "stdout untouched" || mt_fail "stdout: $(cat o)"
[ "$(head -n 1 e)" = err ] && mt_ok "program's stderr first" || mt_fail "stderr: $(cat e)"
rec "killed by a signal" 139 -o sig.data sh -c 'kill -SEGV $$'
grep -qx 'memtrail: sh killed by SIGSEGV' e && mt_ok "killed-by line" || mt_fail "killed-by line: $(cat e)"

# SIGKILL: the drainer process writes the rest and END(SIGNAL 9), and
# record waits for it: the closing line, no warning. With
# MEMTRAIL_DRAINER=0 there is no END record: the log is reported truncated.
rec "SIGKILL" 137 -o kill.data sh -c 'kill -KILL $$'
grep -qx 'memtrail: sh killed by SIGKILL' e && mt_ok "SIGKILL killed-by line" || mt_fail "SIGKILL: $(cat e)"
grep -qE '^memtrail: [0-9,]+ allocations, .*kill.data written' e && ! grep -q warning e &&
	"$MEMTRAIL" dump kill.data | grep -q '^end clean=1 how=signal code=9 ' &&
	mt_ok "SIGKILL: closing line, END(SIGNAL 9)" || mt_fail "SIGKILL: $(cat e) $("$MEMTRAIL" dump kill.data | grep '^end')"
MEMTRAIL_DRAINER=0 rec "SIGKILL without the drainer" 137 -o kill0.data sh -c 'kill -KILL $$'
grep -qE '^memtrail: warning: kill0.data truncated after [0-9]+ events \(no end record' e &&
	mt_ok "SIGKILL without the drainer: truncation warning" || mt_fail "SIGKILL warning: $(cat e)"

# The closing line agrees with the log's summary (phases.c: 35 allocations,
# peak 362,624 B = 354.1 KiB, 9,216 B = 9.0 KiB leaked in 3 blocks, of
# which rows 14 and 15, 8,192 B = 8.0 KiB, definitely lost).
if [ -x "$PHASES" ]; then
	rec "phases" 0 -o phases.data "$PHASES"
	size=$(wc -c <phases.data)
	want="memtrail: 35 allocations, 354.1 KiB peak, 9.0 KiB leaked in 3 blocks (8.0 KiB definitely lost), phases.data written ($(python3 -c "
import sys; n = int(sys.argv[1]); print('%d B' % n if n < 1024 else '%.1f KiB' % (n / 1024))" "$size"))"
	[ "$(tail -n 1 e)" = "$want" ] && mt_ok "closing line: $want" || mt_fail "closing line: '$(tail -n 1 e)', expected '$want'"
	grep -c '^memtrail: snapshot [0-2]: ' e | grep -qx 3 && mt_ok "3 snapshot lines" || mt_fail "snapshot lines: $(cat e)"
fi

# Placeholders: %p is the program's pid (the log header's pid), %e its
# name, %n the first free counter, %% a percent sign.
rec "%p %e" 0 -o 'x.%e.%p.data' sh -c 'echo $$'
pid=$(cat o)
[ -f "x.sh.$pid.data" ] && mt_ok "%e.%p expanded to sh.$pid" || mt_fail "no x.sh.$pid.data: $(ls)"
"$MEMTRAIL" dump "x.sh.$pid.data" 2>/dev/null | head -n 1 | grep -q " pid=$pid " &&
	mt_ok "header pid = program pid" || mt_fail "header pid"
rec "%n first" 0 -o 'n.%n.data' true
rec "%n second" 0 -o 'n.%n.data' true
[ -f n.0.data ] && [ -f n.1.data ] && mt_ok "%n counts 0, 1" || mt_fail "%n: $(ls)"
rec "%%" 0 -o 'pc%%.data' true
[ -f 'pc%.data' ] && mt_ok "%% is a percent sign" || mt_fail "%%: $(ls)"
rec "%t" 0 -o 't.%t.data' true
ls | grep -qE '^t\.[0-9]{10}\.data$' && mt_ok "%t is a unix time" || mt_fail "%t: $(ls)"
# Default output: memtrail.data in the current directory.
rec "default output" 0 true
[ -f memtrail.data ] && mt_ok "memtrail.data written" || mt_fail "no memtrail.data"

# Options reach the recorder through the environment (the recorder removes
# itself from LD_PRELOAD at start, so children are not recorded); the
# output path made absolute, against the directory the program starts in.
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
rec "environment" 0 -o env.data --depth 5 --snapshot-signal USR2 --snapshot-interval 0.5 \
	$PY -c 'import os; print(*(os.environ.get("MEMTRAIL_" + k) for k in ("DEPTH", "SNAPSHOT_SIGNAL", "SNAPSHOT_INTERVAL", "OUTPUT")))'
[ "$(cat o)" = "5 12 0.5 $(pwd)/env.data" ] && mt_ok "MEMTRAIL_* set: $(cat o)" || mt_fail "environment: $(cat o)"
# An existing LD_PRELOAD stays, and the program is still recorded. Not with
# the sanitized launcher: ASan refuses to start when another library is
# preloaded ahead of its runtime.
if [ -z "${MT_SANITIZED:-}" ]; then
LD_PRELOAD=libm.so.6 rec "LD_PRELOAD kept" 0 -o pre.data $PY -c 'import os; print(os.environ["LD_PRELOAD"])'
[ "$(cat o)" = libm.so.6 ] && mt_ok "user LD_PRELOAD kept" || mt_fail "LD_PRELOAD: $(cat o)"
grep -q '^memtrail: [1-9][0-9,]* allocations, .* pre.data written' e && mt_ok "recorded with LD_PRELOAD set" ||
	mt_fail "LD_PRELOAD run: $(tail -n 1 e)"
fi

# A program that records nothing (static: the preload does not load):
# a warning, its status kept.
static=""
for p in /sbin/ldconfig /usr/sbin/ldconfig; do
	[ -x "$p" ] && readelf -lW "$p" >/dev/null 2>&1 && ! readelf -lW "$p" | grep -q INTERP && static=$p && break
done
if [ -n "$static" ]; then
	rec "static program" 0 -o static.data "$static" -p
	grep -q '^memtrail: warning: .* wrote no log to static.data' e && mt_ok "no-log warning" ||
		mt_fail "no-log warning: $(tail -n 2 e)"
fi

# SIGTERM sent to the launcher reaches the program: 128 + 15.
"$MEMTRAIL" record -o term.data sleep 30 >o 2>e </dev/null &
launcher=$!
sleep 1
kill -TERM $launcher
wait $launcher
rc=$?
[ $rc = 143 ] && mt_ok "SIGTERM forwarded: exit 143" || mt_fail "SIGTERM: exit $rc"
grep -qx 'memtrail: sleep killed by SIGTERM' e && mt_ok "SIGTERM killed-by line" || mt_fail "SIGTERM: $(cat e)"
mt_finish
