#!/bin/sh
# leak_memcheck.sh - the recorder's leak check at exit against valgrind
# memcheck --leak-check=full: definitely, indirectly, possibly lost and
# still reachable, bytes and blocks, zero tolerance, on samples whose
# kinds are worked out by hand in their comments (leak_kinds.c: an
# overwritten pointer, a lost list with an indirectly lost tail, an
# interior pointer only, blocks reachable only from an mmap'ed region and
# from TLS; leak_thread.c: a block reachable only from another thread's
# stack; leak_check.c: a check during the run, memtrail_leak_check() and
# VALGRIND_DO_LEAK_CHECK; cxx_new.cpp; leak_cxx.cpp: blocks kept only by
# the interior pointers memcheck's heuristics accept (std::string, new[],
# sqlite's length, multiple inheritance), and one they do not; phases.c;
# leak_merged.c: a block kept only in a mapping the kernel merged with a
# large block's; leak_threads.c: a check after 1,000 threads)
# and on real programs (python3, perl, sqlite3, git, and leak_stl.cpp, a
# word index on the standard library's containers, built with each of
# libstdc++'s two std::string ABIs).
# Each log's LEAK records are also checked by the independent decoder
# (tests/e2e/rec_decode.py: every listed block live, the totals theirs).
# Where the recorder cannot scan (_exit, a fatal signal) the summary says
# "not classified" and the JSON has no kind.
#
# The environment is made the same shape as in realprog_memcheck.sh:
# valgrind's extra variables in memtrail's run, and as many stand-in TLS
# modules preloaded under memcheck as libmemtrail.so brings (each new
# thread's DTV, 16 B per TLS module, is one of the blocks classified).
#
# Not for: allocation counts and the peak (accuracy_samples.sh,
# realprog_memcheck.sh).
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3 readelf valgrind
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
EXPECT="python3 $MT_TOP/tests/expect.py"
DEC="python3 $MT_TOP/tests/e2e/rec_decode.py"
MT_TIMEOUT=300
PYTHONHASHSEED=0; export PYTHONHASHSEED
LC_ALL=C; export LC_ALL
MT_RECORD_ENV=$(mt_valgrind_env)
KINDS="definitely_lost_bytes definitely_lost_blocks indirectly_lost_bytes indirectly_lost_blocks
possibly_lost_bytes possibly_lost_blocks reachable_bytes reachable_blocks"

# kinds JSON: the eight figures of a summary (or memcheck's) on one line.
kinds() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(str(d.get(k)) for k in sys.argv[2].split()))' \
		"$1" "$KINDS"
}

# check NAME [VGOPT...] -- CMD...: one program under both tools.
check() {
	name=$1; shift
	vgopts=
	while [ "$1" != "--" ]; do vgopts="$vgopts $1"; shift; done
	shift
	w=$MT_TMP/$name
	prog=$(command -v "$1")
	extra=$(( $(mt_tls_modules "$MT_RECORDER" "$prog") - $(mt_tls_modules "$prog") ))
	pre=
	[ "$extra" -gt 0 ] && pre=$(mt_tls_standins "$extra")
	# shellcheck disable=SC2086
	env ${pre:+LD_PRELOAD=$pre} timeout "$MT_TIMEOUT" valgrind --tool=memcheck \
		--leak-check=full $vgopts --log-file="$w.vg.log" "$@" >"$w.vg.out" 2>&1 </dev/null
	mt_record "$w.data" "$w.rec" "$@"
	if ! $EXPECT memcheck "$w.vg.log" >"$w.vg.json"; then
		mt_fail "$name: no HEAP SUMMARY in $w.vg.log"
		return 1
	fi
	if ! mt_summary "$w.data" "$w.mt.json"; then
		mt_fail "$name: memtrail report --summary --format json failed"
		return 1
	fi
	vg=$(kinds "$w.vg.json"); mt=$(kinds "$w.mt.json")
	if [ "$vg" = "$mt" ]; then
		mt_ok "$name: memcheck's kinds (D d I i P p R r): $mt"
	else
		mt_fail "$name: memcheck '$vg' vs memtrail '$mt'"
	fi
	if $DEC "$w.data" >"$w.dec" 2>"$w.dec.err"; then
		[ "$(mt_val leak_totals "$w.dec")" = "$mt" ] &&
			mt_ok "$name: the decoder's LEAK totals are the report's" ||
			mt_fail "$name: decoder '$(mt_val leak_totals "$w.dec")' vs report '$mt'"
	else
		mt_fail "$name: decoder rejects the log: $(tail -n 1 "$w.dec.err")"
	fi
	return 0
}

