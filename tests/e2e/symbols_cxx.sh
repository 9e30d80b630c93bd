#!/bin/sh
# symbols_cxx.sh - end-to-end: the report of samples/cxx_new shows its
# growing std::vector as demangled C++ frames, callee first:
# std::vector<int, ...>::_M_realloc_insert<int const&>(...), push_back,
# grow_vector(), main. The expected names come from the binary's symbol
# table through binutils' c++filt; the line of grow_vector from the source.
# Allocation sites first (--sites, --top-sites), the vector's site is
# std::_Vector_base<int, ...>::_M_allocate: std::__new_allocator<int>'s
# allocate and operator new, which it calls, are the allocator's frames.
# At the peak (the sample's comment) the vector's 32 and 64 B arrays are
# live, 96 B in 2 blocks, from the 5 calls of its one growth stack; main
# itself holds 40 + 100 + 40 + 192 + 1,000 + 72 + 300 = 1,744 B in 7 blocks
# after 7 calls, and with the vector 1,840 B in 9 blocks after 12.
#
# Not for: the other figures (accuracy_samples.sh).
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

m_allocate=$(demangle '_Vector_baseIiSaIiEE11_M_allocate')
new_allocate=$(demangle '__new_allocatorIiE8allocate')
[ -n "$m_allocate" ] && [ -n "$new_allocate" ] || mt_fail "no _M_allocate or allocate in $prog"
r() { timeout "$MT_TIMEOUT" "$MEMTRAIL" report cxx.data --show-maximum "$@"; }
r --sites --threshold 0 >sites.txt 2>&1 || mt_fail "report --sites failed: $(cat sites.txt)"
if grep -qF -- "-> 0.13% (96B, 2x): $m_allocate [" sites.txt &&
   grep -F -- "$m_allocate [" sites.txt | grep -q ' via operator new$' &&
   ! grep -qF "$new_allocate" sites.txt; then
	mt_ok "--sites: the vector's site is $m_allocate via operator new"
else
	cat sites.txt
	mt_fail "--sites: the vector's site is not $m_allocate"
fi
r --top-sites 3 >top.txt 2>&1 || mt_fail "report --top-sites failed: $(cat top.txt)"
# "self_B self% blocks calls total_B total% blocks calls function"
awk '/by self:/ { on = 1; next } /by total:/ { on = 0 }
     on && /^ *[0-9]/ { $1 = $1; for (i = 1; i <= 8; i++) gsub(/,/, "", $i); print }' top.txt >self.rows
grep -v '^72704 ' self.rows >self2.rows
if [ "$(cat self2.rows)" = "1744 2.34% 7 7 1840 2.47% 9 12 main
96 0.13% 2 5 96 0.13% 2 5 $m_allocate" ]; then
	mt_ok "--top-sites: main 1,744 B (7 blocks, 7 calls), $m_allocate 96 B (2, 5)"
else
	cat top.txt
	mt_fail "--top-sites: not main's and the vector's figures"
fi
mt_finish
