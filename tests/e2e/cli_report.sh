#!/bin/sh
# cli_report.sh - `memtrail report` on the checked-in log cli_phases.data
# (samples/phases.c recorded once; its figures are documented in phases.c
# and agree with valgrind memcheck): the text and JSON summary, -o, and the
# errors for a missing file, a file that is not a log, a log cut inside its
# header and a log cut inside its chunk, and for a full output device.
. "$(dirname "$0")/lib.sh"
[ -x "$MEMTRAIL" ] || mt_skip "memtrail not built"
mt_need_cmd python3
LOG=$MT_TOP/tests/e2e/cli_phases.data
cd "$MT_TMP" || exit 1

# run NAME STATUS CMD...: runs CMD into o / e, checks the status.
run() {
	_n=$1; _s=$2; shift 2
	"$@" >o 2>e </dev/null
	_rc=$?
	[ "$_rc" = "$_s" ] && mt_ok "$_n: exit $_rc" || { mt_fail "$_n: exit $_rc, expected $_s"; cat e; }
}

# same NAME FILE TEXT: FILE holds exactly TEXT.
same() {
	printf '%s\n' "$3" >expected
	if cmp -s "$2" expected; then mt_ok "$1"; else mt_fail "$1:"; diff expected "$2"; fi
}

# The figures of samples/phases.c, from the comment at its top.
cat >phases.expect <<'X'
{"command": "./phases", "allocations": 35, "frees": 32, "bytes_allocated": 403584,
 "peak_bytes": 362624, "peak_blocks": 23, "leaked_bytes": 9216, "leaked_blocks": 3,
 "threads": 1,
 "snapshots": [{"index": 0, "label": "loaded", "live_bytes": 67712, "live_blocks": 22},
               {"index": 1, "label": "grown", "live_bytes": 92288, "live_blocks": 22},
               {"index": 2, "label": "freed", "live_bytes": 9216, "live_blocks": 3}]}
X

run "summary json" 0 "$MEMTRAIL" report --summary --format json "$LOG"
[ -s e ] && mt_fail "summary json wrote to stderr: $(cat e)"
cp o summary.json
python3 - summary.json phases.expect <<'X' && mt_ok "summary json: phases.c figures" || mt_fail "summary json figures"
import json, sys
text = open(sys.argv[1]).read()
got = json.loads(text)                      # exactly one JSON object
want = json.load(open(sys.argv[2]))
assert text.count("\n") == 1, "one line"
keys = "command duration_s allocations frees bytes_allocated peak_bytes peak_blocks peak_time_s leaked_bytes leaked_blocks snapshots threads".split()
assert list(got) == keys, list(got)
bad = 0
for k, v in want.items():
    if k == "snapshots":
        g = [{kk: s[kk] for kk in v[0]} for s in got[k]]
        if g != v:
            print("snapshots", g); bad = 1
    elif got[k] != v:
        print(k, "expected", v, "got", got[k]); bad = 1
# times: snapshots in order, the peak between snapshot 1's start and 2, all within the run
t = [s["time_s"] for s in got["snapshots"]]
if not (0 < t[0] < got["peak_time_s"] < t[1] < t[2] <= got["duration_s"]):
    print("times out of order", t, got["peak_time_s"], got["duration_s"]); bad = 1
for s in got["snapshots"]:
    if set(s) != {"index", "label", "time_s", "live_bytes", "live_blocks"}:
        print("snapshot keys", list(s)); bad = 1
sys.exit(bad)
X

# The text summary says the same figures.
run "summary text" 0 "$MEMTRAIL" report --summary "$LOG"
cp o summary.txt
grep -q '^allocations: *35$' o && grep -q '^frees: *32$' o &&
grep -q '^bytes allocated: *403,584 B (394.1 KiB)$' o &&
grep -q '^peak: *362,624 B (354.1 KiB) in 23 blocks at ' o &&
grep -q '^leaked: *9,216 B (9.0 KiB) in 3 blocks$' o &&
grep -q '^threads: *1$' o && grep -q '^snapshots: *3$' o &&
grep -q '^  snapshot 1 at [0-9.]* m\{0,1\}s: 92,288 B (90.1 KiB) in 22 blocks "grown"$' o &&
grep -q '^command: *\./phases$' o && mt_ok "summary text figures" || { mt_fail "summary text:"; cat o; }

# -o OUT writes the same bytes as standard output, nothing on stdout.
run "summary -o" 0 "$MEMTRAIL" report --summary -o out.txt "$LOG"
[ -s o ] && mt_fail "-o still wrote to stdout"
cmp -s out.txt summary.txt && mt_ok "-o OUT = stdout" || mt_fail "-o OUT differs"
run "summary json -o" 0 "$MEMTRAIL" report "$LOG" --format=json --summary -o out.json
cmp -s out.json summary.json && mt_ok "json -o OUT = stdout, FILE anywhere" || mt_fail "json -o OUT differs"
run "-o in a missing directory" 1 "$MEMTRAIL" report --summary -o nodir/x "$LOG"

# The trees name the program's functions, so they need its binary where
# the log says it was: the checked-in log names the tree it was recorded
# in, which no other checkout has. The tree checks use a log of the same
# sample recorded now (its summary checked against the checked-in one's
# figures above through phases.c's comment, by accuracy_samples.sh).
TLOG=$MT_TMP/phases.data
"$MEMTRAIL" record -o "$TLOG" -- "$MT_SAMPLES/phases" >/dev/null 2>&1 ||
	mt_fail "cannot record $MT_SAMPLES/phases"
