#!/bin/sh
# Runs the end-to-end tests tests/e2e/*.sh against the build directory $1
# (default build, or build/asan; relative to the top of the tree). With a
# second argument "cli", only the tests whose name starts with cli_ (those
# that exercise the memtrail program, for the sanitizer build).
# Each test is a shell script run with MT_TOP (the source tree), MT_BUILD
# (the build directory), MEMTRAIL (the program) and MT_TMP (a fresh scratch
# directory); it exits 0 on pass, 77 to skip with a reason on stdout,
# anything else on failure. Its output goes to $1/tests/e2e/NAME.log.
# Their reports share one cache of uncompressed debug files, MT_DEBUG_CACHE,
# removed at the end (see lib.sh).
# Prints a closing "N passed, N failed, N skipped" line.
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$top/$build";; esac
build=${build%/}
MT_BUILD=$build; MEMTRAIL=$build/memtrail; MT_TOP=$top
export MT_BUILD MEMTRAIL MT_TOP
pass=0; fail=0; skip=0; failed=""
logs=$build/tests/e2e
mkdir -p "$logs"
# One cache of uncompressed debug files for the run's reports (lib.sh)
MT_DEBUG_CACHE=$(mktemp -d "${TMPDIR:-/tmp}/mt-debug-cache.XXXXXX"); export MT_DEBUG_CACHE
for t in "$top"/tests/e2e/*.sh; do
	[ -f "$t" ] || continue
	name=${t##*/}; name=${name%.sh}
	[ "${2:-}" = cli ] && case "$name" in cli_*) ;; *) continue;; esac
	MT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/mt-e2e.XXXXXX"); export MT_TMP
	log="$logs/$name.log"
	start=$(date +%s)
	timeout 600 sh "$t" >"$log" 2>&1 </dev/null
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "PASS $name (${secs}s)"
	elif [ $rc -eq 77 ]; then skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$log")"
	else fail=$((fail + 1)); failed="$failed $name"; echo "FAIL $name (exit $rc, ${secs}s); last lines of $log:"; tail -n 25 "$log" | sed 's/^/    /'
	fi
	rm -rf "$MT_TMP"
done
rm -rf "$MT_DEBUG_CACHE"
[ -n "$failed" ] && echo "e2e: failed:$failed"
echo "e2e: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
