#!/bin/sh
# rec_rss.sh - the resident set beside the heap: a program that keeps
# 64 MiB resident for over a second (tests/e2e/rec_rss.c) is recorded; the
# log's RSS samples (one as each chunk begins and ends, so also while the
# 64 MiB are live) give a peak RSS of at least the 64 MiB and at most what
# the program itself saw as its maximum (the kernel's high-water mark,
# printed on stdout: a sample can never pass it); the summary (text and JSON), `report
# --timeline`, `memtrail dump` and the viewer's title show it.
# Not for: the samples' format (test_replay, test_summary: RSS records of
# hand-made logs).
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd python3 cc
mt_have_memtrail || mt_skip "memtrail not built"

cd "$MT_TMP" || exit 1
cc -O0 -o rss "$MT_TOP/tests/e2e/rec_rss.c" || { mt_fail "cannot build rec_rss.c"; mt_finish; }
mt_record rss.data rss ./rss
[ "$(cat rss.rc)" = 0 ] || mt_fail "record: exit $(cat rss.rc): $(cat rss.err)"
maxrss=$(cat rss.out)
mt_summary rss.data rss.json || mt_fail "report --summary --format json failed: $(cat rss.json.err)"
peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("peak_rss_bytes", -1))' rss.json)
echo "peak RSS $peak, the program's own maximum $maxrss"
if [ "$peak" -ge $((64 << 20)) ] && [ "$peak" -le "$maxrss" ]; then
	mt_ok "peak RSS $peak: at least the 64 MiB made resident, at most the high-water mark $maxrss"
else
	mt_fail "peak RSS $peak not within [64 MiB, $maxrss]"
fi
"$MEMTRAIL" report --summary rss.data >rss.txt 2>&1
grep -Eq '^peak RSS: +[0-9,]+ B \([0-9.]+ MiB\) at ' rss.txt &&
	mt_ok "summary text: a peak RSS line" || mt_fail "summary text: no peak RSS line: $(cat rss.txt)"
"$MEMTRAIL" report --timeline rss.data >tl.txt 2>&1
grep -q '^resident set (RSS): peak ' tl.txt && mt_ok "timeline: the resident set line" ||
	mt_fail "timeline: no resident set line"
# under the graph, a level per column: '@' where the 64 MiB were resident
# (the peak sample), lower levels before and after
grep -Eq '^      rss=[ .:=+*#%@-]*@+[ .:=+*#%@-]*$' tl.txt &&
	mt_ok "timeline: the resident set row reaches its peak level" ||
	mt_fail "timeline: no resident set row: $(grep rss= tl.txt)"
n=$("$MEMTRAIL" dump rss.data | grep -c '^rss t=[0-9]* bytes=[1-9]')
[ "$n" -ge 2 ] && mt_ok "dump: $n rss samples" || mt_fail "dump: $n rss samples"
# every sample is at most the program's maximum
bad=$("$MEMTRAIL" dump rss.data | sed -n 's/^rss t=[0-9]* bytes=//p' | awk -v m="$maxrss" '$1 > m' | wc -l)
[ "$bad" -eq 0 ] && mt_ok "no sample above the high-water mark" || mt_fail "$bad samples above $maxrss"
# the viewer's title, at the peak
if command -v tmux >/dev/null 2>&1 && mt_tmux_start 100 30; then
	mt_tmux_keys "$MEMTRAIL view rss.data" Enter
	mt_tmux_wait '^Live at peak: [0-9,]+ B in [0-9,]+ blocks \(resident set [0-9.]+ MiB\)' 20 &&
		mt_ok "view: the resident set beside the heap in the title" ||
		mt_fail "view: no resident set in the title"
	grep -Eq '^     rss \|[ .:=+*#%@-]*@' "$MT_TMP/tmux.cur" &&
		mt_ok "view: the resident set row under the graph" ||
		mt_fail "view: no resident set row under the graph"
	mt_tmux_keys q
	mt_tmux_stop
fi
mt_finish
