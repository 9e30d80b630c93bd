#!/bin/sh
# rec_ends.sh - every way a recorded process ends leaves a complete log with
# the right END record and the program's own exit status: exit, _exit,
# abort, SIGSEGV, SIGTERM, exec (the exec'd child is not recorded: the
# preload removed itself from LD_PRELOAD), a failed exec (recording goes
# on), fork (the child records nothing and leaves the parent's file alone),
# vfork children that exec or _exit (the parent's session is untouched),
# and SIGKILL (every event and END(SIGNAL 9), written by the drainer; with
# MEMTRAIL_DRAINER=0, complete chunks up to the kill and no END).
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd cc python3
cd "$MT_TMP" || exit 1
PROG=$MT_TMP/rec_prog
mt_build_rec_prog "$PROG"

# mode, its argument, exit status, END how and code, allocations
while read -r mode arg status how code allocs; do
	end="($how, $code)"
	rm -f e.data
	MEMTRAIL_OUTPUT=$MT_TMP/e.data LD_PRELOAD=$REC "$PROG" "$mode" ${arg#-} >e.out 2>e.err
	rc=$?
	[ "$rc" = "$status" ] || mt_fail "$mode: exit status $rc, expected $status"
	if ! $DEC e.data >e.dec 2>e.dec.err; then
		mt_fail "$mode: log does not decode: $(tail -n 1 e.dec.err)"
		continue
	fi
	got="$(mt_val end e.dec) $(mt_val allocs e.dec) $(mt_val truncated e.dec)"
	[ "$got" = "$end $allocs 0" ] && mt_ok "$mode: status $rc, END $end, $allocs allocation(s)" ||
		mt_fail "$mode: END/allocs/truncated '$got', expected '$end $allocs 0'"
done <<'CASES'
exit 5 5 0 5 1
_exit 4 4 1 4 1
abort - 134 2 6 1
segv - 139 2 11 1
term - 143 2 15 1
exec - 6 3 0 1
execfail - 3 0 3 2
fork - 3 0 3 1
vfork - 3 0 3 2
CASES

# exec: the child ran without the preload.
MEMTRAIL_OUTPUT=$MT_TMP/x.data LD_PRELOAD=$REC "$PROG" exec >x.out 2>&1
grep -q '^preload=\[\]$' x.out && mt_ok "exec'd child has no LD_PRELOAD" || mt_fail "child saw: $(cat x.out)"
# fork: the child's 1,000 mallocs and its exit are not in the parent's log.
MEMTRAIL_OUTPUT=$MT_TMP/f.data LD_PRELOAD=$REC "$PROG" fork >f.out 2>&1
$DEC f.data >f.dec
grep -q '^child 7$' f.out && [ "$(mt_val frees f.dec)" = 1 ] && [ "$(mt_val threads f.dec)" = 1 ] &&
	mt_ok "fork: only the parent's 1 alloc / 1 free, one thread" || mt_fail "fork: $(cat f.out) $(grep -E '^(allocs|frees|threads)=' f.dec)"

# SIGKILL after a pause longer than a chunk's second. The drainer process
# writes what the rings hold, the last malloc(1) too, and END(SIGNAL 9).
# With MEMTRAIL_DRAINER=0 every event of the loop is in complete chunks,
# the malloc(1) is not, and there is no END.
for dr in 1 0; do
	rm -f k.data
	MEMTRAIL_DRAINER=$dr MEMTRAIL_OUTPUT=$MT_TMP/k.data LD_PRELOAD=$REC "$PROG" kill >k.out 2>/dev/null
	rc=$?
	mt_wait_drained "$MT_TMP/k.data"
	$DEC k.data >k.dec 2>k.dec.err || mt_fail "killed log: $(tail -n 1 k.dec.err)"
	set -- $(sed -n 's/^expect //p' k.out | tr ' =' '\n\n' | sed -n 'n;p')
	got="$(mt_val allocs k.dec) $(mt_val frees k.dec) $(mt_val bytes k.dec) $(mt_val end k.dec) $(mt_val truncated k.dec)"
	if [ $dr = 1 ]; then
		want="$(($1 + 1)) $2 $(($3 + 1)) (2, 9) 0"
	else
		want="$1 $2 $3 None 0"
	fi
	[ $rc = 137 ] && [ "$got" = "$want" ] &&
		mt_ok "SIGKILL (MEMTRAIL_DRAINER=$dr): $got, $(mt_val chunks k.dec) chunks" ||
		mt_fail "SIGKILL (MEMTRAIL_DRAINER=$dr): status $rc, log '$got', expected '$want'"
done
mt_finish
