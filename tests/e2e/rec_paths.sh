#!/bin/sh
# rec_paths.sh - where the logs go and what the closing lines say about the
# programs a recording did not follow:
# - a relative -o is made absolute at start: with --follow-children, a
#   program that changes directory and then forks writes its child's log
#   beside its own, and the closing lines list it (named as the user named
#   the log) with the child's exact figures (rec_prog.c chdirfork: 7
#   blocks of 10 bytes);
# - without --follow-children, a program that execs another (sh -c 'exec
#   ./app'), or forks and execs one (sh -c './app; true', python3's
#   subprocess), gets a closing line naming what ran unrecorded and
#   suggesting --follow-children; a failed exec and a program that runs
#   nothing get no such line, and no FILE.execs file is left behind.
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd cc
mt_have_memtrail || mt_skip "memtrail not built"
cd "$MT_TMP" || exit 1
PROG=$MT_TMP/rec_prog
mt_build_rec_prog "$PROG"
printf '#include <stdlib.h>\nint main(void) { free(malloc(10)); return 0; }\n' >app.c
cc -o app app.c || mt_skip "cannot build app"

# ---- a relative path, a child in another directory ---------------------------
mkdir -p work/sub
( cd work && "$MEMTRAIL" record --follow-children -o rel.data -- "$PROG" chdirfork sub ) >c.out 2>c.err
child=$(sed -n 's/^child //p' c.out)
if [ -n "$child" ] && [ -s "work/rel.data.$child" ] && [ ! -e "work/sub/rel.data.$child" ] &&
   grep -q "^memtrail: child $child (rec_prog): 7 allocations, 70 B peak, 70 B leaked in 7 blocks, rel.data.$child written" c.err &&
   grep -q "^memtrail: 1 allocations, 5 B peak, 0 B leaked in 0 blocks (0 B definitely lost), rel.data written" c.err; then
	mt_ok "chdir then fork: the child's log beside the parent's, listed: $(grep child c.err)"
else
	mt_fail "chdir then fork: child '$child', files: $(ls work work/sub | tr '\n' ' '), stderr: $(cat c.err)"
fi

# ---- programs run without being followed ---------------------------------------
# hint CASE EXPECTED CMD...: the last stderr line of memtrail record CMD
hint() {
	name=$1; want=$2; shift 2
	"$MEMTRAIL" record -o h.data -- "$@" >h.out 2>h.err
	got=$(grep -v "allocations, .* written" h.err | grep "^memtrail: " | tail -n 1)
	if [ "$got" = "$want" ] && [ ! -e h.data.execs ]; then
		mt_ok "$name: ${want:-no hint}"
	else
		mt_fail "$name: '$got', expected '$want' (h.data.execs: $(ls h.data.execs 2>&1))"
	fi
}
hint "sh -c 'exec ./app'" "memtrail: sh ran ./app, which was not recorded: --follow-children records it too" \
	sh -c 'exec ./app'
hint "sh -c './app; true'" "memtrail: sh ran ./app, which was not recorded: --follow-children records it too" \
	sh -c './app; true'
hint "python3 subprocess, twice" \
	"memtrail: /usr/bin/python3 ran ./app and 1 other program, which were not recorded: --follow-children records them too" \
	/usr/bin/python3 -c 'import subprocess; subprocess.run(["./app"]); subprocess.run(["true"])'
hint "a failed exec" "" "$PROG" execfail
hint "a program that runs nothing" "" ./app
"$MEMTRAIL" record --follow-children -o f.data -- sh -c './app; true' >f.out 2>f.err
if ! grep -q "not recorded" f.err && grep -q "^memtrail: child [0-9]* (app): 1 allocations" f.err; then
	mt_ok "--follow-children: the child is recorded, no hint"
else
	mt_fail "--follow-children: $(cat f.err)"
fi
mt_finish
