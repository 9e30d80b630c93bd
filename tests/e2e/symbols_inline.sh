#!/bin/sh
# symbols_inline.sh - end-to-end: the report of samples/inline_O2 (built with
# -O2) shows the inlined helper as its own frame with the exact line of its
# malloc call, then the function it was inlined into at the call-site line,
# then main, under the figures the sample documents (2,560B in 4 blocks at
# the peak).
#
# Expected lines are read from the sample's source, never written here. Not
# for: the figures themselves (accuracy_samples.sh), other samples.
. "$(dirname "$0")/lib.sh"

mt_have_memtrail || mt_skip "memtrail or libmemtrail.so not built"
prog=$MT_SAMPLES/inline_O2
src=$MT_TOP/samples/inline_O2.c
[ -x "$prog" ] || mt_skip "$prog not built (make samples)"

l_malloc=$(mt_line_of "$src" 'char \*p = malloc(n);')
l_fill=$(mt_line_of "$src" 'table\[i\] = make_buffer(')
l_main=$(mt_line_of "$src" '^	fill_table();')
[ -n "$l_malloc" ] && [ -n "$l_fill" ] && [ -n "$l_main" ] ||
	mt_fail "cannot find the marker lines in $src"

cd "$MT_TMP" || exit 1
mt_record inl.data rec "$prog"
[ "$(cat rec.rc)" = 0 ] || mt_fail "record exited $(cat rec.rc): $(cat rec.err)"
timeout "$MT_TIMEOUT" "$MEMTRAIL" report --show-maximum inl.data >rep.txt 2>rep.err ||
	mt_fail "report failed: $(cat rep.err)"
cat rep.txt

# callee first: the inlined helper, its caller, main, in this order
mt_chain rep.txt \
	"(2,560B, 4x): make_buffer [samples/inline_O2.c:$l_malloc]" \
	"(2,560B, 4x): fill_table [samples/inline_O2.c:$l_fill]" \
	"(2,560B, 4x): main [samples/inline_O2.c:$l_main]" &&
	mt_ok "make_buffer:$l_malloc <- fill_table:$l_fill <- main:$l_main"
grep -q 'build-id differs\|cannot be read' rep.err &&
	mt_fail "unexpected symbol warning: $(cat rep.err)"
mt_finish
