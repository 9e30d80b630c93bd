#!/bin/sh
# realprog_memcheck.sh - memtrail against valgrind memcheck on real programs
# no one here wrote: python3 (a dict/list workload), sqlite3 (an in-memory
# database script, ~143,000 allocations), gcc -c (the driver only: it execs
# cc1 and as, which neither tool follows here) and zstd -T2 (several
# threads).
#
# For each program: allocations, frees, bytes allocated, leaked bytes and
# blocks from `memtrail report --summary --format json` equal memcheck's
# HEAP SUMMARY (both tools' default: the C and C++ runtimes free their
# memory at exit; python3 also once with it kept), and the peak bytes and blocks equal those recomputed from
# memcheck's --trace-malloc log, within a tolerance that is 0 unless a
# difference is explained right next to it; and the program's stdout and exit status under
# `memtrail record` (and under memcheck) equal its native run.
#
# Not for: exact figures known in advance (accuracy_samples.sh), or speed
# (tests/bench). Exit 77 when memtrail is not built yet or a program is
# missing.
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3 valgrind
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
EXPECT="python3 $MT_TOP/tests/expect.py"
MT_TIMEOUT=300

# The same environment in all three runs. A fixed hash seed makes python's
# dict layout, hence its allocations, the same in every run.
PYTHONHASHSEED=0; export PYTHONHASHSEED
LC_ALL=C; export LC_ALL
# valgrind adds 4 variables the program sees (GLIBCPP_FORCE_NEW=1,
# GLIBCXX_FORCE_NEW=1, LD_LIBRARY_PATH=/usr/lib/debug and its LD_PRELOAD);
# memtrail adds 1 (MEMTRAIL_OUTPUT; its LD_PRELOAD entry removes itself at
# start-up). That matters: gcc's driver calls putenv 5 times, and glibc
# grows the environ array to (variables + 2) x 8 bytes each time, so with
# 3 variables fewer, memtrail saw 5 of gcc's allocations 24 B smaller:
# 120 B less allocated and 24 B less leaked (the last array), with the same
# counts (measured with the runtimes' memory kept: memcheck 179,407 B
# allocated / 166,071 B leaked, memtrail 179,287 / 166,047; allocation by
# allocation, those 5 sizes were the only differences). Rather than a tolerance, the memtrail run gets valgrind's
# extra variables too, which leaves both with the same number of variables
# (valgrind's LD_PRELOAD against MEMTRAIL_OUTPUT) and makes every size equal.
MT_RECORD_ENV=$(mt_valgrind_env)
peaktols="peak_bytes:0 peak_blocks:0"
echo "memtrail runs with valgrind's variables: $MT_RECORD_ENV"

# check NAME TOLERANCES -- CMD...: one program through the three runs.
# TOLERANCES: KEY:N items for expect.py compare. $peaktols: the same for
# the peak, against memcheck's --trace-malloc log.
check() {
	name=$1; tols=$2; shift 3
	w=$MT_TMP/$name
	echo "== $name: $*"
	# Each new thread gets a DTV of calloc(TLS modules + 16, 16) from ld.so,
	# and libmemtrail.so brings TLS modules of its own (itself, libunwind):
	# measured on zstd -T2 (4 threads), memtrail saw 4 x 2 x 16 = 128 B more
	# allocated and leaked than memcheck (54,582,438 vs 54,582,310 B;
	# 1,216 vs 1,088 B leaked), every count equal. So memcheck's run gets as
	# many stand-in TLS modules preloaded (a __thread int each, nothing
	# else), and both processes have DTVs of the same size.
	prog=$(command -v "$1")
	extra=$(( $(mt_tls_modules "$MT_RECORDER" "$prog") - $(mt_tls_modules "$prog") ))
	MT_MEMCHECK_PRELOAD=
	[ "$extra" -gt 0 ] && MT_MEMCHECK_PRELOAD=$(mt_tls_standins "$extra")
	echo "TLS modules added by the preload: $extra"
	mt_run "$w.native" "$@"
	mt_memcheck "$w.vg.log" "$w.vg" "$@"
	mt_record "$w.data" "$w.rec" "$@"
	mt_same_run "$name native vs memcheck" "$w.native" "$w.vg"
	mt_same_run "$name native vs memtrail record" "$w.native" "$w.rec"
	if ! $EXPECT memcheck "$w.vg.log" >"$w.vg.json"; then
		mt_fail "$name: no HEAP SUMMARY in $w.vg.log"
		return
	fi
	if ! mt_summary "$w.data" "$w.mt.json"; then
		mt_fail "$name: memtrail report --summary --format json failed:"
		head -n 5 "$w.mt.json.err"
		return
	fi
	echo "memcheck: $(tr -d '\n ' <"$w.vg.json")"
	echo "memtrail: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({k: d.get(k) for k in ("allocations","frees","bytes_allocated","leaked_bytes","leaked_blocks")})' "$w.mt.json")"
	# shellcheck disable=SC2086
	$EXPECT compare "$name memcheck vs memtrail" "$w.vg.json" "$w.mt.json" $tols ||
		mt_fail "$name: memtrail and memcheck disagree beyond the explained tolerances"
	# The peak, which memcheck does not print: recomputed from its malloc
	# trace (after checking the trace agrees with its own HEAP SUMMARY).
	if $EXPECT trace "$w.vg.log" >"$w.vgtrace.json" &&
	    $EXPECT compare "$name memcheck summary vs its trace" "$w.vg.json" "$w.vgtrace.json" \
		allocations frees bytes_allocated leaked_bytes leaked_blocks; then
		$EXPECT compare "$name memcheck trace vs memtrail" "$w.vgtrace.json" "$w.mt.json" \
			$peaktols || mt_fail "$name: memtrail's peak differs from memcheck's trace"
	else
		mt_fail "$name: memcheck's malloc trace does not add up to its HEAP SUMMARY"
	fi
}

