#!/bin/sh
# tests/bench/run.sh - `make bench`: memtrail against native runs and
# heaptrack (SPEC section 7).
#
# Recording: for each workload it makes MT_BENCH_RUNS (default 3)
# interleaved runs of the program natively, under `memtrail record`, under
# `heaptrack` and under `heaptrack -r` (raw recording, without
# heaptrack_interpret: the cost of heaptrack's recorder alone; its raw log
# is unresolved and heaptrack_print cannot read it, so it is timed only).
# Each run's CPU time (user + sys of the whole process tree, from
# /usr/bin/time), wall time and max RSS are kept; the table compares the
# tools on CPU time per event beyond the native run.
# Reading: on the logs of the last run, interleaved runs of `memtrail report
# --summary` against `heaptrack_print -p 0 -a 0 -T 0 -l 0` (totals only),
# and of the default `memtrail report` (summary, peak tree, leaks tree)
# against heaptrack_print's default output: CPU, wall and max RSS.
# Leak scan: every memtrail recording runs with MEMTRAIL_LEAK_SCAN_STATS=1,
# so the recorder's leak checks say their wall and CPU time and the live
# heap they classified; each run's largest check counts (the one at exit);
# the table gives medians and the live heap scanned per second (python3 and
# gcc are the real programs among them). Python frees nearly everything
# before it exits, so its scan is measured on python3_check: the python3
# workload recorded again (memtrail only, MT_BENCH_RUNS runs) with
# MT_BENCH_PY_CHECK=1 in its environment, which makes the script call
# memtrail_leak_check_impl through ctypes with its dict at its largest.
# The python3 runs that the tools are compared on make no such check:
# heaptrack has none, and the programs compared must do the same work.
# The comparison with LeakSanitizer is on tests/bench/heapgraph.c (a
# hash table of 2 M live blocks, all reachable), built plainly (memtrail's
# scan at exit) and with -fsanitize=leak (its own timing of
# __lsan_do_recoverable_leak_check): interleaved runs of each.
# Memory cases: `memtrail report --format massif` on a log of 50,000
# snapshots (tests/bench/snapshots.c) and the default `memtrail report` on
# 20,000 distinct 250-frame stacks (tests/bench/deep.c, recorded with
# --depth 256): max RSS and time, beside their targets (100 and 200 MiB).
# A tenth-size churn checks that replay memory does not grow with the
# number of events.
#
# It prints tables of medians, headed by the number of runs and the load
# average at start and end; under the recording table, memtrail's CPU per
# event over heaptrack -r's in each round against that round's native run,
# and their median (informative: the targets use the table's medians).
# Raw numbers go to build/bench/out/results.tsv, logs and outputs of every
# run next to it. Events are allocations + frees as memtrail's summary
# counts them, shown beside heaptrack's count and,
# for the synthetic workloads, the program's own. The memtrail build is
# copied to out/tools first, so that a rebuild during the run cannot mix
# versions.
#
# It is a benchmark, not a test: slow numbers never fail it. It exits 1 only
# when a tool crashes (non-zero exit, signal, missing log) or a run's output
# differs from the native run's. A tool that is absent (memtrail not built
# yet, heaptrack not installed) shows as n/a.
#
# Environment:
#   MT_BENCH_RUNS     runs per tool and workload (default 3)
#   MT_BENCH_ONLY     names to run, space separated (default all): the
#                     workloads, the memory cases and "view" below
#   MT_BENCH_TOOLS    the profilers to run, space separated, among memtrail,
#                     memtrail-sampled, heaptrack and heaptrack-r (default
#                     all that are present); the native run is always made
#   MT_BENCH_SAMPLE   memtrail-sampled's interval: `memtrail record --sample
#                     SIZE` (default 512k)
#   MT_BENCH_VMEM_KB  address-space limit of every run (default 12 GiB), so a
#                     tool that runs away fails instead of exhausting the
#                     machine
#   MT_BENCH_TIMEOUT  seconds before a run is killed and counted as a crash
#                     (default 300)
#   MT_BENCH_PERF     1: the recording workloads run again under `perf
#                     record`, and a table gives each tool's samples in all
#                     over the samples in the program's own code (a figure
#                     the machine's speed does not move); see perf_run
#   MT_BUILD          the build directory (default build): the memtrail
#                     program measured, and build/bench/ for the workloads
#                     and the outputs
#   MEMTRAIL          the memtrail program (default MT_BUILD/memtrail)
#
# Workloads (built here with -O2 -g into build/bench/bin/):
#   churn     tests/bench/churn.c, 1 thread, 10 M malloc/free pairs from
#             1,000 distinct stacks 19 frames deep
#   mt_churn2, mt_churn, mt_churn8
#             the same with 2, 4 and 8 threads (the 10 M pairs shared out);
#             with churn they make the thread-scaling table (1, 2, 4, 8)
#   stl       tests/bench/stl.cpp: std::map, unordered_map, string, vector
#   large     tests/bench/large.c: 64 KiB - 16 MiB blocks, realloc growth
#   python3   python3 on a generated dict/list script, PYTHONMALLOC=malloc
#             so that every object goes through malloc (and python3_check,
#             the same with a leak check mid-run, for the leak scan table)
#   sqlite3   sqlite3 :memory: reading a generated SQL script on stdin
#             (the inputs are written to build/bench/out/input/)
#   gcc       the compiler proper of `gcc -c -O2` (cc1) on a generated C
#             file: the driver runs cc1 as a child process, which neither
#             profiler follows, so cc1 is run directly; its .s is compared
# Memory cases (native and memtrail only, also named in MT_BENCH_ONLY):
#   snapshots tests/bench/snapshots.c, 50,000 snapshots
#   deep      tests/bench/deep.c, 20,000 stacks 250 frames deep
# Leak scan case (native, memtrail and the -fsanitize=leak build; named
# "heapgraph" in MT_BENCH_ONLY):
#   heapgraph tests/bench/heapgraph.c, 1 M nodes and their 1 M keys
# Then (named "view" in MT_BENCH_ONLY) tests/bench/view.sh: the viewer on a
# 100 M-event log.
#
# Sampling: memtrail-sampled records each workload with --sample 512k; a
# table gives its CPU and wall time against native (target: wall <= 1.1x),
# and, from the last run's logs, its estimated peak against the exact one
# of the full recording, and the error of each stack above 1 % of the
# exact peak (live bytes at the peak, stacks matched by their symbolized
# frames: `report --show-maximum --format collapsed`).
#
# Not here: correctness of the figures (tests/e2e), the recorder itself.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=$top/tests/bench
builddir=${MT_BUILD:-build}
case "$builddir" in /*) ;; *) builddir="$top/$builddir";; esac
builddir=${builddir%/}
bin=$builddir/bench/bin
out=$builddir/bench/out
in=$out/input
runs=${MT_BENCH_RUNS:-3}
only=${MT_BENCH_ONLY:-}
sample=${MT_BENCH_SAMPLE:-512k}
vmem=${MT_BENCH_VMEM_KB:-12582912}
limit=${MT_BENCH_TIMEOUT:-300}
MEMTRAIL=${MEMTRAIL:-$builddir/memtrail}
workloads="churn mt_churn2 mt_churn mt_churn8 stl large python3 sqlite3 gcc"

CHURN_PAIRS=10000000
STL_ROUNDS=8
LARGE_ROUNDS=100
PY_ITEMS=300000
SQL_ROWS=60000
GCC_FUNCS=60
SNAPSHOTS=50000
DEEP_STACKS=20000
DEEP_FRAMES=250
HEAPGRAPH_NODES=1000000

case $runs in
''|*[!0-9]*|0) echo "bench: error: MT_BENCH_RUNS must be a positive number" >&2; exit 2;;
esac

mkdir -p "$bin" "$out" "$in" || exit 1
tsv=$out/results.tsv
failed=""
notes=""

fail() {
	echo "bench: FAIL: $*" >&2
	failed="$failed
  $*"
}

note() {
	notes="$notes
  $*"
}

now_ns() {
	date +%s%N
}

# ---- tools ------------------------------------------------------------------
TIME=""
[ -x /usr/bin/time ] && TIME=/usr/bin/time
# timeout(1) signals its whole process group: heaptrack's helpers too.
TIMEOUT=$(command -v timeout 2>/dev/null)

have_mt=0
mt_why="not built ($MEMTRAIL)"
# Measure one build from start to end: copy the program and the recorder
# (side by side, where `memtrail record` looks for the library), so that a
# rebuild while the bench runs cannot mix versions.
if [ "$MEMTRAIL" = "$builddir/memtrail" ] && [ -x "$MEMTRAIL" ] &&
    [ -f "$builddir/libmemtrail.so" ]; then
	mkdir -p "$out/tools" &&
	cp "$builddir/libmemtrail.so" "$MEMTRAIL" "$out/tools/" &&
	MEMTRAIL=$out/tools/memtrail
fi
if [ -x "$MEMTRAIL" ]; then
	rm -f "$out/smoke.mtdata"
	if "$MEMTRAIL" record -o "$out/smoke.mtdata" /bin/true >/dev/null 2>"$out/smoke.err" &&
	    "$MEMTRAIL" report --summary --format json "$out/smoke.mtdata" 2>>"$out/smoke.err" |
	    grep -q '"allocations"'; then
		have_mt=1
	elif [ "$MEMTRAIL" = "$builddir/memtrail" ] && [ ! -f "$builddir/libmemtrail.so" ]; then
		mt_why="$builddir/libmemtrail.so not built"
	else
		# Built but broken: a crash, not an absence.
		mt_why="smoke test failed: $(tail -n 1 "$out/smoke.err")"
		fail "memtrail: record/report of /bin/true failed; see $out/smoke.err"
	fi
fi

have_ht=0
ht_why="not installed"
if command -v heaptrack >/dev/null 2>&1 && command -v heaptrack_print >/dev/null 2>&1; then
	have_ht=1
fi

# ---- workloads: build and inputs -------------------------------------------
build() {
	b_out=$1; b_src=$2; shift 2
	if [ ! -x "$b_out" ] || [ "$b_src" -nt "$b_out" ] || [ "$0" -nt "$b_out" ]; then
		"$@" || { echo "bench: error: cannot build $b_out" >&2; exit 1; }
	fi
}
build "$bin/churn" "$bench/churn.c" \
	${CC:-cc} -O2 -g -pthread -o "$bin/churn" "$bench/churn.c"
build "$bin/large" "$bench/large.c" \
	${CC:-cc} -O2 -g -o "$bin/large" "$bench/large.c"
build "$bin/stl" "$bench/stl.cpp" \
	${CXX:-c++} -O2 -g -o "$bin/stl" "$bench/stl.cpp"
build "$bin/snapshots" "$bench/snapshots.c" \
	${CC:-cc} -O2 -g -I"$top/include" -o "$bin/snapshots" "$bench/snapshots.c"
build "$bin/deep" "$bench/deep.c" \
	${CC:-cc} -O2 -g -o "$bin/deep" "$bench/deep.c"
build "$bin/heapgraph" "$bench/heapgraph.c" \
	${CC:-cc} -O2 -g -o "$bin/heapgraph" "$bench/heapgraph.c"
# LeakSanitizer's build of the same program, where the compiler has it.
have_lsan=0
if [ ! -x "$bin/heapgraph_lsan" ] || [ "$bench/heapgraph.c" -nt "$bin/heapgraph_lsan" ] ||
    [ "$0" -nt "$bin/heapgraph_lsan" ]; then
	${CC:-cc} -O2 -g -fsanitize=leak -DHEAPGRAPH_LSAN -o "$bin/heapgraph_lsan" \
		"$bench/heapgraph.c" 2>"$out/heapgraph_lsan.build.err" || rm -f "$bin/heapgraph_lsan"
fi
[ -x "$bin/heapgraph_lsan" ] && have_lsan=1

PYTHON=""
if [ -x /usr/bin/python3 ]; then
	PYTHON=/usr/bin/python3
elif command -v python3 >/dev/null 2>&1; then
	# Resolve wrappers (pyenv shims are scripts that exec the interpreter,
	# and the profilers do not follow exec).
	PYTHON=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
fi
SQLITE=$(command -v sqlite3 2>/dev/null)
CC1=$(gcc -print-prog-name=cc1 2>/dev/null)
[ -n "$CC1" ] && [ ! -x "$CC1" ] && CC1=""

cat >"$in/workload.py" <<EOF
# generated by tests/bench/run.sh: a dict/list workload
d = {}
for i in range($PY_ITEMS):
    d["k%d" % i] = [i, str(i), (i, i * 2)]
# python3_check (MT_BENCH_PY_CHECK set, under memtrail): a leak check
# with the dict at its largest (Python frees nearly everything before
# exit: the check at exit scans little).
import os
if os.environ.get("MT_BENCH_PY_CHECK"):
    import ctypes
    check = getattr(ctypes.CDLL(None), "memtrail_leak_check_impl", None)
    if check:
        check(b"bench")
s = 0
for k in list(d):
    v = d[k]
    if v[0] % 3 == 0:
        del d[k]
    else:
        s += len(v[1])
lst = sorted(d.keys(), key=lambda k: k[::-1])
words = " ".join(lst[:50000]).split()
print(len(d), s, lst[0], lst[-1], len(words))
EOF

awk -v N="$SQL_ROWS" 'BEGIN {
	q = sprintf("%c", 39)
	print "-- generated by tests/bench/run.sh: an SQL workload"
	print "CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, grp INTEGER, pad TEXT);"
	print "BEGIN;"
	alpha = "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"
	for (i = 1; i <= N; i++)
		printf "INSERT INTO t(id, k, grp, pad) VALUES(%d, %sname-%d-%d%s, %d, %s%s%s);\n",
		    i, q, (i * 7919) % N, i % 13, q, i % 100, q, substr(alpha, 1 + i % 20, 20 + i % 40), q
	print "COMMIT;"
	print "CREATE INDEX t_k ON t(k);"
	print "CREATE INDEX t_grp ON t(grp, k);"
	print "SELECT grp, count(*), sum(length(pad)), min(k) FROM t GROUP BY grp ORDER BY grp LIMIT 5;"
	print "UPDATE t SET pad = pad || k WHERE grp % 3 = 0;"
	print "DELETE FROM t WHERE grp % 7 = 1;"
	print "SELECT count(*), sum(length(pad)), max(k) FROM t;"
	print "SELECT a.grp, count(*) FROM t a JOIN t b ON a.k = b.k WHERE a.grp < 10 GROUP BY a.grp ORDER BY a.grp;"
	printf "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000) "
	printf "SELECT count(*), sum(length(printf(%s%%08d-%%s%s, x, hex(x)))) FROM c;\n", q, q
	print "SELECT k FROM t ORDER BY pad DESC, k LIMIT 3;"
}' >"$in/workload.sql"

awk -v N="$GCC_FUNCS" 'BEGIN {
	print "/* generated by tests/bench/run.sh: a compiler workload */"
	print "struct rec { int a, b; double x; char name[16]; struct rec *next; };"
	print "static inline int mix(int a, int b) { return (a * 31) ^ (b >> 3); }"
	for (i = 0; i < N; i++) {
		printf "int f%d(struct rec *r, int n, const int *tab)\n{\n\tint s = %d;\n", i, i
		printf "\tfor (int i = 0; i < n; i++) {\n\t\tswitch ((i + %d) %% 8) {\n", i
		for (c = 0; c < 8; c++)
			printf "\t\tcase %d: s += mix(tab[i], %d) + r->a * %d; r->x += s * %d.5; break;\n", c, c * i + 1, c + 2, c
		print "\t\t}"
		printf "\t\tfor (int j = 0; j < %d; j++)\n\t\t\ts ^= tab[(i + j) & 63] * (j + %d);\n", 4 + i % 5, i
		print "\t\tif (r->next) {\n\t\t\tr = r->next;\n\t\t\tr->b += s;\n\t\t}"
		print "\t}"
		if (i > 0)
			printf "\ts += f%d(r, n / 2, tab + 1);\n", i - 1
		print "\treturn s + (int)r->x;\n}\n"
	}
}' >"$in/workload.c"

