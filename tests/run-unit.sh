#!/bin/sh
# Runs every cmocka unit-test program in directory $1 and prints a closing
# "N passed, N failed" line. Exit status 1 if any program failed.
dir=${1:-tests/bin}
pass=0; fail=0; failed=""
for t in "$dir"/test_*; do
	[ -x "$t" ] || continue
	case "$t" in *.d|*.o) continue;; esac
	if timeout 300 "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed ${t##*/}"; fi
done
[ -n "$failed" ] && echo "unit: failed:$failed"
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
