#!/bin/sh
# robust_output.sh - the log file is written safely: a symlink planted at
# the output path is not followed, the log's mode is 0644 minus the umask,
# and a full disk stops the recording, not the program.
#
#   symlink    FILE is a symlink to a file with other contents: the recorder
#              opens with O_NOFOLLOW, so one warning, the target untouched,
#              the program's stdout and status those of its native run.
#   FIFO       a symlink to a FIFO, a FIFO at FILE with no reader, and one
#              with a reader: no hang (10 s bound), the native run's stdout
#              and status, one warning from the recorder and nothing else,
#              nothing written into the FIFO; `memtrail report` of a FIFO
#              or a symlink to one fails at once, "not a regular file".
#   /dev/null  -o /dev/null records into it: the native run, no message.
#   mode       under umasks 022, 027, 077 and 002 the log's mode is
#              0644 & ~umask.
#   full disk  a 64 KiB tmpfs (skipped when mounting is not allowed) and
#              tests/robust/allocmany.c, which makes one small chunk then
#              far more than 64 KiB of log: one message from the recorder,
#              the program runs to its normal end and output, and the log
#              (cut back to its last whole chunk, then STOP and END)
#              replays up to the stop, saying why it stopped, with
#              exactly the events of the first chunk (allocmany.c's
#              comment: 64 blocks allocated and freed per round before the
#              pause).
#
# Exits 77 only when the full-disk case cannot mount its tmpfs (and
# nothing else failed). Not for: the placeholders of -o (cli_record.sh).
. "$(dirname "$0")/lib.sh"
mt_need_cmd gcc
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
MT_TIMEOUT=60

gcc -g -O0 -o "$MT_TMP/allocmany" "$MT_TOP/tests/robust/allocmany.c" ||
	{ mt_fail "cannot build allocmany"; mt_finish; }
PROG="$MT_TMP/allocmany"

# ---- the one rule (memtrail(1)): a regular file, or /dev/null ------------------
# record_refuses NAME PATH WHY: memtrail record -o PATH refuses before the
# program starts: exit 2, one line "memtrail: error: cannot write PATH:
# WHY", nothing from the program (it did not run), within 10 s.
record_refuses() {
	timeout -k 5 10 "$MEMTRAIL" record -o "$2" -- "$PROG" 200 \
		>"$MT_TMP/$1.out" 2>"$MT_TMP/$1.err" </dev/null
	rc=$?
	if [ $rc = 2 ] && [ ! -s "$MT_TMP/$1.out" ] && [ "$(wc -l <"$MT_TMP/$1.err")" = 1 ] &&
		grep -q "^memtrail: error: cannot write $2: $3\$" "$MT_TMP/$1.err"; then
		mt_ok "$1: record refuses before the program runs: $(cat "$MT_TMP/$1.err")"
	else
		mt_fail "$1: record exit $rc, stdout $(wc -c <"$MT_TMP/$1.out") bytes, stderr: $(cat "$MT_TMP/$1.err") (expected exit 2 and 'cannot write $2: $3')"
	fi
}

# preload_warns NAME PATH WHY: the recorder preloaded directly cannot refuse
# to run the program: within 10 s (timeout's 124, or 137 for its SIGKILL
# 5 s later, is a hang), the native run's stdout and status, and one
# stderr line, the recorder's, saying WHY.
preload_warns() {
	timeout -k 5 10 env MEMTRAIL_OUTPUT="$2" LD_PRELOAD="$MT_RECORDER" "$PROG" 200 \
		>"$MT_TMP/$1.out" 2>"$MT_TMP/$1.err" </dev/null
	echo $? >"$MT_TMP/$1.rc"
	case $(cat "$MT_TMP/$1.rc") in
	124|137) mt_fail "$1: the preloaded program hung (killed by timeout)";;
	*) mt_ok "$1: no hang";;
	esac
	mt_same_run "$1: native vs preloaded" "$MT_TMP/native" "$MT_TMP/$1"
	if [ "$(wc -l <"$MT_TMP/$1.err")" = 1 ] &&
		grep -q "^memtrail: cannot open $2: $3; not recording\$" "$MT_TMP/$1.err"; then
		mt_ok "$1: one warning from the recorder ($3), nothing else"
	else
		mt_fail "$1: stderr is not the recorder's one warning '$3': $(cat "$MT_TMP/$1.err")"
	fi
}