# ---- samples: memcheck's figures and the hand-worked ones -------------------
check leak_kinds -- "$MT_SAMPLES/leak_kinds" &&
	[ "$(kinds "$MT_TMP/leak_kinds.mt.json")" = "1048 2 96 2 200 1 910 3" ] &&
	mt_ok "leak_kinds: the sample's own figures" ||
	mt_fail "leak_kinds: not the sample's figures 1048 2 96 2 200 1 910 3"
# An export of --show-leaks holds the kinds --leak-kinds asks for (without
# it, everything live at the end, as before the kinds): the sample's
# definitely lost 1,048 B, with the indirectly lost 1,144 B, all 2,254 B.
exported() {
	"$MEMTRAIL" report --show-leaks "$@" --format collapsed "$MT_TMP/leak_kinds.data" 2>/dev/null |
	    awk '{ s += $NF } END { print s + 0 }'
}
e_def=$(exported --leak-kinds definite)
e_di=$(exported --leak-kinds definite,indirect)
e_all=$(exported)
"$MEMTRAIL" report --show-leaks --leak-kinds definite,indirect --format svg \
	"$MT_TMP/leak_kinds.data" >"$MT_TMP/leak_kinds.svg" 2>/dev/null
if [ "$e_def" = 1048 ] && [ "$e_di" = 1144 ] && [ "$e_all" = 2254 ] &&
    grep -q 'definitely lost, indirectly lost' "$MT_TMP/leak_kinds.svg"; then
	mt_ok "leak_kinds: exports hold the kinds asked for (1048, 1144, all 2254)"
else
	mt_fail "leak_kinds: exports of definite $e_def, definite,indirect $e_di, all $e_all"
fi
# A thread still runs at exit: memtrail keeps the runtimes' memory then
# (recorder/freeres.c), so memcheck does too.
check leak_thread --run-libc-freeres=no --run-cxx-freeres=no -- "$MT_SAMPLES/leak_thread" &&
	case $(kinds "$MT_TMP/leak_thread.mt.json") in
	"77 1 0 0 "*" 1 333 2") mt_ok "leak_thread: 77 B definitely lost, 33 + 300 B reachable" ;;
	*) mt_fail "leak_thread: not the sample's figures: $(kinds "$MT_TMP/leak_thread.mt.json")" ;;
	esac
# A check during the run (memtrail_leak_check, VALGRIND_DO_LEAK_CHECK at
# the same point): memcheck's first LEAK SUMMARY is the snapshot's kinds.
check leak_check -- "$MT_SAMPLES/leak_check" &&
	[ "$(kinds "$MT_TMP/leak_check.mt.json")" = "1048 2 96 2 0 0 0 0" ] &&
	mt_ok "leak_check: the kinds at exit are the sample's" ||
	mt_fail "leak_check: at exit $(kinds "$MT_TMP/leak_check.mt.json")"
