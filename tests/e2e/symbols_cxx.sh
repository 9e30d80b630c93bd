#!/bin/sh
# symbols_cxx.sh - end-to-end: the report of samples/cxx_new shows its
# growing std::vector as demangled C++ frames, callee first:
# std::vector<int, ...>::_M_realloc_insert<int const&>(...), push_back,
# grow_vector(), main. The expected names come from the binary's symbol
# table through binutils' c++filt; the line of grow_vector from the source.
#
# Not for: the figures (accuracy_samples.sh).
. "$(dirname "$0")/lib.sh"

mt_have_memtrail || mt_skip "memtrail or libmemtrail.so not built"
mt_need_cmd nm c++filt
prog=$MT_SAMPLES/cxx_new
src=$MT_TOP/samples/cxx_new.cpp
[ -x "$prog" ] || mt_skip "$prog not built (make samples)"

demangle() {
	nm "$prog" | awk -v re="$1" '$3 ~ re { print $3; exit }' | c++filt
}
# a template function's demangled name starts with its return type
realloc_insert=$(demangle '_M_realloc_insert' | sed 's/^void //')
push_back=$(demangle 'push_backERKi')
grow=$(demangle 'grow_vector')
l_push=$(mt_line_of "$src" 'v.push_back(i);')
case "$realloc_insert" in
"std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>("*) ;;
*) mt_fail "unexpected name from c++filt: $realloc_insert";;
esac

cd "$MT_TMP" || exit 1
mt_record cxx.data rec "$prog"
[ "$(cat rec.rc)" = 0 ] || mt_fail "record exited $(cat rec.rc): $(cat rec.err)"
timeout "$MT_TIMEOUT" "$MEMTRAIL" report --threshold 0 cxx.data >rep.txt 2>rep.err ||
	mt_fail "report failed: $(cat rep.err)"
cat rep.txt
mt_chain rep.txt ": $realloc_insert [" ": $push_back [" 	": $grow [samples/cxx_new.cpp:$l_push]" ": main [samples/cxx_new.cpp:" &&
	mt_ok "$realloc_insert <- push_back <- $grow:$l_push <- main"
mt_finish
