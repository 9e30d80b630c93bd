#!/bin/sh
# rec_freeres.sh - when the recorder lets the C and C++ runtimes free their
# memory at exit (recorder/freeres.c), on a C++ program with one thread
# (rec_freeres.cpp):
#   joined    the thread was joined: the runtimes free their memory, and
#             memtrail's figures equal memcheck's default run's; with
#             --keep-runtime, memcheck's with --run-libc-freeres=no
#             --run-cxx-freeres=no
#   running   the thread still runs at exit: freeing under it is not safe,
#             so the runtimes keep their memory whatever the option, and
#             the figures are memcheck's with freeres off in both runs
#             (memcheck stops the thread first and frees anyway)
# The program's stdout and exit status are the same in every run. The
# thread's DTV is 16 B per TLS module the preload adds larger under
# memtrail: memcheck's runs get as many stand-in TLS modules.
. "$(dirname "$0")/lib.sh"
mt_need_cmd c++ valgrind python3 readelf
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
cd "$MT_TMP" || exit 1
EXPECT="python3 $MT_TOP/tests/expect.py"
c++ -O0 -g -pthread -o rec_freeres "$MT_TOP/tests/e2e/rec_freeres.cpp" ||
	mt_skip "cannot build rec_freeres"
extra=$(( $(mt_tls_modules "$MT_RECORDER" ./rec_freeres) - $(mt_tls_modules ./rec_freeres) ))
MT_MEMCHECK_PRELOAD=
[ "$extra" -gt 0 ] && MT_MEMCHECK_PRELOAD=$(mt_tls_standins "$extra")
export MT_MEMCHECK_PRELOAD

# run MODE MEMTRAIL_KEEP MEMCHECK_KEEP: memtrail (--keep-runtime when
# MEMTRAIL_KEEP is 1) against memcheck (freeres off when MEMCHECK_KEEP is 1).
run() {
	w=$1.$2.$3
	MT_KEEP_RUNTIME=$2 mt_record "$w.data" "$w.rec" ./rec_freeres "$1"
	MT_KEEP_RUNTIME=$3 mt_memcheck "$w.vg.log" "$w.vg" ./rec_freeres "$1"
	mt_run "$w.native" ./rec_freeres "$1"
	mt_same_run "$w native vs memtrail record" "$w.native" "$w.rec"
	mt_same_run "$w native vs memcheck" "$w.native" "$w.vg"
	if ! mt_summary "$w.data" "$w.json"; then
		mt_fail "$w: report --summary: $(cat "$w.json.err")"
		return
	fi
	$EXPECT memcheck "$w.vg.log" >"$w.vg.json" || { mt_fail "$w: no HEAP SUMMARY"; return; }
	if $EXPECT compare "$w" "$w.vg.json" "$w.json" allocations frees bytes_allocated \
		leaked_bytes leaked_blocks; then
		mt_ok "$w: memtrail $([ "$2" = 1 ] && echo --keep-runtime || echo default) = memcheck $([ "$3" = 1 ] && echo freeres off || echo default)"
	else
		mt_fail "$w: memtrail and memcheck differ"
	fi
}

run joined 0 0
run joined 1 1
run running 0 1
run running 1 1
# What tells the two joined runs apart is the runtimes' memory: 3 blocks,
# libstdc++'s pool, the thread's DTV (its stack is in glibc's cache) and
# stdout's buffer (stdout is a file here).
a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["leaked_blocks"])' joined.0.0.json)
b=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["leaked_blocks"])' joined.1.1.json)
[ "$a" = 1 ] && [ "$b" = 4 ] && mt_ok "joined: 1 block leaked (the program's 24 B), 4 with the runtimes' kept" ||
	mt_fail "joined: $a blocks leaked, $b kept (expected 1 and 4)"
mt_finish
