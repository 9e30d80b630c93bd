#!/bin/sh
# view_errors.sh - `memtrail view` refuses bad input with one error line and
# the right exit status before it touches the terminal: a missing file, a
# file that is not a log, an empty file, too many arguments (2), and no
# terminal at all; a log whose first chunk is corrupt is read as report
# reads it (an empty run, the same warning). Also --help (0).
# Not for: the screen (view_tmux.sh).

. "$(dirname "$0")/lib.sh"
[ -x "$MEMTRAIL" ] || mt_skip "memtrail not built"
cd "$MT_TMP" || exit 1

# expect STATUS PATTERN ARGS...: status and the first stderr line
expect() {
	_st=$1; _pat=$2; shift 2
	"$MEMTRAIL" view "$@" >out.txt 2>err.txt </dev/null
	_rc=$?
	if [ "$_rc" = "$_st" ] && head -n 1 err.txt | grep -q -- "$_pat"; then
		mt_ok "view $*: exit $_rc, $(head -n 1 err.txt)"
	else
		mt_fail "view $*: exit $_rc (want $_st), stderr: $(head -n 2 err.txt)"
	fi
}

expect 1 '^memtrail: error: missing\.data: No such file or directory$' missing.data
echo "not a log" >text.data
expect 1 '^memtrail: error: text\.data: not a memtrail log' text.data
: >empty.data
expect 1 '^memtrail: error: empty\.data: ' empty.data
expect 2 '^memtrail: error: .*too many arguments' a.data b.data

# a real log with its first chunk's payload damaged: report's warning (the
# one acceptance rule, hostile_cli.sh), then no terminal
if mt_have_memtrail && [ -x "$MT_SAMPLES/phases" ]; then
	mt_record phases.data rec "$MT_SAMPLES/phases"
	python3 - <<'PY'
d = bytearray(open("phases.data", "rb").read())
i = d.find(b"MTCK")
d[i + 20] ^= 0xff
open("corrupt.data", "wb").write(d)
PY
	expect 1 '^memtrail: warning: corrupt\.data truncated after 0 events (corrupt log data at offset [0-9]*)$' corrupt.data
	# a good log but no terminal: an error, not a garbled screen
	expect 1 '^memtrail: error: view needs a terminal' phases.data
	[ -s out.txt ] && mt_fail "no terminal: nothing on stdout" || mt_ok "no terminal: nothing on stdout"
fi

"$MEMTRAIL" view --help >help.txt 2>&1 </dev/null
if [ $? = 0 ] && grep -q '^usage: memtrail view \[--follow\] \[FILE\]' help.txt; then
	mt_ok "view --help"
else
	mt_fail "view --help: $(head -n 2 help.txt)"
fi
mt_finish
