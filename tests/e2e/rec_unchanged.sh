#!/bin/sh
# rec_unchanged.sh - a preloaded recorder never changes what a program
# prints or its exit status (python3, sqlite3, sh, a signal death), and each
# run leaves a log that starts with the magic and ends with END. Also: an
# unwritable output makes it say so once on stderr and let the program run
# unchanged; MEMTRAIL_OUTPUT placeholders %p %e %n; O_NOFOLLOW.
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd cc python3
cd "$MT_TMP" || exit 1
PROG=$MT_TMP/rec_prog
mt_build_rec_prog "$PROG"
PY=$(command -v python3.11 || command -v python3)
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

n=0
check() {
	n=$((n + 1))
	mt_run "nat$n" "$@"
	MEMTRAIL_OUTPUT=$MT_TMP/u$n.data mt_run "rec$n" env LD_PRELOAD="$REC" "$@"
	mt_same_run "$*" "nat$n" "rec$n"
	if [ -s "rec$n.err" ] && ! cmp -s "nat$n.err" "rec$n.err"; then
		mt_fail "$*: stderr differs: $(head -n 2 "rec$n.err")"
	fi
	if head -c 8 "u$n.data" | grep -q '^MEMTRAIL$' && $DEC "u$n.data" >"u$n.dec" 2>&1; then
		mt_ok "$*: log decodes, end $(mt_val end "u$n.dec"), $(mt_val allocs "u$n.dec") allocations"
	else
		mt_fail "$*: bad log: $(tail -n 2 "u$n.dec")"
	fi
}
check "$PY" -c 'import sys, json; print(json.dumps({"a": list(range(50))})); sys.exit(4)'
if command -v sqlite3 >/dev/null 2>&1; then
	check sqlite3 :memory: 'create table t(a, b); insert into t values (1, "x"), (2, "y"); select group_concat(b) from t;'
fi
check sh -c 'echo hello; exit 3'
# Signal dispositions look as without memtrail: Python installs its
# KeyboardInterrupt handler only over SIG_DFL, and a SIGINT raises it.
check "$PY" -c 'import os, signal, time
print(signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGSEGV))
try:
    os.kill(os.getpid(), signal.SIGINT); time.sleep(2)
except KeyboardInterrupt:
    print("KeyboardInterrupt")'

# A shell redirection onto descriptor 3 must not receive the log.
check sh -c 'exec 3>"$0"; echo to-fd3 >&3; echo out' "$MT_TMP/fd3.txt"
[ "$(cat "$MT_TMP/fd3.txt")" = to-fd3 ] && mt_ok "exec 3>file: the file holds only the program's output" ||
	mt_fail "exec 3>file: $(head -c 60 "$MT_TMP/fd3.txt" | od -c | head -n 2)"
check "$PROG" term
[ "$(cat "rec$n.rc")" = 143 ] && mt_ok "SIGTERM death kept (143)" || mt_fail "term status $(cat "rec$n.rc")"

# Unwritable output: one message, the program runs as usual.
MEMTRAIL_OUTPUT=/nonexistent/dir/x.data mt_run bad env LD_PRELOAD="$REC" "$PROG" basic
mt_run good "$PROG" basic
mt_same_run "unwritable output" good bad
if [ "$(grep -c '^memtrail: ' bad.err)" = 1 ] && grep -q '^memtrail: cannot open /nonexistent/dir/x.data' bad.err; then
	mt_ok "one message: $(cat bad.err)"
else
	mt_fail "unwritable output: stderr '$(cat bad.err)'"
fi

# /dev/full is not a regular file (the output rule, memtrail(1)): one
# message, the program runs as usual. (A disk that fills during the run:
# robust_output.sh, rec_nothing_lost.sh.)
MEMTRAIL_OUTPUT=/dev/full mt_run full env LD_PRELOAD="$REC" "$PROG" basic
mt_same_run "/dev/full" good full
if [ "$(grep -c '^memtrail: ' full.err)" = 1 ] &&
   grep -q '^memtrail: cannot open /dev/full: not a regular file; not recording$' full.err; then
	mt_ok "one message: $(cat full.err)"
else
	mt_fail "/dev/full: stderr '$(cat full.err)'"
fi

# Placeholders: %e the executable's name, %p the pid, %n the first free counter.
mkdir -p out
: > out/rec_prog.0.data
MEMTRAIL_OUTPUT=$MT_TMP/out/%e.%n.data LD_PRELOAD=$REC "$PROG" basic >/dev/null
[ -s out/rec_prog.1.data ] && mt_ok "%e.%n -> rec_prog.1.data" || mt_fail "%e.%n: $(ls out)"
MEMTRAIL_OUTPUT=$MT_TMP/out/p%p.data LD_PRELOAD=$REC sh -c 'echo $$ > out/pid; exec "$0" basic' "$PROG" >/dev/null
pid=$(cat out/pid)
[ -s "out/p$pid.data" ] && mt_ok "%p -> p$pid.data" || mt_fail "%p: $(ls out)"

# O_NOFOLLOW: a symlink at the output path is not followed.
ln -s "$MT_TMP/target" link.data
MEMTRAIL_OUTPUT=$MT_TMP/link.data LD_PRELOAD=$REC "$PROG" basic >/dev/null 2>link.err
[ ! -e target ] && grep -q '^memtrail: cannot open' link.err && mt_ok "symlink refused" ||
	mt_fail "symlink followed or no message"
mt_finish
