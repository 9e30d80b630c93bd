#!/bin/sh
# make demo: records the three-phase sample and prints its report.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=${TMPDIR:-/tmp}/memtrail-demo.data
echo "\$ memtrail record -o $out samples/bin/phases"
viewer/memtrail record -o "$out" samples/bin/phases
echo
echo "\$ memtrail report $out"
viewer/memtrail report "$out"
echo
echo "Next: viewer/memtrail report --timeline $out, viewer/memtrail view $out"
