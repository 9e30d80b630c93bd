#!/bin/sh
# report_tags.sh - scoped tags (memtrail_tag_push / memtrail_tag_pop and
# memtrail::tag_scope in memtrail.h), end to end, with exact figures:
#   samples/tags.c (nested scopes, two threads, one of them with main's
#   scope names, cross-thread frees, leaks in three tag paths) through
#   `report --by-tag` (JSON and text), `--by-tag --by-thread`, `--tag PATH`
#   on the peak and leaks trees, `dump` and the viewer's G key; every
#   figure is worked out in the sample's top comment (D, a thread's DTV,
#   is 272 B plus 16 B per TLS module the recorder adds, as in
#   report_threads.sh);
#   without memtrail the calls do nothing: the program runs the same, needs
#   no library, and binds the recorder's entry points weakly;
#   tests/e2e/tags_cxx.cpp: tag_scope pushes and pops, also when an
#   exception unwinds through it;
#   tests/e2e/tags_depth.c: 70 nested scopes (64 kept, one message), an
#   extra pop, an empty name, a reused name buffer;
#   a version 3 log has no tags; bad --tag values are one-line errors.
#
# Not for: the run's totals (accuracy_samples.sh checks the sample's
# expect block, under memcheck too).

[ -z "${MT_TMP:-}" ] && own_tmp=1
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3 readelf nm cc c++
mt_have_memtrail || mt_skip "memtrail not built"
BIN=$MT_SAMPLES/tags
[ -x "$BIN" ] || mt_skip "samples not built (make samples): no $BIN"
trap 'mt_tmux_stop; [ -n "${own_tmp:-}" ] && rm -rf "$MT_TMP"' EXIT
cd "$MT_TMP" || exit 1

# Without memtrail: the same output, no library needed, weak entry points.
mt_run native "$BIN"
mt_record tags.data rec "$BIN"
if mt_same_run "tags" native rec && [ "$(cat native.out)" = "tags: done" ] &&
    [ ! -s native.err ]; then
	mt_ok "tags runs the same natively and under memtrail record"
else
	mt_fail "tags: native rc $(cat native.rc) '$(cat native.out)', recorded rc $(cat rec.rc)"
fi
if ! readelf -d "$BIN" | grep NEEDED | grep -q memtrail &&
    [ "$(nm "$BIN" | grep -c ' w memtrail_tag_p[a-z]*_impl$')" = 2 ]; then
	mt_ok "tags needs no memtrail library: push and pop bind weakly"
else
	mt_fail "tags: $(readelf -d "$BIN" | grep NEEDED | tr '\n' ' '); $(nm "$BIN" | grep memtrail_tag)"
fi
tls=$(( $(mt_tls_modules "$MT_RECORDER" "$BIN") - $(mt_tls_modules "$BIN") ))
dtv=$((272 + 16 * tls))

# dump: the tag paths, parents first, and the stacks that name them.
"$MEMTRAIL" dump tags.data >dump.txt 2>dump.err
if [ "$(grep '^tag ' dump.txt | tr '\n' '|')" = 'tag 1 parent=0 path="parser"|tag 2 parent=1 path="parser/lexer"|tag 3 parent=0 path="io"|tag 4 parent=3 path="io/decode"|tag 5 parent=0 path="report"|' ] &&
    [ "$(grep -c '^stack .* tag=' dump.txt)" = 11 ]; then
	mt_ok "dump: 5 tag paths in order, 11 tagged stacks"
else
	mt_fail "dump ($MT_TMP/dump.txt): $(grep '^tag ' dump.txt | tr '\n' '|')"
fi

# --by-tag as JSON: the sample's table.
"$MEMTRAIL" report --by-tag --format json tags.data >tags.json 2>tags.err
if python3 - "$dtv" <<'PY'
import json, sys
d = int(sys.argv[1])
rows = json.load(open("tags.json"))["tags"]
want = [
    # tag, allocations, bytes, peak bytes, peak blocks, leaked bytes, leaked blocks
    (None, 3, 2 * d + 8, 2 * d, 2, 0, 0),
    ("parser", 3, 460, 460, 3, 300, 1),
    ("parser/lexer", 4, 1120, 80, 2, 40, 1),
    ("io", 1, 4096, 4096, 1, 0, 0),
    ("io/decode", 2, 768, 256, 1, 256, 1),
    ("report", 1, 20000, 20000, 1, 0, 0),
]
keys = ("tag", "allocations", "bytes_allocated", "peak_bytes", "peak_blocks",
        "leaked_bytes", "leaked_blocks")
