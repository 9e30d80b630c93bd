#!/bin/sh
# symbols_debuginfod.sh - end-to-end: with DEBUGINFOD_URLS set, a stripped
# program's frames get function and file:line from a local debuginfod
# server (Debian's debuginfod serving the program's separate debug file,
# built here), said once in a warning line naming the cached file (by
# report, and by view once its screen is gone); the cache
# (DEBUGINFOD_CACHE_PATH) serves a second report with the server gone; a
# server that has nothing is said to have nothing, and the frames stay
# module+0xOFF, as they do without the variable; one that never answers is
# said to, and waited for once per module; python3's libc gets its names
# from a server.
#
# Skips (exit 77) when debuginfod is not installed. Not for: local debug
# files (symbols_debuginfo.sh).
. "$(dirname "$0")/lib.sh"

mt_have_memtrail || mt_skip "memtrail or libmemtrail.so not built"
mt_need_cmd cc objcopy readelf python3
command -v debuginfod >/dev/null 2>&1 && command -v debuginfod-find >/dev/null 2>&1 ||
	mt_skip "debuginfod not installed (apt-get install debuginfod): debuginfod lookups not checked"

cd "$MT_TMP" || exit 1
unset MEMTRAIL_DEBUGINFO_PATH DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT
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
mkdir -p served empty
cc -g -O0 -Wl,--build-id -o prog prog.c && objcopy --only-keep-debug prog served/prog.debug &&
	objcopy --strip-all prog || { mt_fail "cannot build prog"; mt_finish; }
id=$(readelf -n prog | sed -n 's/.*Build ID: //p')
[ -n "$id" ] || mt_skip "no build-id in prog"
mt_record a.data rec "$MT_TMP/prog"
[ "$(cat rec.rc)" = 0 ] || { mt_fail "record exited $(cat rec.rc): $(cat rec.err)"; mt_finish; }

# A free port, then a server on it; stopped at exit, by its pid.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; mt_tmux_stop' EXIT
# serve DIR NAME: debuginfod on DIR; sets port.
serve() {
	port=$(free_port)
	debuginfod -F "$1" -p "$port" -d "$MT_TMP/$2.sqlite" >"$2.log" 2>&1 &
	pids="$pids $!"
}
# ready URL CODE: waits up to 60 s for URL to answer CODE.
ready() {
	python3 - "$1" "$2" <<'PY'
import sys, time, urllib.request, urllib.error
for _ in range(600):
    try:
        code = urllib.request.urlopen(sys.argv[1], timeout=5).status
    except urllib.error.HTTPError as e:
        code = e.code
    except Exception:
        code = 0
    if str(code) == sys.argv[2]:
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PY
}
report() {
	_out=$1; shift
	env "$@" timeout "$MT_TIMEOUT" "$MEMTRAIL" report ${show:---show-leaks} "${data:-a.data}" \
		>"$_out.txt" 2>"$_out.err"
}
# said FILE: the warning lines about prog.
said() { grep -F "memtrail: warning: $MT_TMP/prog: " "$1"; }

# Without the variable: no names, nothing said about debuginfod.
report plain
if grep -q leak_here plain.txt; then mt_fail "stripped prog named without debug info"
elif grep -q 'prog+0x' plain.txt; then mt_ok "without DEBUGINFOD_URLS: prog+0xOFF frames"
else mt_fail "without DEBUGINFOD_URLS: no prog+0xOFF frame"; fi
if grep -q debuginfod plain.err; then mt_fail "debuginfod named without DEBUGINFOD_URLS: $(cat plain.err)"
else mt_ok "without DEBUGINFOD_URLS: nothing said of debuginfod"; fi

# A server with the debug file: names, lines, and one line saying so.
serve served full
url=http://127.0.0.1:$port
ready "$url/buildid/$id/debuginfo" 200 || { cat full.log; mt_fail "debuginfod on $url never served $id"; mt_finish; }
report fetched DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$MT_TMP/cache"
cat fetched.txt fetched.err
mt_chain fetched.txt "leak_here [prog.c:$l_leak]" "main [prog.c:$l_main]" &&
	mt_ok "from debuginfod: leak_here:$l_leak <- main:$l_main"
