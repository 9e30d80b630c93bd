#!/bin/sh
# robust_realprogs.sh - real programs recorded unchanged, and small programs
# of tests/robust/ that end or behave in awkward ways: python3 (dicts and
# lists; threads that allocate), perl, sqlite3, gcc -c, git (init, add,
# commit, status, log), a bash pipeline, a dlopen'ed library, C++
# exceptions across allocating frames, exit() from a thread, _exit, SIGSEGV
# and abort().
#
# For each: stdout and exit status under `memtrail record` equal the native
# run's (a signal: `memtrail: PROGRAM killed by SIGNAME`, status 128+signo);
# the log replays with no error or warning; allocations, frees, bytes
# allocated and leaked bytes and blocks equal valgrind memcheck's (both
# tools' default: the C and C++ runtimes free their memory at a normal
# exit; no --trace-children), except for differences each explained and
# quantified where the case is declared; the programs of tests/robust/ also
# get their exact figures, derived in their top comments. The table of
# every case's figures beside memcheck's is printed at the end.
#
# Not for: the accuracy of samples/ (accuracy_samples.sh) or speed. Every
# command is bounded by `timeout`. Exit 77 when memtrail is not built or
# valgrind, python3 or a compiler is missing (other missing programs skip
# their case only).

# The three runs of a case (native, memcheck, memtrail) see the same small
# environment: programs that copy their environment (bash, perl) would
# otherwise allocate differently for each variable the caller happens to
# have. Fixed hash seeds make python's and perl's allocations repeatable.
# MT_ROBUST_ONLY="NAME..." runs only those cases, MT_ROBUST_TRACE=1 adds
# --trace-malloc=yes to memcheck (both for debugging).
if [ -z "${MT_ROBUST_ENV:-}" ]; then
	exec env -i MT_ROBUST_ENV=1 PATH=/usr/local/bin:/usr/bin:/bin LC_ALL=C TZ=UTC \
		PYTHONHASHSEED=0 PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 \
		${MT_ROBUST_ONLY:+MT_ROBUST_ONLY="$MT_ROBUST_ONLY"} \
		${MT_ROBUST_TRACE:+MT_ROBUST_TRACE="$MT_ROBUST_TRACE"} ${MT_TOP:+MT_TOP="$MT_TOP"} ${MT_BUILD:+MT_BUILD="$MT_BUILD"} \
		${MEMTRAIL:+MEMTRAIL="$MEMTRAIL"} ${MT_RECORDER:+MT_RECORDER="$MT_RECORDER"} \
		${MT_SAMPLES:+MT_SAMPLES="$MT_SAMPLES"} ${MT_TMP:+MT_TMP="$MT_TMP"} \
		${TMPDIR:+TMPDIR="$TMPDIR"} sh "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
mt_need_cmd valgrind python3 gcc g++
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
MT_TIMEOUT=300
ulimit -c 0
HOME=$MT_TMP/home; export HOME
mkdir -p "$HOME"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
table=$MT_TMP/table.txt
: >"$table"

# ---- the helper programs -------------------------------------------------
R=$MT_TOP/tests/robust
B=$MT_TMP/bin
mkdir -p "$B"
CF="-g -O0 -fno-omit-frame-pointer -I$MT_TOP/include"
gcc $CF -pthread -o "$B/exits" "$R/exits.c" &&
	gcc $CF -fPIC -shared -o "$B/libdlmod.so" "$R/dlmod.c" &&
	gcc $CF -o "$B/dlmain" "$R/dlmain.c" -ldl &&
	g++ $CF -o "$B/cxx_throw" "$R/cxx_throw.cpp" ||
	{ mt_fail "cannot build the helper programs of tests/robust/"; mt_finish; }

want() {
	[ -z "${MT_ROBUST_ONLY:-}" ] && return 0
	case " $MT_ROBUST_ONLY " in *" $1 "*) return 0;; esac
	return 1
}

# memcheck, without malloc tracing (its log would be huge for python).
vg() {
	_l=$1; _p=$2; shift 2
	timeout "$MT_TIMEOUT" valgrind --tool=memcheck $(mt_keep_runtime_opts) \
		--trace-children=no --log-file="$_l" \
		${MT_ROBUST_TRACE:+--trace-malloc=yes} "$@" \
		>"$_p.out" 2>"$_p.err" </dev/null
	echo $? >"$_p.rc"
}

