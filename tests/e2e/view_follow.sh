#!/bin/sh
# view_follow.sh - `memtrail view --follow` in a real terminal (tmux) on
# the log of samples/live_phases.c while `memtrail record` writes it, the
# program moved on phase by phase by the test (files DIR/goK): before any
# allocation the status says "now", 0 B and "recording..."; each phase's
# figure then appears on the screen within a few seconds of the step (the
# time is printed), the cursor pinned to now follows it; moved into the
# past (<) it stays there while the run grows, End pins it to now again;
# after END the status is the normal one (end, leaked); a program killed
# outright gets its END from the drainer process (the normal status), and
# with MEMTRAIL_DRAINER=0 (no END) is said to be gone. Also: the viewer's
# CPU time while the program sleeps (idle following costs next to none),
# and the same run's figures from `memtrail report` afterwards.
#
# The figures are the sample's (its top comment works them out: 1,000,000 B
# after phase 1, 2,000,000 B after phase 2, 500,000 B leaked); the peak and
# the leak are read from its memtrail-expect block.
# Not for: the session's poll in detail (tests/test_session.c).

[ -z "${MT_TMP:-}" ] && own_tmp=1
. "$(dirname "$0")/lib.sh"
mt_need_cmd tmux python3
mt_have_memtrail || mt_skip "memtrail not built"
PROG=$MT_SAMPLES/live_phases
[ -x "$PROG" ] || mt_skip "samples not built (make samples)"

cd "$MT_TMP" || exit 1
mkdir steps || exit 1
recpid=
trap 'mt_tmux_stop; touch steps/go1 steps/go2 steps/go3 steps/go4 steps2/go1 steps2/go2 steps2/go3 steps2/go4 2>/dev/null;
      [ -n "$recpid" ] && wait "$recpid"; [ -n "${own_tmp:-}" ] && rm -rf "$MT_TMP"' EXIT

ex() {   # ex KEY: a figure of the expect block
	python3 "$MT_TOP/tests/expect.py" expect "$MT_TOP/samples/live_phases.c" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}
commas() { python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$1"; }
peak=$(commas "$(ex peak_bytes)")
leak=$(commas "$(ex leaked_bytes)")

ms() { python3 -c 'import time; print(int(time.monotonic() * 1000))'; }

# the status line (the window's last line)
status() { mt_tmux_screen "$MT_TMP/st.txt"; tail -n 1 "$MT_TMP/st.txt"; }

# step K FIGURE WHAT: moves the program on to phase K, waits until the
# status line shows FIGURE live at now, says how long it took
step() {
	_t0=$(ms)
	touch "steps/go$1"
	if mt_tmux_wait "^ now [^|]*: $2 B \| live \|.*recording" 10; then
		mt_ok "$3: $2 B live at now after $(( $(ms) - _t0 )) ms"
	else
		mt_fail "$3: $2 B never showed at now"
	fi
}

"$MEMTRAIL" record -o live.data "$PROG" "$MT_TMP/steps" >rec.out 2>rec.err &
recpid=$!
# the recorder writes the header as the program starts
n=0
while [ ! -s live.data ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
[ -s live.data ] || { mt_fail "no log from the recording"; mt_finish; }

mt_tmux_start 110 30 || mt_skip "tmux cannot start"
mt_tmux_keys "cd '$MT_TMP' && LANG=C.UTF-8 '$MEMTRAIL' view --follow live.data; echo view-rc=\$?" Enter
if mt_tmux_wait '^ now [^|]*: 0 B \| live \| peak 0 B \| recording… \| live.data' 10; then
	mt_ok "before any allocation: now, 0 B, recording…"
else
	mt_fail "the first screen of a run being recorded"
fi

# ---- idle: the viewer sleeps between its looks at the log --------------------
vpid=$(python3 - "$($MT_TMUX list-panes -t mt -F '#{pane_pid}')" <<'EOF'
import os, sys
for p in os.listdir("/proc"):
    try:
        st = open(f"/proc/{p}/stat").read()
    except (OSError, ValueError):
        continue
    f = st[st.rindex(")") + 2:].split()
    if f[1] == sys.argv[1] and "memtrail" in st[:st.rindex(")")]:
        print(p)
EOF
)
cpu() { python3 -c 'import sys; s=open(f"/proc/{sys.argv[1]}/stat").read(); f=s[s.rindex(")")+2:].split(); print(int(f[11])+int(f[12]))' "$1"; }
if [ -n "$vpid" ]; then
	c0=$(cpu "$vpid"); sleep 5; c1=$(cpu "$vpid")
	hz=$(getconf CLK_TCK)
	# 5 looks a second at an unchanged file: a few ms of CPU in 5 s
	if [ $((c1 - c0)) -le $((hz / 20)) ]; then
		mt_ok "idle following: $((c1 - c0)) ticks of CPU (1/$hz s) in 5 s"
	else
		mt_fail "idle following used $((c1 - c0)) ticks of CPU (1/$hz s) in 5 s"
	fi
else
	mt_fail "no viewer process under the tmux pane"
fi

step 1 1,000,000 "phase 1"
step 2 2,000,000 "phase 2"
mt_tmux_wait "peak $peak B" 5 || mt_fail "the peak label"

# ---- the cursor in the past stays there; End pins it to now again -----------
mt_tmux_keys '<' '<' '<' '<' '<' '<' '<' '<' '<' '<'
if mt_tmux_wait '^ t=[^|]*: [0-9,]+ B \| live \|.*recording' 5; then
	past=$(status | sed 's/ |.*//')
	mt_ok "moved into the past: $past"
else
	mt_fail "< did not move the cursor into the past"
	past=none
fi
touch steps/go3
sleep 2
s=$(status)
case $s in
"$past |"*recording*) mt_ok "the cursor in the past stayed there as the run grew";;
*) mt_fail "the cursor in the past moved: $s (was $past)";;
esac
mt_tmux_keys End
if mt_tmux_wait "^ now [^|]*: $leak B \| live \|.*recording" 5; then
	mt_ok "End: pinned to now again, phase 3 there"