# Why a workload cannot run here, or nothing.
wl_missing() {
	case $1 in
	python3) [ -n "$PYTHON" ] || echo "python3 not installed";;
	sqlite3) [ -n "$SQLITE" ] || echo "sqlite3 not installed";;
	gcc) [ -n "$CC1" ] || echo "gcc's cc1 not found";;
	esac
}

# wl_exec WORKLOAD SIDEFILE [TOOL ARGS...]: runs the workload, prefixed by
# the tool's command line. SIDEFILE receives the gcc workload's assembly.
wl_exec() {
	we_wl=$1; we_side=$2; shift 2
	case $we_wl in
	churn) "$@" "$bin/churn" 1 "$CHURN_PAIRS";;
	mt_churn2) "$@" "$bin/churn" 2 "$CHURN_PAIRS";;
	mt_churn) "$@" "$bin/churn" 4 "$CHURN_PAIRS";;
	mt_churn8) "$@" "$bin/churn" 8 "$CHURN_PAIRS";;
	churn_small) "$@" "$bin/churn" 1 $((CHURN_PAIRS / 10));;
	stl) "$@" "$bin/stl" "$STL_ROUNDS";;
	large) "$@" "$bin/large" "$LARGE_ROUNDS";;
	python3) PYTHONMALLOC=malloc "$@" "$PYTHON" "$in/workload.py";;
	python3_check) MT_BENCH_PY_CHECK=1 PYTHONMALLOC=malloc "$@" "$PYTHON" "$in/workload.py";;
	sqlite3) "$@" "$SQLITE" :memory: <"$in/workload.sql";;
	gcc) "$@" "$CC1" -quiet -O2 -fasynchronous-unwind-tables \
		"$in/workload.c" -o "$we_side";;
	snapshots) "$@" "$bin/snapshots" "$SNAPSHOTS";;
	heapgraph) "$@" "$bin/heapgraph" "$HEAPGRAPH_NODES";;
	deep) "$@" "$bin/deep" "$DEEP_STACKS" "$DEEP_FRAMES";;
	esac
}

