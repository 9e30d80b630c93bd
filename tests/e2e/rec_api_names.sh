#!/bin/sh
# rec_api_names.sh - programs that do not include memtrail.h reach the
# snapshot API by its own names, which libmemtrail.so exports beside
# memtrail_snapshot_impl (and the tag API's beside memtrail_tag_push_impl
# and memtrail_tag_pop_impl: exactly these, nothing else): api_dlsym.c looks "memtrail_snapshot" and
# "memtrail_snapshot_named" up with dlsym(RTLD_DEFAULT) as the original
# memtrail's header does; api_weak.c declares them weak itself and is
# linked with api_header.c, which includes memtrail.h (the header's static
# inline functions of the same names do not clash). Under `memtrail
# record` both record exactly their snapshots (the summary's list, the
# `memtrail: snapshot` lines); run on their own, both work, print the
# same and say nothing on stderr.
#
# Not for: the header's own path (rec_snapshot.sh, the samples).
. "$(dirname "$0")/lib.sh"
mt_need_cmd cc python3
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
cd "$MT_TMP" || exit 1
E=$MT_TOP/tests/e2e
cc -Wall -Wextra -Werror -g -o api_dlsym "$E/api_dlsym.c" -ldl &&
	cc -Wall -Wextra -Werror -g -I"$MT_TOP/include" -o api_weak "$E/api_weak.c" "$E/api_header.c" ||
	mt_skip "cannot build the test programs"

syms=$(nm -D --defined-only "$MT_RECORDER" | sed -n 's/^[0-9a-f]* T \(memtrail_.*\)$/\1/p' | sort | tr '\n' ' ')
[ "$syms" = "memtrail_leak_check_impl memtrail_snapshot memtrail_snapshot_impl memtrail_snapshot_named memtrail_tag_pop memtrail_tag_pop_impl memtrail_tag_push memtrail_tag_push_impl " ] &&
	mt_ok "libmemtrail.so exports $syms" || mt_fail "exported API: '$syms'"

# snaps JSON: the summary's snapshots as "index:label:live_bytes:live_blocks" words.
snaps() {
	python3 -c 'import json,sys
print(" ".join("%d:%s:%d:%d" % (s["index"], s["label"], s["live_bytes"], s["live_blocks"])
               for s in json.load(open(sys.argv[1]))["snapshots"]))' "$1"
}

# check NAME SNAPSHOTS LINES: NAME natively and recorded; SNAPSHOTS as snaps
# prints them, LINES the `memtrail: snapshot` lines joined by '|'.
check() {
	name=$1
	mt_run "$name.native" "./$name"
	mt_record "$name.data" "$name.rec" "./$name"
	mt_same_run "$name native vs memtrail record" "$name.native" "$name.rec"
	[ "$(cat "$name.native.out")" = done ] && [ ! -s "$name.native.err" ] &&
		mt_ok "$name on its own: no-op snapshots, prints done, nothing on stderr" ||
		mt_fail "$name on its own: stdout '$(cat "$name.native.out")', stderr '$(cat "$name.native.err")'"
	if ! mt_summary "$name.data" "$name.json"; then
		mt_fail "$name: report --summary: $(cat "$name.json.err")"
		return
	fi
	got=$(snaps "$name.json")
	[ "$got" = "$2" ] && mt_ok "$name: $(echo "$got" | wc -w) snapshots in the log: $got" ||
		mt_fail "$name: snapshots '$got', expected '$2'"
	got=$(grep '^memtrail: snapshot ' "$name.rec.err" | tr '\n' '|')
	[ "$got" = "$3" ] && mt_ok "$name: stderr $got" || mt_fail "$name: stderr '$got', expected '$3'"
}

check api_dlsym "0::1000:1 1:two:1024:2 2::24:1" \
	"memtrail: snapshot 0: 1000 bytes (+1000)|memtrail: snapshot 1: 1024 bytes (+24)|memtrail: snapshot 2: 24 bytes (-1000)|"
check api_weak "0::500:1 1:weak:500:1 2:header:800:2 3::300:1" \
	"memtrail: snapshot 0: 500 bytes (+500)|memtrail: snapshot 1: 500 bytes (+0)|memtrail: snapshot 2: 800 bytes (+300)|memtrail: snapshot 3: 300 bytes (-500)|"
mt_finish