got = [tuple(r[k] for k in keys) for r in rows]
if got != want:
    print("expected", want, "\ngot     ", got)
    sys.exit(1)
PY
then
	mt_ok "--by-tag --format json: every tag path's figures"
else
	mt_fail "--by-tag --format json ($MT_TMP/tags.json)"
fi

# --by-tag as text: the same, in columns.
"$MEMTRAIL" report --by-tag tags.data >tags.txt 2>tags.err
if head -n 1 tags.txt | grep -q '^tags (live at the peak' &&
    grep -qx ' *4 *1,120B *80B *2 *40B *1  parser/lexer' tags.txt &&
    grep -qx ' *1 *20,000B *20,000B *1 *0B *0  report' tags.txt &&
    grep -qx " *3 *$((2 * dtv + 8))B *$((2 * dtv))B *2 *0B *0  -" tags.txt &&
    [ "$(wc -l <tags.txt)" = 8 ]; then
	mt_ok "--by-tag: a line per tag path"
else
	mt_fail "--by-tag text ($MT_TMP/tags.txt)"
fi

# --by-tag --by-thread: per thread and tag path.
"$MEMTRAIL" report --by-tag --by-thread --format json tags.data >tt.json 2>tt.err
if python3 - "$dtv" <<'PY'
import json, sys
d = int(sys.argv[1])
rows = json.load(open("tt.json"))["tags"]
want = [
    ("tags", None, 2, 2 * d, 2 * d, 2, 0, 0),
    ("tags", "parser", 2, 160, 160, 2, 0, 0),
    ("tags", "parser/lexer", 3, 120, 80, 2, 40, 1),
    ("tags", "report", 1, 20000, 20000, 1, 0, 0),
    ("worker-a", "io", 1, 4096, 4096, 1, 0, 0),
    ("worker-a", "io/decode", 2, 768, 256, 1, 256, 1),
    ("worker-b", None, 1, 8, 0, 0, 0, 0),
    ("worker-b", "parser", 1, 300, 300, 1, 300, 1),
    ("worker-b", "parser/lexer", 1, 1000, 0, 0, 0, 0),
]
keys = ("thread_name", "tag", "allocations", "bytes_allocated", "peak_bytes",
        "peak_blocks", "leaked_bytes", "leaked_blocks")
got = [tuple(r[k] for k in keys) for r in rows]
if got != want:
    print("expected", want, "\ngot     ", got)
    sys.exit(1)
PY
then
	mt_ok "--by-tag --by-thread --format json: each thread's blocks per tag path"
else
	mt_fail "--by-tag --by-thread ($MT_TMP/tt.json)"
fi
"$MEMTRAIL" report --by-tag --by-thread tags.data >tt.txt 2>tt.err
tid_b=$(python3 -c 'import json; print([r["tid"] for r in json.load(open("tt.json"))["tags"] if r["thread_name"] == "worker-b"][0])')
if grep -qx " *$tid_b *1 *300B *300B *1 *300B *1  parser" tt.txt &&
    [ "$(wc -l <tt.txt)" = 11 ]; then
	mt_ok "--by-tag --by-thread: a line per thread and tag path"
else
	mt_fail "--by-tag --by-thread text ($MT_TMP/tt.txt)"
fi

# --tag PATH: the trees of that path and the paths inside it.
sum() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
check_tag() {
	_tag=$1 _peak=$2 _leak=$3 _f=$4
	"$MEMTRAIL" report --tag "$_tag" --show-maximum --format collapsed tags.data \
		>"max.$_f" 2>"max.$_f.err"
	"$MEMTRAIL" report --tag "$_tag" --show-leaks --format collapsed tags.data \
		>"leak.$_f" 2>"leak.$_f.err"
	if [ "$(sum "max.$_f")" = "$_peak" ] && [ "$(sum "leak.$_f")" = "$_leak" ]; then
		mt_ok "--tag '$_tag': $_peak B at the peak, $_leak B leaked"
	else
		mt_fail "--tag '$_tag': peak $(sum "max.$_f") (want $_peak), leaked $(sum "leak.$_f") (want $_leak) ($MT_TMP/max.$_f)"
	fi
}
check_tag parser 540 340 parser
check_tag parser/lexer 80 40 lexer
check_tag io 4352 256 io
check_tag io/decode 256 256 decode
check_tag report 20000 0 report
check_tag "" $((2 * dtv)) 0 none
"$MEMTRAIL" report --tag parser tags.data >parser.txt 2>parser.err
# the leak kinds' trees too: the parser's 340 B are definitely lost (the
# sample's comment), not the run's 596 B
if grep -qx "maximum tagged parser: 540B" parser.txt && grep -qx "leaked tagged parser: 340B" parser.txt &&
    grep -qx "definitely lost tagged parser: 340B" parser.txt &&
    grep -q "worker_b \[" parser.txt && ! grep -q "worker_a \[" parser.txt; then
	mt_ok "--tag parser: the trees' titles say so, worker-b's parser blocks in, worker-a's out"