# Options of `memtrail record` for WORKLOAD $1 beyond -o: deep keeps its
# whole stacks.
mt_record_args() {
	case $1 in
	deep) echo "--depth 256";;
	esac
}

# heaptrack prints three lines before the program runs and three after it;
# the rest of stdout is the program's.
strip_heaptrack() {
	awk 'NR <= 3 && (/^heaptrack output will be written to / ||
	    /libheaptrack_(preload|inject)\.so$/ ||
	    /^starting application, this might take some time/) { next }
	    /^Heaptrack finished! Now run the following/ { skip = 1 }
	    !skip' "$1"
}

# The heaptrack data file written for base name $1.
ht_file() {
	for f in "$1.zst" "$1.gz"; do
		[ -f "$f" ] && { echo "$f"; return; }
	done
}

file_size() {
	if [ -n "$1" ] && [ -f "$1" ]; then wc -c <"$1" | tr -d ' '; else echo "-"; fi
}

# Exit status $1 as words: "exit N", "signal NAME" or "timed out".
status_words() {
	if [ "$1" -eq 124 ] && [ -n "$TIMEOUT" ]; then
		echo "timed out after ${limit}s"
	elif [ "$1" -gt 128 ] && [ "$1" -lt 160 ]; then
		echo "signal $(kill -l $(($1 - 128)) 2>/dev/null || echo $(($1 - 128)))"
	else
		echo "exit $1"
	fi
}

# run_record WORKLOAD TOOL RUN: one timed run, appended to results.tsv.
run_record() {
	rr_wl=$1; rr_tool=$2; rr_run=$3
	rr_base=$out/$rr_wl.$rr_tool.$rr_run
	rm -f "$rr_base".*
	rr_log=""
	case $rr_tool in
	native) set --;;
	memtrail) rr_log=$rr_base.mtdata
		set -- env MEMTRAIL_LEAK_SCAN_STATS=1 \
			"$MEMTRAIL" record $(mt_record_args "$rr_wl") -o "$rr_log";;
	lsan) set --;;
	memtrail-sampled) rr_log=$rr_base.mtdata
		set -- "$MEMTRAIL" record --sample "$sample" $(mt_record_args "$rr_wl") -o "$rr_log";;
	heaptrack) set -- heaptrack -o "$rr_base.ht";;
	heaptrack-r) set -- heaptrack -r -o "$rr_base.ht";;
	esac
	[ -n "$TIME" ] && set -- "$TIME" -f '%M %U %S' -o "$rr_base.rss" "$@"
	[ -n "$TIMEOUT" ] && set -- "$TIMEOUT" "$limit" "$@"
	rr_t0=$(now_ns)
	if [ "$rr_tool" = lsan ]; then
		# LeakSanitizer reserves terabytes of address space: no limit.
		"$@" "$bin/heapgraph_lsan" "$HEAPGRAPH_NODES" >"$rr_base.stdout" 2>"$rr_base.stderr"
	else
		(ulimit -v "$vmem" 2>/dev/null; wl_exec "$rr_wl" "$rr_base.s" "$@") \
			>"$rr_base.stdout" 2>"$rr_base.stderr"
	fi
	rr_rc=$?
	rr_t1=$(now_ns)
	rr_wall=$(awk -v a="$rr_t0" -v b="$rr_t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
	rr_rss=$(time_fields "$rr_base.rss")
	case $rr_tool in
	heaptrack) rr_log=$(ht_file "$rr_base.ht");;
	heaptrack-r) rr_log=$(ht_file "$rr_base.ht.raw");;
	esac
	rr_size=$(file_size "$rr_log")
	rr_status=ok
	if [ "$rr_rc" -ne 0 ]; then
		rr_status="crash:$(status_words "$rr_rc" | tr ' ' '_')"
		fail "$rr_wl: $rr_tool run $rr_run: $(status_words "$rr_rc"); see $rr_base.stderr"
	elif [ "$rr_tool" != native ] && [ "$rr_tool" != lsan ] && [ "$rr_size" = "-" ]; then
		rr_status=crash:no_log
		fail "$rr_wl: $rr_tool run $rr_run wrote no log"
	else
		if [ "$rr_tool" = heaptrack ] || [ "$rr_tool" = heaptrack-r ]; then
			strip_heaptrack "$rr_base.stdout" >"$rr_base.out"
		else
			cp "$rr_base.stdout" "$rr_base.out"
		fi
		if [ ! -f "$out/$rr_wl.ref.out" ]; then
			# The first good native run is the reference.
			if [ "$rr_tool" = native ]; then
				cp "$rr_base.out" "$out/$rr_wl.ref.out"
				[ -f "$rr_base.s" ] && cp "$rr_base.s" "$out/$rr_wl.ref.s"
			fi
		elif ! cmp -s "$rr_base.out" "$out/$rr_wl.ref.out"; then
			rr_status=output_differs
			fail "$rr_wl: $rr_tool run $rr_run: output differs from the native run (diff $out/$rr_wl.ref.out $rr_base.out)"
		elif [ -f "$out/$rr_wl.ref.s" ] && ! cmp -s "$rr_base.s" "$out/$rr_wl.ref.s"; then
			rr_status=output_differs
			fail "$rr_wl: $rr_tool run $rr_run: assembly differs from the native run"
		fi
	fi
	printf '%s\trecord\t%s\t%s\t%s\t%s\t%s\t-\t%s\t%s\n' "$rr_wl" "$rr_tool" "$rr_run" \
		"$rr_wall" "${rr_rss% *}" "$rr_size" "$rr_status" "${rr_rss#* }" >>"$tsv"
	scan_row "$rr_wl" "$rr_tool" "$rr_run" "$rr_base.stderr"
	# Keep the logs of the last run only: they can be large.
	if [ "$rr_run" -lt "$runs" ] && [ "$rr_status" = ok ]; then
		[ -n "$rr_log" ] && rm -f "$rr_log"
	fi
	rm -f "$rr_base.s"
}

# run_report WORKLOAD READER RUN LOG: one timed reading of a log by READER:
#   memtrail-summary         memtrail report --summary
#   memtrail-full            memtrail report (summary, peak tree, leaks tree)
#   memtrail-massif          memtrail report --format massif
#   heaptrack_print-summary  heaptrack_print -p 0 -a 0 -T 0 -l 0 (its totals)
#   heaptrack_print-full     heaptrack_print (its default output)
run_report() {
	rp_wl=$1; rp_tool=$2; rp_run=$3; rp_log=$4
	rp_base=$out/$rp_wl.read-$rp_tool.$rp_run
	case $rp_tool in
	memtrail-summary) set -- "$MEMTRAIL" report --summary "$rp_log";;
	memtrail-full) set -- "$MEMTRAIL" report "$rp_log";;
	memtrail-massif) set -- "$MEMTRAIL" report --format massif "$rp_log";;
	heaptrack_print-summary) set -- heaptrack_print -p 0 -a 0 -T 0 -l 0 "$rp_log";;
	heaptrack_print-full) set -- heaptrack_print "$rp_log";;
	esac
	[ -n "$TIME" ] && set -- "$TIME" -f '%M %U %S' -o "$rp_base.rss" "$@"
	[ -n "$TIMEOUT" ] && set -- "$TIMEOUT" "$limit" "$@"
	rp_t0=$(now_ns)
	(ulimit -v "$vmem" 2>/dev/null; "$@") >"$rp_base.stdout" 2>"$rp_base.stderr"
	rp_rc=$?
	rp_t1=$(now_ns)
	rp_wall=$(awk -v a="$rp_t0" -v b="$rp_t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
	rp_rss=$(time_fields "$rp_base.rss")
	rp_status=ok
	if [ "$rp_rc" -ne 0 ]; then
		rp_status="crash:$(status_words "$rp_rc" | tr ' ' '_')"
		fail "$rp_wl: $rp_tool run $rp_run: $(status_words "$rp_rc"); see $rp_base.stderr"
	fi
	printf '%s\treport\t%s\t%s\t%s\t%s\t-\t-\t%s\t%s\n' "$rp_wl" "$rp_tool" "$rp_run" \
		"$rp_wall" "${rp_rss% *}" "$rp_status" "${rp_rss#* }" >>"$tsv"
	# Full reports can be large: keep the last run's.
	[ "$rp_run" -lt "$runs" ] && [ "$rp_status" = ok ] && rm -f "$rp_base.stdout"
}

