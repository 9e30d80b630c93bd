#!/bin/sh
# rec_format.sh - the recorder (libmemtrail.so preloaded directly, no
# launcher) writes a log that follows lib/format.h: header fields, chunk
# framing and records, checked by an independent decoder (rec_decode.py);
# its counts equal rec_prog's own count of its calls (every C entry point,
# memcheck's counting rules) and valgrind memcheck's; stacks start in the
# caller, never inside the recorder; MEMTRAIL_DEPTH bounds them.
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd cc python3
PROG=$MT_TMP/rec_prog
mt_build_rec_prog "$PROG"

cd "$MT_TMP" || exit 1
MEMTRAIL_OUTPUT=$MT_TMP/basic.data LD_PRELOAD=$REC "$PROG" basic >basic.out 2>basic.err
rc=$?
[ $rc -eq 3 ] && mt_ok "exit status 3 kept" || mt_fail "exit status $rc, expected 3"
[ -s basic.err ] && mt_fail "stderr not empty: $(cat basic.err)"
if ! $DEC basic.data >basic.dec 2>basic.dec.err; then
	mt_fail "decoder rejects the log: $(tail -n 3 basic.dec.err)"
	mt_finish
fi
mt_ok "log decodes: $(mt_val chunks basic.dec) chunk(s), framing and record checks pass"

# Header: magic and version checked by the decoder; pid and command line here.
head -c 8 basic.data | grep -q '^MEMTRAIL$' && mt_ok "magic" || mt_fail "magic"
[ "$(mt_val cmd basic.dec)" = "$PROG basic" ] && mt_ok "command line" ||
	mt_fail "command line '$(mt_val cmd basic.dec)'"
[ "$(mt_val end basic.dec)" = "(0, 3)" ] && mt_ok "END(exit, 3)" || mt_fail "end $(mt_val end basic.dec)"

# Counts against the program's own (the log of a program that uses no stdio
# holds only its own calls) and, when present, memcheck's.
set -- $(sed -n 's/^expect //p' basic.out | tr ' =' '\n\n' | sed -n 'n;p')
for pair in "allocs $1" "frees $2" "bytes $3" "live $4" "live_blocks $5"; do
	set -- $pair
	got=$(mt_val "$1" basic.dec)
	[ "$got" = "$2" ] && mt_ok "$1 = $2 (program's own count)" || mt_fail "$1: log $got, program $2"
done
[ "$(mt_val ignored_frees basic.dec)" = 0 ] && mt_ok "no FREE of a block not live" ||
	mt_fail "$(mt_val ignored_frees basic.dec) FREE records of blocks not live"
[ "$(mt_val block_mismatch basic.dec)" = 0 ] && mt_ok "every FREE names the block it ends" ||
	mt_fail "$(mt_val block_mismatch basic.dec) FREE records name another block"
if command -v valgrind >/dev/null 2>&1; then
	valgrind "$PROG" basic >vg.out 2>vg.err
	vg=$(sed -n 's/.*total heap usage: \([0-9,]*\) allocs, \([0-9,]*\) frees, \([0-9,]*\) bytes.*/\1 \2 \3/p' vg.err | tr -d ,)
	mine="$(mt_val allocs basic.dec) $(mt_val frees basic.dec) $(mt_val bytes basic.dec)"
	[ "$vg" = "$mine" ] && mt_ok "memcheck agrees: $vg" || mt_fail "memcheck '$vg' vs log '$mine'"
fi

# Stacks: frame 0 in the program (the caller of the entry point), no frame
# anywhere inside libmemtrail.so.
bad=$(grep '^frame0=' basic.dec | grep -v " $PROG\$" | head -n 3)
[ -z "$bad" ] && mt_ok "frame 0 of every stack is in the program" || mt_fail "frame 0 elsewhere: $bad"
[ "$(mt_val self_frames basic.dec)" = 0 ] && mt_ok "no recorder frames" ||
	mt_fail "$(mt_val self_frames basic.dec) frames inside the recorder"
# The main program's module is named by its real path, the vDSO [vdso].
grep -q "^module=$PROG " basic.dec && mt_ok "main program module path" || mt_fail "no module $PROG"
[ "$(grep -c '^module=\[vdso\] ' basic.dec)" = 1 ] && mt_ok "one [vdso]" || mt_fail "[vdso] count"

# Depth bound.
MEMTRAIL_DEPTH=2 MEMTRAIL_OUTPUT=$MT_TMP/d2.data LD_PRELOAD=$REC "$PROG" basic >/dev/null 2>&1
$DEC d2.data >d2.dec
[ "$(mt_val maxdepth d2.dec)" = 2 ] && mt_ok "MEMTRAIL_DEPTH=2: stacks of 2 frames" ||
	mt_fail "MEMTRAIL_DEPTH=2: max depth $(mt_val maxdepth d2.dec)"
[ "$(mt_val allocs d2.dec)" = "$(mt_val allocs basic.dec)" ] || mt_fail "depth changes the counts"

# The tools' reader (memtrail dump) agrees, when built.
if mt_have_memtrail; then
	n=$("$MEMTRAIL" dump basic.data 2>dump.err | grep -c '^alloc ')
	a=$(($(mt_val allocs basic.dec) - $(mt_val reallocs basic.dec)))
	[ "$n" = "$a" ] && mt_ok "memtrail dump reads $n alloc records" ||
		mt_fail "memtrail dump: $n alloc lines, expected $a ($(head -n 2 dump.err))"
fi
mt_finish