else
	mt_fail "--tag parser text ($MT_TMP/parser.txt)"
fi
tid_a=$(python3 -c 'import json; print([r["tid"] for r in json.load(open("tt.json"))["tags"] if r["thread_name"] == "worker-a"][0])')
"$MEMTRAIL" report --tag io --thread "$tid_a" --show-leaks --format collapsed tags.data >ioa 2>ioa.err
"$MEMTRAIL" report --tag parser --thread "$tid_a" --show-leaks --format collapsed tags.data >pa 2>pa.err
if [ "$(sum ioa)" = 256 ] && [ "$(sum pa)" = 0 ]; then
	mt_ok "--tag with --thread: both restrictions hold"
else
	mt_fail "--tag with --thread: io of worker-a leaked $(sum ioa), parser of worker-a $(sum pa)"
fi
"$MEMTRAIL" report --tag parser --show-calls --format collapsed tags.data >calls 2>calls.err
if [ "$(sum calls)" = 7 ]; then
	mt_ok "--tag parser --show-calls: its 7 calls (3 parser, 4 parser/lexer)"
else
	mt_fail "--tag parser --show-calls: $(sum calls) calls"
fi

# --show-sizes keeps the same restrictions (JSON buckets: min calls bytes):
# parser is p1 100, p2 60, b1 300 and parser/lexer l1-l3 40, b2 1,000;
# worker-b made b1 300, b2 1,000, b3 8; both: b1 and b2.
sizes() {
	"$MEMTRAIL" report --show-sizes --format json "$@" tags.data 2>/dev/null |
	    python3 -c 'import json,sys; print(" ".join("%d:%d:%d" % (b["min"], b["calls"], b["bytes"]) for b in json.load(sys.stdin)["sizes"] if b["calls"]))'
}
s_tag=$(sizes --tag parser)
s_thr=$(sizes --thread "$tid_b")
s_both=$(sizes --tag parser --thread "$tid_b")
if [ "$s_tag" = "32:4:180 64:1:100 256:1:300 512:1:1000" ] &&
    [ "$s_thr" = "8:1:8 256:1:300 512:1:1000" ] && [ "$s_both" = "256:1:300 512:1:1000" ]; then
	mt_ok "--show-sizes under --tag, --thread and both: the kept calls only"
else
	mt_fail "--show-sizes: --tag parser '$s_tag', --thread worker-b '$s_thr', both '$s_both'"
fi

# The help says both options.
if "$MEMTRAIL" help report | grep -q -- '^  --by-tag ' && "$MEMTRAIL" help report | grep -q -- '^  --tag PATH '; then
	mt_ok "help report: --by-tag and --tag"
else
	mt_fail "help report lacks --by-tag or --tag"
fi

# Bad values: one line, non-zero.
bad() {
	_what=$1; shift
	if "$MEMTRAIL" report "$@" >bad.out 2>bad.err; then
		mt_fail "$_what: accepted"
	elif [ "$(wc -l <bad.err)" = 1 ] && grep -q '^memtrail: error: ' bad.err; then
		mt_ok "$_what: $(cat bad.err)"
	else
		mt_fail "$_what: $(cat bad.err)"
	fi
}
bad "--tag of no path" --tag pars tags.data
bad "--tag with --compare" --tag parser --compare tags.data tags.data
bad "--by-tag --format collapsed" --by-tag --format collapsed tags.data
bad "--by-tag --format json with a tree" --by-tag --show-leaks --format json tags.data
bad "--tag on a version 3 log" --tag parser "$MT_TOP/tests/e2e/cli_phases.data"
"$MEMTRAIL" report --by-tag --format json "$MT_TOP/tests/e2e/cli_phases.data" >v3.json 2>v3.err
if python3 -c 'import json,sys; r = json.load(open("v3.json"))["tags"]; sys.exit(not (len(r) == 1 and r[0]["tag"] is None))'; then
	mt_ok "an older log: --by-tag shows its allocations untagged"