# Allocations + frees of memtrail log $1, from its JSON summary.
mt_events() {
	"$MEMTRAIL" report --summary --format json "$1" 2>/dev/null | tr -d '\n' |
		sed -n 's/.*"allocations": *\([0-9]*\).*"frees": *\([0-9]*\).*/\1 \2/p' |
		awk '{ print $1 + $2 }'
}

# "MAX_RSS_KB CPU_S" (user + system) from /usr/bin/time's output file $1,
# or "- -" without it. CPU time covers the whole process tree that
# /usr/bin/time waited for (threads, heaptrack's interpreter and
# compressor); on a shared machine it is the steadier figure.
time_fields() {
	if [ -n "$TIME" ] && [ -f "$1" ]; then
		tail -n 1 "$1" | awk 'NF == 3 && $1 ~ /^[0-9]+$/ { printf "%s %.2f\n", $1, $2 + $3; ok = 1 }
			END { if (!ok) print "- -" }'
	else
		echo "- -"
	fi
}

# scan_row WORKLOAD TOOL RUN STDERR: the leak scan's figures, from the
# recorder's lines (MEMTRAIL_LEAK_SCAN_STATS=1: the one of the largest
# heap) or heapgraph_lsan's, as a "scan" row: wall and CPU seconds,
# blocks, live bytes, words read.
scan_row() {
	awk -F '\t' -v w="$1" -v t="$2" -v r="$3" '
	/^memtrail: leak scan: classified / {
		split($0, f, " ")
		if (row == "" || f[7] + 0 > best) {
			best = f[7] + 0
			row = sprintf("%s\tscan\t%s\t%s\t%.6f\t%s\t%s\t%s\tok\t%.6f", w, t, r, f[12] / 1e9, f[5], f[7], f[9], f[15] / 1e9)
		}
	}
	/^lsan scan: / {
		split($0, f, " ")
		row = sprintf("%s\tscan\t%s\t%s\t%.6f\t-\t-\t-\tok\t%.6f", w, t, r, f[3] / 1e9, f[6] / 1e9)
	}
	END { if (row != "") print row }' "$4" >>"$tsv"
}

# count_row WORKLOAD SOURCE EVENTS
count_row() {
	printf '%s\tcount\t%s\t-\t-\t-\t-\t%s\tok\t-\n' "$1" "$2" "$3" >>"$tsv"
}

# sampling_accuracy WORKLOAD: the last run's sampled log against its full
# one: estimated and exact peak, and per stack above 1 % of the exact peak
# (live bytes at each log's peak, by symbolized stack) the estimate's
# error; one line into $out/sampling.txt.
sampling_accuracy() {
	sa_full=$out/$1.memtrail.$runs.mtdata
	sa_smp=$out/$1.memtrail-sampled.$runs.mtdata
	[ -f "$sa_full" ] && [ -f "$sa_smp" ] || return 0
	for sa_k in full smp; do
		eval "sa_log=\$sa_$sa_k"
		"$MEMTRAIL" report --show-maximum -t 0 --format collapsed "$sa_log" \
			>"$out/$1.$sa_k.peak" 2>"$out/$1.$sa_k.peak.err" ||
			fail "$1: report --show-maximum of the $sa_k log failed"
		"$MEMTRAIL" report --summary --format json "$sa_log" 2>/dev/null | tr -d '\n' |
			sed -n 's/.*"peak_bytes": *\([0-9]*\).*/\1/p' >"$out/$1.$sa_k.peakbytes"
	done
	sa_mean=$("$MEMTRAIL" report --summary --format json "$sa_smp" 2>/dev/null | tr -d '\n' |
		sed -n 's/.*"sample_bytes": *\([0-9]*\).*/\1/p')
	awk -v wl="$1" -v exact="$(cat "$out/$1.full.peakbytes")" -v mean="${sa_mean:-0}" \
	    -v est="$(cat "$out/$1.smp.peakbytes")" '
		function key(line) { return substr(line, 1, length(line) - length($NF) - 1) }
		FNR == 1 { f++ }
		f == 1 { ex[key($0)] += $NF }
		f == 2 { es[key($0)] += $NF }
		END {
			n = 0; worst = 0; sum_abs = 0; sum_ex = 0
			for (k in ex) {
				if (ex[k] * 100 < exact)
					continue
				e = (es[k] - ex[k]) / ex[k] * 100
				n++
				a = e < 0 ? -e : e
				if (a > worst) worst = a
				sum_abs += (es[k] > ex[k] ? es[k] - ex[k] : ex[k] - es[k]); sum_ex += ex[k]
			}
			# small blocks (s << mean) each stand for about mean
			# bytes: the standard error of B live bytes is then
			# about sqrt(B mean), larger blocks make it smaller
			printf "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", wl, exact, est,
				(exact > 0 ? sprintf("%+.2f", (est - exact) / exact * 100) : "n/a"), n,
				(n ? sprintf("%.2f", worst) : "n/a"),
				(sum_ex > 0 ? sprintf("%.2f", sum_abs / sum_ex * 100) : "n/a"),
				(exact > 0 && mean > 0 ? sprintf("%.1f", sqrt(mean / exact) * 100) : "n/a")
		}' "$out/$1.full.peak" "$out/$1.smp.peak" >>"$out/sampling.txt"
}

# ---- the runs ----------------------------------------------------------------
printf 'workload\tphase\ttool\trun\twall_s\tmax_rss_kb\tlog_bytes\tevents\tstatus\tcpu_s\n' >"$tsv"
rm -f "$out/sampling.txt"
tools=native
for t in ${MT_BENCH_TOOLS:-memtrail memtrail-sampled heaptrack heaptrack-r}; do
	case $t in
	memtrail|memtrail-sampled) [ $have_mt = 1 ] && tools="$tools $t";;
	heaptrack|heaptrack-r) [ $have_ht = 1 ] && tools="$tools $t";;
	*) echo "bench: error: MT_BENCH_TOOLS: unknown tool $t" >&2; exit 2;;
	esac
done
start_all=$(now_ns)
load_start=$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null)
echo "bench: $runs run(s) of each workload with: $tools" >&2
[ $have_mt = 1 ] || echo "bench: memtrail: n/a, $mt_why" >&2
[ $have_ht = 1 ] || echo "bench: heaptrack: n/a, $ht_why" >&2

# each_round WORKLOAD RUN: RUN WORKLOAD TOOL ROUND for MT_BENCH_RUNS rounds,
# every tool in each round (interleaved).
each_round() {
	er_r=1
	while [ $er_r -le "$runs" ]; do
		for er_t in $tools; do
			"$2" "$1" "$er_t" "$er_r"
		done
		er_r=$((er_r + 1))
	done
}

# Whether workload $1 is selected by MT_BENCH_ONLY.
selected() {
	[ -z "$only" ] && return 0
	case " $only " in *" $1 "*) return 0;; esac
	return 1
}

