#!/bin/sh
# cli_dump.sh - `memtrail dump` on the checked-in log cli_phases.data
# (samples/phases.c): one line per record, counted against phases.c's
# documented events (22 + 4 mallocs, 1 scratch buffer, 8 reallocs, 24
# frees, 3 snapshots), event numbers dense from 0, and the end record.
. "$(dirname "$0")/lib.sh"
[ -x "$MEMTRAIL" ] || mt_skip "memtrail not built"
LOG=$MT_TOP/tests/e2e/cli_phases.data
cd "$MT_TMP" || exit 1

"$MEMTRAIL" dump "$LOG" >dump.txt 2>err.txt
rc=$?
[ $rc = 0 ] && mt_ok "dump exits 0" || mt_fail "dump exit $rc"
[ -s err.txt ] && mt_fail "dump wrote to stderr: $(cat err.txt)"

# count KIND EXPECTED
count() {
	_n=$(grep -c "^$1 " dump.txt)
	[ "$_n" = "$2" ] && mt_ok "$2 $1 lines" || mt_fail "$_n $1 lines, expected $2"
}
# phases.c: allocations 35 = 27 plain + 8 reallocs; frees 32 = 24 plain + 8 reallocs.
count alloc 27
count realloc 8
count free 24
count snapshot 3
count header 1
count end 1
count thread 1
head -n 1 dump.txt | grep -q '^header version=2 pointer_size=8 pid=[0-9]* start_ns=[0-9]* cmdline="./phases"$' &&
	mt_ok "header line" || mt_fail "header line: $(head -n 1 dump.txt)"
tail -n 1 dump.txt | grep -q '^end clean=1 how=exit code=0 t=[0-9]* events=62$' &&
	mt_ok "end line: 62 events (35 + 24 + 3)" || mt_fail "end line: $(tail -n 1 dump.txt)"
# Snapshots in order with their labels.
[ "$(grep '^snapshot' dump.txt | sed 's/ seq=.*label=/ /')" = "$(printf 'snapshot 0 "loaded"\nsnapshot 1 "grown"\nsnapshot 2 "freed"')" ] &&
	mt_ok "snapshot lines" || mt_fail "snapshot lines: $(grep '^snapshot' dump.txt)"
# Event numbers are 0..61 in order, one per event line.
seqs=$(grep -E '^(alloc|free|realloc|snapshot)' dump.txt | sed 's/.* seq=\([0-9]*\).*/\1/' | tr '\n' ' ')
[ "$seqs" = "$(seq 0 61 | tr '\n' ' ')" ] && mt_ok "seq 0..61 in order" || mt_fail "seqs: $seqs"
# Every realloc of phases.c grows a 4,096 B row to 8,192 B.
[ "$(grep -c '^realloc .* old_size=4096 new=0x[0-9a-f]* size=8192 ' dump.txt)" = 8 ] &&
	mt_ok "realloc lines 4096 -> 8192" || mt_fail "realloc lines: $(grep '^realloc' dump.txt | head -n 2)"
# The scratch buffer: one alloc of 262,144 B and its free.
grep -q '^alloc .* size=262144 ' dump.txt && grep -q '^free .* size=262144 ' dump.txt &&
	mt_ok "scratch buffer alloc and free" || mt_fail "scratch buffer lines"
# Stacks: ids dense from 0, fn names, hex ips.
grep -q '^stack 0 fn=malloc depth=[1-9][0-9]* 0x[0-9a-f]*' dump.txt && mt_ok "stack line" || mt_fail "stack line"
grep -q '^stack [0-9]* fn=realloc ' dump.txt && mt_ok "realloc stack" || mt_fail "no realloc stack"
grep -q '^module t=[0-9]* base=0x[0-9a-f]* path="[^"]*libc.so.6" build_id=[0-9a-f]\{40\} segs=0x' dump.txt &&
	mt_ok "libc module line" || mt_fail "libc module line"

# Cut log: the lines before the cut chunk, a clean=0 end line and the warning.
head -c 100 "$LOG" >cut.data
"$MEMTRAIL" dump cut.data >cut.txt 2>cut.err
[ "$(cat cut.txt | wc -l)" = 2 ] && tail -n 1 cut.txt | grep -q '^end clean=0 t=0 events=0$' &&
	mt_ok "cut log: header and end lines" || mt_fail "cut log dump: $(cat cut.txt)"
grep -q '^memtrail: warning: cut.data truncated after 0 events' cut.err && mt_ok "cut log warning" ||
	mt_fail "cut log warning: $(cat cut.err)"
mt_finish
