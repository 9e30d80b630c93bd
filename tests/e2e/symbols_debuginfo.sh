#!/bin/sh
# symbols_debuginfo.sh - end-to-end: a stripped program whose debug info is
# separate is reported with function and file:line, found (1) by build-id in
# a directory named by MEMTRAIL_DEBUGINFO_PATH, (2) by .gnu_debuglink in
# .debug/ next to the program, (3) with a build-id too, by .gnu_debuglink
# under an absolute directory of the path followed by the program's own
# directory, and (4) with neither, as prog.debug next to the program.
# Controls: without the debug directory the stripped program has no names.
# Without DEBUGINFOD_URLS no search loads libdebuginfod (libdw would, for
# nothing: memtrail skips libdw's search when no file it tries exists).
#
# Not for: build-id mismatches (symbols_buildid.sh).
. "$(dirname "$0")/lib.sh"

mt_have_memtrail || mt_skip "memtrail or libmemtrail.so not built"
mt_need_cmd cc objcopy readelf

cd "$MT_TMP" || exit 1
cat >prog.c <<'SRC'
#include <stdlib.h>
void *leak_here(void);
__attribute__((noinline)) void *leak_here(void)
{
	return malloc(100); /* MARK:leak */
}
int main(void)
{
	return leak_here() == NULL; /* MARK:main */
}
SRC
l_leak=$(mt_line_of prog.c 'MARK:leak')
l_main=$(mt_line_of prog.c 'MARK:main')
unset MEMTRAIL_DEBUGINFO_PATH

# (1) by build-id
cc -g -O0 -o prog prog.c && objcopy --only-keep-debug prog prog.debug &&
	objcopy --strip-all prog || mt_fail "cannot build prog"
id=$(readelf -n prog | sed -n 's/.*Build ID: //p')
[ -n "$id" ] || mt_skip "no build-id in prog"
d=$(echo "$id" | cut -c1-2); rest=$(echo "$id" | cut -c3-)
mkdir -p "dbg/.build-id/$d" && mv prog.debug "dbg/.build-id/$d/$rest.debug"
mt_record a.data rec "$MT_TMP/prog"
[ "$(cat rec.rc)" = 0 ] || mt_fail "record exited $(cat rec.rc): $(cat rec.err)"

timeout "$MT_TIMEOUT" "$MEMTRAIL" report --show-leaks a.data >plain.txt 2>plain.err
cat plain.txt plain.err
grep -q 'leak_here' plain.txt && mt_fail "stripped prog named without its debug info"
grep -q 'prog+0x' plain.txt && mt_ok "stripped prog: prog+0xOFF frames" ||
	mt_fail "no prog+0xOFF frame for the stripped program"

MEMTRAIL_DEBUGINFO_PATH=$MT_TMP/dbg timeout "$MT_TIMEOUT" "$MEMTRAIL" report 	--show-leaks a.data >bid.txt 2>bid.err
cat bid.txt bid.err
mt_chain bid.txt "leak_here [prog.c:$l_leak]" "main [prog.c:$l_main]" &&
	mt_ok "by build-id: leak_here:$l_leak <- main:$l_main"

# (2) by .gnu_debuglink, no build-id at all
mkdir -p link/.debug
cc -g -O0 -Wl,--build-id=none -o link/prog prog.c &&
	objcopy --only-keep-debug link/prog link/.debug/prog.debug &&
	objcopy --strip-all --add-gnu-debuglink=link/.debug/prog.debug link/prog ||
	mt_fail "cannot build link/prog"
mt_record b.data recb "$MT_TMP/link/prog"
[ "$(cat recb.rc)" = 0 ] || mt_fail "record exited $(cat recb.rc): $(cat recb.err)"
timeout "$MT_TIMEOUT" "$MEMTRAIL" report --show-leaks b.data >link.txt 2>link.err
cat link.txt link.err
mt_chain link.txt "leak_here [prog.c:$l_leak]" "main [prog.c:$l_main]" &&
	mt_ok "by debuglink: leak_here:$l_leak <- main:$l_main"

# (3) by .gnu_debuglink under /dir + the program's directory, with a build-id
mkdir -p abs && cc -g -O0 -o abs/prog prog.c &&
	objcopy --only-keep-debug abs/prog abs/prog.debug &&
	objcopy --strip-all --add-gnu-debuglink=abs/prog.debug abs/prog &&
	mkdir -p "gdb$MT_TMP/abs" && mv abs/prog.debug "gdb$MT_TMP/abs/" ||
	mt_fail "cannot build abs/prog"
mt_record c.data recc "$MT_TMP/abs/prog"
[ "$(cat recc.rc)" = 0 ] || mt_fail "record exited $(cat recc.rc): $(cat recc.err)"
MEMTRAIL_DEBUGINFO_PATH=$MT_TMP/gdb timeout "$MT_TIMEOUT" "$MEMTRAIL" report --show-leaks \
	c.data >abs.txt 2>abs.err
cat abs.txt abs.err
mt_chain abs.txt "leak_here [prog.c:$l_leak]" "main [prog.c:$l_main]" &&
	mt_ok "by debuglink under an absolute directory: leak_here:$l_leak <- main:$l_main"

# (4) neither build-id nor debuglink: prog.debug next to the program
mkdir -p bare && cc -g -O0 -Wl,--build-id=none -o bare/prog prog.c &&
	objcopy --only-keep-debug bare/prog bare/prog.debug && objcopy --strip-all bare/prog ||
	mt_fail "cannot build bare/prog"
mt_record d.data recd "$MT_TMP/bare/prog"
[ "$(cat recd.rc)" = 0 ] || mt_fail "record exited $(cat recd.rc): $(cat recd.err)"
timeout "$MT_TIMEOUT" "$MEMTRAIL" report --show-leaks d.data >bare.txt 2>bare.err
cat bare.txt bare.err
mt_chain bare.txt "leak_here [prog.c:$l_leak]" "main [prog.c:$l_main]" &&
	mt_ok "by name: leak_here:$l_leak <- main:$l_main"

# (5) nothing to find, no DEBUGINFOD_URLS: libdebuginfod stays unloaded
# (the stripped program of (1), and every system library without debug info)
(unset DEBUGINFOD_URLS; LD_DEBUG=files timeout "$MT_TIMEOUT" "$MEMTRAIL" report a.data \
	>/dev/null 2>ld.err)
if grep -q 'libdebuginfod' ld.err; then
	mt_fail "libdebuginfod loaded without DEBUGINFOD_URLS: $(grep -m1 libdebuginfod ld.err)"
else
	mt_ok "without DEBUGINFOD_URLS: libdebuginfod not loaded"
fi
if [ -e /usr/lib/x86_64-linux-gnu/libdebuginfod.so.1 ] ||
	ldconfig -p 2>/dev/null | grep -q 'libdebuginfod.so.1 '; then
	DEBUGINFOD_URLS=http://127.0.0.1:9 DEBUGINFOD_TIMEOUT=1 DEBUGINFOD_CACHE_PATH=$MT_TMP/dc \
		LD_DEBUG=files timeout "$MT_TIMEOUT" "$MEMTRAIL" report a.data >/dev/null 2>ld2.err
	grep -q 'file=libdebuginfod' ld2.err && mt_ok "with DEBUGINFOD_URLS: libdebuginfod loaded" ||
		mt_fail "libdebuginfod not loaded with DEBUGINFOD_URLS set"
fi
mt_finish
