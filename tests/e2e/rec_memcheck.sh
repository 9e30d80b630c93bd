#!/bin/sh
# rec_memcheck.sh - the recorder's counts against independent truths on
# harder programs: every C++ operator variant, a throwing operator new,
# static destructors and atexit frees (rec_cxx.cpp counts its own calls);
# threads freeing each other's blocks (rec_prog threads: the program's own
# blocks, by frame 0, and memcheck's totals); sqlite3 against memcheck.
# Both tools free the C and C++ runtimes' memory at exit by default; the
# threads case is compared once more with it kept (MEMTRAIL_FREERES=0,
# memcheck's --run-libc-freeres=no --run-cxx-freeres=no), where the DTVs
# of the thread stacks glibc keeps cached are never freed (measured: 4
# frees fewer, the same on both sides).
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd cc c++ python3
cd "$MT_TMP" || exit 1
mt_build_rec_prog rec_prog
c++ -O0 -g -std=c++17 -o rec_cxx "$MT_TOP/tests/e2e/rec_cxx.cpp" || mt_skip "cannot build the test programs"
expect() { sed -n 's/^expect //p' "$1" | tr ' =' '\n\n' | sed -n 'n;p' | tr '\n' ' '; }
have_vg=0; command -v valgrind >/dev/null 2>&1 && have_vg=1
vg_totals() {
	sed -n 's/.*total heap usage: \([0-9,]*\) allocs, \([0-9,]*\) frees, \([0-9,]*\) bytes.*/\1 \2 \3/p' "$1" | tr -d ,
}

# C++: the program's own blocks (frame 0 in the program) equal its count.
MEMTRAIL_OUTPUT=$MT_TMP/c.data LD_PRELOAD=$REC ./rec_cxx >c.out 2>c.err
rc=$?
$DEC c.data >c.dec 2>c.dec.err || mt_fail "C++ log: $(tail -n 1 c.dec.err)"
want=$(expect c.out)
got="$(mt_val exe_allocs c.dec) $(mt_val exe_frees c.dec) $(mt_val exe_bytes c.dec) "
[ $rc = 0 ] && [ "$got" = "$want" ] && mt_ok "C++ operators: allocs frees bytes = $want" ||
	mt_fail "C++ operators (status $rc): log '$got', program '$want'"
[ "$(mt_val exe_live_blocks c.dec)" = 0 ] && [ "$(mt_val ignored_frees c.dec)" = 0 ] &&
	mt_ok "C++: static destructor and atexit frees recorded" || mt_fail "C++: blocks left or stray frees"
# The exception object (allocated inside the throwing operator new) is
# counted by neither side: the runtime frees what it allocated.
[ "$(mt_val double_allocs c.dec)" = 0 ] || mt_fail "C++: an address allocated twice"

# Threads: cross-thread frees all matched, the program's own figures exact,
# and the totals (with glibc's per-thread blocks) equal memcheck's.
MEMTRAIL_OUTPUT=$MT_TMP/t.data LD_PRELOAD=$REC ./rec_prog threads >t.out 2>&1
$DEC t.data >t.dec
want=$(expect t.out)
got="$(mt_val exe_allocs t.dec) $(mt_val exe_frees t.dec) $(mt_val exe_bytes t.dec) $(mt_val exe_live t.dec) $(mt_val exe_live_blocks t.dec) "
[ "$got" = "$want" ] && mt_ok "threads: program's own allocs frees bytes live blocks = $want" ||
	mt_fail "threads: log '$got', program '$want'"
[ "$(mt_val ignored_frees t.dec)" = 0 ] && [ "$(mt_val double_allocs t.dec)" = 0 ] &&
	mt_ok "threads: every FREE follows its ALLOC, no address live twice (valid order)" ||
	mt_fail "threads: $(mt_val ignored_frees t.dec) stray frees, $(mt_val double_allocs t.dec) double allocs"
[ "$(mt_val threads t.dec)" = 9 ] && mt_ok "threads: 9 thread indexes" || mt_fail "threads: $(mt_val threads t.dec) threads"
# Short threads (8,000, four at a time): figures exact, one thread index
# each, and the recorder's memory stays small: a thread's ring (64 KiB and
# its stack table) is reused by the next thread once the first is gone,
# not kept until the helper frees it (without that: 33 MiB of peak RSS).
MEMTRAIL_OUTPUT=$MT_TMP/st.data LD_PRELOAD=$REC ./rec_prog shortthreads >st.out 2>&1
$DEC st.data >st.dec
want=$(expect st.out)
got="$(mt_val exe_allocs st.dec) $(mt_val exe_frees st.dec) $(mt_val exe_bytes st.dec) $(mt_val exe_live st.dec) $(mt_val exe_live_blocks st.dec) "
[ "$got" = "$want" ] && [ "$(mt_val ignored_frees st.dec) $(mt_val double_allocs st.dec)" = "0 0" ] &&
	mt_ok "short threads: allocs frees bytes live blocks = $want, valid order" ||
	mt_fail "short threads: log '$got', program '$want', stray frees/double allocs $(mt_val ignored_frees st.dec)/$(mt_val double_allocs st.dec)"