ran=""
for wl in $workloads; do
	selected "$wl" || continue
	why=$(wl_missing "$wl")
	if [ -n "$why" ]; then
		note "$wl: skipped, $why"
		continue
	fi
	ran="$ran $wl"
	rm -f "$out/$wl".*
	echo "bench: $wl..." >&2
	each_round "$wl" run_record
	# python3's leak scan, in runs of its own (see the top comment); the
	# output is python3's.
	if [ "$wl" = python3 ] && [ $have_mt = 1 ] && [ -f "$out/python3.ref.out" ] &&
	    case " $tools " in *" memtrail "*) true;; *) false;; esac; then
		rm -f "$out"/python3_check.*
		cp "$out/python3.ref.out" "$out/python3_check.ref.out"
		r=1
		while [ $r -le "$runs" ]; do
			run_record python3_check memtrail "$r"
			r=$((r + 1))
		done
	fi

	# Event counts: the program's own (where it knows them), memtrail's
	# summary, and the +/- lines of heaptrack's log: three sources that
	# should agree up to the C runtime's own few allocations.
	ev_prog=$(sed -n 's/.* allocations=\([0-9]*\) frees=\([0-9]*\).*/\1 \2/p' \
		"$out/$wl.ref.out" | awk '{ print $1 + $2 }')
	[ -n "$ev_prog" ] && count_row "$wl" program "$ev_prog"
	mt_log=$out/$wl.memtrail.$runs.mtdata
	ht_log=$(ht_file "$out/$wl.heaptrack.$runs.ht")
	if [ $have_mt = 1 ] && [ -f "$mt_log" ]; then
		ev_mt=$(mt_events "$mt_log")
		if [ -n "$ev_mt" ]; then
			count_row "$wl" memtrail "$ev_mt"
		else
			fail "$wl: memtrail report --summary --format json gave no counts"
		fi
	fi
	if [ $have_ht = 1 ] && [ -n "$ht_log" ]; then
		case $ht_log in *.zst) dec="zstd -dc";; *) dec="gzip -dc";; esac
		ev_ht=$($dec "$ht_log" | grep -c '^[+-] ')
		count_row "$wl" heaptrack "$ev_ht"
	fi

	sampling_accuracy "$wl"

	# Reading, interleaved: the summaries, then the full reports.
	r=1
	while [ $r -le "$runs" ]; do
		[ $have_mt = 1 ] && [ -f "$mt_log" ] && run_report "$wl" memtrail-summary "$r" "$mt_log"
		[ $have_ht = 1 ] && [ -n "$ht_log" ] && run_report "$wl" heaptrack_print-summary "$r" "$ht_log"
		[ $have_mt = 1 ] && [ -f "$mt_log" ] && run_report "$wl" memtrail-full "$r" "$mt_log"
		[ $have_ht = 1 ] && [ -n "$ht_log" ] && run_report "$wl" heaptrack_print-full "$r" "$ht_log"
		r=$((r + 1))
	done
done
# Replay memory against event count: churn again with a tenth of the events
# (same stacks, same live blocks); its report should need the same memory.
case " $ran " in *" churn "*)
	if [ $have_mt = 1 ] && [ -f "$out/churn.memtrail.$runs.mtdata" ]; then
		echo "bench: churn_small (replay memory against event count)..." >&2
		rm -f "$out"/churn_small.*
		run_record churn_small native "$runs"
		run_record churn_small memtrail "$runs"
		small_log=$out/churn_small.memtrail.$runs.mtdata
		if [ -f "$small_log" ]; then
			ev_small=$(mt_events "$small_log")
			[ -n "$ev_small" ] && count_row churn_small memtrail "$ev_small"
			run_report churn_small memtrail-summary "$runs" "$small_log"
		fi
	fi;;
esac

# Memory cases: what memtrail's readers need where the log is large in
# another dimension than events. snapshots: SNAPSHOTS snapshots read by
# `report --format massif`; deep: DEEP_STACKS distinct stacks DEEP_FRAMES
# deep read by the default report. One native and one memtrail run each
# (the output check), then MT_BENCH_RUNS readings.
mem_ran=""
for wl in snapshots deep; do
	selected "$wl" || continue
	if [ $have_mt != 1 ]; then
		note "$wl: skipped, memtrail n/a"
		continue
	fi
	mem_ran="$mem_ran $wl"
	rm -f "$out/$wl".*
	echo "bench: $wl (memory case)..." >&2
	run_record "$wl" native "$runs"
	run_record "$wl" memtrail "$runs"
	mem_log=$out/$wl.memtrail.$runs.mtdata
	[ -f "$mem_log" ] || continue
	ev_mem=$(mt_events "$mem_log")
	[ -n "$ev_mem" ] && count_row "$wl" memtrail "$ev_mem"
	ev_prog=$(sed -n 's/.* allocations=\([0-9]*\) frees=\([0-9]*\).*/\1 \2/p' \
		"$out/$wl.ref.out" | awk '{ print $1 + $2 }')
	[ -n "$ev_prog" ] && count_row "$wl" program "$ev_prog"
	case $wl in snapshots) reader=memtrail-massif;; *) reader=memtrail-full;; esac
	r=1
	while [ $r -le "$runs" ]; do
		run_report "$wl" "$reader" "$r" "$mem_log"
		r=$((r + 1))
	done
done
# Leak scan: memtrail's at exit against LeakSanitizer's, on the same
# program; interleaved runs (the native run checks the output).
scan_ran=""
if selected heapgraph; then
	if [ $have_mt != 1 ]; then
		note "heapgraph: skipped, memtrail n/a"
	else
		scan_ran=1
		rm -f "$out"/heapgraph.*
		echo "bench: heapgraph (leak scan, memtrail and LeakSanitizer)..." >&2
		[ $have_lsan = 1 ] || note "heapgraph: no -fsanitize=leak build (see $out/heapgraph_lsan.build.err)"
		r=1
		while [ $r -le "$runs" ]; do
			run_record heapgraph native "$r"
			run_record heapgraph memtrail "$r"
			[ $have_lsan = 1 ] && run_record heapgraph lsan "$r"
			r=$((r + 1))
		done
	fi
fi

# MT_BENCH_PERF=1: each workload run again under `perf record` (cpu-clock
# samples of the whole process tree), native, memtrail and heaptrack -r
# interleaved, MT_BENCH_RUNS rounds: a "perf" row with the samples in all
# and in the workload's own code (own_dso). Their quotient does not move
# with the machine's speed, which the CPU seconds above do (identical
# native runs here: up to 1.6x apart); what each tool adds to it, over
# heaptrack -r's, is a second reading of the CPU-per-event target.
own_dso() {
	case $1 in
	churn|mt_churn*) echo churn;;
	stl|large) echo "$1";;
	python3) basename "$(readlink -f "$PYTHON")";;
	sqlite3) echo libsqlite3.so;;
	gcc) echo cc1;;
	esac
}

perf_run() {
	pr_wl=$1; pr_tool=$2; pr_run=$3
	pr_base=$out/$pr_wl.$pr_tool.perf$pr_run
	pr_dso=$(own_dso "$pr_wl")
	[ -n "$pr_dso" ] || return 0
	case $pr_tool in
	native) set --;;
	memtrail) set -- "$MEMTRAIL" record $(mt_record_args "$pr_wl") -o "$pr_base.mtdata";;
	heaptrack-r) set -- heaptrack -r -o "$pr_base.ht";;
	*) return 0;;
	esac
	(ulimit -v "$vmem" 2>/dev/null
	 wl_exec "$pr_wl" "$pr_base.s" perf record -q -e cpu-clock -F 1000 -o "$pr_base.data" -- "$@") \
		>/dev/null 2>"$pr_base.stderr" ||
		fail "$pr_wl: $pr_tool under perf, run $pr_run: exit $?; see $pr_base.stderr"
	perf report -i "$pr_base.data" --no-children --sort dso -F sample,dso 2>/dev/null |
	    awk -v d="$pr_dso" -v w="$pr_wl" -v t="$pr_tool" -v r="$pr_run" '
		/^#/ || NF < 2 { next }
		{ all += $1; if (index($2, d) == 1) own += $1 }
		END { if (own > 0) printf "%s\tperf\t%s\t%s\t%d\t%d\n", w, t, r, all, own }' >>"$tsv"
	rm -f "$pr_base".data* "$pr_base".mtdata "$pr_base".ht* "$pr_base".s
}

if [ "${MT_BENCH_PERF:-0}" = 1 ]; then
	if ! command -v perf >/dev/null 2>&1; then
		note "MT_BENCH_PERF: no perf"
	else
		for wl in $ran; do
			[ -n "$(own_dso "$wl")" ] || continue
			echo "bench: $wl under perf..." >&2
			each_round "$wl" perf_run
		done
	fi
fi

end_all=$(now_ns)
load_end=$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null)

# ---- the tables ----------------------------------------------------------------
awk -F '\t' -v ran="$ran" -v mem_ran="$mem_ran" -v have_mt="$have_mt" -v have_ht="$have_ht" \
    -v mt_why="$mt_why" -v ht_why="$ht_why" -v runs="$runs" -v tsv="${tsv#"$top"/}" \
    -v ncores="$(nproc 2>/dev/null)" -v load1="${load_start:-}" -v load2="${load_end:-}" \
    -v sample="$sample" -v accuracy="$out/sampling.txt" \
    -v snapshots="$SNAPSHOTS" -v deep_stacks="$DEEP_STACKS" -v deep_frames="$DEEP_FRAMES" \
    -v secs="$(awk -v a="$start_all" -v b="$end_all" 'BEGIN { printf "%.0f", (b - a) / 1e9 }')" '
