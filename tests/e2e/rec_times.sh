#!/bin/sh
# rec_times.sh - every event's time in the log is within a tick of when it
# happened. A thread reads the clock once per tick of the recorder's
# ticker (recorder/tbuf.c, "Times": the drainer's thread here, the helper
# thread in the program without one), so an event's time is at most a
# tick early (1 ms, plus however late the ticker wakes). The program
# (rec_times_prog.c) marks the end of each phase with an allocation of a
# size of its own and prints its own CLOCK_MONOTONIC readings around it:
# the time between two markers in the log must lie between the program's
# shortest and longest reading of it, give or take TOL (10 ms: a tick and
# a loaded machine's late wake; seen up to 1.6 ms here with three busy
# threads on two cores, and the errors it is there to catch are 30 ms and
# more). The phases it covers: a dense loop, 60 ms
# of computing with no allocation and no system call while another thread
# allocates (the case only the tick can catch: a thread that kept its
# CPU), a 40 ms sleep, 30 ms with no thread allocating (the tick stops),
# a new thread. With every event reusing its thread's first reading the
# 60 ms would read as 0.
# Not for: the order of events (rec_stress.sh, rec_xfree.sh).
. "$(dirname "$0")/lib.sh"
mt_need_cmd cc python3
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
cd "$MT_TMP" || exit 1

cc -O1 -g -pthread -o rec_times_prog "$MT_TOP/tests/e2e/rec_times_prog.c" ||
	mt_skip "cannot build rec_times_prog.c"
for run in 1 2 3; do
	mt_record "t$run.data" "t$run" ./rec_times_prog
	[ "$(cat "t$run.rc")" = 0 ] || { mt_fail "run $run: exit $(cat "t$run.rc"): $(cat "t$run.err")"; continue; }
	"$MEMTRAIL" dump "t$run.data" >"t$run.dump" 2>&1 || { mt_fail "run $run: dump: $(head -n 3 "t$run.dump")"; continue; }
	python3 - "t$run.out" "t$run.dump" >"t$run.check" <<'PY'
import re, sys
TOL = 10_000_000
truth = {}
for line in open(sys.argv[1]):
    _, size, a, b = line.split()
    truth[int(size)] = (int(a), int(b))
logt = {}
for line in open(sys.argv[2]):
    m = re.match(r"alloc .*\bt=(\d+) .*\bsize=(\d+) ", line)
    if m and int(m.group(2)) in truth:
        logt[int(m.group(2))] = int(m.group(1))
sizes = sorted(truth)
if sorted(logt) != sizes:
    print("FAIL markers in the log: %s of %s" % (sorted(logt), sizes))
    sys.exit(0)
for p, s in zip(sizes, sizes[1:]):
    lo = truth[s][0] - truth[p][1]
    hi = truth[s][1] - truth[p][0]
    d = logt[s] - logt[p]
    ok = lo - TOL <= d <= hi + TOL
    print("%s %d -> %d: log %.3f ms, program %.3f to %.3f ms" %
          ("ok" if ok else "FAIL", p, s, d / 1e6, lo / 1e6, hi / 1e6))
PY
	while IFS= read -r l; do
		case $l in
		ok*) mt_ok "run $run: ${l#ok }" ;;
		*) mt_fail "run $run: ${l#FAIL }" ;;
		esac
	done <"t$run.check"
	[ -s "t$run.check" ] || mt_fail "run $run: no figures"
done
mt_finish
