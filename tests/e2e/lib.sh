# lib.sh - shell helpers shared by the end-to-end tests (tests/e2e/*.sh).
#
# For: sourcing at the top of an e2e test: `. "$(dirname "$0")/lib.sh"`.
# It fills in MT_TOP (the source tree), MT_BUILD (the build directory,
# default $MT_TOP/build), MEMTRAIL (the program, $MT_BUILD/memtrail),
# MT_RECORDER (the preload library, $MT_BUILD/libmemtrail.so), MT_SAMPLES
# (the built samples, $MT_BUILD/samples) and MT_TMP when the test is run by
# hand instead of by tests/run-e2e.sh, and offers skip/fail bookkeeping and
# runners for memtrail and valgrind. Not for: anything that is not a test;
# it defines no test of its own. Keep the interface stable: other tests
# source it.
#
#   mt_skip REASON             exit 77, REASON as the last line of output
#   mt_fail MESSAGE            print "FAIL: MESSAGE", remember the failure
#   mt_ok MESSAGE              print "ok: MESSAGE"
#   mt_finish                  exit 1 if anything failed, else 0
#   mt_need_cmd CMD...         mt_skip unless every CMD is on PATH
#   mt_have_memtrail           true when the memtrail program and the preload
#                              library are built
#   mt_run OUTPREFIX CMD...    run CMD natively; stdout to OUTPREFIX.out,
#                              stderr to OUTPREFIX.err, status to
#                              OUTPREFIX.rc; returns 0
#   mt_record DATA OUTPREFIX CMD...
#                              `memtrail record -o DATA -- CMD...`, the same
#                              files as mt_run; with $MT_RECORD_ENV (VAR=VALUE
#                              words, no spaces in values) added to its
#                              environment; with MT_KEEP_RUNTIME=1,
#                              `record --keep-runtime`
#   mt_summary DATA JSON       `memtrail report --summary --format json DATA`
#                              into JSON; non-zero on failure
#   mt_memcheck LOG OUTPREFIX CMD...
#                              CMD under valgrind memcheck with the options
#                              whose figures memtrail matches (its default
#                              freeres at exit, no --trace-children; with
#                              MT_KEEP_RUNTIME=1, --run-libc-freeres=no
#                              --run-cxx-freeres=no as `record
#                              --keep-runtime`), malloc tracing on, the
#                              log in LOG; the same files as mt_run; with
#                              $MT_MEMCHECK_PRELOAD (a LD_PRELOAD list, see
#                              mt_tls_standins) preloaded
#   mt_keep_runtime_opts       memcheck's options for MT_KEEP_RUNTIME (none
#                              unless it is 1)
#   mt_same_run NAME A B       compare two mt_run/mt_record/mt_memcheck
#                              results: stdout and exit status equal
#   mt_valgrind_env            the VAR=VALUE words valgrind adds to a
#                              program's environment besides LD_PRELOAD
#   mt_tls_standins N          builds N distinct tiny libraries with one TLS
#                              variable each (no code, no allocation) and
#                              prints them as a LD_PRELOAD list: preloaded
#                              under memcheck they give the process as many
#                              TLS modules as libmemtrail.so and its
#                              dependencies do, so new threads' DTVs (16 B
#                              per TLS module) have the same size
#   mt_tls_modules [PRELOAD] PROG
#                              the number of modules with a TLS segment that
#                              PROG loads at start-up (with PRELOAD preloaded)
#   mt_need_recorder           mt_skip unless $MT_RECORDER is built; sets
#                              REC to it and DEC to the command
#                              of the independent log decoder (rec_decode.py)
#   mt_build_rec_prog OUT [OPT]
#                              compiles tests/e2e/rec_prog.c into OUT with
#                              the optimization flag OPT (default -O0);
#                              mt_skip if it does not build
#   mt_drainer_of FILE [NAME]  the pid of the recorder's drainer process
#                              (memtrail-drain, or the process named NAME:
#                              memtrail-spare) writing the log FILE, as
#                              named by MEMTRAIL_OUTPUT; nothing if none
#   mt_wait_drained FILE       waits, up to 10 s, until no drainer writes
#                              FILE: a program killed outright (SIGKILL)
#                              leaves its drainer writing the rest of the
#                              log (without `memtrail record`, which waits)
#   mt_val KEY FILE            the value of the first KEY=VALUE line of FILE
#                              (the decoder's output)
#   mt_line_of FILE REGEX      the number of the first line of FILE matching
#                              the grep regex REGEX
#   mt_chain FILE STRING...    checks that the fixed STRINGs occur in FILE on
#                              lines in this order, each after the previous
#                              one; mt_fail and non-zero if not
#   mt_tmux_start COLS LINES   a private tmux server (socket mt-PID) running
#                              sh in a COLS x LINES window; non-zero if tmux
#                              cannot start; mt_tmux_stop ends it (call it
#                              from the test's EXIT trap)
#   mt_tmux_keys KEY...        tmux send-keys to that window (no wait)
#   mt_tmux_screen FILE        the window's text (capture-pane) into FILE
#   mt_tmux_wait ERE [SECONDS] polls the window (default 15 s) until a line
#                              matches the extended regex ERE; on time out
#                              prints the screen's last lines, returns 1;
#                              the last screen is in $MT_TMP/tmux.cur
#   mt_tmux_expand_all N       in `memtrail view`: the tree's first row, then
#                              * and Down N times (every row's subtree
#                              expanded when the tree has at most N rows),
#                              and waits until the viewer has handled them
#                              (g with no search yet: its message shows)
#
# The helpers use $MT_TIMEOUT (default 120) seconds per command.