else
	mt_fail "End did not pin the cursor to now"
fi

# ---- END: the normal status ----------------------------------------------------
touch steps/go4
if mt_tmux_wait "^ end [^|]*: $leak B \| live \| peak $peak B \| leaked $leak B \| live.data" 10; then
	mt_ok "after END: end, peak $peak B, leaked $leak B"
else
	mt_fail "the status after END"
fi
grep -q 'recording' "$MT_TMP/tmux.cur" && mt_fail "still says recording after END"
wait "$recpid"
rc=$?
recpid=
[ "$rc" = 0 ] || mt_fail "record exited $rc: $(cat rec.err)"
mt_tmux_keys q
mt_tmux_wait "view-rc=0" 5 || mt_fail "q did not quit the viewer cleanly"

# ---- a program killed outright: the drainer writes END (the status is that
# of any finished log); with MEMTRAIL_DRAINER=0 it has none, and the
# status says so ---------------------------------------------------------------
for dr in 1 0; do
	mkdir steps2.$dr || exit 1
	rm -f k.data
	MEMTRAIL_DRAINER=$dr "$MEMTRAIL" record -o k.data "$PROG" "$MT_TMP/steps2.$dr" >k.out 2>k.err &
	recpid=$!
	n=0
	while [ ! -s k.data ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	touch steps2.$dr/go1
	mt_tmux_keys "clear; '$MEMTRAIL' view --follow k.data" Enter
	mt_tmux_wait '^ now [^|]*: 1,000,000 B \| live \|.*recording' 10 ||
		mt_fail "the second run's phase 1 (MEMTRAIL_DRAINER=$dr)"
	# the program: record's child that is not the drainer
	prog=$(python3 - "$recpid" <<'EOF'
import os, sys
for p in os.listdir("/proc"):
    try:
        st = open(f"/proc/{p}/stat").read()
    except (OSError, ValueError):
        continue
    if st[st.rindex(")") + 2:].split()[1] == sys.argv[1] and "(memtrail-drain)" not in st and "(memtrail-spare)" not in st:
        print(p)
EOF
)
	if [ $dr = 1 ]; then
		want="^ end [^|]*: 1,000,000 B \| live \| peak 1,000,000 B \| leaked 1,000,000 B \| k.data"
		what="END from the drainer"
	else
		want="^ now [^|]*: 1,000,000 B \| live \| peak 1,000,000 B \| no END, pid $prog gone \| k.data"
		what="no END, pid $prog gone"
	fi
	if [ -n "$prog" ] && kill -KILL "$prog"; then
		if mt_tmux_wait "$want" 10; then
			mt_ok "the program killed outright (MEMTRAIL_DRAINER=$dr): $what"
		else
			mt_fail "the status after SIGKILL (MEMTRAIL_DRAINER=$dr)"
		fi
	else
		mt_fail "no program under the second recording (MEMTRAIL_DRAINER=$dr)"
	fi
	wait "$recpid"
	recpid=
	touch steps2.$dr/go2 steps2.$dr/go3 steps2.$dr/go4
	mt_tmux_keys q
done

# the same log read after the run: the same figures
"$MEMTRAIL" report --summary --format json live.data >sum.json 2>sum.err ||
	mt_fail "report on the log: $(cat sum.err)"
got=$(python3 -c 'import json; d=json.load(open("sum.json")); print(d["peak_bytes"], d["leaked_bytes"])')
[ "$got" = "$(ex peak_bytes) $(ex leaked_bytes)" ] && mt_ok "report after the run: $got" ||
	mt_fail "report after the run: $got"
mt_finish