# The native status of a run killed by signal N, as the shell sees it.
signame() { kill -l "$(( $1 - 128 ))" 2>/dev/null; }

# The environments of the three runs. valgrind adds five variables to the
# program's environment (LD_LIBRARY_PATH with /usr/lib/debug: prepended,
# GLIBCPP_FORCE_NEW, GLIBCXX_FORCE_NEW, PWD, LD_PRELOAD); memtrail record
# adds MEMTRAIL_OUTPUT and removes its LD_PRELOAD. Programs that copy or
# extend their environment (setenv grows the environ array, bash and perl
# copy every variable) allocate by its size, so the runs get environments
# of the same shape: the first four variables given to the native and
# memtrail runs with the values memcheck's run ends up with, and the log
# path padded so that "MEMTRAIL_OUTPUT=PATH" is exactly as long as
# valgrind's "LD_PRELOAD=...". Left different: the text of those two
# variables, and their place in the list. Programs that keep a variable's
# name apart from its value (bash, perl, git's run-command) then allocate 5
# bytes more per copy of the name under memtrail ("MEMTRAIL_OUTPUT" is 5
# characters longer than "LD_PRELOAD") and 5 fewer per copy of the value:
# NAME_DELTA below, declared per case where measured.
vg_preload=$(env -i PATH="$PATH" valgrind -q --tool=memcheck /usr/bin/env 2>/dev/null | grep '^LD_PRELOAD=')
pad_len=$(( ${#vg_preload} - 16 ))

# data_path NAME: a log path for NAME, padded to pad_len characters when possible.
data_path() {
	_p="$MT_TMP/$1"
	while [ $(( ${#_p} + 5 )) -lt "$pad_len" ]; do _p="${_p}_"; done
	echo "$_p.data"
}

# In a subshell: the environment of a native or memtrail run.
env_like_vg() {
	LD_LIBRARY_PATH=/usr/lib/debug:/nonexistent; GLIBCPP_FORCE_NEW=1; GLIBCXX_FORCE_NEW=1
	PWD=$(pwd)
	export LD_LIBRARY_PATH GLIBCPP_FORCE_NEW GLIBCXX_FORCE_NEW PWD
}
# In a subshell: the environment of a memcheck run (valgrind completes it).
env_for_vg() {
	LD_LIBRARY_PATH=/nonexistent; GLIBCPP_FORCE_NEW=1; GLIBCXX_FORCE_NEW=1
	PWD=$(pwd)
	export LD_LIBRARY_PATH GLIBCPP_FORCE_NEW GLIBCXX_FORCE_NEW PWD
}

# run3 W CMD...: CMD natively, under memcheck and under memtrail record,
# in the current directory; files W.native.*, W.vg.*, W.rec.*, W.data.
run3() {
	_w=$1; shift
	(env_like_vg; mt_run "$_w.native" "$@")
	(env_for_vg; vg "$_w.vg.log" "$_w.vg" "$@")
	_d=$(data_path "${_w##*/}")
	(env_like_vg; mt_record "$_d" "$_w.rec" "$@")
	[ "$_d" = "$_w.data" ] || mv -f "$_d" "$_w.data" 2>/dev/null
	return 0
}

# run_case NAME DELTAS -- CMD...
# Runs CMD natively, under memcheck and under memtrail record (files
# $MT_TMP/NAME.*), then check_case NAME DELTAS.
run_case() {
	name=$1; deltas=$2; shift 3
	want "$name" || return 0
	w=$MT_TMP/$name
	echo "== $name: $*"
	run3 "$w" "$@"
	check_case "$name" "$deltas"
}

# check_case NAME DELTAS: checks output, status, replay, and memtrail's
# figures against memcheck's plus DELTAS (KEY:N, memtrail - memcheck, N
# derived where the case is declared). Leaves the JSON summary in
# $MT_TMP/NAME.json and the dump in $MT_TMP/NAME.dump.
check_case() {
	name=$1; deltas=$2
	want "$name" || return 0
	w=$MT_TMP/$name
	mt_same_run "$name: native vs memtrail record" "$w.native" "$w.rec"
	mt_same_run "$name: native vs memcheck" "$w.native" "$w.vg"
	rc=$(cat "$w.native.rc")
	if [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
		sig=$(signame "$rc")
		if grep -qx "memtrail: .* killed by SIG$sig" "$w.rec.err"; then
			mt_ok "$name: memtrail says killed by SIG$sig"
		else
			mt_fail "$name: no 'memtrail: ... killed by SIG$sig' line:"; cat "$w.rec.err"
		fi
	fi
	if [ ! -s "$w.data" ]; then
		mt_fail "$name: no log written"; cat "$w.rec.err"; return
	fi
	# The log replays: report and dump succeed without a word on stderr.
	if mt_summary "$w.data" "$w.json" && [ ! -s "$w.json.err" ]; then
		mt_ok "$name: the log replays"
	else
		mt_fail "$name: report --summary on the log:"; cat "$w.json.err"; return
	fi
	if timeout "$MT_TIMEOUT" "$MEMTRAIL" dump "$w.data" >"$w.dump" 2>"$w.dump.err" &&
		[ ! -s "$w.dump.err" ]; then
		mt_ok "$name: dump ($(wc -l <"$w.dump") lines)"
	else
		mt_fail "$name: dump:"; head -n 3 "$w.dump.err"
	fi
	if ! python3 "$MT_TOP/tests/expect.py" memcheck "$w.vg.log" >"$w.vg.json"; then
		mt_fail "$name: no HEAP SUMMARY in $w.vg.log"; return
	fi
	python3 - "$name" "$w.json" "$w.vg.json" "$table" $deltas <<'EOF' ||
import json, sys
name, mt_path, vg_path, table = sys.argv[1:5]
mt = json.load(open(mt_path))
vg = json.load(open(vg_path))
delta = {k: int(v) for k, v in (a.split(":") for a in sys.argv[5:])}
keys = ("allocations", "frees", "bytes_allocated", "leaked_bytes", "leaked_blocks")
bad = 0
for k in keys:
    want = vg[k] + delta.get(k, 0)
    if mt[k] != want:
        print("MISMATCH %s: %s memtrail %d, memcheck %d%s" % (
            name, k, mt[k], vg[k],
            " + %d explained = %d" % (delta[k], want) if k in delta else ""))
        bad = 1
with open(table, "a") as t:
    t.write("%-16s %9d %9d %12d %10d %6d | %9d %9d %12d %10d %6d  %s\n" % (
        name, *(mt[k] for k in keys), *(vg[k] for k in keys),
        " ".join(sys.argv[5:]) or "-"))
sys.exit(bad)
EOF
	mt_fail "$name: memtrail and memcheck figures differ beyond the explained deltas"
	[ -n "$deltas" ] && echo "$name: explained deltas (memtrail - memcheck): $deltas"
	return 0
}

# jget FILE KEY: one number of a JSON summary.
jget() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# exact NAME KEY VALUE: memtrail's summary figure equals VALUE (derived from the program).
exact() {
	want "$1" || return 0
	got=$(jget "$MT_TMP/$1.json" "$2")
	if [ "$got" = "$3" ]; then mt_ok "$1: $2 = $3"
	else mt_fail "$1: $2 is $got, the program's logic says $3"; fi
}

# snapdelta NAME A B BYTES BLOCKS: live heap grew by BYTES in BLOCKS between snapshots A and B.
snapdelta() {
	want "$1" || return 0
	got=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["snapshots"]
a, b = s[int(sys.argv[2])], s[int(sys.argv[3])]
print(b["live_bytes"] - a["live_bytes"], b["live_blocks"] - a["live_blocks"])' \
		"$MT_TMP/$1.json" "$2" "$3" 2>&1)
	if [ "$got" = "$4 $5" ]; then mt_ok "$1: snapshot $2 -> $3: +$4 B in +$5 blocks"
	else mt_fail "$1: snapshot $2 -> $3 grew by '$got' (bytes blocks), expected $4 $5"; fi
}

# endrec NAME HOW CODE: the dump's closing line says how the program ended.
endrec() {
	want "$1" || return 0
	if grep -q "^end clean=1 how=$2 code=$3 " "$MT_TMP/$1.dump"; then mt_ok "$1: END how=$2 code=$3"
	else mt_fail "$1: dump's end line is '$(grep '^end' "$MT_TMP/$1.dump")', expected how=$2 code=$3"; fi
}

# A thread's DTV is calloc(TLS modules + 16, 16) in ld.so, so under the
# preload, whose libraries add TLS modules, each thread created costs
# 16 B per extra module more than under memcheck (tests/expect.py
# adjust_dtv). extra_tls DATA PROG: that number of extra modules: the
# modules of the log loaded at start (the recorder's, also those it
# dlopens itself) that have a TLS segment and that PROG does not load
# natively (ld.so's list).
extra_tls() {
	_native=$(LD_TRACE_LOADED_OBJECTS=1 "$2" </dev/null 2>/dev/null |
		sed -n 's/.*=> \(\/[^ ]*\) (.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
	_n=0
	for _m in $("$MEMTRAIL" dump "$1" 2>/dev/null | sed -n 's/^module t=0 base=[^ ]* path="\(\/[^"]*\)".*/\1/p'); do
		readelf -lW "$_m" 2>/dev/null | grep -q '^ *TLS ' || continue
		_r=$(readlink -f "$_m")
		_seen=0
		for _x in $_native; do
			[ "$(readlink -f "$_x")" = "$_r" ] && _seen=1
		done
		[ $_seen = 1 ] || _n=$((_n + 1))
	done
	echo $_n
}

# extra_tls_run NAME PROG ARGS...: extra_tls of a short recording of PROG ARGS.
extra_tls_run() {
	_t=$MT_TMP/tls_$1.data; shift
	timeout "$MT_TIMEOUT" "$MEMTRAIL" record -o "$_t" -- "$@" >/dev/null 2>&1 </dev/null
	extra_tls "$_t" "$1"
}

# ---- real programs ----------------------------------------------------------
run_case python_dict "" -- "$PY" -c '
d = {}
for i in range(20000):
    d["key%d" % i] = list(range(i % 9))
s = sorted(d, key=lambda k: (len(d[k]), k))
print(len(d), s[0], s[-1], sum(map(len, d.values())))'

# 4 threads that each build lists, then wait for each other at a barrier,
# so all 4 are alive at once: none reuses the cached stack (and DTV) of a
# thread that already ended, whatever the scheduling (memcheck runs threads
# one at a time). Each created thread's DTV is 16 x extra_tls bytes larger
# under memtrail (see extra_tls): 4 x 16 x extra_tls more bytes
# allocated, and no more leaked (the ended threads' stacks and DTVs stay
# cached until glibc's __libc_freeres frees them at exit, in both tools).
# join() returns before a thread has freed its last state (a ~360 B
# block) and made its last 32 B allocation and free, so main sleeps a
# while before it exits (0.3 s once left memcheck one pair short on a
# loaded machine, where its threads run one at a time).
x=$(extra_tls_run py "$PY" -c pass)
echo "python3: $x TLS module(s) added by the recorder"
run_case python_threads "bytes_allocated:$((4 * 16 * x))" -- "$PY" -c '
import threading, time
out = [0] * 4
b = threading.Barrier(4)
def work(n):
    l = [str(i) * 5 for i in range(20000 + n)]
    out[n] = len("".join(l))
    b.wait()
ts = [threading.Thread(target=work, args=(n,)) for n in range(4)]
for t in ts: t.start()
for t in ts: t.join()
time.sleep(1.0)
print(out)'

if command -v perl >/dev/null 2>&1; then
	# +5 B allocated and leaked: perl's %ENV keeps one more copy of the
	# variable names than of the values (see NAME_DELTA above).
	run_case perl "bytes_allocated:5 leaked_bytes:5" -- perl -e '
my %h; my @a;
for my $i (1 .. 20000) { $h{"k$i"} = [ ($i) x ($i % 5) ]; push @a, "v$i" x 2; }
my @k = sort { length($a) <=> length($b) or $a cmp $b } keys %h;
print scalar(@k), " $k[0] $k[-1] ", scalar(@a), "\n";'
else
	echo "perl not installed: case skipped"
fi

if command -v sqlite3 >/dev/null 2>&1; then
	cat >"$MT_TMP/script.sql" <<'EOF'
create table t(id integer primary key, name text, v real);
with recursive c(x) as (select 1 union all select x + 1 from c where x < 3000)
insert into t(name, v) select 'name' || x, x * 0.5 from c;
create index tn on t(name);
select count(*), sum(v), max(name) from t where name like 'name2%';
update t set v = v * 2 where id % 3 = 0;
select count(*), round(sum(v), 1) from t;
EOF
	run_case sqlite3 "" -- sqlite3 -batch -init "$MT_TMP/script.sql" :memory: .quit
else
	echo "sqlite3 not installed: case skipped"
fi

cat >"$MT_TMP/unit.c" <<'EOF'
#include <stdlib.h>
struct node { struct node *next; int v; };
int sum(const struct node *n) { int s = 0; for (; n; n = n->next) s += n->v; return s; }
struct node *push(struct node *h, int v) { struct node *n = malloc(sizeof(*n)); n->next = h; n->v = v; return n; }
EOF
# The driver only: it execs cc1 and as, which neither tool follows.
run_case gcc_c "" -- gcc -c -O1 -o "$MT_TMP/unit.o" "$MT_TMP/unit.c"

# git: one repository per tool, with names of equal length, so the paths
# git copies have the same sizes in all three runs. Fixed dates make the
# commit hashes (printed) the same. git forks no helper for these commands.
if command -v git >/dev/null 2>&1; then
	GIT_AUTHOR_NAME=Robust; GIT_AUTHOR_EMAIL=robust@example.org
	GIT_COMMITTER_NAME=Robust; GIT_COMMITTER_EMAIL=robust@example.org
	GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"; GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
	GIT_CONFIG_NOSYSTEM=1; GIT_CONFIG_GLOBAL=/dev/null
	export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL \
		GIT_AUTHOR_DATE GIT_COMMITTER_DATE GIT_CONFIG_NOSYSTEM GIT_CONFIG_GLOBAL
	for d in nat vgd mtr; do
		mkdir -p "$MT_TMP/git_$d"
		for i in 1 2 3 4 5; do
			printf 'file %d\nline two\n' "$i" >"$MT_TMP/git_$d/f$i.txt"
		done
	done
	# git_step NAME ARGS...: the step in each repository, one tool each.
	git_step() {
		n=$1; shift
		want "git_$n" || return 0
		w=$MT_TMP/git_$n
		echo "== git_$n: git $*"
		(cd "$MT_TMP/git_nat" && env_like_vg && mt_run "$w.native" git "$@")
		(cd "$MT_TMP/git_vgd" && env_for_vg && vg "$w.vg.log" "$w.vg" git "$@")
		_d=$(data_path "git_$n")
		(cd "$MT_TMP/git_mtr" && env_like_vg && mt_record "$_d" "$w.rec" git "$@")
		mv -f "$_d" "$w.data" 2>/dev/null
		return 0
	}
	git_step init init -q -b main
	git_step add add f1.txt f2.txt f3.txt f4.txt f5.txt
	git_step commit commit -q -m "five files"
	git_step status status --short --branch
	git_step log log --format="%H %an %s"
	check_case git_init ""
	check_case git_add ""
	# +5 B allocated, freed before exit: commit prepares an environment for
	# hooks, with the names copied apart (see NAME_DELTA above).
	check_case git_commit "bytes_allocated:5"
	check_case git_status ""
	check_case git_log 
else
	echo "git not installed: case skipped"
fi

# bash with a pipeline: only the parent shell is compared (the children
# fork, and memtrail stops recording in a forked child; memcheck's log
# gives the first process). +5 B allocated and leaked: bash keeps each
# variable's name twice and its value once: 2 x 5 - 5 (see NAME_DELTA).
run_case bash_pipe "bytes_allocated:5 leaked_bytes:5" -- bash -c 'for i in $(seq 1 300); do echo "line $i"; done | grep -c 7 | tr 0-9 a-j; x=$(printf "%s" abc | wc -c); echo "x=$x"'

# ---- the programs of tests/robust/ -------------------------------------------
run_case dlopen "" -- "$B/dlmain" "$B/libdlmod.so"
snapdelta dlopen 0 1 4000 2
want dlopen && if grep -q "^module .*path=\"$B/libdlmod.so\" build_id=[0-9a-f][0-9a-f]* segs=0x" "$MT_TMP/dlopen.dump"; then
	mt_ok "dlopen: the dlopen'ed module is in the log"
else
	mt_fail "dlopen: no MODULE line for $B/libdlmod.so in the dump"
fi
want dlopen && "$MEMTRAIL" report --show-leaks --format collapsed "$MT_TMP/dlopen.data" >"$MT_TMP/dlopen.leaks" 2>&1 &&
for want in "dlmod_work \[tests/robust/dlmod.c:[0-9]*\];dlmod_keep \[tests/robust/dlmod.c:[0-9]*\];malloc 1000$" \
	"dlmod_work \[tests/robust/dlmod.c:[0-9]*\];dlmod_keep \[tests/robust/dlmod.c:[0-9]*\];malloc 3000$"; do
	if grep -q "$want" "$MT_TMP/dlopen.leaks"; then mt_ok "dlopen: leak symbolized: $want"
	else mt_fail "dlopen: no leak line matching '$want':"; cat "$MT_TMP/dlopen.leaks"; fi
done

run_case cxx_throw "" -- "$B/cxx_throw"
snapdelta cxx_throw 0 1 640 10
want cxx_throw && "$MEMTRAIL" report --show-leaks --format collapsed "$MT_TMP/cxx_throw.data" >"$MT_TMP/cxx_throw.leaks" 2>&1 &&
if grep -q "level" "$MT_TMP/cxx_throw.leaks"; then
	mt_fail "cxx_throw: blocks of level() leaked (unwinding frees were lost):"
	grep level "$MT_TMP/cxx_throw.leaks" | head -n 5
else
	mt_ok "cxx_throw: nothing allocated in level() leaked"
fi

# exit() from a thread: memtrail sees 2 threads; the thread's 111 B block
# is leaked with the thread's stack. One thread created: its DTV is 16 B
# per extra TLS module larger under memtrail, and it is never freed (the
# thread never ended; with the main thread still there, memtrail leaves
# the runtime's memory alone, and memcheck's freeres frees nothing more).
x=$(extra_tls_run exits "$B/exits" _exit)
echo "exits: $x TLS module(s) added by the recorder"
run_case exit_thread "bytes_allocated:$((16 * x)) leaked_bytes:$((16 * x))" -- "$B/exits" thread
exact exit_thread threads 2
endrec exit_thread exit 3
want exit_thread && "$MEMTRAIL" report --show-leaks --format collapsed "$MT_TMP/exit_thread.data" >"$MT_TMP/exit_thread.leaks" 2>&1 &&
if grep -q "thread_main \[tests/robust/exits.c:[0-9]*\];malloc 111$" "$MT_TMP/exit_thread.leaks"; then
	mt_ok "exit_thread: the thread's 111 B leak is on its stack"
else
	mt_fail "exit_thread: no 'thread_main;malloc 111' leak:"; cat "$MT_TMP/exit_thread.leaks"
fi

run_case _exit "" -- "$B/exits" _exit
for kv in allocations:2 frees:1 bytes_allocated:1024 peak_bytes:1024 peak_blocks:2 \
	leaked_bytes:1000 leaked_blocks:1; do
	exact _exit "${kv%%:*}" "${kv#*:}"
done
endrec _exit _exit 4

run_case sigsegv "" -- "$B/exits" segv
for kv in allocations:2 frees:0 bytes_allocated:350 peak_bytes:350 peak_blocks:2 \
	leaked_bytes:350 leaked_blocks:2; do
	exact sigsegv "${kv%%:*}" "${kv#*:}"
done
endrec sigsegv signal 11

run_case abort "" -- "$B/exits" abort
for kv in allocations:2 frees:1 bytes_allocated:4173 peak_bytes:4096 peak_blocks:1 \
	leaked_bytes:77 leaked_blocks:1; do
	exact abort "${kv%%:*}" "${kv#*:}"
done
endrec abort signal 6

echo
echo "memtrail (left) vs valgrind memcheck (right); deltas = memtrail - memcheck, explained above"
printf '%-16s %9s %9s %12s %10s %6s | %9s %9s %12s %10s %6s  %s\n' case allocs frees bytes leaked blks \
	allocs frees bytes leaked blks deltas
cat "$table"
mt_finish
