#!/bin/sh
# robust_valgrind.sh - the recorder's own memory errors, found by running
# recorded programs under valgrind memcheck: threads allocating and freeing
# across threads, fork, snapshot signals (tests/robust/forkstress.c), C++
# exceptions through operator new/delete (cxx_throw.cpp), exit() from a
# thread and abort() (exits.c).
#
# How: ASan cannot run beside another malloc interposer, so memcheck checks
# the recorder instead. LD_PRELOAD cannot carry the recorder into a program
# under valgrind (valgrind's launcher is itself a dynamic program: the
# preload would record the launcher and remove itself from the environment
# before the program starts), so the programs are linked against
# libmemtrail.so (first in their DT_NEEDED list: the same interposition as a
# preload). Two memcheck settings matter: --soname-synonyms=somalloc=
# nosuchlib, because memcheck's default also replaces malloc in objects with
# no soname, which libmemtrail.so is, and would bypass the recorder; and
# tests/robust/valgrind.supp for libunwind's probing of addresses through
# system calls. Every process (the forked children too) must report 0
# errors, including definitely lost blocks; the logs must replay with the
# programs' figures (see each program's top comment).
#
# Not for: the figures of real programs (robust_realprogs.sh). Exit 77 when
# valgrind or a compiler is missing.
. "$(dirname "$0")/lib.sh"
mt_need_cmd valgrind gcc g++ python3
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
MT_TIMEOUT=300
R=$MT_TOP/tests/robust
REC=$(cd "$(dirname "$MT_RECORDER")" && pwd)/$(basename "$MT_RECORDER")
LINK="-Wl,--no-as-needed $REC -Wl,-rpath,$(dirname "$REC")"
CF="-g -O0 -fno-omit-frame-pointer -I$MT_TOP/include"
B=$MT_TMP/bin
mkdir -p "$B"
gcc $CF -pthread -o "$B/forkstress" "$R/forkstress.c" $LINK &&
	g++ $CF -o "$B/cxx_throw" "$R/cxx_throw.cpp" $LINK &&
	gcc $CF -pthread -o "$B/exits" "$R/exits.c" $LINK ||
	{ mt_fail "cannot build the programs"; mt_finish; }
if readelf -d "$B/forkstress" | grep NEEDED | head -n 1 | grep -q libmemtrail; then
	mt_ok "libmemtrail.so is the first needed library"
else
	mt_fail "libmemtrail.so is not first in DT_NEEDED"; readelf -d "$B/forkstress" | grep NEEDED
fi

# vgrun NAME STATUS CMD...: CMD under memcheck, recording into NAME.data;
# expects exit status STATUS and 0 errors in every process.
vgrun() {
	name=$1; want=$2; shift 2
	w=$MT_TMP/$name
	echo "== $name: $*"
	MEMTRAIL_OUTPUT=$w.data MEMTRAIL_SNAPSHOT_SIGNAL=12 timeout "$MT_TIMEOUT" \
		valgrind --tool=memcheck --soname-synonyms=somalloc=nosuchlib \
		--suppressions="$R/valgrind.supp" --trace-children=no \
		--leak-check=full --errors-for-leak-kinds=definite \
		--log-file="$w.vg.%p" "$@" >"$w.out" 2>"$w.err" </dev/null
	rc=$?
	if [ $rc = "$want" ]; then mt_ok "$name: exit status $rc"
	else mt_fail "$name: exit status $rc, expected $want"; cat "$w.err"; fi
	n=0; bad=0
	for l in "$w".vg.*; do
		n=$((n + 1))
		if ! grep -q "ERROR SUMMARY: 0 errors" "$l"; then
			bad=$((bad + 1))
			mt_fail "$name: memcheck errors in $l:"
			grep -A 14 "^==[0-9]*== [A-Z].*\(Invalid\|uninitialised\|unaddressable\|definitely\|Mismatched\|overlap\)" "$l" | head -n 40
		fi
	done
	[ $bad = 0 ] && mt_ok "$name: 0 memcheck errors in $n process(es)"
	if timeout "$MT_TIMEOUT" "$MEMTRAIL" report --summary --format json "$w.data" >"$w.json" 2>"$w.json.err" &&
		[ ! -s "$w.json.err" ]; then
		mt_ok "$name: the log replays"
	else
		mt_fail "$name: the log does not replay cleanly: $(cat "$w.json.err")"
	fi
	return 0
}

# jfig NAME KEYS...: the summary's values of KEYS, space-separated.
jfig() {
	_f=$MT_TMP/$1.json; shift
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(*(len(d[k]) if isinstance(d[k], list) else d[k] for k in sys.argv[2:]))' "$_f" "$@" 2>&1
}

# forkstress: threads, cross-thread frees, 40 forks, 2 snapshot signals.
vgrun forkstress 0 "$B/forkstress" 40 signals
# The thread's DTV is freed at exit by memtrail's call of __libc_freeres
# (valgrind's own call after it finds nothing left to do).
n=$(sed -n 's/^allocated \([0-9]*\)$/\1/p' "$MT_TMP/forkstress.err")
got=$(jfig forkstress allocations frees leaked_blocks threads snapshots)
if [ -n "$n" ] && [ "$got" = "$((n + 1)) $((n + 1)) 0 2 2" ]; then
	mt_ok "forkstress: allocations frees leaked_blocks threads snapshots = $got"
else
	mt_fail "forkstress: $got, expected $((n + 1)) $((n + 1)) 0 2 2 (allocated '$n')"
fi

# cxx_throw: +640 B in 10 blocks between its two snapshots.
vgrun cxx_throw 0 "$B/cxx_throw"
got=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["snapshots"]; print(s[1]["live_bytes"]-s[0]["live_bytes"], s[1]["live_blocks"]-s[0]["live_blocks"])' "$MT_TMP/cxx_throw.json" 2>&1)
[ "$got" = "640 10" ] && mt_ok "cxx_throw: snapshot delta 640 B in 10 blocks" ||
	mt_fail "cxx_throw: snapshot delta '$got', expected 640 10"

# exit() from a thread: status 3, 3 allocations, 1 free, 2 threads.
vgrun exit_thread 3 "$B/exits" thread
got=$(jfig exit_thread allocations frees threads)
[ "$got" = "3 1 2" ] && mt_ok "exit_thread: allocations frees threads = $got" ||
	mt_fail "exit_thread: $got, expected 3 1 2"

# abort(): killed by SIGABRT (134); 2 allocations, 1 free, 77 B leaked.
vgrun abort 134 "$B/exits" abort
got=$(jfig abort allocations frees leaked_bytes)
[ "$got" = "2 1 77" ] && mt_ok "abort: allocations frees leaked_bytes = $got" ||
	mt_fail "abort: $got, expected 2 1 77"
mt_finish