MT_TOP=${MT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
MT_BUILD=${MT_BUILD:-$MT_TOP/build}
MEMTRAIL=${MEMTRAIL:-$MT_BUILD/memtrail}
MT_RECORDER=${MT_RECORDER:-$MT_BUILD/libmemtrail.so}
MT_SAMPLES=${MT_SAMPLES:-$MT_BUILD/samples}
MT_TIMEOUT=${MT_TIMEOUT:-120}
if [ -z "${MT_TMP:-}" ]; then
	MT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/mt-e2e.XXXXXX")
	trap 'rm -rf "$MT_TMP"' EXIT
fi
export MT_TOP MT_BUILD MEMTRAIL MT_RECORDER MT_SAMPLES MT_TMP
# Every python3 a test runs, itself or through a program, is
# /usr/bin/python3 where there is one: a python3 earlier in PATH may be a
# shell shim (pyenv's starts in 0.1 s, eight times the interpreter's own
# time; view_report_points runs python3 about 2,000 times).
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ] &&
    mkdir -p "$MT_TMP/usr-python" && ln -sf /usr/bin/python3 "$MT_TMP/usr-python/python3"; then
	PATH=$MT_TMP/usr-python:$PATH
	export PATH
fi
# Reports keep uncompressed copies of debug files (MEMTRAIL_DEBUG_CACHE):
# in the test run's directory (run-e2e.sh shares one, MT_DEBUG_CACHE,
# between its tests), never in the user's cache.
MEMTRAIL_DEBUG_CACHE=${MT_DEBUG_CACHE:-$MT_TMP/debug-cache}
export MEMTRAIL_DEBUG_CACHE
# Programs under test must not see the make that runs the tests: with
# `make check` under another make, MAKEFLAGS names a jobserver's file
# descriptors, which gcc's driver reads (2 more allocations, 68 B, seen
# under memcheck, whose descriptors differ, and not under memtrail).
unset MAKEFLAGS MFLAGS MAKELEVEL
mt_failures=0

mt_skip() {
	echo "$*"
	exit 77
}

mt_fail() {
	echo "FAIL: $*"
	mt_failures=$((mt_failures + 1))
}

mt_ok() {
	echo "ok: $*"
}

mt_finish() {
	if [ "$mt_failures" -ne 0 ]; then
		echo "$mt_failures failure(s)"
		exit 1
	fi
	exit 0
}

