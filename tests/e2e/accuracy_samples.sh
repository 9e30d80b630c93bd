#!/bin/sh
# accuracy_samples.sh - every sample with a memtrail-expect block, checked
# against its expected figures twice: under valgrind memcheck (the totals
# and leaks of its HEAP SUMMARY, and peak / peak blocks recomputed from its
# --trace-malloc log), and under `memtrail record` + `memtrail report
# --summary --format json` (every summary field and every snapshot, and the
# live bytes `memtrail record` prints at each snapshot). Also:
# the program's stdout and exit status are the same natively, under memcheck
# and under memtrail, and memtrail adds only `memtrail:` lines to stderr.
# Each sample runs in both tools' default (the C and C++ runtimes free
# their memory at exit), then once more keeping it (`memtrail record
# --keep-runtime`, memcheck's --run-libc-freeres=no --run-cxx-freeres=no)
# against the block's `keep-runtime` figures.
#
# Not for: reports other than the summary (trees have their own tests), or
# programs without exactly known figures (realprog_memcheck.sh).
#
# The expected figures are the samples' own (derived in their top comments
# from their code); this test never derives them from memtrail's output.
# With SAMPLES="a b" only those samples run. Exit 77 when memtrail is not
# built yet and the memcheck half passed.
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3 readelf
EXPECT="python3 $MT_TOP/tests/expect.py"

have_valgrind=0
command -v valgrind >/dev/null 2>&1 && have_valgrind=1
have_mt=0
mt_have_memtrail && have_mt=1

srcs=""
for s in "$MT_TOP"/samples/*.c "$MT_TOP"/samples/*.cpp; do
	[ -f "$s" ] || continue
	grep -q 'memtrail-expect:' "$s" || continue
	n=${s##*/}; n=${n%.*}
	if [ -n "${SAMPLES:-}" ]; then
		case " $SAMPLES " in *" $n "*) ;; *) continue;; esac
	fi
	srcs="$srcs $s"
done
[ -n "$srcs" ] || mt_skip "no sample with a memtrail-expect block"

# check_sample SRC: one sample in one mode (MT_KEEP_RUNTIME, $mode).
check_sample() {
	src=$1
	name=${src##*/}; name=${name%.*}
	bin=$MT_SAMPLES/$name
	w=$MT_TMP/$name$suffix
	echo "== $name$label"
	if [ ! -x "$bin" ]; then
		mt_fail "$name: $bin not built (make samples)"
		return
	fi
	$EXPECT expect $mode "$src" >"$w.expect.json" || { mt_fail "$name: bad expect block"; return; }
	want_rc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit"])' "$w.expect.json")
	mt_run "$w.native" "$bin"
	[ "$(cat "$w.native.rc")" = "$want_rc" ] ||
		mt_fail "$name: native exit status $(cat "$w.native.rc"), expected $want_rc"

	# (a) memcheck: an independent count of the same run.
	skip=$(sed -n 's/^[ *]*memcheck skip \(.*\)$/\1/p' "$src")
	if [ -n "$skip" ]; then
		echo "memcheck half skipped for $name: $skip"
	elif [ $have_valgrind = 0 ]; then
		echo "memcheck half skipped for $name: valgrind not installed"
	else
		mt_memcheck "$w.vg.log" "$w.vg" "$bin"
		mt_same_run "$name$label native vs memcheck" "$w.native" "$w.vg"
		if $EXPECT check-memcheck $mode "$src" "$w.vg.log"; then
			mt_ok "$name$label: memcheck agrees with the expect block"
		else
			mt_fail "$name$label: memcheck disagrees with the expect block (log $w.vg.log)"
		fi
	fi

	# (b) memtrail.
	[ $have_mt = 1 ] || return
	# Threads get a DTV whose size grows with the number of TLS modules,
	# which the preload raises: see adjust_dtv() in tests/expect.py. The
	# adjusted figures are confirmed by memcheck with as many stand-in TLS
	# modules preloaded, before they are compared with memtrail's.
	tls=$(( $(mt_tls_modules "$MT_RECORDER" "$bin") - $(mt_tls_modules "$bin") ))
	if [ "$tls" -gt 0 ] && [ -z "$skip" ] && [ $have_valgrind = 1 ] &&
	    grep -q '^[ *]*dtv [0-9]' "$src"; then
		MT_MEMCHECK_PRELOAD=$(mt_tls_standins "$tls") \
			mt_memcheck "$w.vgtls.log" "$w.vgtls" "$bin"
		if $EXPECT check-memcheck $mode "$src" "$w.vgtls.log" "$tls"; then
			mt_ok "$name$label: memcheck with $tls stand-in TLS modules agrees with the adjusted figures"
		else
			mt_fail "$name$label: memcheck with $tls stand-in TLS modules disagrees ($w.vgtls.log)"
		fi
	fi
	mt_record "$w.data" "$w.rec" "$bin"
	mt_same_run "$name$label native vs memtrail record" "$w.native" "$w.rec"
	extra=$(grep -v '^memtrail: ' "$w.rec.err" | grep -vxF -f "$w.native.err")
	if [ -n "$extra" ]; then
		mt_fail "$name$label: stderr under memtrail has lines without the memtrail: prefix:"
		printf '%s\n' "$extra" | head -n 5
	fi
	if [ ! -s "$w.data" ]; then
		mt_fail "$name$label: memtrail record wrote no $w.data; its stderr:"
		head -n 5 "$w.rec.err"
		return
	fi
	if ! mt_summary "$w.data" "$w.summary.json"; then
		mt_fail "$name$label: memtrail report --summary --format json failed:"
		head -n 5 "$w.summary.json.err"
		return
	fi
	if $EXPECT check-memtrail $mode "$src" "$w.summary.json" "$tls"; then
		mt_ok "$name$label: memtrail's summary equals the expect block"
	else
		mt_fail "$name$label: memtrail's summary differs from the expect block ($w.summary.json)"
	fi
	if $EXPECT check-stderr $mode "$src" "$w.rec.err" "$tls"; then
		mt_ok "$name$label: memtrail's snapshot lines equal the expect block"
	else
		mt_fail "$name$label: memtrail's snapshot lines on stderr differ from the expect block"
	fi
}

MT_KEEP_RUNTIME=0 mode= suffix= label=
for src in $srcs; do
	check_sample "$src"
done
MT_KEEP_RUNTIME=1 mode=--keep-runtime suffix=.keep label=" (--keep-runtime)"
for src in $srcs; do
	check_sample "$src"
done

if [ $have_mt = 0 ]; then
	[ "$mt_failures" -eq 0 ] || mt_finish
	mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER): memcheck half passed, memtrail half not run"
fi
mt_finish
