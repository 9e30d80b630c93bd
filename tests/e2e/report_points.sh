#!/bin/sh
# report_points.sh - points named by snapshot label wherever report takes a
# point (--diff): on samples/phases.c, whose snapshots 0, 1, 2 are labelled
# "loaded", "grown" and "freed", --diff by labels writes exactly what
# --diff by numbers writes, in every format, mixed with start/peak/end too;
# an unknown number or label is one "memtrail: error:" line that names it
# and what the log has (exit 1); a log without snapshots says "it has none".
#
# The labels and numbers are the sample's own (its memtrail-expect block,
# read with tests/expect.py). Not for: the trees' figures (report_phases.sh).
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3
mt_have_memtrail || mt_skip "memtrail not built"
if [ ! -x "$MT_SAMPLES/phases" ] || [ ! -x "$MT_SAMPLES/sizes" ]; then
	mt_skip "samples not built (make samples)"
fi
cd "$MT_TMP" || exit 1

mt_record phases.data rec "$MT_SAMPLES/phases"
[ "$(cat rec.rc)" = 0 ] || { cat rec.err; mt_fail "record failed"; mt_finish; }
python3 "$MT_TOP/tests/expect.py" expect "$MT_TOP/samples/phases.c" >expect.json ||
	mt_fail "no memtrail-expect block in samples/phases.c"
label() { python3 -c 'import json,sys; print(json.load(open("expect.json"))["snapshots"][int(sys.argv[1])]["label"])' "$1"; }
L0=$(label 0); L1=$(label 1); L2=$(label 2)

# same NAME ARGS-BY-LABEL -- ARGS-BY-NUMBER: both succeed, identical output
same() {
	name=$1; shift
	a=""; while [ "$1" != "--" ]; do a="$a $1"; shift; done; shift
	# shellcheck disable=SC2086
	"$MEMTRAIL" report phases.data $a >a.out 2>a.err; ra=$?
	"$MEMTRAIL" report phases.data "$@" >b.out 2>b.err; rb=$?
	if [ $ra -eq 0 ] && [ $rb -eq 0 ] && [ -s a.out ] && cmp -s a.out b.out; then
		mt_ok "$name:$a = $*"
	else
		mt_fail "$name:$a (exit $ra, $(cat a.err)) differs from $* (exit $rb)"
	fi
}
same "labels" --diff "$L0" "$L2" -t 0 -- --diff 0 2 -t 0
same "labels" --diff "$L1" end -- --diff 1 end
same "labels" --diff start "$L1" -- --diff start 1
same "labels" --diff peak "$L2" --format collapsed -- --diff peak 2 --format collapsed
same "labels" --diff "$L0" "$L1" --format json -- --diff 0 1 --format json
same "labels" --diff "$L2" "$L0" --inverted -- --diff 2 0 --inverted
# the header names the snapshots by number, as --diff 0 2 does
"$MEMTRAIL" report phases.data --diff "$L0" "$L2" >hdr.txt 2>/dev/null
if [ "$(head -n 1 hdr.txt | cut -d: -f1)" = "snapshot 0 - snapshot 2" ]; then
	mt_ok "header: snapshot 0 - snapshot 2"
else
	mt_fail "header: $(head -n 1 hdr.txt)"
fi

# err WANT ARGS...: exit 1, stderr exactly WANT
err() {
	want=$1; shift
	"$MEMTRAIL" "$@" >/dev/null 2>e.err
	rc=$?
	if [ $rc -eq 1 ] && [ "$(cat e.err)" = "$want" ]; then
		mt_ok "$*: $want"
	else
		mt_fail "$*: exit $rc, '$(cat e.err)', expected '$want'"
	fi
}
err "memtrail: error: no snapshot 99 in phases.data (it has 0–2)" report phases.data --diff 0 99
err "memtrail: error: no snapshot 3 in phases.data (it has 0–2)" report phases.data --diff 3 end
err "memtrail: error: no snapshot labelled 'lodaed' in phases.data (it has 0 $L0, 1 $L1, 2 $L2)" \
	report phases.data --diff lodaed "$L2"
# a label is matched exactly (case too)
err "memtrail: error: no snapshot labelled 'Loaded' in phases.data (it has 0 $L0, 1 $L1, 2 $L2)" \
	report phases.data --diff Loaded 2
# a log without snapshots (samples/sizes.c takes none)
mt_record none.data rec2 "$MT_SAMPLES/sizes"
err "memtrail: error: no snapshot 0 in none.data (it has none)" report none.data --diff 0 end
err "memtrail: error: no snapshot labelled 'x' in none.data (it has none)" report none.data --diff start x
# an empty point is a usage error
"$MEMTRAIL" report phases.data --diff "" 2 >/dev/null 2>e.err
rc=$?
if [ $rc -eq 2 ] && grep -q '^memtrail: error: --diff: an empty point' e.err; then
	mt_ok "--diff '' 2: usage error"
else
	mt_fail "--diff '' 2: exit $rc, $(cat e.err)"
fi
mt_finish
