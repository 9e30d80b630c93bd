#!/bin/sh
# rec_dlopen.sh - a library loaded with dlopen gets a MODULE record (path,
# build-id, executable ranges) once a stack has a frame in it, the stacks
# of its allocations have frame 0 in it, dlclose writes UNLOAD, and a
# dlopen by bare name through the caller's RUNPATH ($ORIGIN) still works.
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd cc python3
cd "$MT_TMP" || exit 1
mt_build_rec_prog rec_prog
printf '#include <stdlib.h>\nvoid *rec_lib_alloc(size_t n) { void *p = malloc(n); return p; }\n' >lib.c
cc -O0 -g -shared -fPIC -Wl,--build-id -o "$MT_TMP/librec.so" lib.c || mt_skip "cannot build a .so"

MEMTRAIL_OUTPUT=$MT_TMP/l.data LD_PRELOAD=$REC ./rec_prog dlopen "$MT_TMP/librec.so" >l.out 2>&1
rc=$?
[ $rc = 3 ] && grep -q '^dlopen ok$' l.out || mt_fail "program failed ($rc): $(cat l.out)"
$DEC l.data >l.dec 2>l.dec.err || mt_fail "log: $(tail -n 1 l.dec.err)"
mod=$(grep "^module=$MT_TMP/librec.so " l.dec)
set -- $mod
if [ -n "$mod" ] && [ "$3" -gt 0 ]; then
	mt_ok "MODULE $MT_TMP/librec.so at $2, written at t=$3 ns (after start)"
else
	mt_fail "no MODULE record for librec.so after start: $(grep '^module=' l.dec)"
fi
grep -q "^frame0=[0-9]* 0 $MT_TMP/librec.so\$" l.dec && mt_ok "malloc in the library: frame 0 in it" ||
	mt_fail "no stack with frame 0 in librec.so"
grep -q "^unload=$2 " l.dec && mt_ok "UNLOAD $2 after dlclose" || mt_fail "no UNLOAD of $2"
# The recorded build-id is the library's own.
want=$(readelf -n "$MT_TMP/librec.so" 2>/dev/null | sed -n 's/.*Build ID: //p')
if [ -n "$want" ]; then
	python3 "$MT_TOP/tests/e2e/rec_decode.py" -v l.data | grep "^MODULE .* $MT_TMP/librec.so $want " >/dev/null &&
		mt_ok "build-id $want" || mt_fail "build-id differs from readelf's $want"
fi

# RUNPATH=$ORIGIN/sub and dlopen("librec.so"): resolved from the caller.
mkdir -p sub && cp "$MT_TMP/librec.so" sub/ &&
	cc -O0 -pthread -I"$MT_TOP/include" -o rp_prog "$MT_TOP/tests/e2e/rec_prog.c" -ldl \
		-Wl,-rpath,'$ORIGIN/sub' -Wl,--enable-new-dtags || mt_skip "cannot link with a RUNPATH"
mt_run rp_nat ./rp_prog dlopen librec.so
MEMTRAIL_OUTPUT=$MT_TMP/rp.data mt_run rp_rec env LD_PRELOAD="$REC" ./rp_prog dlopen librec.so
mt_same_run "dlopen by bare name via the caller's RUNPATH" rp_nat rp_rec
mt_finish