# report_refuses NAME PATH: memtrail report PATH fails at once (10 s bound),
# exit 1, one error line saying it is not a regular file.
report_refuses() {
	timeout -k 5 10 "$MEMTRAIL" report --summary "$2" >"$MT_TMP/$1.out" 2>"$MT_TMP/$1.err" </dev/null
	rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$MT_TMP/$1.err")" = 1 ] &&
		grep -q "^memtrail: error: $2: not a regular file" "$MT_TMP/$1.err"; then
		mt_ok "$1: report refuses it at once: $(cat "$MT_TMP/$1.err")"
	else
		mt_fail "$1: report exit $rc (expected 1), stderr: $(cat "$MT_TMP/$1.err")"
	fi
}

mt_run "$MT_TMP/native" "$PROG" 200
mkdir -p "$MT_TMP/s"

# A symlink planted at the output path: never followed (O_NOFOLLOW).
printf 'precious contents\n' >"$MT_TMP/s/target"
ln -s "$MT_TMP/s/target" "$MT_TMP/s/out.data"
record_refuses "symlink" "$MT_TMP/s/out.data" "it is a symbolic link"
preload_warns "symlink, preloaded" "$MT_TMP/s/out.data" "Too many levels of symbolic links"
if [ "$(cat "$MT_TMP/s/target")" = "precious contents" ] && [ -L "$MT_TMP/s/out.data" ]; then
	mt_ok "symlink: the target is untouched and the symlink still there"
else
	mt_fail "symlink: the target or the link changed: $(ls -l "$MT_TMP/s")"
fi

# A planted symlink to a FIFO: refused as a link (ELOOP for the recorder).
mkfifo "$MT_TMP/s/fifo" && ln -s "$MT_TMP/s/fifo" "$MT_TMP/s/fifo.data"
record_refuses "symlink to a FIFO" "$MT_TMP/s/fifo.data" "it is a symbolic link"
preload_warns "symlink to a FIFO, preloaded" "$MT_TMP/s/fifo.data" "Too many levels of symbolic links"
[ -L "$MT_TMP/s/fifo.data" ] && [ -p "$MT_TMP/s/fifo" ] &&
	mt_ok "symlink to a FIFO: link and FIFO still there" ||
	mt_fail "symlink to a FIFO: changed: $(ls -l "$MT_TMP/s")"
report_refuses "report of a symlink to a FIFO" "$MT_TMP/s/fifo.data"

# A FIFO at the output path with no reader: open(O_NONBLOCK) fails (ENXIO)
# instead of waiting for one.
mkfifo "$MT_TMP/s/plain-fifo.data"
record_refuses "FIFO at the output path" "$MT_TMP/s/plain-fifo.data" "not a regular file"
preload_warns "FIFO at the output path, preloaded" "$MT_TMP/s/plain-fifo.data" "not a regular file"
[ -p "$MT_TMP/s/plain-fifo.data" ] && mt_ok "FIFO at the output path: still a FIFO" ||
	mt_fail "FIFO at the output path: replaced: $(ls -l "$MT_TMP/s")"
report_refuses "report of a FIFO" "$MT_TMP/s/plain-fifo.data"