function median(key,    n, i, j, t, v) {
	n = cnt[key]
	if (n == 0)
		return ""
	for (i = 1; i <= n; i++)
		v[i] = val[key, i] + 0
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
# Largest over smallest run of KEY: run-to-run spread ("" when unknown).
function spreadv(key,    n, i, lo, hi, x) {
	n = cnt[key]
	if (n < 2)
		return ""
	lo = hi = val[key, 1] + 0
	for (i = 2; i <= n; i++) {
		x = val[key, i] + 0
		if (x < lo) lo = x
		if (x > hi) hi = x
	}
	return lo > 0 ? hi / lo : ""
}
function spread(key,    x) {
	x = spreadv(key)
	return x == "" ? "n/a" : sprintf("%.2fx", x)
}
function add(key, x) {
	if (x == "-" || x == "")
		return
	cnt[key]++
	val[key, cnt[key]] = x
}
# The median of figure WHAT (wall, cpu, rss, size) of TOOL on workload W.
function med(w, tool, what) { return median(w SUBSEP tool SUBSEP what) }
function commas(x,    s, r) {
	s = sprintf("%.0f", x)
	r = ""
	while (length(s) > 3) {
		r = "," substr(s, length(s) - 2) r
		s = substr(s, 1, length(s) - 3)
	}
	return s r
}
function mib(kb) { return kb == "" ? "n/a" : sprintf("%.1fM", kb / 1024) }
function human(b) {
	if (b == "") return "n/a"
	if (b >= 1048576) return sprintf("%.1fM", b / 1048576)
	if (b >= 1024) return sprintf("%.1fK", b / 1024)
	return sprintf("%dB", b)
}
# "CPU WALL" seconds of TOOL on W, with its max RSS when RSS is set.
function cell(w, tool, rss,    c, t, r) {
	c = med(w, tool, "cpu"); t = med(w, tool, "wall"); r = med(w, tool, "rss")
	if (t == "")
		return "n/a"
	return sprintf("%6s %6.2f", c == "" ? "n/a" : sprintf("%.2f", c), t) \
		(rss ? sprintf(" %6s", mib(r)) : "")
}
function ratio(a, b) { return (a == "" || b == "" || b <= 0) ? "n/a" : sprintf("%.2f", a / b) }
# CPU ns per event of TOOL on W beyond the native run.
function over(w, tool, e,    c, n) {
	c = med(w, tool, "cpu"); n = med(w, "native", "cpu")
	return (c == "" || n == "" || e == "" || e == 0) ? "" : (c - n) * 1e9 / e
}
NR == 1 { next }
{
	w = $1; ph = $2; tool = $3
	if (ph == "record" || ph == "report") {
		add(w SUBSEP tool SUBSEP "wall", $5)
		add(w SUBSEP tool SUBSEP "rss", $6)
		add(w SUBSEP tool SUBSEP "cpu", $10)
		if (ph == "record") {
			add(w SUBSEP tool SUBSEP "size", $7)
			if ($10 != "-" && $10 != "")
				rcpu[w, tool, $4] = $10
		}
	} else if (ph == "perf") {
		# MT_BENCH_PERF: samples in all over those in the program
		if ($6 > 0) {
			add(w SUBSEP tool SUBSEP "perf", $5 / $6)
			if (!((w) in pseen)) { pseen[w] = 1; porder[++npw] = w }
		}
	} else if (ph == "count") {
		ev[w, tool] = $8
	} else if (ph == "scan") {
		add(w SUBSEP "scan-" tool SUBSEP "wall", $5)
		add(w SUBSEP "scan-" tool SUBSEP "cpu", $10)
		if ($6 != "-") {
			sblocks[w] = $6; sbytes[w] = $7
			if (!((w) in sseen)) { sseen[w] = 1; sorder[++nsw] = w }
		}
	}
}
# One row of the leak scan table: the scan of W by TOOL (blocks and bytes: the
# figures of the memtrail run: the same program).
function scanrow(w, tool, label,    c, t, b) {
	c = med(w, "scan-" tool, "cpu"); t = med(w, "scan-" tool, "wall"); b = sbytes[w]
	if (t == "")
		return
	printf "%-13s %-9s %12s %10s %8.3f %8.3f %10s %10s\n", w, label, commas(sblocks[w]), human(b), c, t, \
		(c > 0 ? sprintf("%.0f", b / 1048576 / c) : "n/a"), (t > 0 ? sprintf("%.0f", b / 1048576 / t) : "n/a")
}
END {
	printf "memtrail bench: figures are medians of %d interleaved run(s) per tool and workload; %s cores, load average (1 min) %s at start, %s at end; %ss in all.\n", \
		runs, (ncores == "" ? "?" : ncores), (load1 == "" ? "?" : load1), (load2 == "" ? "?" : load2), secs
	if (ncores + 0 > 0 && (load1 + 0 >= ncores || load2 + 0 >= ncores))
		print "warning: the machine was busy (load >= cores): wall times include waiting for a CPU; CPU times are the steadier figures."
	if (have_mt != 1) print "memtrail: n/a, " mt_why
	if (have_ht != 1) print "heaptrack: n/a, " ht_why
	n = split(ran, wls, " ")
	for (k = 1; k <= n; k++) {
		w = wls[k]
		e = ev[w, "memtrail"]; esrc = ""
		if (e == "") { e = ev[w, "heaptrack"]; esrc = e == "" ? "" : "h" }
		if (e == "") { e = ev[w, "program"]; esrc = e == "" ? "" : "p" }
		evs[k] = e; esrcs[k] = esrc
	}

	# The recording and reading tables, when a workload ran.
	if (n > 0) {
		print ""
		print "Recording: CPU (user + sys of the process tree) and wall seconds; CPU ns per event beyond native, memtrail'"'"'s over heaptrack'"'"'s"
		fmt = "%-9s %12s %13s %13s %13s %13s %8s %8s %8s %6s %7s\n"
		printf fmt, "workload", "events", "native", "memtrail", "heaptrack", "heaptrack -r", \
			"memtrail", "hptrack", "hptrk -r", "mt/ht", "mt/ht-r"
		printf fmt, "", "", "cpu   wall", "cpu   wall", "cpu   wall", "cpu   wall", \
			"ns/ev", "ns/ev", "ns/ev", "CPU/ev", "CPU/ev"
		for (k = 1; k <= n; k++) {
			w = wls[k]; e = evs[k]
			om = over(w, "memtrail", e); oh = over(w, "heaptrack", e); orw = over(w, "heaptrack-r", e)
			printf fmt, w, (e == "" ? "n/a" : commas(e) esrcs[k]), cell(w, "native"), \
				cell(w, "memtrail"), cell(w, "heaptrack"), cell(w, "heaptrack-r"), \
				(om == "" ? "n/a" : sprintf("%.0f", om)), (oh == "" ? "n/a" : sprintf("%.0f", oh)), \
				(orw == "" ? "n/a" : sprintf("%.0f", orw)), ratio(om, oh), ratio(om, orw)
			mo[k] = om; ho[k] = oh; ro[k] = orw
			if (om != "") { tmx += om * e; emx += e }
			if (oh != "") { thx += oh * e; ehx += e }
			if (orw != "") { trx += orw * e; erx += e }
		}
		# All workloads: the overheads weighted by events.
		if (emx > 0 || ehx > 0 || erx > 0)
			printf fmt, "all", commas(emx > 0 ? emx : ehx > 0 ? ehx : erx), "", "", "", "", \
				(emx > 0 ? sprintf("%.0f", tmx / emx) : "n/a"), \
				(ehx > 0 ? sprintf("%.0f", thx / ehx) : "n/a"), \
				(erx > 0 ? sprintf("%.0f", trx / erx) : "n/a"), \
				((emx > 0 && ehx > 0) ? ratio(tmx / emx, thx / ehx) : "n/a"), \
				((emx > 0 && erx > 0) ? ratio(tmx / emx, trx / erx) : "n/a")
		# python3_check: the same program with a leak check mid-run
		# (memtrail only): what the check adds per event of python3.
		for (k = 1; k <= n; k++) {
			w = wls[k]; e = evs[k]; c = med("python3_check", "memtrail", "cpu")
			sc = med("python3_check", "scan-memtrail", "cpu"); nc = med(w, "native", "cpu")
			if (w != "python3" || c == "" || nc == "" || e == "" || e == 0)
				continue
			printf "  python3_check (python3 with a leak check mid-run, memtrail only): %.0f ns/ev beyond native, %s of heaptrack -r; the check %s s CPU\n", \
				(c - nc) * 1e9 / e, ratio((c - nc) * 1e9 / e, ro[k]), (sc == "" ? "n/a" : sprintf("%.2f", sc))
		}
		# The same ratio taken in each round on its own (the CPU of
		# memtrail and of heaptrack -r beyond the native run of the same
		# round), then the median: the medians of the table come from
		# different rounds, and on a machine whose speed changes from
		# round to round the native median alone can decide a row.
		# Informative; the targets below keep the figures of the table.
		hdr = 0
		for (k = 1; k <= n; k++) {
			w = wls[k]; np = 0; list = ""
			for (r = 1; r <= runs; r++) {
				a = rcpu[w, "memtrail", r]; b = rcpu[w, "heaptrack-r", r]; c = rcpu[w, "native", r]
				if (a == "" || b == "" || c == "" || b - c <= 0)
					continue
				cnt["paired" SUBSEP w] = ++np
				val["paired" SUBSEP w, np] = (a - c) / (b - c)
				list = list sprintf(" %.2f", (a - c) / (b - c))
			}
			if (!np)
				continue
			if (!hdr++)
				print "  mt/ht-r CPU/ev paired by round (each round against its own native run): median (rounds)"
			printf "    %-9s %.2f (%s)\n", w, median("paired" SUBSEP w), substr(list, 2)
		}

		print ""
		print "Recording: max RSS of the recorded program (MiB); log size and bytes per event"
		fmt = "%-9s %8s %8s %8s %8s   %14s %14s %14s\n"
		printf fmt, "workload", "native", "memtrail", "hptrack", "hptrk -r", "memtrail log", "heaptrack log", "heaptrack -r log"
		printf fmt, "", "", "", "", "", "size   B/ev", "size   B/ev", "size   B/ev"
		for (k = 1; k <= n; k++) {
			w = wls[k]; e = evs[k]
			for (t = 1; t <= 3; t++) {
				tool = t == 1 ? "memtrail" : t == 2 ? "heaptrack" : "heaptrack-r"
				sz = med(w, tool, "size")
				lg[t] = sz == "" ? "n/a" : sprintf("%7s %6s", human(sz), (e == "" || e == 0) ? "n/a" : sprintf("%.3f", sz / e))
				if (t == 1) ms[k] = sz
				if (t == 2) hs[k] = sz
			}
			printf fmt, w, mib(med(w, "native", "rss")), mib(med(w, "memtrail", "rss")), \
				mib(med(w, "heaptrack", "rss")), mib(med(w, "heaptrack-r", "rss")), lg[1], lg[2], lg[3]
		}

		print ""
		print "Reading the last run'"'"'s logs: CPU and wall seconds, max RSS; memtrail'"'"'s over heaptrack_print'"'"'s"
		fmt = "%-9s %20s %20s %11s %20s %20s %11s\n"
		printf fmt, "workload", "report --summary", "heaptrack_print -p0", "mt/ht", "report", "heaptrack_print", "mt/ht"
		printf fmt, "", "cpu   wall    RSS", "cpu   wall    RSS", "cpu  wall", "cpu   wall    RSS", "cpu   wall    RSS", "cpu  wall"
		for (k = 1; k <= n; k++) {
			w = wls[k]
			printf fmt, w, cell(w, "memtrail-summary", 1), cell(w, "heaptrack_print-summary", 1), \
				sprintf("%5s %5s", ratio(med(w, "memtrail-summary", "cpu"), med(w, "heaptrack_print-summary", "cpu")), \
					ratio(med(w, "memtrail-summary", "wall"), med(w, "heaptrack_print-summary", "wall"))), \
				cell(w, "memtrail-full", 1), cell(w, "heaptrack_print-full", 1), \
				sprintf("%5s %5s", ratio(med(w, "memtrail-full", "cpu"), med(w, "heaptrack_print-full", "cpu")), \
					ratio(med(w, "memtrail-full", "wall"), med(w, "heaptrack_print-full", "wall")))
		}
	}

	# Thread scaling: the same 10 M pairs made by 1, 2, 4 and 8 threads.
	sn = 0
	for (k = 1; k <= n; k++)
		if (wls[k] == "churn" || wls[k] ~ /^mt_churn[0-9]*$/)
			sn++
	if (sn > 1) {
		print ""
		print "Thread scaling (churn, the same pairs in 1, 2, 4, 8 threads): CPU ns per event beyond native, and its growth over 1 thread; memtrail log size; memtrail run-to-run spread (largest / smallest run)"
		fmt = "%-9s %8s %8s %8s %8s %8s %12s %10s %10s\n"
		printf fmt, "workload", "threads", "memtrail", "growth", "hptrk -r", "growth", "memtrail log", "CPU spread", "log spread"
		split("churn mt_churn2 mt_churn mt_churn8", sw, " ")
		split("1 2 4 8", st, " ")
		base_m = ""; base_r = ""
		for (i = 1; i <= 4; i++) {
			for (k = 1; k <= n; k++)
				if (wls[k] == sw[i])
					break
			if (k > n)
				continue
			if (i == 1) { base_m = mo[k]; base_r = ro[k] }
			sz = med(sw[i], "memtrail", "size")
			printf fmt, sw[i], st[i], (mo[k] == "" ? "n/a" : sprintf("%.0f", mo[k])), \
				(mo[k] == "" || base_m == "" ? "n/a" : ratio(mo[k], base_m) "x"), \
				(ro[k] == "" ? "n/a" : sprintf("%.0f", ro[k])), \
				(ro[k] == "" || base_r == "" ? "n/a" : ratio(ro[k], base_r) "x"), human(sz), \
				spread(sw[i] SUBSEP "memtrail" SUBSEP "cpu"), spread(sw[i] SUBSEP "memtrail" SUBSEP "size")
		}
	}

	if (nsw > 0) {
		print ""
		print "Leak scan: memtrail'"'"'s largest check of each run (at exit; python3_check: its own, during the run) and LeakSanitizer'"'"'s of the same program: CPU and wall seconds; live heap scanned per second"
		fmt = "%-13s %-9s %12s %10s %8s %8s %10s %10s\n"
		printf fmt, "workload", "scanner", "blocks", "live heap", "cpu s", "wall s", "MiB/s cpu", "MiB/s wall"
		for (k = 1; k <= nsw; k++) {
			scanrow(sorder[k], "memtrail", "memtrail")
			scanrow(sorder[k], "lsan", "LSan")
		}
		c1 = med("heapgraph", "scan-memtrail", "cpu"); c2 = med("heapgraph", "scan-lsan", "cpu")
		t1 = med("heapgraph", "scan-memtrail", "wall"); t2 = med("heapgraph", "scan-lsan", "wall")
		if (c1 != "" && c2 != "")
			printf "heapgraph memtrail / LSan: %s CPU, %s wall (below 1: memtrail'"'"'s scan is faster)\n", ratio(c1, c2), ratio(t1, t2)
	}

	# Sampling: the cost against native, and the estimates against the
	# exact figures of the full recording.
	sm = 0
	for (k = 1; k <= n; k++)
		if (med(wls[k], "memtrail-sampled", "wall") != "")
			sm++
	if (sm > 0) {
		while ((getline line < accuracy) > 0) {
			split(line, f, "\t")
			acc[f[1]] = 1; a_ex[f[1]] = f[2]; a_es[f[1]] = f[3]; a_pe[f[1]] = f[4]
			a_n[f[1]] = f[5]; a_worst[f[1]] = f[6]; a_w[f[1]] = f[7]; a_se[f[1]] = f[8]
		}
		print ""
		printf "Sampling (memtrail record --sample %s): CPU and wall seconds against native (target: wall <= 1.10x); from the last run, the estimated peak against the full recording'"'"'s exact one, and over the stacks above 1 %% of the exact peak, the largest error and the error weighted by bytes; SE: the standard error of the peak were all its blocks small (sqrt(interval / peak)), which bounds what to expect\n", sample
		fmt = "%-9s %13s %13s %7s %7s  %-6s %13s %13s %8s %6s %6s %8s %8s\n"
		printf fmt, "workload", "native", "sampled", "wall", "CPU", "target", "exact peak", "estimate", "error", "SE", "stacks", "largest", "weighted"
		printf fmt, "", "cpu   wall", "cpu   wall", "ratio", "ratio", "", "B", "B", "%", "%", ">1 %", "error %", "error %"
		for (k = 1; k <= n; k++) {
			w = wls[k]
			if (med(w, "memtrail-sampled", "wall") == "")
				continue
			wr = ratio(med(w, "memtrail-sampled", "wall"), med(w, "native", "wall"))
			printf fmt, w, cell(w, "native"), cell(w, "memtrail-sampled"), wr,
				ratio(med(w, "memtrail-sampled", "cpu"), med(w, "native", "cpu")),
				(wr == "n/a" ? "n/a" : (wr + 0 <= 1.10 ? "met" : "MISSED")),
				((w in acc) ? commas(a_ex[w]) : "n/a"), ((w in acc) ? commas(a_es[w]) : "n/a"),
				((w in acc) ? a_pe[w] : "n/a"), ((w in acc) ? a_se[w] : "n/a"), ((w in acc) ? a_n[w] : "n/a"),
				((w in acc) ? a_worst[w] : "n/a"), ((w in acc) ? a_w[w] : "n/a")
		}
	}

	print ""
	print "Notes:"
	print "  raw numbers (every run): " tsv
	print "  events = allocations + frees from `memtrail report --summary --format json`"
	print "    (suffix h: counted in heaptrack'"'"'s log; p: the program'"'"'s own count)."
	print "  CPU = user + system time from /usr/bin/time: the whole process tree, threads included"
	print "    (heaptrack: its script, heaptrack_interpret and the compressor too)."
	print "  ns/ev = (CPU under the tool - native CPU) / events; mt/ht, mt/ht-r: memtrail'"'"'s ns/ev over"
	print "    heaptrack'"'"'s, over heaptrack -r'"'"'s (below 1: memtrail costs less per event)."
	print "  heaptrack -r records raw data (no heaptrack_interpret; its log, .raw.zst, is unresolved"
	print "    and heaptrack_print cannot read it): a recording-cost column only."
	print "  max RSS = the largest resident size of one process of the tree (getrusage)."
	print "    Under memtrail and heaptrack -r that is the program; under heaptrack, heaptrack_interpret:"
	print "    the targets compare the program under memtrail with the program under heaptrack -r."
	print "  leak scan: the recorder'"'"'s own clocks around its scan (MEMTRAIL_LEAK_SCAN_STATS=1; CPU: the"
	print "    process'"'"'s, the other threads parked); LSan: heapgraph_lsan'"'"'s clocks around"
	print "    __lsan_do_recoverable_leak_check() (CPU: the process'"'"'s and its tracer task'"'"'s);"
	print "    live heap: the bytes memtrail classified (the same program for LSan)."
	print "  reading: `memtrail report --summary` against heaptrack_print -p 0 -a 0 -T 0 -l 0 (its totals);"
	print "    `memtrail report` (summary, peak tree, leaks tree) against heaptrack_print'"'"'s default output."

	if (mem_ran != "") {
		print "  memory cases: memtrail'"'"'s readers on logs large in stacks or snapshots, not events"
		print "    (targets informative, never a failure):"
		m = split(mem_ran, mws, " ")
		for (k = 1; k <= m; k++) {
			w = mws[k]
			if (w == "snapshots") {
				what = sprintf("report --format massif, %s snapshots", commas(snapshots))
				tool = "memtrail-massif"; target = 100
			} else {
				what = sprintf("report, %s stacks %d frames deep", commas(deep_stacks), deep_frames)
				tool = "memtrail-full"; target = 200
			}
			r = med(w, tool, "rss"); c = med(w, tool, "cpu"); t = med(w, tool, "wall")
			printf "    %-9s %-42s %10s max RSS (target <= %d MiB: %s), %s CPU, %s wall\n", w, what ":", \
				(r == "" ? "n/a" : sprintf("%.1f MiB", r / 1024)), target, \
				(r == "" ? "n/a" : (r / 1024 <= target ? "met" : "MISSED")), \
				(c == "" ? "n/a" : sprintf("%.2fs", c)), (t == "" ? "n/a" : sprintf("%.2fs", t))
		}
	}
	if (have_mt != 1 || have_ht != 1 || n == 0)
		exit
	print ""
	print "Targets (SPEC section 7; informative, never a failure):"
	for (k = 1; k <= n; k++) {
		w = wls[k]
		t1 = (mo[k] == "" || ro[k] == "") ? "n/a" : (mo[k] <= ro[k] / 2 ? "met" : "MISSED")
		t2 = (ms[k] == "" || hs[k] == "") ? "n/a" : (ms[k] <= hs[k] ? "met" : "MISSED")
		a = med(w, "memtrail-summary", "cpu"); b = med(w, "heaptrack_print-summary", "cpu")
		t3 = (a == "" || b == "") ? "n/a" : (a * 3 <= b ? "met" : "MISSED")
		# the peak RSS of the program itself: under heaptrack -r it is
		# the largest process (under heaptrack, heaptrack_interpret is)
		a = med(w, "memtrail", "rss"); b = med(w, "heaptrack-r", "rss")
		t4 = (a == "" || b == "") ? "n/a" : (a <= b ? "met" : "MISSED")
		a = spreadv(w SUBSEP "memtrail" SUBSEP "cpu"); b = spreadv(w SUBSEP "memtrail" SUBSEP "size")
		t5 = (a == "" || b == "") ? "n/a" : (a <= 1.3 && b <= 1.3 ? "met" : "MISSED")
		printf "  %-9s CPU/ev <= 1/2 heaptrack -r: %-6s log <= heaptrack: %-6s --summary >= 3x faster (CPU): %-6s\n", \
			w, t1, t2, t3
		printf "  %-9s program RSS <= under heaptrack -r: %-6s runs within 1.3x (CPU %s, log %s): %s\n", \
			"", t4, spread(w SUBSEP "memtrail" SUBSEP "cpu"), spread(w SUBSEP "memtrail" SUBSEP "size"), t5
	}
	r1 = med("churn_small", "memtrail-summary", "rss")
	r2 = med("churn", "memtrail-summary", "rss")
	if (r1 != "" && r2 != "" && ev["churn_small", "memtrail"] != "" && ev["churn", "memtrail"] != "")
		printf "  replay memory (churn: same 1,000 stacks, 64 live blocks): %s events -> %s RSS, %s events -> %s RSS\n", \
			commas(ev["churn_small", "memtrail"]), mib(r1), commas(ev["churn", "memtrail"]), mib(r2)
	if (npw) {
		print ""
		print "Under perf (MT_BENCH_PERF=1): samples in all / samples in the code of the program, medians;"
		print "added = the quotient of a tool less the native one; memtrail added over heaptrack -r added"
		fmt = "  %-9s %8s %8s %10s %14s\n"
		printf fmt, "workload", "native", "memtrail", "hptrk -r", "mt/ht-r added"
		for (k = 1; k <= npw; k++) {
			w = porder[k]
			a = med(w, "native", "perf"); m = med(w, "memtrail", "perf"); h = med(w, "heaptrack-r", "perf")
			printf fmt, w, a == "" ? "n/a" : sprintf("%.3f", a), m == "" ? "n/a" : sprintf("%.3f", m), \
				h == "" ? "n/a" : sprintf("%.3f", h), \
				(a != "" && m != "" && h != "" && h > a) ? sprintf("%.2f", (m - a) / (h - a)) : "n/a"
		}
	}
}' "$tsv"

