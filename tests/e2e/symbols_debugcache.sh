#!/bin/sh
# symbols_debugcache.sh - end-to-end: the cache of uncompressed debug files
# (MEMTRAIL_DEBUG_CACHE, lib/debugcache.h) on libc6-dbg's debug file for
# libc, whose DWARF sections are compressed. A report of samples/leak_check
# with the cache: the copy appears under libc's build-id with no compressed
# section, and the report (its standard output and error) is byte for byte
# the one without the cache (MEMTRAIL_DEBUG_CACHE=off), which names libc's
# frames from the debug file. A second report reads the copy as it is (same
# inode, same modification time) and inflates nothing (zlib's inflate,
# counted by a preloaded wrapper, is called without the cache and never
# with it); a truncated copy and a valid ELF file of another build-id in
# its place give the same report and are replaced by the same copy; a
# cache directory that cannot be made gives the same report and no
# message; a program's compressed debug file found by build-id in
# MEMTRAIL_DEBUGINFO_PATH is cached too; with the variable unset the cache
# is $XDG_CACHE_HOME/memtrail/debug, else $HOME/.cache/memtrail/debug.
#
# Not for: the copies' contents in detail (tests/test_debugcache.c).
. "$(dirname "$0")/lib.sh"

mt_have_memtrail || mt_skip "memtrail or libmemtrail.so not built"
mt_need_cmd readelf ldd cmp stat
PROG=$MT_SAMPLES/leak_check
[ -x "$PROG" ] || mt_skip "samples not built (make samples)"
cd "$MT_TMP" || exit 1
unset MEMTRAIL_DEBUGINFO_PATH DEBUGINFOD_URLS XDG_CACHE_HOME

