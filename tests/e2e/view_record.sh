#!/bin/sh
# view_record.sh - `memtrail record --view` in a real terminal (tmux) on
# samples/live_phases.c, moved on phase by phase by the test (files
# DIR/goK): the viewer follows the run as it is recorded, the program's
# output goes to the -O file; quitting the viewer leaves the program
# running and recording (memtrail says so and exits 0; the log, once the
# program ends, has the whole run's figures), and with --kill-on-quit ends
# it (SIGTERM: memtrail says so, exits 143, the log ends with what was
# live then). Also: the options' misuse.
#
# The figures are the sample's (its top comment works them out: 1,000,000 B
# in 10 blocks after phase 1; the expect block for the whole run).
# Not for: the viewer's following in detail (view_follow.sh).

[ -z "${MT_TMP:-}" ] && own_tmp=1
. "$(dirname "$0")/lib.sh"
mt_need_cmd tmux python3
mt_have_memtrail || mt_skip "memtrail not built"
PROG=$MT_SAMPLES/live_phases
[ -x "$PROG" ] || mt_skip "samples not built (make samples)"

cd "$MT_TMP" || exit 1
mkdir s1 s2 || exit 1
trap 'mt_tmux_stop; touch s1/go1 s1/go2 s1/go3 s1/go4 s2/go1 s2/go2 s2/go3 s2/go4 2>/dev/null;
      [ -n "${own_tmp:-}" ] && sleep 0.2 && rm -rf "$MT_TMP"' EXIT

ex() {   # ex KEY: a figure of the expect block
	python3 "$MT_TOP/tests/expect.py" expect "$MT_TOP/samples/live_phases.c" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# ---- misuse --------------------------------------------------------------------
"$MEMTRAIL" record -O x.out "$PROG" >mis.out 2>mis.err
[ $? = 2 ] && grep -q '^memtrail: error: -O goes with --view$' mis.err &&
	mt_ok "-O without --view" || mt_fail "-O without --view: $(cat mis.err)"
"$MEMTRAIL" record --kill-on-quit "$PROG" >mis.out 2>mis.err
[ $? = 2 ] && grep -q '^memtrail: error: --kill-on-quit goes with --view$' mis.err &&
	mt_ok "--kill-on-quit without --view" || mt_fail "--kill-on-quit without --view: $(cat mis.err)"
"$MEMTRAIL" record --view "$PROG" </dev/null >mis.out 2>mis.err
[ $? = 2 ] && grep -q '^memtrail: error: --view needs a terminal$' mis.err &&
	mt_ok "--view without a terminal" || mt_fail "--view without a terminal: $(cat mis.err)"
[ -e live_phases.out ] || [ -e memtrail.out ] && mt_fail "misuse left an output file"

mt_tmux_start 110 30 || mt_skip "tmux cannot start"

# ---- quit: the program goes on ---------------------------------------------------
mt_tmux_keys "cd '$MT_TMP' && LANG=C.UTF-8 '$MEMTRAIL' record --view -o a.data -O a.out '$PROG' '$MT_TMP/s1' 2>a.err; echo rec-rc=\$?" Enter
mt_tmux_wait '^ now [^|]*: 0 B \| live \| peak 0 B \| recording… \| a.data' 10 &&
	mt_ok "the viewer follows the run from its start" || mt_fail "the first screen"
touch s1/go1
mt_tmux_wait '^ now [^|]*: 1,000,000 B \| live \|.*recording' 10 &&
	mt_ok "phase 1 at now" || mt_fail "phase 1 never showed"
mt_tmux_keys q
if mt_tmux_wait '^rec-rc=[0-9]+$' 10 && grep -q '^rec-rc=0$' "$MT_TMP/tmux.cur"; then
	mt_ok "quit: record exits 0"
else
	mt_fail "quit: $(grep rec-rc "$MT_TMP/tmux.cur")"
fi
pid=$(sed -n "s|^memtrail: $PROG goes on running (pid \([0-9]*\)), recording into a.data; its output goes to a.out\$|\1|p" a.err)
if [ -n "$pid" ] && alive "$pid"; then
	mt_ok "quit: the program goes on running (pid $pid), as record says"
else
	mt_fail "quit: $(cat a.err)"
fi
touch s1/go2 s1/go3 s1/go4
n=0
while [ -n "$pid" ] && alive "$pid" && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
[ -n "$pid" ] && alive "$pid" && mt_fail "the program did not end after its last step"
printf 'phase 1\nphase 2\nphase 3\ndone\n' >want.out
cmp -s want.out a.out && mt_ok "the program's output is in a.out" || mt_fail "a.out: $(cat a.out)"
"$MEMTRAIL" report --summary --format json a.data >a.json 2>a.jerr
python3 "$MT_TOP/tests/expect.py" check-memtrail "$MT_TOP/samples/live_phases.c" a.json >a.cmp 2>&1 &&
	mt_ok "recorded to its end after the viewer quit: the sample's figures" ||
	mt_fail "the log after quitting: $(cat a.cmp a.jerr)"

# ---- --kill-on-quit --------------------------------------------------------------
mt_tmux_keys "clear; '$MEMTRAIL' record --view --kill-on-quit -o b.data '$PROG' '$MT_TMP/s2' 2>b.err; echo rec-rc=\$?" Enter
touch s2/go1
mt_tmux_wait '^ now [^|]*: 1,000,000 B \| live \|.*recording' 10 &&
	mt_ok "--kill-on-quit: phase 1 at now" || mt_fail "--kill-on-quit: phase 1 never showed"
mt_tmux_keys q
if mt_tmux_wait '^rec-rc=[0-9]+$' 10 && grep -q '^rec-rc=143$' "$MT_TMP/tmux.cur"; then
	mt_ok "--kill-on-quit: record exits 143"
else
	mt_fail "--kill-on-quit: $(grep rec-rc "$MT_TMP/tmux.cur")"
fi
grep -qxF "memtrail: $PROG killed by SIGTERM" b.err &&
	mt_ok "--kill-on-quit: the program was ended by SIGTERM" || mt_fail "--kill-on-quit: $(cat b.err)"
[ -e memtrail.out ] && printf 'phase 1\n' | cmp -s - memtrail.out &&
	mt_ok "--kill-on-quit: output in memtrail.out (the default)" ||
	mt_fail "memtrail.out: $(cat memtrail.out 2>&1)"
got=$("$MEMTRAIL" report --summary --format json b.data |
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["allocations"], d["leaked_bytes"], d["leaked_blocks"])')
[ "$got" = "10 1000000 10" ] && mt_ok "--kill-on-quit: the log ends with phase 1 live" ||
	mt_fail "--kill-on-quit: the log says $got"
mt_finish
