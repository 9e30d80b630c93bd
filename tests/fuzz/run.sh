#!/bin/sh
# run.sh - builds tests/fuzz/fuzz_replay.c with clang's libFuzzer, ASan and
# UBSan (lib/*.c compiled by clang in the same command: lib/libmt.a is built
# by gcc without sanitizers) into build/fuzz/, makes a seed corpus and
# fuzzes for a bounded time. `make fuzz` runs it.
#
# Seeds, made at run time: logs of a few samples recorded with the preload
# (build/fuzz/seeds/*.data, fed as files), the same logs with their
# chunks decompressed ('R' inputs: see fuzz_replay.c), the checked-in log of
# the phases sample, and the hand-written seeds in tests/fuzz/seeds/.
# The corpus the fuzzer grows is kept in build/fuzz/corpus/ between runs.
#
#   MT_BUILD          the build directory (default build): the samples and
#                     the preload library that record the seeds, the
#                     memtrail program (MT_BUILD/asan/memtrail when it is
#                     built), and build/fuzz/ itself
#   MT_FUZZ_SECONDS   how long to fuzz (default 60)
#   MT_FUZZ_JOBS      parallel fuzzing processes (default 1)
#   MT_FUZZ_REPLAY    corpus inputs replayed through memtrail (default 300)
#
# Then corpus inputs (up to MT_FUZZ_REPLAY), as log files, go through `memtrail report`
# (trees, timeline, temporaries) and `memtrail dump`.
#
# Exit status: 0 when no crash was found, 1 on a crash (the input is saved
# as build/fuzz/crash-*, reproduce with build/fuzz/fuzz_replay FILE),
# 2 when the target cannot be built, 77 when clang or its fuzzer runtime is
# missing. Not for: the recorder (it runs inside other programs: see
# tests/e2e/robust_*.sh).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
secs=${MT_FUZZ_SECONDS:-60}
jobs=${MT_FUZZ_JOBS:-1}
build=${MT_BUILD:-build}
case "$build" in /*) ;; *) build="$top/$build";; esac
build=${build%/}
bin=$build/fuzz
CLANG=${CLANG:-clang}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

command -v "$CLANG" >/dev/null 2>&1 || { echo "fuzz: $CLANG not installed"; exit 77; }
mkdir -p "$bin/seeds" "$bin/corpus"

cflags="-std=gnu11 -g -O1 -D_GNU_SOURCE -Iinclude -Ilib -DMT_VERSION=\"fuzz\" $($PKG_CONFIG --cflags libzstd libdw)"
libs="$($PKG_CONFIG --libs libzstd libdw) -lstdc++ -lm"
echo "fuzz: building $bin/fuzz_replay"
# shellcheck disable=SC2086
if ! $CLANG $cflags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-o "$bin/fuzz_replay" tests/fuzz/fuzz_replay.c lib/*.c $libs; then
	if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' |
		$CLANG -x c -fsanitize=fuzzer -o "$bin/probe" - 2>/dev/null; then
		echo "fuzz: $CLANG has no libFuzzer runtime"
		exit 77
	fi
	echo "fuzz: error: the fuzz target does not build"
	exit 2
fi
# shellcheck disable=SC2086
$CLANG $cflags -DMT_FUZZ_CONVERT -o "$bin/convert" tests/fuzz/fuzz_replay.c $libs || exit 2

# Seed logs: a few samples recorded now, with whatever recorder is built.
rec=$build/libmemtrail.so
n=0
for s in phases threads cxx_new c_alloc_all forker; do
	[ -x "$build/samples/$s" ] && [ -f "$rec" ] || continue
	out="$bin/seeds/$s.data"
	rm -f "$out"
	(cd "$bin/seeds" && timeout 60 env MEMTRAIL_OUTPUT="$out" \
		LD_PRELOAD="$rec" "$build/samples/$s" >/dev/null 2>&1)
	[ -s "$out" ] || continue
	"$bin/convert" "$out" "$bin/seeds/$s.R" && n=$((n + 1))
done
[ -f tests/e2e/cli_phases.data ] && cp tests/e2e/cli_phases.data "$bin/seeds/cli_phases.data"
echo "fuzz: $n recorded seed logs, $(ls "$bin/corpus" | wc -l) inputs in the corpus"

echo "fuzz: fuzzing for ${secs}s"
rm -f "$bin"/crash-* "$bin"/leak-* "$bin"/timeout-* "$bin"/oom-*
par=
[ "$jobs" -gt 1 ] && par="-jobs=$jobs -workers=$jobs"
# Run in $bin: with -jobs, libFuzzer writes fuzz-N.log into the current
# directory.
# shellcheck disable=SC2086
(cd "$bin" && ./fuzz_replay -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-max_len=262144 -print_final_stats=1 $par \
	-dict="$top/tests/fuzz/replay.dict" -artifact_prefix="$bin/" \
	corpus seeds "$top/tests/fuzz/seeds") 2>&1 | tee "$bin/fuzz.log" |
	grep -E '^#[0-9]+.*(INITED|DONE)|^stat::|ERROR|SUMMARY|crash|Test unit written|^==' | head -n 60
found=$(ls "$bin"/crash-* "$bin"/leak-* "$bin"/timeout-* "$bin"/oom-* 2>/dev/null)
if [ -n "$found" ]; then
	echo "fuzz: FAILED: $found (log: $bin/fuzz.log)"
	exit 1
fi
if ! grep -q 'Done [0-9]* runs\|DONE' "$bin/fuzz.log"; then
	echo "fuzz: FAILED: the fuzzer did not finish (log: $bin/fuzz.log)"
	exit 1
fi
echo "fuzz: no crash in ${secs}s"

# The corpus through the memtrail program (the sanitizer build when there
# is one): the trees, timeline, temporaries and dump consume what the
# replay accepted, which the target above does not cover.
mt=$build/memtrail
[ -x "$build/asan/memtrail" ] && mt=$build/asan/memtrail
if [ -x "$mt" ]; then
	mkdir -p "$bin/replay"
	bad=0; n=0
	replay_max=${MT_FUZZ_REPLAY:-300}
	for f in "$bin"/corpus/*; do
		[ -f "$f" ] || continue
		[ $n -lt "$replay_max" ] || break
		"$bin/convert" -x "$f" "$bin/replay/log" || continue
		n=$((n + 1))
		for args in "report" "report --show-snapshot-deltas --temporary --timeline --inverted" "dump"; do
			# shellcheck disable=SC2086
			timeout 20 "$mt" $args "$bin/replay/log" >/dev/null 2>"$bin/replay/err"
			rc=$?
			if [ $rc -ge 124 ] || grep -q "Sanitizer\|runtime error" "$bin/replay/err"; then
				bad=$((bad + 1))
				cp "$f" "$bin/crash-memtrail-$(basename "$f")"
				echo "fuzz: memtrail $args on corpus input $f: status $rc"
				head -n 5 "$bin/replay/err"
			fi
		done
	done
	echo "fuzz: $n corpus inputs through $mt report/dump: $bad failure(s)"
	[ $bad = 0 ] || exit 1
fi
exit 0
