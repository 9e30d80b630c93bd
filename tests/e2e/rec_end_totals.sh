#!/bin/sh
# rec_end_totals.sh - the figures the recorder writes into END (format.h
# END: allocations, frees, bytes allocated, peak bytes, blocks and time,
# leaked bytes and blocks) equal, for every sample program, both the
# replay's (`memtrail report --summary --format json`) and the independent
# decoder's own count (rec_decode.py replayed_totals); `memtrail record`'s
# closing line, which now comes from END, shows the replay's figures; and a
# log cut short still gets its closing line from a full replay, with the
# truncation warning.
# Not for: the figures themselves against the programs' own counts
# (accuracy_samples.sh, rec_format.sh).
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd python3
mt_have_memtrail || mt_skip "memtrail not built"

cd "$MT_TMP" || exit 1
keys="allocations frees bytes_allocated peak_bytes peak_blocks peak_time_s leaked_bytes leaked_blocks"
n=0
for prog in "$MT_SAMPLES"/*; do
	[ -x "$prog" ] || continue
	name=$(basename "$prog")
	mt_record "$name.data" "$name" "$prog"
	if [ ! -s "$name.data" ]; then
		mt_fail "$name: no log"
		continue
	fi
	"$MEMTRAIL" dump "$name.data" >"$name.dump" 2>"$name.dump.err"
	if ! grep -q '^end clean=1 ' "$name.dump"; then
		mt_ok "$name: no clean END (how the sample ends), nothing to compare"
		continue
	fi
	tl=$(grep '^totals ' "$name.dump")
	if [ -z "$tl" ]; then
		mt_fail "$name: clean END but dump shows no totals"
		continue
	fi
	if ! mt_summary "$name.data" "$name.json"; then
		mt_fail "$name: report --summary failed"
		continue
	fi
	# END's figures, peak time in the JSON's seconds format.
	got=$(echo "$tl" | python3 -c '
import sys
f = dict(w.split("=") for w in sys.stdin.read().split()[1:])
t = int(f["peak_t"])
print(f["allocations"], f["frees"], f["bytes_allocated"], f["peak_bytes"], f["peak_blocks"],
      "%d.%09d" % (t // 10**9, t % 10**9), f["leaked_bytes"], f["leaked_blocks"])')
	want=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" ".join(("%.9f" % j[k]) if k == "peak_time_s" else str(j[k]) for k in sys.argv[2].split()))' \
		"$name.json" "$keys")
	if [ "$got" = "$want" ]; then
		mt_ok "$name: END figures = replay's: $got"
	else
		mt_fail "$name: END '$got' vs replay '$want' ($keys)"
	fi
	if python3 "$MT_TOP/tests/e2e/rec_decode.py" "$name.data" >"$name.dec" 2>"$name.dec.err"; then
		e=$(mt_val end_totals "$name.dec")
		r=$(mt_val replayed_totals "$name.dec")
		[ "$e" = "$r" ] && mt_ok "$name: END figures = independent decoder's count" ||
			mt_fail "$name: END '$e' vs decoder '$r'"
	else
		mt_fail "$name: decoder rejects the log: $(tail -n 1 "$name.dec.err")"
	fi
	# The closing line: the replay's figures, in the launcher's format.
	line=$(grep 'allocations, .* peak, .* leaked in ' "$name.err")
	allocs=$(python3 -c 'import json,sys; print(format(json.load(open(sys.argv[1]))["allocations"], ","))' "$name.json")
	blocks=$(python3 -c 'import json,sys; print(format(json.load(open(sys.argv[1]))["leaked_blocks"], ","))' "$name.json")
	# After an exit the recorder's leak check: the definitely lost bytes
	# as the summary of a full replay gives them (its text's size form).
	lost=
	if grep -q definitely_lost_bytes "$name.json"; then
		"$MEMTRAIL" report --summary "$name.data" >"$name.sum" 2>/dev/null
		lost=" ($(sed -n 's/^ definitely lost: .* B (\(.*\)) in .*/\1/p' "$name.sum") definitely lost)"
	fi
	case $line in
	"memtrail: $allocs allocations, "*" leaked in $blocks blocks$lost, $name.data written"*)
		mt_ok "$name: closing line agrees: $line" ;;
	*)
		mt_fail "$name: closing line '$line', replay $allocs allocations, $blocks leaked blocks" ;;
	esac
	n=$((n + 1))
done
[ $n -ge 5 ] && mt_ok "$n samples compared" || mt_fail "only $n samples had a clean END"

# A log cut inside its last chunk: the launcher cannot use END and must
# replay, warning about the truncation, exactly as before END had figures.
if [ -s phases.data ]; then
	size=$(wc -c <phases.data)
	head -c $((size - 1)) phases.data >cut.data
	"$MEMTRAIL" dump cut.data >cut.dump 2>cut.err
	if grep -q '^totals ' cut.dump; then
		mt_fail "cut log: dump shows END totals"
	else
		mt_ok "cut log: no END totals"
	fi
	grep -q 'warning: cut.data truncated after' cut.err && mt_ok "cut log: truncation warning" ||
		mt_fail "cut log: no truncation warning: $(cat cut.err)"
fi
mt_finish
