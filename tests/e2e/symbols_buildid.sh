#!/bin/sh
# symbols_buildid.sh - end-to-end: a program rebuilt after it was recorded
# (same path, different build-id) is reported with exactly one warning, and
# its frames as prog+0xOFF instead of wrong names; the offsets are the right
# ones (binutils addr2line on a copy of the original binary names them).
# Before the rebuild the same log shows the function and its line (control).
#
# Not for: missing files (the unit test), separate debug info
# (symbols_debuginfo.sh).
. "$(dirname "$0")/lib.sh"

mt_have_memtrail || mt_skip "memtrail or libmemtrail.so not built"
mt_need_cmd cc addr2line readelf

cd "$MT_TMP" || exit 1
cat >prog.c <<'SRC'
#include <stdlib.h>
void *leak_here(void);
__attribute__((noinline)) void *leak_here(void)
{
	return malloc(SIZE); /* MARK:leak */
}
int main(void)
{
	return leak_here() == NULL; /* MARK:main */
}
SRC
l_leak=$(mt_line_of prog.c 'MARK:leak')
l_main=$(mt_line_of prog.c 'MARK:main')
cc -g -O0 -DSIZE=100 -o prog prog.c || mt_fail "cannot build prog"
cp prog prog.orig
mt_record a.data rec "$MT_TMP/prog"
[ "$(cat rec.rc)" = 0 ] || mt_fail "record exited $(cat rec.rc): $(cat rec.err)"

timeout "$MT_TIMEOUT" "$MEMTRAIL" report --show-leaks a.data >before.txt 2>before.err
cat before.txt before.err
mt_chain before.txt "leak_here [prog.c:$l_leak]" "main [prog.c:$l_main]" &&
	mt_ok "before the rebuild: leak_here:$l_leak <- main:$l_main"
grep -q 'build-id differs' before.err && mt_fail "warning before the rebuild"

cc -g -O0 -DSIZE=200 -o prog prog.c || mt_fail "cannot rebuild prog"
id1=$(readelf -n prog.orig | sed -n 's/.*Build ID: //p')
id2=$(readelf -n prog | sed -n 's/.*Build ID: //p')
[ -n "$id1" ] && [ "$id1" != "$id2" ] || mt_skip "the rebuild kept the build-id"

timeout "$MT_TIMEOUT" "$MEMTRAIL" report --show-leaks a.data >after.txt 2>after.err
cat after.txt after.err
n=$(grep -c 'prog: build-id differs from the recording; its frames are shown as prog+0xOFF' after.err)
[ "$n" = 1 ] && mt_ok "one build-id warning" || mt_fail "$n build-id warnings, want 1"
grep -q 'leak_here' after.txt && mt_fail "a frame of the rebuilt program was named"

# the prog+0xOFF frames, innermost first, are return addresses in the
# original binary: the one before each is in leak_here, then in main
offs=$(grep -o 'prog+0x[0-9a-f]*' after.txt | sed 's/prog+//' | head -n 2)
[ "$(echo "$offs" | wc -l)" = 2 ] || mt_fail "want two prog+0xOFF frames, got: $offs"
i=0
for o in $offs; do
	pc=$(printf '0x%x' $((o - 1)))
	got=$(addr2line -f -e prog.orig "$pc" | head -n 1)
	case $i in 0) want=leak_here;; *) want=main;; esac
	[ "$got" = "$want" ] && mt_ok "prog+$o is in $want" ||
		mt_fail "prog+$o is in $got, want $want"
	i=$((i + 1))
done
mt_finish