want="memtrail: warning: $MT_TMP/prog: debug info from debuginfod ($url): $(pwd -P)/cache/$id/debuginfo"
if [ "$(said fetched.err)" = "$want" ]; then mt_ok "said once: $want"
else mt_fail "said: '$(said fetched.err)', not '$want'"; fi
if cmp -s "$MT_TMP/cache/$id/debuginfo" served/prog.debug; then mt_ok "the cache holds the debug file"
else mt_fail "no copy of prog.debug in the cache"; fi

# memtrail view: the frame named on its first screen, the same line on
# stderr once the screen is gone.
if command -v tmux >/dev/null 2>&1 && mt_tmux_start 100 20; then
	mt_tmux_keys "cd '$MT_TMP' && DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH='$MT_TMP/cache3' '$MEMTRAIL' view a.data 2>view.err; echo view-ended" Enter
	mt_tmux_wait "leak_here \\[prog.c:$l_leak\\]" 30 && mt_ok "view: leak_here [prog.c:$l_leak] on the first screen"
	mt_tmux_keys q
	mt_tmux_wait "^view-ended" 10 || mt_fail "view did not end on q"
	want="memtrail: warning: $MT_TMP/prog: debug info from debuginfod ($url): $(pwd -P)/cache3/$id/debuginfo"
	if [ "$(said view.err)" = "$want" ]; then mt_ok "view: said once on leaving: $want"
	else mt_fail "view said: '$(said view.err)', not '$want'"; fi
	mt_tmux_stop
fi

# The server gone, the cache answers.
for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
pids=""
report cached DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$MT_TMP/cache"
mt_chain cached.txt "leak_here [prog.c:$l_leak]" "main [prog.c:$l_main]" &&
	mt_ok "server gone: names from the cache"

# A server that has nothing: said so, frames stay prog+0xOFF.
serve empty none
url2=http://127.0.0.1:$port
ready "$url2/buildid/$id/debuginfo" 404 || { cat none.log; mt_fail "debuginfod on $url2 never answered"; mt_finish; }
report missing DEBUGINFOD_URLS="$url2" DEBUGINFOD_CACHE_PATH="$MT_TMP/cache2"
cat missing.err
want="memtrail: warning: $MT_TMP/prog: no debug info for build-id $id on the debuginfod servers ($url2)"
if [ "$(said missing.err)" = "$want" ]; then mt_ok "said once: $want"
else mt_fail "said: '$(said missing.err)', not '$want'"; fi
if grep -q leak_here missing.txt; then mt_fail "named with no debug info served"
elif grep -q 'prog+0x' missing.txt; then mt_ok "nothing served: prog+0xOFF frames"
else mt_fail "nothing served: no prog+0xOFF frame"; fi

# A server that takes connections and never answers: said so, once; the
# servers asked as many times as debuginfod-find asks them for the file
# (libdwfl looks for a module's debug file twice, for its DWARF and for
# its symbol table: the second look must not wait for the servers again).
# mute PORTFILE COUNTFILE: listens on a free port, counts connections.
mute() {
	python3 - "$1" "$2" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1])
held, n = [], 0
while True:
    c, _ = s.accept()
    held.append(c)
    n += 1
    open(sys.argv[2], "w").write("%d\n" % n)
PY
	pids="$pids $!"
	for _i in $(seq 100); do [ -s "$1" ] && break; sleep 0.1; done
}
mute mute1.port mute1.count
DEBUGINFOD_URLS="http://127.0.0.1:$(cat mute1.port)" DEBUGINFOD_TIMEOUT=1 \
	DEBUGINFOD_CACHE_PATH="$MT_TMP/cache5" debuginfod-find debuginfo "$id" >/dev/null 2>&1