vgmid=$(python3 -c '
import re, sys
t = open(sys.argv[1]).read()
f = lambda l: [x.replace(",", "") for x in re.findall(l + r": ([\d,]+) bytes in ([\d,]+) blocks", t)[0]]
print(" ".join(" ".join(f(l)) for l in ("definitely lost", "indirectly lost", "possibly lost", "still reachable")))' \
	"$MT_TMP/leak_check.vg.log")
mtmid=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["snapshots"][0]
print(" ".join(str(s.get(k)) for k in sys.argv[2].split()))' "$MT_TMP/leak_check.mt.json" "$KINDS")
[ "$vgmid" = "$mtmid" ] && [ "$mtmid" = "1048 2 96 2 0 0 10 1" ] &&
	mt_ok "leak_check: memcheck's check during the run = the snapshot's: $mtmid" ||
	mt_fail "leak_check: during the run memcheck '$vgmid' vs memtrail '$mtmid' (sample: 1048 2 96 2 0 0 10 1)"
grep -q '^memtrail: leak check 0: 1154 bytes live: 1048 definitely lost, 96 indirectly lost, 0 possibly lost, 10 still reachable$' \
	"$MT_TMP/leak_check.rec.err" && mt_ok "leak_check: record's line for the check" ||
	mt_fail "leak_check: $(grep 'leak check' "$MT_TMP/leak_check.rec.err")"

# --leak-check-signal: the helper thread makes the check, from outside.
printf '#include <signal.h>\n#include <stdlib.h>\nvoid *volatile k;\nint main(void) { k = malloc(100); k = malloc(5); raise(SIGUSR2); return 0; }\n' >"$MT_TMP/sig.c"
cc -O0 -o "$MT_TMP/sig" "$MT_TMP/sig.c" || mt_fail "cannot build the signal program"
MT_RECORD_ENV="$MT_RECORD_ENV MEMTRAIL_LEAK_CHECK_SIGNAL=12" mt_record "$MT_TMP/sig.data" "$MT_TMP/sig.rec" "$MT_TMP/sig"
grep -q '^memtrail: leak check 0: 105 bytes live: 100 definitely lost, 0 indirectly lost, 0 possibly lost, 5 still reachable$' \
	"$MT_TMP/sig.rec.err" && [ "$(cat "$MT_TMP/sig.rec.rc")" = 0 ] &&
	mt_ok "leak check signal: 100 B definitely lost, 5 B reachable; exit status 0" ||
	mt_fail "leak check signal: $(cat "$MT_TMP/sig.rec.err"), status $(cat "$MT_TMP/sig.rec.rc")"

# A check during the run listing 2,000,000 lost blocks: its LEAK records
# fill chunks while the chunk before is still to be written, and the check
# holds the writer's lock (the chunk is written there; waiting for the
# lock would never end). 2,000,000 x 24 B live; all but the last block
# lost (its address may still be in a register), the program goes on.
printf '#include <stdlib.h>\n#include "memtrail.h"\nint main(void) { for (int i = 0; i < 2000000; i++) { volatile char *p = malloc(24); p[0] = 1; } memtrail_leak_check(); return 0; }\n' >"$MT_TMP/many.c"
cc -O0 -I"$MT_TOP/include" -o "$MT_TMP/many" "$MT_TMP/many.c" || mt_fail "cannot build the many-blocks program"
MT_TIMEOUT=120 mt_record "$MT_TMP/many.data" "$MT_TMP/many.rec" "$MT_TMP/many"
if [ "$(cat "$MT_TMP/many.rec.rc")" = 0 ] &&
    grep -q '^memtrail: leak check 0: 48000000 bytes live: 4799997[0-9] definitely lost' "$MT_TMP/many.rec.err" &&
    $DEC "$MT_TMP/many.data" >"$MT_TMP/many.dec" 2>"$MT_TMP/many.dec.err"; then
	mt_ok "a check during the run with 2,000,000 lost blocks: written, the program goes on"
else
	mt_fail "2,000,000 lost blocks: status $(cat "$MT_TMP/many.rec.rc"), $(grep 'leak check' "$MT_TMP/many.rec.err"), decoder: $(tail -n 1 "$MT_TMP/many.dec.err" 2>/dev/null)"
fi

# C++: the orphan Node's only pointer was a local of main, dead once main
# returned (exit's frames lie over main's: the scan starts at exit's caller).
check cxx_new -- "$MT_SAMPLES/cxx_new" &&
	[ "$(kinds "$MT_TMP/cxx_new.mt.json")" = "24 1 0 0 0 0 0 0" ] &&
	mt_ok "cxx_new: the orphan Node definitely lost" ||
	mt_fail "cxx_new: $(kinds "$MT_TMP/cxx_new.mt.json")"
# memcheck's heuristics (its default, --leak-check-heuristics=all): the
# blocks kept only by interior pointers of their shapes are reachable, the
# others possibly lost (worked out in the sample).
check leak_cxx -- "$MT_SAMPLES/leak_cxx" &&
	[ "$(kinds "$MT_TMP/leak_cxx.mt.json")" = "8 1 75 1 88 3 293 5" ] &&
	mt_ok "leak_cxx: the sample's figures, heuristics applied" ||
	mt_fail "leak_cxx: not the sample's figures 8 1 75 1 88 3 293 5: $(kinds "$MT_TMP/leak_cxx.mt.json")"
# A block kept only in a mapping of the program's that the kernel merged
# with a large block's chunk next to it (leak_merged.c): reachable.
if cc -O0 -o "$MT_TMP/leak_merged" "$MT_TOP/tests/e2e/leak_merged.c"; then
	check leak_merged -- "$MT_TMP/leak_merged" &&
		[ "$(kinds "$MT_TMP/leak_merged.mt.json")" = "0 0 0 0 0 0 300100 2" ] &&
		grep -q merged "$MT_TMP/leak_merged.rec.out" &&
		mt_ok "leak_merged: 100 B reachable from a mapping merged with a chunk's" ||
		mt_fail "leak_merged: $(kinds "$MT_TMP/leak_merged.mt.json"), $(cat "$MT_TMP/leak_merged.rec.out")"
else
	mt_fail "cannot build leak_merged.c"
fi
# A check after 1,000 threads, each with mappings of the recorder's own
# that the scan leaves out (leak_threads.c): 77 B definitely lost.
if cc -O0 -pthread -o "$MT_TMP/leak_threads" "$MT_TOP/tests/e2e/leak_threads.c"; then
	check leak_threads --max-threads=1100 -- "$MT_TMP/leak_threads" 1000 &&
		[ "$(kinds "$MT_TMP/leak_threads.mt.json")" = "77 1 0 0 0 0 0 0" ] &&
		mt_ok "leak_threads: classified after 1,000 threads, 77 B definitely lost" ||
		mt_fail "leak_threads: $(kinds "$MT_TMP/leak_threads.mt.json"), $(grep allocations "$MT_TMP/leak_threads.rec.err")"
else
	mt_fail "cannot build leak_threads.c"
fi
check phases -- "$MT_SAMPLES/phases" &&
	[ "$(kinds "$MT_TMP/phases.mt.json")" = "8192 2 0 0 0 0 1024 1" ] &&
	mt_ok "phases: rows 14, 15 lost, the config reachable" ||
	mt_fail "phases: $(kinds "$MT_TMP/phases.mt.json")"
grep -q '(8.0 KiB definitely lost), ' "$MT_TMP/phases.rec.err" &&
	mt_ok "record's closing line: (8.0 KiB definitely lost)" ||
	mt_fail "record's closing line: $(grep allocations "$MT_TMP/phases.rec.err")"

# ---- no scan where the process does not exit normally ---------------------
# _exit (no exit handlers: END is written by the _exit hook) and a fatal
# signal (aborter.c: abort()).
printf '#include <stdlib.h>\n#include <unistd.h>\nvoid *volatile p;\nint main(void) { p = malloc(64); _exit(0); }\n' >"$MT_TMP/uexit.c"
cc -O0 -o "$MT_TMP/uexit" "$MT_TMP/uexit.c" || mt_fail "cannot build a program that calls _exit"
for s in "$MT_TMP/uexit" "$MT_SAMPLES/aborter"; do
	[ -x "$s" ] || continue
	mt_record "$MT_TMP/${s##*/}.data" "$MT_TMP/${s##*/}.rec" "$s"
	s=${s##*/}
	"$MEMTRAIL" report --summary "$MT_TMP/$s.data" >"$MT_TMP/$s.sum" 2>/dev/null
	mt_summary "$MT_TMP/$s.data" "$MT_TMP/$s.json"
	if grep -q '^ not classified' "$MT_TMP/$s.sum" && ! grep -q definitely_lost "$MT_TMP/$s.json"; then
		mt_ok "$s: not classified (no scan), no kinds in the JSON"
	else
		mt_fail "$s: classified without a normal exit"
	fi
done

# ---- real programs ------------------------------------------------------------
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
check python3 -- "$PY" -c '
d = {}
for i in range(20000):
    d["k%d" % i] = [i] * (i % 7)
print(len(d))'
# perl randomizes its hash seed per run (the buckets' sizes change with
# it): fixed, as python's is. It also copies the environment into %ENV at
# start-up, and the two runs'
# environments differ in their strings (valgrind's LD_PRELOAD, memtrail's
# MEMTRAIL_OUTPUT): measured, the same 1,794 blocks live at exit under
# both, 152 B more under memcheck, all in the strings. Emptied first
# thing, %ENV keeps none of them.
if command -v perl >/dev/null 2>&1; then
	PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0; export PERL_HASH_SEED PERL_PERTURB_KEYS
	check perl -- perl -e 'BEGIN { %ENV = () } my %h; $h{$_} = [1 .. $_ % 9] for 1 .. 20000; print scalar(keys %h), "\n"'
fi
if command -v sqlite3 >/dev/null 2>&1; then
	check sqlite3 -- sqlite3 -batch :memory: "create table t(id integer primary key, name text);
insert into t(name) select printf('name-%06d', value) from generate_series(1, 20000);
create index ti on t(name);
select count(*) from t where name like 'name-01%';"
fi
if command -v git >/dev/null 2>&1; then
	check git -- git --version
fi
# A C++ program: std::map, unordered_map, list, deque, shared_ptr, string,
# iostream; built with each std::string ABI (the copy-on-write one keeps
# its characters by a pointer 24 B into each block).
if command -v c++ >/dev/null 2>&1; then
	for abi in 1 0; do
		if c++ -O2 -g -D_GLIBCXX_USE_CXX11_ABI=$abi -o "$MT_TMP/leak_stl$abi" \
		    "$MT_TOP/tests/e2e/leak_stl.cpp"; then
			check "leak_stl_abi$abi" -- "$MT_TMP/leak_stl$abi" "$MT_TOP/README.md"
		else
			mt_fail "cannot build tests/e2e/leak_stl.cpp (ABI $abi)"
		fi
	done
fi
mt_finish