# python3: the Debian interpreter itself, not a wrapper script (a pyenv shim
# would exec the real one, which neither tool would follow). With its own
# small-object allocator (the default), not PYTHONMALLOC=malloc: with every
# object malloc'ed, the two runs really differ, with the same environment.
# Measured: 160,268 allocations / 11,142,529 B under memcheck, 160,269 /
# 11,143,083 B under memtrail, deterministic on each side; the first sizes
# to differ are 28 B under memcheck where memtrail sees 32 B, the sizes of
# a Python int below and above 2^30 (24 B + 4 B per 30-bit digit). The
# likely cause: values derived from addresses (ids, address hashes) are
# small under valgrind, which maps the client's heap and libraries low in
# the address space (the heap at 0x4a4xxxx), and large natively (libraries
# and mmap'ed blocks at 0x7f...). Not a recording error, and not something
# a fixed tolerance would honestly describe, so that case is left out.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
PYPROG='
d = {}
for i in range(20000):
    d["k%d" % i] = [i] * (i % 7)
l = sorted(d.items(), key=lambda kv: len(kv[1]))
print(len(d), sum(len(v) for v in d.values()), l[-1][0])'
check python3 "allocations:0 frees:0 bytes_allocated:0 leaked_bytes:0 leaked_blocks:0" -- \
	"$PY" -c "$PYPROG"
# The same with the runtimes' memory kept at exit (memtrail record
# --keep-runtime, memcheck --run-libc-freeres=no --run-cxx-freeres=no):
# measured, 3 blocks (52 B) more still live, 3 frees fewer, on both sides.
MT_KEEP_RUNTIME=1 check python3_keep_runtime "allocations:0 frees:0 bytes_allocated:0 leaked_bytes:0 leaked_blocks:0" -- \
	"$PY" -c "$PYPROG"

if command -v sqlite3 >/dev/null 2>&1; then
	# About 143,000 allocations: many log chunks, every one must count.
	check sqlite3 "allocations:0 frees:0 bytes_allocated:0 leaked_bytes:0 leaked_blocks:0" -- \
		sqlite3 -batch :memory: "create table t(id integer primary key, name text, v real);
insert into t(name, v) select printf('name-%06d', value), value * 1.5 from generate_series(1, 50000);
create index ti on t(name);
create table u as select substr(name, 1, 9) k, sum(v) s from t group by k;
select count(*), sum(v) from t where name like 'name-01%';
select count(*), sum(s) from u;
delete from t where id % 3 = 0;
vacuum;
select count(*), max(name) from t;"
else
	echo "sqlite3 not installed: case skipped"
fi

if command -v gcc >/dev/null 2>&1; then
	cat >"$MT_TMP/small.c" <<'EOF'
#include <stdio.h>
struct point { int x, y; };
static int dot(struct point a, struct point b) { return a.x * b.x + a.y * b.y; }
int main(void) { struct point p = { 3, 4 }; printf("%d\n", dot(p, p)); return 0; }
EOF
	check gcc "allocations:0 frees:0 bytes_allocated:0 leaked_bytes:0 leaked_blocks:0" -- \
		gcc -c -o "$MT_TMP/small.o" "$MT_TMP/small.c"
else
	echo "gcc not installed: case skipped"
fi
# zstd with 2 worker threads (and its I/O threads): allocations and frees
# in several threads, on a 4 MB input generated from a fixed seed.
if command -v zstd >/dev/null 2>&1; then
	python3 -c '
import random
r = random.Random(1)
words = ["heap", "block", "free", "malloc", "peak", "leak", "stack", "frame"]
print("\n".join(" ".join(r.choice(words) for _ in range(12)) for _ in range(70000)))
' >"$MT_TMP/words.txt"
	check zstd "allocations:0 frees:0 bytes_allocated:0 leaked_bytes:0 leaked_blocks:0" -- \
		zstd -q -T2 -3 -c "$MT_TMP/words.txt"
else
	echo "zstd not installed: case skipped"
fi
mt_finish