# Counts from the independent sources side by side.
echo
echo "Event counts (allocations + frees) by source:"
awk -F '\t' 'NR > 1 && $2 == "count" {
		c[$1] = c[$1] sprintf("  %s %s", $3, $8)
		n[$1, $3] = $8
		w[$1] = 1
	}
	END {
		for (x in w) {
			m = ""
			if (((x, "memtrail") in n) && ((x, "program") in n)) {
				d = n[x, "memtrail"] - n[x, "program"]
				# the C runtime adds a few of its own (stdio buffers)
				if (d < 0 || d > 100)
					m = m sprintf("  MISMATCH: memtrail %+d vs program", d)
			}
			if (((x, "memtrail") in n) && ((x, "heaptrack") in n)) {
				d = n[x, "memtrail"] - n[x, "heaptrack"]
				if (d * 1000 > n[x, "heaptrack"] || -d * 1000 > n[x, "heaptrack"])
					m = m sprintf("  DIFFERS: memtrail %+d vs heaptrack", d)
			}
			printf "  %-12s%s%s\n", x, c[x], m
		}
	}' "$tsv" | sort

if [ -n "$notes" ]; then
	echo
	echo "Not run:$notes"
fi
# The viewer on a 100 M-event log (MT_VIEW_PAIRS=0 skips it, and so does an
# MT_BENCH_ONLY without "view").
if [ "${MT_VIEW_PAIRS:-1}" != 0 ] && selected view; then
	echo
	sh "$top/tests/bench/view.sh"
fi
if [ -n "$failed" ]; then
	echo
	echo "bench: FAILED:$failed"
	exit 1
fi
exit 0
