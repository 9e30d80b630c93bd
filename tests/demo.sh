#!/bin/sh
# make demo: records the three-phase sample with the build in $1 (default
# build) and prints its report.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
b=${1:-build}
b=${b%/}
out=${TMPDIR:-/tmp}/memtrail-demo.data
echo "\$ $b/memtrail record -o $out $b/samples/phases"
"$b/memtrail" record -o "$out" "$b/samples/phases"
echo
echo "\$ $b/memtrail report $out"
"$b/memtrail" report "$out"
echo
echo "Next: $b/memtrail report --timeline $out, $b/memtrail view $out"