[ "$(mt_val threads st.dec)" = 8001 ] && mt_ok "short threads: 8001 thread indexes" ||
	mt_fail "short threads: $(mt_val threads st.dec) thread indexes"
# Two threads that start to allocate while the main thread allocates
# without pause (from then on the recorder takes order keys with a locked
# increment: tbuf.c, keys_shared), each freeing the others' blocks: in
# every run the program's own figures are exact and the order valid.
bad=""
for run in 1 2 3 4 5 6; do
	MEMTRAIL_OUTPUT=$MT_TMP/h.data timeout 60 env LD_PRELOAD="$REC" ./rec_prog handoff >h.out 2>&1
	$DEC h.data >h.dec 2>h.dec.err || { bad="$bad run $run: $(tail -n 1 h.dec.err);"; continue; }
	want=$(expect h.out)
	got="$(mt_val exe_allocs h.dec) $(mt_val exe_frees h.dec) $(mt_val exe_bytes h.dec) $(mt_val exe_live h.dec) $(mt_val exe_live_blocks h.dec) "
	odd="$(mt_val ignored_frees h.dec) $(mt_val double_allocs h.dec) $(mt_val block_mismatch h.dec) $(mt_val truncated h.dec)"
	[ "$got" = "$want" ] && [ "$odd" = "0 0 0 0" ] ||
		bad="$bad run $run: log '$got', program '$want', stray frees/double allocs/mismatches/truncated $odd;"
done
[ -z "$bad" ] && mt_ok "handoff: 6 runs of two threads joining a busy one, figures exact, valid order ($want)" ||
	mt_fail "handoff:$bad"
rss=$(mt_val max_rss st.dec)
[ -n "$rss" ] && [ "$rss" -lt $((20 << 20)) ] && mt_ok "short threads: peak RSS $rss B (< 20 MiB)" ||
	mt_fail "short threads: peak RSS '$rss' B (rings not reused?)"
if [ $have_vg = 1 ]; then
	MEMTRAIL_FREERES=0 MEMTRAIL_OUTPUT=$MT_TMP/tk.data LD_PRELOAD=$REC ./rec_prog threads >tk.out 2>&1
	$DEC tk.data >tk.dec
	# Bytes differ by design: glibc sizes each thread's DTV by the number
	# of TLS modules, and the preload adds two (itself, libunwind).
	for mode in default keep; do
		if [ $mode = default ]; then
			valgrind ./rec_prog threads >/dev/null 2>t.vg
			dec=t.dec
		else
			valgrind --run-libc-freeres=no --run-cxx-freeres=no ./rec_prog threads >/dev/null 2>tk.vg
			dec=tk.dec
		fi
		vg=$(vg_totals ${dec%.dec}.vg)
		set -- $vg
		mine="$(mt_val allocs $dec) $(mt_val frees $dec)"
		[ "$1 $2" = "$mine" ] && mt_ok "threads ($mode freeres): memcheck's allocs and frees $1 $2" ||
			mt_fail "threads ($mode freeres): memcheck '$vg' vs log '$mine'"
	done
	if command -v sqlite3 >/dev/null 2>&1; then
		# Deterministic rows: random ones change the index's page splits,
		# and with them the allocation counts, from one run to the next.
		sql="create table t(a integer primary key, b text); insert into t(b) select printf('%0100d', (value * 7919) % 100003) from generate_series(1, 3000); create index i on t(b); select count(*) from t;"
		valgrind sqlite3 :memory: "$sql" >q.vg.out 2>q.vg
		MEMTRAIL_OUTPUT=$MT_TMP/q.data LD_PRELOAD=$REC sqlite3 :memory: "$sql" >q.out 2>&1
		$DEC q.data >q.dec
		vg=$(vg_totals q.vg)
		mine="$(mt_val allocs q.dec) $(mt_val frees q.dec) $(mt_val bytes q.dec)"
		[ "$vg" = "$mine" ] && mt_ok "sqlite3: memcheck's allocs frees bytes $vg" ||
			mt_fail "sqlite3: memcheck '$vg' vs log '$mine'"
	fi
fi
mt_finish