mt_need_cmd() {
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || mt_skip "$c not installed"
	done
}

mt_have_memtrail() {
	[ -x "$MEMTRAIL" ] && [ -f "$MT_RECORDER" ]
}

mt_run() {
	_p=$1; shift
	timeout "$MT_TIMEOUT" "$@" >"$_p.out" 2>"$_p.err" </dev/null
	echo $? >"$_p.rc"
	return 0
}

mt_record() {
	_d=$1; _p=$2; shift 2
	# shellcheck disable=SC2086
	env ${MT_RECORD_ENV:-} timeout "$MT_TIMEOUT" "$MEMTRAIL" record \
		${MT_KEEP_RUNTIME:+$([ "$MT_KEEP_RUNTIME" = 1 ] && echo --keep-runtime)} \
		-o "$_d" -- "$@" >"$_p.out" 2>"$_p.err" </dev/null
	echo $? >"$_p.rc"
	return 0
}

mt_summary() {
	timeout "$MT_TIMEOUT" "$MEMTRAIL" report --summary --format json "$1" \
		>"$2" 2>"$2.err" </dev/null
}

mt_memcheck() {
	_l=$1; _p=$2; shift 2
	# shellcheck disable=SC2086
	env ${MT_MEMCHECK_PRELOAD:+LD_PRELOAD=$MT_MEMCHECK_PRELOAD} \
		timeout "$MT_TIMEOUT" valgrind --tool=memcheck $(mt_keep_runtime_opts) \
		--trace-children=no --trace-malloc=yes \
		--log-file="$_l" "$@" >"$_p.out" 2>"$_p.err" </dev/null
	echo $? >"$_p.rc"
	return 0
}

mt_keep_runtime_opts() {
	[ "${MT_KEEP_RUNTIME:-}" = 1 ] && echo "--run-libc-freeres=no --run-cxx-freeres=no"
	return 0
}

mt_same_run() {
	_n=$1; _a=$2; _b=$3; _same=1
	if ! cmp -s "$_a.out" "$_b.out"; then
		mt_fail "$_n: stdout differs ($_a.out vs $_b.out):"
		diff "$_a.out" "$_b.out" | head -n 10
		_same=0
	fi
	if [ "$(cat "$_a.rc")" != "$(cat "$_b.rc")" ]; then
		mt_fail "$_n: exit status $(cat "$_a.rc") vs $(cat "$_b.rc")"
		_same=0
	fi
	[ $_same = 1 ] && mt_ok "$_n: same stdout and exit status ($(cat "$_a.rc"))"
	return 0
}

mt_valgrind_env() {
	env | sort >"$MT_TMP/env.native"
	valgrind --log-file=/dev/null /usr/bin/env </dev/null | sort >"$MT_TMP/env.vg"
	comm -13 "$MT_TMP/env.native" "$MT_TMP/env.vg" | grep -v -e '^LD_PRELOAD=' -e '^_=' |
		tr '\n' ' '
}

mt_tls_standins() {
	_list=""
	_i=1
	while [ "$_i" -le "$1" ]; do
		_so=$MT_TMP/libmt-tls-standin$_i.so
		if [ ! -f "$_so" ]; then
			echo "__thread int mt_tls_standin$_i;" >"$MT_TMP/tls$_i.c"
			${CC:-cc} -shared -fPIC -o "$_so" "$MT_TMP/tls$_i.c" || return 1
		fi
		_list=${_list:+$_list:}$_so
		_i=$((_i + 1))
	done
	echo "$_list"
}

