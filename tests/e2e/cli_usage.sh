#!/bin/sh
# cli_usage.sh - the memtrail program's help, version and usage errors:
# --help / help COMMAND / COMMAND --help, --version against the Makefile's
# VERSION, and every misuse of the command line exits 2 with exactly one
# "memtrail: error: ..." line on stderr and runs nothing.
. "$(dirname "$0")/lib.sh"
[ -x "$MEMTRAIL" ] || mt_skip "memtrail not built"
cd "$MT_TMP" || exit 1

# expect_status NAME STATUS CMD...: runs CMD, checks its exit status.
expect_status() {
	_n=$1; _s=$2; shift 2
	"$@" >"$MT_TMP/o" 2>"$MT_TMP/e" </dev/null
	_rc=$?
	if [ "$_rc" = "$_s" ]; then mt_ok "$_n: exit $_rc"; else mt_fail "$_n: exit $_rc, expected $_s"; cat "$MT_TMP/e"; fi
}

# usage_error NAME CMD...: exit 2, one stderr line "memtrail: error: ...", no stdout.
usage_error() {
	_n=$1; shift
	expect_status "$_n" 2 "$@"
	_lines=$(wc -l <"$MT_TMP/e")
	if [ "$_lines" -eq 1 ] && grep -q '^memtrail: error: [^ ]' "$MT_TMP/e"; then
		mt_ok "$_n: one error line: $(cat "$MT_TMP/e")"
	else
		mt_fail "$_n: expected one 'memtrail: error:' line, got $_lines:"; cat "$MT_TMP/e"
	fi
	[ -s "$MT_TMP/o" ] && mt_fail "$_n: wrote to stdout"
	return 0
}

# --version prints the Makefile's VERSION.
version=$(sed -n 's/^VERSION *:= *//p' "$MT_TOP/Makefile")
expect_status "--version" 0 "$MEMTRAIL" --version
[ "$(cat o)" = "memtrail $version" ] && mt_ok "--version says memtrail $version" ||
	mt_fail "--version printed '$(cat o)', expected 'memtrail $version'"

# --help and help: usage on stdout, every command listed.
expect_status "--help" 0 "$MEMTRAIL" --help
cp o help.out
for c in record report view dump; do
	grep -q "^  $c " help.out && mt_ok "--help lists $c" || mt_fail "--help does not list $c"
done
expect_status "help" 0 "$MEMTRAIL" help
cmp -s o help.out && mt_ok "help = --help" || mt_fail "help differs from --help"

# help COMMAND = COMMAND --help = COMMAND -h, starting with its usage line.
for c in record report dump view; do
	expect_status "help $c" 0 "$MEMTRAIL" help $c
	cp o h1
	head -n 1 h1 | grep -q "^usage: memtrail $c" && mt_ok "help $c starts with its usage" ||
		mt_fail "help $c: first line '$(head -n 1 h1)'"
	expect_status "$c --help" 0 "$MEMTRAIL" $c --help
	cmp -s o h1 && mt_ok "$c --help = help $c" || mt_fail "$c --help differs from help $c"
	expect_status "$c -h" 0 "$MEMTRAIL" $c -h
	cmp -s o h1 && mt_ok "$c -h = help $c" || mt_fail "$c -h differs from help $c"
done
# Every option of SPEC section 4 appears in report's help.
for o in --summary --show-maximum --show-leaks --show-snapshots --show-snapshot-deltas \
	 --diff --temporary --show-calls --show-sizes --timeline --threshold --depth --top --inverted \
	 --include-function --exclude-function --include-module --exclude-module --format "-o OUT"; do
	"$MEMTRAIL" help report | grep -q -- "$o" && : || mt_fail "help report lacks $o"
done
# record's help offers every record option.
for opt in -o --depth --follow-children --snapshot-signal --snapshot-interval; do
	"$MEMTRAIL" help record | grep -q -- "$opt" && mt_ok "record help: $opt" || mt_fail "record help lacks $opt"
done

