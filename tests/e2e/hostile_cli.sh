#!/bin/sh
# hostile_cli.sh - `memtrail report` and `memtrail dump` on damaged and
# hostile files: each gives exactly one clear message and the exit status
# of SPEC section 6, never a crash (status >= 128) or a hang.
#
# The files are made at run time from a real log of tests/robust/allocmany.c
# with a pause (two chunks: the first holds exactly PAUSE x 64 blocks
# allocated and freed, so PAUSE x 128 events; see allocmany.c), changed by
# a small python script that walks the format of lib/format.h itself:
#   error     (the header is unusable: empty, cut, wrong magic, unknown
#             version, a 4 GiB command line, no such file, a directory,
#             /dev/zero): one line `memtrail: error: ...`, exit 1, nothing
#             on stdout;
#   truncated N  (damage from a chunk on: cut in a chunk or at its start, a
#             changed byte in its zstd frame, absurd chunk sizes, a wrong
#             chunk magic, garbage after the end): one line
#             `memtrail: warning: FILE truncated after N events`, exit 0,
#             and N derived here from where the damage is.
# Commands: report (default views), report --summary, report --summary
# --format json, dump, and view: every reader accepts the same logs and
# says the same about them (view, run without a terminal, prints the same
# error, or the same warning and then that it needs a terminal).
# Not for: the reader's return codes (test_hostile.c), fuzzing (tests/fuzz/).
. "$(dirname "$0")/lib.sh"
mt_need_cmd gcc python3
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
MT_TIMEOUT=30
PAUSE=50

gcc -g -O0 -o "$MT_TMP/allocmany" "$MT_TOP/tests/robust/allocmany.c" ||
	{ mt_fail "cannot build allocmany"; mt_finish; }
( cd "$MT_TMP" && timeout "$MT_TIMEOUT" env MEMTRAIL_OUTPUT="$MT_TMP/real.data" \
	LD_PRELOAD="$MT_RECORDER" ./allocmany 400 $PAUSE >/dev/null 2>&1 )
[ -s "$MT_TMP/real.data" ] || { mt_fail "no log recorded"; mt_finish; }
mkdir -p "$MT_TMP/h"

# Writes the hostile files into $MT_TMP/h and prints "NAME CLASS [N]" lines.
python3 - "$MT_TMP/real.data" "$MT_TMP/h" $PAUSE >"$MT_TMP/cases" <<'EOF' ||
import os, random, struct, sys
src, out, pause = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = open(src, "rb").read()
hdr = 28 + struct.unpack_from("<I", d, 24)[0]
chunks = []                                   # (start, end)
off = hdr
while off < len(d):
    assert d[off:off + 4] == b"MTCK", "not a chunk at %d" % off
    c = struct.unpack_from("<I", d, off + 4)[0]
    chunks.append((off, off + 12 + c))
    off += 12 + c
assert len(chunks) >= 2, "the log has %d chunk(s), expected 2 or more" % len(chunks)
first = pause * 64 * 2                        # events in chunk 0 (allocmany.c)
rnd = random.Random(1234)

def put(name, data, cls, n=None):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    print(name, cls, "" if n is None else n)

def patch(data, at, b):
    return data[:at] + b + data[at + len(b):]