# A FIFO with a reader (this shell holds it open read-write on fd 3): the
# open succeeds, fstat refuses it, and the FIFO stays empty (FIONREAD).
mkfifo "$MT_TMP/s/read-fifo.data"
exec 3<>"$MT_TMP/s/read-fifo.data"
record_refuses "FIFO with a reader" "$MT_TMP/s/read-fifo.data" "not a regular file"
preload_warns "FIFO with a reader, preloaded" "$MT_TMP/s/read-fifo.data" "not a regular file"
inpipe=$(python3 -c 'import fcntl, struct, termios
print(struct.unpack("i", fcntl.ioctl(3, termios.FIONREAD, b"\0\0\0\0"))[0])' 2>&1)
exec 3>&-
[ "$inpipe" = 0 ] && mt_ok "FIFO with a reader: nothing written into it" ||
	mt_fail "FIFO with a reader: '$inpipe' bytes written into it, expected 0"

# Devices other than /dev/null, a directory, a missing directory.
record_refuses "dev-full" /dev/full "not a regular file"
preload_warns "dev-full, preloaded" /dev/full "not a regular file"
mkdir -p "$MT_TMP/s/dir.data"
record_refuses "a directory" "$MT_TMP/s/dir.data" "it is a directory"
record_refuses "a missing directory" "$MT_TMP/nodir/x.data" \
	"$MT_TMP/nodir: No such file or directory"
preload_warns "a missing directory, preloaded" "$MT_TMP/nodir/x.data" "No such file or directory"

# A read-only directory: as root only a read-only mount says no.
mkdir -p "$MT_TMP/ro"
if mount -t tmpfs -o ro,size=64k tmpfs "$MT_TMP/ro" 2>/dev/null; then
	record_refuses "a read-only directory" "$MT_TMP/ro/x.data" "$MT_TMP/ro: Read-only file system"
	preload_warns "a read-only directory, preloaded" "$MT_TMP/ro/x.data" "Read-only file system"
	umount "$MT_TMP/ro"
else
	echo "read-only directory: cannot mount a tmpfs here: case skipped"
fi

# -o /dev/null: a character device is written to like a file (the log is
# discarded); the launcher, with no file to read, adds no closing line.
mt_record /dev/null "$MT_TMP/null" "$PROG" 200
mt_same_run "-o /dev/null: native vs memtrail record" "$MT_TMP/native" "$MT_TMP/null"
[ ! -s "$MT_TMP/null.err" ] && mt_ok "-o /dev/null: no message" ||
	mt_fail "-o /dev/null: stderr: $(cat "$MT_TMP/null.err")"

# ---- mode ------------------------------------------------------------------
for um in 022 027 077 002; do
	f=$MT_TMP/mode$um.data
	(umask $um; mt_record "$f" "$MT_TMP/mode" "$PROG" 10)
	want=$(printf '%o' $(( 0644 & ~0$um )))
	got=$(stat -c %a "$f" 2>/dev/null)
	if [ "$got" = "$want" ]; then mt_ok "mode: umask $um gives $got"
	else mt_fail "mode: umask $um gives '$got', expected $want"; fi
done

# ---- full disk -------------------------------------------------------------
full=$MT_TMP/full
mkdir -p "$full"
if ! mount -t tmpfs -o size=64k tmpfs "$full" 2>"$MT_TMP/mount.err"; then
	echo "full disk: cannot mount a tmpfs ($(cat "$MT_TMP/mount.err")): case skipped"
	[ "$mt_failures" != 0 ] || mt_skip "mounting a tmpfs is not allowed here: full-disk case not run"
else
	trap 'umount "$full" 2>/dev/null; rm -rf "$MT_TMP"' EXIT
	ROUNDS=20000; PAUSE=50
	mt_run "$MT_TMP/fnative" "$PROG" $ROUNDS $PAUSE
	mt_record "$full/x.data" "$MT_TMP/frec" "$PROG" $ROUNDS $PAUSE
	mt_same_run "full disk: native vs memtrail record" "$MT_TMP/fnative" "$MT_TMP/frec"
	echo "stderr of record:"; cat "$MT_TMP/frec.err"
	n=$(grep -c "^memtrail: cannot write the log: No space left on device; recording stopped$" "$MT_TMP/frec.err")
	if [ "$n" = 1 ]; then mt_ok "full disk: one message from the recorder"
	else mt_fail "full disk: $n 'recording stopped' messages from the recorder, expected 1"; fi
	# Other lines: the closing line, and the replay's word on why the log
	# stops there (it ends with STOP and END: no truncation); nothing else.
	other=$(grep -v "^memtrail: cannot write the log: No space left on device; recording stopped$" "$MT_TMP/frec.err" |
		grep -v "^memtrail: warning: .*: recording stopped early: cannot write the log: No space left on device$" |
		grep -v "^memtrail: [0-9,]* allocations, .* written (" | wc -l)
	if [ "$other" = 0 ]; then mt_ok "full disk: no other message"
	else mt_fail "full disk: $other unexpected lines on stderr"; fi
	timeout "$MT_TIMEOUT" "$MEMTRAIL" report --summary --format json "$full/x.data" \
		>"$MT_TMP/f.json" 2>"$MT_TMP/f.err"
	rc=$?
	if [ $rc = 0 ] && grep -q "^memtrail: warning: .*x.data: recording stopped early: cannot write the log: No space left on device$" "$MT_TMP/f.err" &&
		[ "$(wc -l <"$MT_TMP/f.err")" = 1 ]; then
		mt_ok "full disk: report replays the log up to the stop and says why it stopped"
	else
		mt_fail "full disk: report exit $rc, stderr: $(cat "$MT_TMP/f.err")"
	fi
	got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["allocations"], d["frees"], d["leaked_blocks"])' "$MT_TMP/f.json" 2>&1)
	if [ "$got" = "$((PAUSE * 64)) $((PAUSE * 64)) 0" ]; then
		mt_ok "full disk: the first chunk's figures: $got"
	else
		mt_fail "full disk: allocations frees leaked_blocks = '$got', expected $((PAUSE * 64)) $((PAUSE * 64)) 0"
	fi
	umount "$full"
fi

mt_finish