"$MEMTRAIL" report --summary "$TLOG" >tsummary.txt 2>/dev/null

# With no --show-*: the summary first, then the trees; a complete log gets
# no warning, even when a tree's replay stops early at the peak.
run "default report" 0 "$MEMTRAIL" report "$TLOG"
head -n "$(wc -l <tsummary.txt)" o | cmp -s - tsummary.txt && mt_ok "default report starts with the summary" ||
	mt_fail "default report does not start with the summary"
[ -s e ] && mt_fail "default report warned: $(cat e)" || mt_ok "default report: no warning"
run "show-maximum" 0 "$MEMTRAIL" report --show-maximum "$TLOG"
[ -s e ] && mt_fail "--show-maximum warned: $(cat e)" || mt_ok "--show-maximum: no warning"
grep -q '^command:' o && mt_fail "--show-maximum printed the summary" || mt_ok "--show-maximum: no summary"

# FILE defaults to memtrail.data.
cp "$LOG" memtrail.data
run "default file" 0 "$MEMTRAIL" report --summary --format json
cmp -s o summary.json && mt_ok "default FILE is memtrail.data" || mt_fail "default FILE"
rm memtrail.data

# Errors: missing file, not a log, empty, cut in the header: exit 1, one line.
run "missing file" 1 "$MEMTRAIL" report --summary missing.data
same "missing file message" e "memtrail: error: missing.data: No such file or directory"
printf 'hello, world\n' >text.data
run "not a log" 1 "$MEMTRAIL" report --summary text.data
same "not a log message" e "memtrail: error: text.data: not a memtrail log (bad magic at offset 0)"
: >empty.data
run "empty file" 1 "$MEMTRAIL" report empty.data
[ "$(wc -l <e)" -eq 1 ] && grep -q '^memtrail: error: empty.data: ' e && mt_ok "empty: one error line" ||
	{ mt_fail "empty file:"; cat e; }
head -c 20 "$LOG" >head.data
run "cut in header" 1 "$MEMTRAIL" report --summary head.data
same "cut in header message" e "memtrail: error: head.data: log ends inside its header (at offset 20)"
run "directory" 1 "$MEMTRAIL" report --summary .
same "directory message" e "memtrail: error: .: Is a directory"

# Cut inside the only chunk: the header (28 bytes + the command line, per
# memtrail-format(5)) reads, the partial chunk is reported, no event is left.
hdr=$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(28); print(28 + struct.unpack("<I", d[24:28])[0])' "$LOG")
head -c $((hdr + 40)) "$LOG" >cut.data
run "cut in chunk" 0 "$MEMTRAIL" report --summary --format json cut.data
same "cut in chunk warning" e "memtrail: warning: cut.data truncated after 0 events (partial chunk at offset $hdr)"
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["command"] == "./phases" and s["allocations"] == 0 and s["peak_bytes"] == 0 and s["snapshots"] == [], s
' o && mt_ok "cut in chunk: empty summary of ./phases" || mt_fail "cut in chunk summary: $(cat o)"
# A corrupt chunk (bad chunk magic right after the header).
python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read()); d[int(sys.argv[2])] ^= 0xff
open(sys.argv[3], "wb").write(d)' "$LOG" "$hdr" bad.data
run "corrupt chunk" 0 "$MEMTRAIL" report --summary bad.data
same "corrupt chunk warning" e "memtrail: warning: bad.data truncated after 0 events (corrupt log data at offset $hdr)"
# A full output device: the error names the output, not the log, and the
# reason (/dev/full always fails with ENOSPC), whether the report fails
# while it writes (larger than stdio's buffer), between the summary and the
# trees, or at the end; one line (under ASan, no leak report either).
if [ -w /dev/full ]; then
	for args in "--show-leaks" "" "--format massif" "--summary"; do
		# shellcheck disable=SC2086
		"$MEMTRAIL" report $args "$TLOG" >/dev/full 2>e </dev/null
		rc=$?
		[ $rc = 1 ] && [ "$(wc -l <e)" -eq 1 ] &&
			grep -q '^memtrail: error: cannot write standard output: No space left on device$' e &&
			mt_ok "report ${args:-(default)} to /dev/full: exit 1, cannot write standard output: ENOSPC" ||
			mt_fail "report ${args:-(default)} to /dev/full: exit $rc, $(cat e)"
	done
	"$MEMTRAIL" report "$LOG" -o /dev/full >o 2>e </dev/null
	rc=$?
	[ $rc = 1 ] && [ ! -s o ] && [ "$(wc -l <e)" -eq 1 ] &&
		grep -q '^memtrail: error: cannot write /dev/full: No space left on device$' e &&
		mt_ok "report -o /dev/full: exit 1, cannot write /dev/full: ENOSPC" ||
		mt_fail "report -o /dev/full: exit $rc, $(cat e)"
fi
# -o into a missing directory: one error line naming OUT, exit 1.
"$MEMTRAIL" report "$LOG" -o "$MT_TMP/no/such/dir/out.txt" >o 2>e </dev/null
rc=$?
[ $rc = 1 ] && [ "$(wc -l <e)" -eq 1 ] &&
	grep -q "^memtrail: error: cannot write $MT_TMP/no/such/dir/out.txt: No such file or directory\$" e &&
	mt_ok "report -o in a missing directory: exit 1, one error line" ||
	mt_fail "report -o in a missing directory: exit $rc, $(cat e)"
mt_finish