# Unknown command / no command: error then usage on stderr, exit 2.
expect_status "unknown command" 2 "$MEMTRAIL" frobnicate
[ "$(head -n 1 e)" = "memtrail: error: unknown command 'frobnicate'" ] &&
	mt_ok "unknown command message" || mt_fail "unknown command: '$(head -n 1 e)'"
grep -q "^usage: memtrail COMMAND" e && mt_ok "unknown command shows usage" || mt_fail "no usage"
expect_status "no command" 2 "$MEMTRAIL"
expect_status "help of an unknown command" 2 "$MEMTRAIL" help frobnicate
[ "$(head -n 1 e)" = "memtrail: error: no such command 'frobnicate'" ] &&
	mt_ok "help of an unknown command: message" || mt_fail "help frobnicate: '$(head -n 1 e)'"
usage_error "help with two names" "$MEMTRAIL" help record report
usage_error "report: json summary with trees" "$MEMTRAIL" report --summary --show-leaks --format json

# Option errors of each command.
usage_error "report: unknown option" "$MEMTRAIL" report --frobnicate
usage_error "report: missing value" "$MEMTRAIL" report --threshold
usage_error "report: threshold over 100" "$MEMTRAIL" report --threshold 200
usage_error "report: threshold not a number" "$MEMTRAIL" report -t abc
usage_error "report: bad depth" "$MEMTRAIL" report --depth -1
usage_error "report: bad top" "$MEMTRAIL" report --top x
usage_error "report: bad format" "$MEMTRAIL" report --format xml
usage_error "report: --diff with one point" "$MEMTRAIL" report --diff 1
# any other word may be a snapshot's label: only the log can tell (report_points.sh)
usage_error "report: --diff empty point" "$MEMTRAIL" report --diff 1 ""
usage_error "report: bad regex" "$MEMTRAIL" report -i '('
usage_error "report: bad module regex" "$MEMTRAIL" report --exclude-module '[a'
usage_error "report: two files" "$MEMTRAIL" report a.data b.data
usage_error "report: summary as massif" "$MEMTRAIL" report --summary --format massif
usage_error "report: flag with a value" "$MEMTRAIL" report --inverted=1
usage_error "dump: two files" "$MEMTRAIL" dump a.data b.data
usage_error "dump: unknown option" "$MEMTRAIL" dump --x

# record misuse: nothing runs (the program would create a marker file).
usage_error "record: no program" "$MEMTRAIL" record
usage_error "record: only options" "$MEMTRAIL" record -o x.data --depth 3
usage_error "record: program not found" "$MEMTRAIL" record no-such-program-here
usage_error "record: path not found" "$MEMTRAIL" record ./no-such-program
printf '#!/bin/sh\ntouch "%s/ran"\n' "$MT_TMP" >notexec.sh; chmod 644 notexec.sh
usage_error "record: not executable" "$MEMTRAIL" record ./notexec.sh
usage_error "record: a directory" "$MEMTRAIL" record /tmp
usage_error "record: depth 0" "$MEMTRAIL" record --depth 0 touch ran
usage_error "record: depth 257" "$MEMTRAIL" record --depth 257 touch ran
usage_error "record: bad signal" "$MEMTRAIL" record --snapshot-signal NOPE touch ran
usage_error "record: SIGKILL" "$MEMTRAIL" record --snapshot-signal KILL touch ran
usage_error "record: bad interval" "$MEMTRAIL" record --snapshot-interval 0 touch ran
usage_error "record: bad interval text" "$MEMTRAIL" record --snapshot-interval 1s touch ran
usage_error "record: missing output dir" "$MEMTRAIL" record -o "$MT_TMP/nodir/x.data" touch ran
usage_error "record: output is a directory" "$MEMTRAIL" record -o "$MT_TMP" touch ran
usage_error "record: unknown option" "$MEMTRAIL" record --no-such-option touch ran
mkdir ro && chmod 555 ro
if [ "$(id -u)" != 0 ]; then
	usage_error "record: unwritable output dir" "$MEMTRAIL" record -o ro/x.data touch ran
fi
[ -e ran ] && mt_fail "a misused record ran the program" || mt_ok "no misused record ran anything"
mt_finish