libc=$(ldd "$PROG" | awk '$1 ~ /^libc\.so/ { print $3 }')
libcid=$(readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: //p')
[ -n "$libcid" ] || mt_skip "no build-id in $libc"
dbg=/usr/lib/debug/.build-id/$(echo "$libcid" | cut -c1-2)/$(echo "$libcid" | cut -c3-).debug
[ -f "$dbg" ] || mt_skip "no debug file for $libc (apt-get install libc6-dbg)"
# compressed: a section flag with C (SHF_COMPRESSED) or a .zdebug_* name
compressed() {
	readelf -S -W "$1" 2>/dev/null | grep -q -e ' \.zdebug' -e '^  \[.* [A-Z]*C[A-Z]* '
}
compressed "$dbg" || mt_skip "$dbg has no compressed sections: nothing to cache"

mt_record s.data rec "$PROG"
[ "$(cat rec.rc)" = 0 ] || mt_fail "record exited $(cat rec.rc): $(cat rec.err)"

# report NAME CACHE: `memtrail report` of s.data with MEMTRAIL_DEBUG_CACHE=CACHE
# into NAME.txt and NAME.err; the same as the report without the cache?
report() {
	MEMTRAIL_DEBUG_CACHE=$2 timeout "$MT_TIMEOUT" "$MEMTRAIL" report s.data \
		>"$1.txt" 2>"$1.err" </dev/null
	echo $? >"$1.rc"
	[ "$1" = off ] && return 0
	if cmp -s off.txt "$1.txt" && cmp -s off.err "$1.err" && cmp -s off.rc "$1.rc"; then
		mt_ok "$1: the same report as without the cache"
	else
		diff off.txt "$1.txt" | head -n 10
		mt_fail "$1: not the report without the cache ($(cat "$1.err"))"
	fi
}

report off off
[ "$(cat off.rc)" = 0 ] || mt_fail "report exited $(cat off.rc): $(cat off.err)"
grep -q '__libc_start_call_main \[.*\.h:[0-9]*\]' off.txt &&
	mt_ok "libc's frames named from its debug file" ||
	mt_fail "no __libc_start_call_main [FILE:LINE] in the report"
[ -e debug-cache ] && mt_fail "off: a cache directory was made"

C=$MT_TMP/cache
copy=$C/$libcid.debug
report first "$C"
if [ -f "$copy" ]; then mt_ok "first: the copy $libcid.debug is written"
else ls -la "$C"; mt_fail "first: no $copy"; fi
compressed "$copy" && mt_fail "the copy has compressed sections" ||
	mt_ok "the copy has no compressed section"
ls "$C" | grep -v '\.debug$' && mt_fail "a temporary file is left in the cache"
cp "$copy" good.debug
before=$(stat -c '%i %y' "$copy")

sleep 1   # a rewrite would show in the modification time
report second "$C"
[ "$(stat -c '%i %y' "$copy")" = "$before" ] &&
	mt_ok "second: the copy is read as it is (same inode and time)" ||
	mt_fail "second: the copy was rewritten ($before -> $(stat -c '%i %y' "$copy"))"

# read from the copy, not inflated again: zlib's inflate, counted by a
# preloaded wrapper, is called without the cache and never with it
if command -v cc >/dev/null 2>&1; then
	cat >count.c <<'SRC'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static long calls;
int inflate(void *strm, int flush);
int inflate(void *strm, int flush)
{
	int (*real)(void *, int) = (int (*)(void *, int))dlsym(RTLD_NEXT, "inflate");
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	return real(strm, flush);
}
__attribute__((destructor)) static void done(void)
{
	FILE *f = fopen(getenv("INFLATE_COUNT"), "w");
	if (f) { fprintf(f, "%ld\n", calls); fclose(f); }
}
SRC
	cc -shared -fPIC -o count.so count.c -ldl || mt_fail "cannot build count.so"
	for c in off "$C"; do
		rm -f inflates
		timeout "$MT_TIMEOUT" env LD_PRELOAD="$MT_TMP/count.so" \
			INFLATE_COUNT="$MT_TMP/inflates" MEMTRAIL_DEBUG_CACHE="$c" \
			"$MEMTRAIL" report s.data >/dev/null 2>&1 </dev/null
		printf '%s ' "$(cat inflates 2>/dev/null)"
	done >counts
	set -- $(cat counts)
	[ "${1:-0}" -gt 0 ] && [ "${2:-}" = 0 ] &&
		mt_ok "inflate called $1 times without the cache, never with it" ||
		mt_fail "inflate calls without the cache / with it: $(cat counts)"
fi

# replaced: a truncated copy; a valid ELF of another build-id (the
# sample itself)
head -c 100000 good.debug >"$copy"
report truncated "$C"
cmp -s "$copy" good.debug && mt_ok "truncated: replaced by the copy" ||
	mt_fail "truncated: not replaced by the copy"
cp "$PROG" "$copy"
report foreign "$C"
cmp -s "$copy" good.debug && mt_ok "foreign: replaced by the copy" ||
	mt_fail "foreign: not replaced by the copy"
# a FIFO in the copy's place (the open must not wait on it), and a
# symbolic link to the good copy (not followed): replaced, the same report
rm -f "$copy"
mkfifo "$copy"
report fifo "$C"
cmp -s "$copy" good.debug && mt_ok "fifo: replaced by the copy" ||
	mt_fail "fifo: not replaced by the copy (rc $(cat fifo.rc))"
rm -f "$copy"
ln -s "$MT_TMP/good.debug" "$copy"
report symlink "$C"
[ -L "$copy" ] && mt_fail "symlink: still a link" || mt_ok "symlink: replaced by a file"

# a directory that cannot be made (a file in the way: root writes through
# permission bits), and where permissions can, a read-only one
: >afile
report nodir "$MT_TMP/afile/cache"
if [ "$(id -u)" != 0 ]; then
	mkdir ro && chmod 500 ro
	report readonly "$MT_TMP/ro"
	[ -z "$(ls ro)" ] && mt_ok "readonly: nothing written" || mt_fail "readonly: written"
	chmod 700 ro
fi

# a program's own debug file, compressed, found by build-id in the second
# directory of MEMTRAIL_DEBUGINFO_PATH
if command -v cc >/dev/null 2>&1 && command -v objcopy >/dev/null 2>&1; then
	printf '%s\n' '#include <stdlib.h>' 'void *keep;' \
		'__attribute__((noinline)) void grab(void) { keep = malloc(4321); }' \
		'int main(void) { grab(); return 0; }' >prog.c
	cc -g -O0 -o prog prog.c &&
		objcopy --only-keep-debug --compress-debug-sections=zlib prog prog.debug &&
		objcopy --strip-all prog || mt_fail "cannot build prog"
	id=$(readelf -n prog | sed -n 's/.*Build ID: //p')
	mkdir -p "dbg/.build-id/$(echo "$id" | cut -c1-2)"
	mv prog.debug "dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
	mt_record p.data recp "$MT_TMP/prog"
	for c in off "$C"; do
		MEMTRAIL_DEBUGINFO_PATH="+$MT_TMP/none:-$MT_TMP/dbg" MEMTRAIL_DEBUG_CACHE=$c \
			timeout "$MT_TIMEOUT" "$MEMTRAIL" report --show-maximum p.data \
			>"p.$(basename "$c").txt" 2>&1 </dev/null
	done
	grep -q 'grab \[prog.c:3\]' p.off.txt && cmp -s p.off.txt "p.$(basename "$C").txt" &&
		[ -f "$C/$id.debug" ] &&
		mt_ok "MEMTRAIL_DEBUGINFO_PATH: the copy of prog's debug file, the same report" ||
		mt_fail "MEMTRAIL_DEBUGINFO_PATH: no copy of prog's debug file or another report"
fi

# the default places
mkdir home xdg
env -u MEMTRAIL_DEBUG_CACHE HOME="$MT_TMP/home" timeout "$MT_TIMEOUT" "$MEMTRAIL" \
	report s.data >home.txt 2>home.err </dev/null
cmp -s off.txt home.txt && [ -f "home/.cache/memtrail/debug/$libcid.debug" ] &&
	[ "$(stat -c %a home/.cache home/.cache/memtrail home/.cache/memtrail/debug)" = "700
700
700" ] && mt_ok "unset: \$HOME/.cache/memtrail/debug, made 0700" ||
	mt_fail "unset: no copy in \$HOME/.cache/memtrail/debug (0700) or another report"
env -u MEMTRAIL_DEBUG_CACHE HOME="$MT_TMP/home2" XDG_CACHE_HOME="$MT_TMP/xdg" \
	timeout "$MT_TIMEOUT" "$MEMTRAIL" report s.data >xdg.txt 2>xdg.err </dev/null
cmp -s off.txt xdg.txt && [ -f "xdg/memtrail/debug/$libcid.debug" ] && [ ! -e home2 ] &&
	mt_ok "unset: \$XDG_CACHE_HOME/memtrail/debug" ||
	mt_fail "unset: no copy in \$XDG_CACHE_HOME/memtrail/debug or another report"
mt_finish