put("empty", b"", "error")
put("cut5", d[:5], "error")
put("cut_cmdline", d[:hdr - 2], "error")
put("bad_magic", patch(d, 0, b"MEMTRAIX"), "error")
put("heaptrack", b"v 10100\nX /usr/bin/true\n" * 4, "error")
version = struct.unpack_from("<H", d, 8)[0]   # the recorder's: the next is unknown
put("version_next", patch(d, 8, struct.pack("<H", version + 1)), "error")
put("version0", patch(d, 8, struct.pack("<H", 0)), "error")
put("version65535", patch(d, 8, struct.pack("<H", 65535)), "error")
put("cmdline_4g", patch(d, 24, struct.pack("<I", 0xffffffff)), "error")
put("cmdline_64k1", patch(d, 24, struct.pack("<I", 65537)), "error")
put("header_only", d[:hdr], "truncated", 0)
c0, c1 = chunks[0], chunks[1]
put("cut_chunk0", d[:(c0[0] + c0[1]) // 2], "truncated", 0)
put("cut_chunk0_header", d[:c0[0] + 7], "truncated", 0)
put("cut_at_chunk1", d[:c1[0]], "truncated", first)
put("cut_chunk1", d[:(c1[0] + c1[1]) // 2], "truncated", first)
put("cut_last_byte", d[:-1], "truncated",
    first if len(chunks) == 2 else "?")
put("chunk0_c_4g", patch(d, c0[0] + 4, struct.pack("<I", 0xffffffff)), "truncated", 0)
put("chunk0_u_4g", patch(d, c0[0] + 8, struct.pack("<I", 0xffffffff)), "truncated", 0)
put("chunk0_u_0", patch(d, c0[0] + 8, struct.pack("<I", 0)), "truncated", 0)
put("chunk1_magic", patch(d, c1[0], b"XXXX"), "truncated", first)
put("chunk1_u_small", patch(d, c1[0] + 8, struct.pack("<I", 5)), "truncated", first)
# The last 4 bytes of a zstd frame are its checksum: always detected.
put("chunk1_checksum", patch(d, c1[1] - 2, bytes([d[c1[1] - 2] ^ 0xff])), "truncated", first)
junk = bytes(rnd.randrange(256) for _ in range(100))
put("garbage_after_end", d + junk, "truncated", "all")
put("chunk_of_zeros", d[:c1[0]] + b"MTCK" + struct.pack("<II", 64, 64) + bytes(64), "truncated", first)
EOF
	{ mt_fail "cannot make the hostile files"; mt_finish; }
# Events of the whole log, for "all" (the file with garbage after its end).
all=$(timeout "$MT_TIMEOUT" "$MEMTRAIL" dump "$MT_TMP/real.data" | sed -n 's/^end clean=1 .* events=\([0-9]*\).*/\1/p')
[ -n "$all" ] || { mt_fail "the real log does not replay"; mt_finish; }
printf '%s\n' "nosuchfile error" "directory error" "devzero error" >>"$MT_TMP/cases"
mkdir -p "$MT_TMP/h/directory"

# check NAME FILE CLASS N CMD...
check() {
	name=$1; file=$2; cls=$3; n=$4; shift 4
	o=$MT_TMP/out.$$
	timeout "$MT_TIMEOUT" "$MEMTRAIL" "$@" "$file" >"$o.out" 2>"$o.err" </dev/null
	rc=$?
	what="$name: memtrail $*"
	if [ $rc = 124 ]; then mt_fail "$what: hangs (killed after ${MT_TIMEOUT}s)"; return; fi
	if [ $rc -ge 128 ]; then mt_fail "$what: crashed, status $rc:"; head -n 5 "$o.err"; return; fi
	lines=$(wc -l <"$o.err")
	case $cls in
	error)
		if [ $rc = 1 ] && [ "$lines" = 1 ] && grep -q "^memtrail: error: " "$o.err" && [ ! -s "$o.out" ]; then
			mt_ok "$what: exit 1, $(cat "$o.err")"
		else
			mt_fail "$what: exit $rc, $lines stderr line(s), $(wc -c <"$o.out") bytes on stdout (expected exit 1, one error line, no output):"
			head -n 3 "$o.err"
		fi;;
	truncated)
		if [ $rc = 0 ] && [ "$lines" = 1 ] &&
			grep -q "^memtrail: warning: $file truncated after $n events" "$o.err"; then
			mt_ok "$what: exit 0, $(cat "$o.err")"
		else
			mt_fail "$what: exit $rc, stderr (expected exit 0 and one line 'memtrail: warning: $file truncated after $n events'):"
			head -n 3 "$o.err"
		fi;;
	esac
}

# view on FILE says what report said (the first line of $o.err of the last
# check), then, for a log it accepts, that it needs a terminal.
check_view() {
	name=$1; file=$2; cls=$3
	o=$MT_TMP/out.$$
	cp "$o.err" "$o.report"
	timeout "$MT_TIMEOUT" "$MEMTRAIL" view "$file" >"$o.out" 2>"$o.err" </dev/null
	rc=$?
	if [ $rc -ge 124 ]; then mt_fail "$name: memtrail view: status $rc (hang or crash)"; return; fi
	if [ "$(head -n 1 "$o.err")" != "$(head -n 1 "$o.report")" ]; then
		mt_fail "$name: view says '$(head -n 1 "$o.err")', report '$(head -n 1 "$o.report")'"
	elif [ $cls = truncated ] && ! sed -n 2p "$o.err" | grep -q "^memtrail: error: view needs a terminal"; then
		mt_fail "$name: view did not accept what report reads: $(sed -n 2p "$o.err")"
	elif [ $rc != 1 ]; then
		mt_fail "$name: view exit $rc"
	else
		mt_ok "$name: memtrail view: the same line as report"
	fi
}

while read -r name cls n; do
	case $name in
	nosuchfile) file=$MT_TMP/h/no-such-file;;
	devzero) file=/dev/zero;;
	*) file=$MT_TMP/h/$name;;
	esac
	[ "$n" = all ] && n=$all
	if [ "$n" = "?" ]; then echo "$name: log has more than 2 chunks, case skipped"; continue; fi
	check "$name" "$file" "$cls" "$n" report
	check "$name" "$file" "$cls" "$n" report --summary
	check "$name" "$file" "$cls" "$n" report --summary --format json
	check "$name" "$file" "$cls" "$n" dump
	check "$name" "$file" "$cls" "$n" report --summary
	check_view "$name" "$file" "$cls"
done <"$MT_TMP/cases"
mt_finish