mt_tls_modules() {
	if [ $# -eq 2 ]; then
		_libs=$(LD_PRELOAD=$1 LD_TRACE_LOADED_OBJECTS=1 "$2" </dev/null)
	else
		_libs=$(LD_TRACE_LOADED_OBJECTS=1 "$1" </dev/null)
	fi
	_n=0
	eval "_prog=\${$#}"
	readelf -lW "$_prog" 2>/dev/null | grep -q '^ *TLS ' && _n=1
	# With the recorder preloaded, count libunwind too: the recorder dlopens
	# it at start (recorder/core.c), before any thread is created.
	_extra=""
	if [ $# -eq 2 ]; then
		_extra=$(ldconfig -p | sed -n 's/.*libunwind\.so\.8 (libc6,x86-64) => \(.*\)/\1/p' | head -n 1)
	fi
	for _f in $_extra $(printf '%s\n' "$_libs" | sed -n 's/.*=> \(\/[^ ]*\) (.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
		readelf -lW "$_f" 2>/dev/null | grep -q '^ *TLS ' && _n=$((_n + 1))
	done
	echo $_n
}

mt_need_recorder() {
	REC=$MT_RECORDER
	[ -f "$REC" ] || mt_skip "$REC not built"
	DEC="python3 $MT_TOP/tests/e2e/rec_decode.py"
}

mt_build_rec_prog() {
	cc "${2:--O0}" -g -pthread -I"$MT_TOP/include" -o "$1" "$MT_TOP/tests/e2e/rec_prog.c" -ldl ||
		mt_skip "cannot build rec_prog"
}

mt_drainer_of() {
	for _c in /proc/[0-9]*/comm; do
		_d=${_c%/comm}
		grep -qx "${2:-memtrail-drain}" "$_c" 2>/dev/null || continue
		tr '\0' '\n' 2>/dev/null <"$_d/environ" | grep -qx "MEMTRAIL_OUTPUT=$1" &&
			echo "${_d#/proc/}"
	done
}

mt_wait_drained() {
	_i=0
	while [ $_i -lt 100 ] && [ -n "$(mt_drainer_of "$1")" ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}

mt_val() {
	sed -n "s/^$1=//p" "$2" | head -n 1
}

mt_line_of() {
	grep -n -e "$2" "$1" | head -n 1 | cut -d: -f1
}

mt_chain() {
	_f=$1; shift
	_after=0
	for _s in "$@"; do
		_n=$(grep -n -F -e "$_s" "$_f" | cut -d: -f1 |
			awk -v a="$_after" '$1 > a { print; exit }')
		if [ -z "$_n" ]; then
			mt_fail "no line '$_s' after line $_after of $_f"
			return 1
		fi
		_after=$_n
	done
	return 0
}

mt_tmux_start() {
	MT_TMUX="tmux -L mt-$$"
	$MT_TMUX new-session -d -s mt -x "$1" -y "$2" "env PS1='mt-prompt\$ ' sh" || return 1
	$MT_TMUX set-option -g status off >/dev/null
	$MT_TMUX resize-window -t mt -x "$1" -y "$2" 2>/dev/null
	return 0
}

mt_tmux_stop() {
	[ -n "${MT_TMUX:-}" ] && $MT_TMUX kill-server 2>/dev/null
	return 0
}

mt_tmux_keys() {
	$MT_TMUX send-keys -t mt "$@"
}

mt_tmux_screen() {
	$MT_TMUX capture-pane -p -t mt >"$1"
}

mt_tmux_wait() {
	_n=$(( ${2:-15} * 20 ))
	while [ "$_n" -gt 0 ]; do
		mt_tmux_screen "$MT_TMP/tmux.cur"
		grep -qE -- "$1" "$MT_TMP/tmux.cur" && return 0
		sleep 0.05
		_n=$((_n - 1))
	done
	echo "--- screen while waiting for /$1/:"
	grep -v '^ *$' "$MT_TMP/tmux.cur" | tail -n 20
	return 1
}

mt_tmux_expand_all() {
	_k="PPage PPage"
	_i=0
	while [ "$_i" -lt "$1" ]; do _k="$_k * Down"; _i=$((_i + 1)); done
	# '*' must reach tmux as it is, not as the files it matches
	case $- in *f*) _glob=;; *) _glob=1; set -f;; esac
	# shellcheck disable=SC2086
	mt_tmux_keys $_k g
	[ -n "$_glob" ] && set +f
	mt_tmux_wait "no search yet" 10
}