else
	mt_fail "older log --by-tag ($MT_TMP/v3.json): $(cat v3.err)"
fi

# C++: memtrail::tag_scope.
c++ -O0 -g -std=c++17 -Wall -Wextra -Werror -I"$MT_TOP/include" -o tags_cxx \
	"$MT_TOP/tests/e2e/tags_cxx.cpp" || mt_skip "cannot build the test programs"
mt_run cxx.native ./tags_cxx
mt_record cxx.data cxx ./tags_cxx
"$MEMTRAIL" report --by-tag --format json cxx.data >cxx.json 2>cxx.err
if mt_same_run "tags_cxx" cxx.native cxx && python3 - <<'PY'
import json, sys
rows = {r["tag"]: r for r in json.load(open("cxx.json"))["tags"]}
want = {None: (7, 1), "vec": (50, 1), "parser": (100, 1), "parser/lexer": (20, 2)}
got = {k: (r["leaked_bytes"], r["leaked_blocks"]) for k, r in rows.items()}
ok = got == want and rows["parser"]["allocations"] == 2 and rows["parser/lexer"]["allocations"] == 2 \
    and rows["vec"]["allocations"] == 1
if not ok:
    print("expected", want, "\ngot     ", got)
sys.exit(0 if ok else 1)
PY
then
	mt_ok "C++ tag_scope: leaks per tag path, the throw's unwinding popped its scope"
else
	mt_fail "C++ tag_scope ($MT_TMP/cxx.json)"
fi

# The edges: depth, an extra pop, an empty name, a reused buffer.
cc -O0 -g -Wall -Wextra -Werror -I"$MT_TOP/include" -o tags_depth "$MT_TOP/tests/e2e/tags_depth.c" ||
	mt_skip "cannot build the test programs"
mt_record dp.data dp ./tags_depth
"$MEMTRAIL" report --by-tag --format json dp.data >dp.json 2>dp.rep.err
deep=$(python3 -c 'print("/".join("d%d" % i for i in range(64)))')
if python3 - "$deep" <<'PY'
import json, sys
rows = {r["tag"]: (r["leaked_bytes"], r["leaked_blocks"]) for r in json.load(open("dp.json"))["tags"]}
want = {None: (13, 1), sys.argv[1]: (11, 1), "a": (36, 2), "x": (23, 1), "y": (29, 1)}
if rows != want:
    print("expected", want, "\ngot     ", rows)
    sys.exit(1)
PY
then
	mt_ok "70 nested scopes count under the 64 kept; extra pop, empty name, reused buffer"
else
	mt_fail "tags_depth ($MT_TMP/dp.json)"
fi
if [ "$(grep -c 'tag scopes nested deeper than 64' dp.err)" = 1 ]; then
	mt_ok "too deep: said once on stderr"
else
	mt_fail "too deep: stderr $(cat dp.err)"
fi

# The viewer: G groups the tree at the peak by tag path, G again ungroups.
if command -v tmux >/dev/null 2>&1 && mt_tmux_start 120 40; then
	mt_tmux_keys "'$MEMTRAIL' view '$MT_TMP/tags.data'" Enter
	if mt_tmux_wait "^Live at peak: " 20; then
		mt_tmux_keys G
		if mt_tmux_wait "grouped by tag path" 10 &&
		    mt_tmux_wait "^ +20,000 +[0-9.]+% +1 +1  . \\[tag report\\]" 5 &&
		    mt_tmux_wait "^ +4,096 +[0-9.]+% +1 +1  . \\[tag io\\]" 5 &&
		    mt_tmux_wait "^ +460 +[0-9.]+% +3 +3  . \\[tag parser\\]" 5 &&
		    mt_tmux_wait "^ +$((2 * dtv)) +[0-9.]+% +2 +2  . \\[no tag\\]" 5 &&
		    grep -q "by tag, allocation sites first" "$MT_TMP/tmux.cur"; then
			mt_ok "view: G groups the peak's tree by tag path"
		else
			mt_fail "view: G"
		fi
		mt_tmux_keys G
		if mt_tmux_wait "not grouped by tag" 10 && ! grep -q '\[tag ' "$MT_TMP/tmux.cur"; then
			mt_ok "view: G again ungroups"
		else
			mt_fail "view: G again"
		fi
	else
		mt_fail "view: did not start"
	fi
	mt_tmux_keys q
	mt_tmux_stop
fi
mt_finish