mute mute2.port mute2.count
url4=http://127.0.0.1:$(cat mute2.port)
report mute DEBUGINFOD_URLS="$url4" DEBUGINFOD_TIMEOUT=1 DEBUGINFOD_CACHE_PATH="$MT_TMP/cache6"
want="memtrail: warning: $MT_TMP/prog: no debug info from debuginfod ($url4): no server could be reached or answered within DEBUGINFOD_TIMEOUT (1 s)"
if [ "$(said mute.err)" = "$want" ]; then mt_ok "no answer: $want"
else mt_fail "no answer: said '$(said mute.err)', not '$want'"; fi
n1=$(cat mute1.count 2>/dev/null); n2=$(cat mute2.count 2>/dev/null)
if [ -n "$n1" ] && [ "$n1" = "$n2" ]; then mt_ok "no answer: the server asked $n2 times, as by debuginfod-find"
else mt_fail "no answer: the server asked ${n2:-0} times, by debuginfod-find ${n1:-0}"; fi

# A real program: python3 (Debian's: stripped, no debug package) at its
# peak, a bytearray of 1,000,000 B, its libc's debug file (libc6-dbg's) kept from the local
# search and served: __libc_start_call_main, a static function, gets its
# name and line from the server only; python3's build-id is said to be on
# no server.
libc=$(ldd /usr/bin/python3 | awk '$1 ~ /^libc\.so/ { print $3 }')
libcid=$(readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: //p')
py=$(readlink -f /usr/bin/python3)
pyid=$(readelf -n "$py" | sed -n 's/.*Build ID: //p')
dbg=/usr/lib/debug/.build-id/$(echo "$libcid" | cut -c1-2)/$(echo "$libcid" | cut -c3-).debug
if [ -n "$libcid" ] && [ -n "$pyid" ] && [ -f "$dbg" ]; then
	mkdir -p libc nodebug && cp "$dbg" libc/
	mt_record py.data py /usr/bin/python3 -c "import sys; sys.x = bytearray(1000000)"
	[ "$(cat py.rc)" = 0 ] || mt_fail "python3: record exited $(cat py.rc): $(cat py.err)"
	serve libc libcsrv
	url3=http://127.0.0.1:$port
	ready "$url3/buildid/$libcid/debuginfo" 200 ||
		{ cat libcsrv.log; mt_fail "debuginfod on $url3 never served $libcid"; mt_finish; }
	data=py.data show=--show-maximum report pyplain MEMTRAIL_DEBUGINFO_PATH="$MT_TMP/nodebug"
	data=py.data show=--show-maximum report pyfetched MEMTRAIL_DEBUGINFO_PATH="$MT_TMP/nodebug" \
		DEBUGINFOD_URLS="$url3" DEBUGINFOD_CACHE_PATH="$MT_TMP/cache4"
	if grep -q '__libc_start_call_main' pyplain.txt; then
		mt_fail "python3: __libc_start_call_main named with no debug info"
	else mt_ok "python3: no __libc_start_call_main without the server"; fi
	if grep -q '(1,000,001B, 1x): PyByteArray_Resize$' pyfetched.txt &&
	   grep -q ': __libc_start_call_main \[.*\.h:[0-9]*\]$' pyfetched.txt; then
		mt_ok "python3: __libc_start_call_main [FILE:LINE] from the server"
	else cat pyfetched.txt; mt_fail "python3: no __libc_start_call_main [FILE:LINE]"; fi
	want="memtrail: warning: $libc: debug info from debuginfod ($url3): $(pwd -P)/cache4/$libcid/debuginfo
memtrail: warning: $py: no debug info for build-id $pyid on the debuginfod servers ($url3)"
	if [ "$(grep -F -e "$libc: " -e "$py: " pyfetched.err | sort)" = "$want" ]; then
		mt_ok "python3: one line each for libc and python3"
	else mt_fail "python3: said '$(cat pyfetched.err)', not '$want'"; fi
else
	mt_ok "python3: not checked: no debug file for $libc (apt-get install libc6-dbg)"
fi
mt_finish
