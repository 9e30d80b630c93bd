#!/bin/sh
# Runs every cmocka unit-test program of the build directory $1 (default
# build; relative to the top of the tree), $1/tests/test_*, and prints a
# closing "N passed, N failed" line. Exit status 1 if any program failed.
# The programs get MT_TOP (the source tree) and MT_BUILD (the build
# directory, where the tests that record find memtrail, libmemtrail.so and
# the samples) and MEMTRAIL_DEBUG_CACHE (a directory of the run) in their
# environment.
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$top/$build";; esac
MT_BUILD=${build%/}; MT_TOP=$top
export MT_BUILD MT_TOP
# The symbolizer's cache of uncompressed debug files: the run's own, not
# the user's (lib/debugcache.h)
MEMTRAIL_DEBUG_CACHE=$(mktemp -d "${TMPDIR:-/tmp}/mt-debug-cache.XXXXXX")
export MEMTRAIL_DEBUG_CACHE
pass=0; fail=0; failed=""
for t in "$MT_BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	case "$t" in *.d|*.o) continue;; esac
	if timeout 300 "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed ${t##*/}"; fi
done
rm -rf "$MEMTRAIL_DEBUG_CACHE"
[ -n "$failed" ] && echo "unit: failed:$failed"
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
