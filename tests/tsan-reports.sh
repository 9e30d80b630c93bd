#!/bin/sh
# tsan-reports.sh BUILD TSAN_BUILD - memtrail's readers under ThreadSanitizer
# on real logs (make check-tsan): BUILD's recorder records four threads
# churning into a bounded log (segments the reader opens as the decoder
# reaches them) and into a plain one, and TSAN_BUILD's memtrail, whose
# replay decodes every log on a thread of its own, reports them: the
# default report (the symbolizer's thread too), --summary, the diff of the
# peak and the end, and dump. Any ThreadSanitizer report fails.
#
# Not for: the figures (tests/e2e/rec_ring.sh checks them), the unit tests
# (run by check-tsan itself).
set -u
build=${1%/}
tsan=${2%/}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mt-tsan.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export MEMTRAIL_DEBUG_CACHE=off TSAN_OPTIONS="halt_on_error=1 exitcode=66"
cd "$tmp" || exit 1
cc -O1 -g -pthread -o ring_threads "$top/tests/e2e/ring_threads.c" || exit 1
"$build/memtrail" record --max-size 1M -o ring.data ./ring_threads >/dev/null 2>&1 ||
	{ echo "tsan-reports: cannot record ring_threads"; exit 1; }
"$build/memtrail" record -o plain.data ./ring_threads >/dev/null 2>&1 ||
	{ echo "tsan-reports: cannot record ring_threads"; exit 1; }
[ "$(ls ring.data.seg* | wc -l)" -ge 2 ] && [ ! -e ring.data.seg1 ] ||
	{ echo "tsan-reports: the bounded log did not drop segments"; exit 1; }
fail=0
for log in ring.data plain.data; do
	for args in "" "--summary" "--diff peak end" "dump"; do
		case $args in
		dump) set -- dump "$log";;
		*) set -- report $args "$log";;
		esac
		"$tsan/memtrail" "$@" >out 2>err
		rc=$?
		if [ $rc -eq 66 ] || grep -q 'ThreadSanitizer' err; then
			echo "tsan-reports: memtrail $*:"; sed -n '1,40p' err
			fail=1
		elif [ $rc -ne 0 ]; then
			echo "tsan-reports: memtrail $* exited $rc: $(head -3 err)"
			fail=1
		fi
	done
done
[ $fail -eq 0 ] && echo "tsan-reports: 8 reports of 2 logs, no race"
exit $fail
