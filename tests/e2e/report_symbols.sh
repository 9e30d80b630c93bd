#!/bin/sh
# report_symbols.sh - what the trees show for frames: the inlined helper of
# samples/inline_O2.c as its own frame between malloc and its caller,
# demangled C++ frames and the operator new entry points of
# samples/cxx_new.cpp, and the options that shape a tree (--inverted,
# --depth, --top, -i/-x, --include-module/--exclude-module).
#
# Figures come from the samples' own comments, line numbers from grepping
# their sources. Not for: the figures of phases (report_phases.sh), export
# formats (report_formats.sh).
. "$(dirname "$0")/lib.sh"
mt_have_memtrail || mt_skip "memtrail not built"
INL=$MT_SAMPLES/inline_O2
CXX=$MT_SAMPLES/cxx_new
[ -x "$INL" ] && [ -x "$CXX" ] || mt_skip "samples not built (make samples)"
cd "$MT_TMP" || exit 1

line_of() { grep -n -F -- "$2" "$1" | head -n 1 | cut -d: -f1; }
has() {
	if grep -q -F -- "$2" "$1"; then mt_ok "$1: $2"; else mt_fail "$1 lacks: $2"; fi
}
hasnt() {
	if grep -q -F -- "$2" "$1"; then mt_fail "$1 has: $2"; else mt_ok "$1 without: $2"; fi
}
# The line after the first one containing STRING.
next_line() { grep -A1 -F -- "$2" "$1" | sed -n 2p; }

# ---- inline_O2: malloc <- make_buffer (inlined) <- fill_table <- main ------
S=$MT_TOP/samples/inline_O2.c
F=samples/inline_O2.c
L_MB=$(line_of "$S" 'char *p = malloc(n);')
L_FT=$(line_of "$S" 'table[i] = make_buffer(')
L_MAIN=$(line_of "$S" '	fill_table();')
L_M=$(line_of "$S" 'char *volatile m = malloc(128);')
mt_record inl.data inl "$INL"
[ "$(cat inl.rc)" = 0 ] || mt_fail "record inline_O2: $(cat inl.err)"
"$MEMTRAIL" report inl.data --show-maximum >inl.txt 2>/dev/null || mt_fail "report inline_O2"
# peak 2,688 B in 5 blocks: 4 rows (256 + 512 + 768 + 1,024) and m (128)
has inl.txt "maximum: 2,688B"
has inl.txt "  -> 100.00% (2,688B, 5x): malloc"
has inl.txt "-> 95.24% (2,560B, 4x): make_buffer [$F:$L_MB]"
case $(next_line inl.txt "make_buffer [$F:$L_MB]") in
*"-> 95.24% (2,560B, 4x): fill_table [$F:$L_FT]") mt_ok "fill_table right below the inlined make_buffer";;
*) mt_fail "below make_buffer: $(next_line inl.txt "make_buffer [$F:$L_MB]")";;
esac
case $(next_line inl.txt "fill_table [$F:$L_FT]") in
*"-> 95.24% (2,560B, 4x): main [$F:$L_MAIN]") mt_ok "main right below fill_table";;
*) mt_fail "below fill_table: $(next_line inl.txt "fill_table [$F:$L_FT]")";;
esac
has inl.txt "-> 4.76% (128B, 1x): main [$F:$L_M]"

# inverted: caller first, the inlined frame right above the entry point
"$MEMTRAIL" report inl.data --show-maximum --inverted >inv.txt 2>/dev/null
case $(next_line inv.txt "make_buffer [$F:$L_MB]") in
*"-> 95.24% (2,560B, 4x): malloc") mt_ok "inverted: make_buffer -> malloc";;
*) mt_fail "inverted: below make_buffer: $(next_line inv.txt "make_buffer [$F:$L_MB]")";;
esac
case $(next_line inv.txt "main [$F:$L_MAIN]") in
*"fill_table [$F:$L_FT]") mt_ok "inverted: main -> fill_table";;
*) mt_fail "inverted: below main: $(next_line inv.txt "main [$F:$L_MAIN]")";;
esac
[ "$(sed -n 2p inv.txt | cut -c1-5)" = "  -> " ] && ! sed -n 2p inv.txt | grep -q malloc &&
	mt_ok "inverted: an outer frame at the root" || mt_fail "inverted root: $(sed -n 2p inv.txt)"

# --depth 1: one frame per branch
"$MEMTRAIL" report inl.data --show-maximum --depth 1 >d1.txt 2>/dev/null
has d1.txt "make_buffer [$F:$L_MB]"
hasnt d1.txt "fill_table"
# -i / -x on function names (the inlined one too)
"$MEMTRAIL" report inl.data --show-maximum -i '^fill_table$' >inc.txt 2>/dev/null
has inc.txt "maximum: 2,560B"
"$MEMTRAIL" report inl.data --show-maximum -x make_buffer >exc.txt 2>/dev/null
has exc.txt "maximum: 128B"
# modules: every stack has a frame in the program, none in libstdc++
"$MEMTRAIL" report inl.data --show-maximum --include-module 'inline_O2$' >im.txt 2>/dev/null
has im.txt "maximum: 2,688B"
"$MEMTRAIL" report inl.data --show-maximum --exclude-module 'inline_O2$' >xm.txt 2>/dev/null
has xm.txt "maximum: 0B"

# ---- cxx_new: demangled frames, one entry point per operator ---------------
S=$MT_TOP/samples/cxx_new.cpp
F=samples/cxx_new.cpp
L_PUSH=$(line_of "$S" 'v.push_back(i);')
L_GROW=$(line_of "$S" 'sum = grow_vector();')
L_RAW=$(line_of "$S" 'operator new(1000, std::align_val_t(128));')
mt_record cxx.data cxx "$CXX"
[ "$(cat cxx.rc)" = 0 ] || mt_fail "record cxx_new: $(cat cxx.err)"
"$MEMTRAIL" report cxx.data --show-maximum -t 0 >cxx.txt 2>/dev/null || mt_fail "report cxx_new"
# peak 74,544 B: the 72,704 B runtime pool (malloc), Line 192 + raw 1,000
# (aligned new), int[25] 100 + Tracked[4] 72 + char[300] 300 (new[]),
# two Widgets 40 + 40 and the vector's 32 and 64 B arrays (new)
has cxx.txt "maximum: 74,544B"
has cxx.txt "(72,704B, 1x): malloc"
has cxx.txt "(1,192B, 2x): operator new(align_val_t)"
has cxx.txt "(472B, 3x): operator new[]"
has cxx.txt "(176B, 4x): operator new"
has cxx.txt "(1,000B, 1x): main [$F:$L_RAW]"
has cxx.txt "(96B, 2x): std::vector<int, std::allocator<int> >::push_back(int const&) ["
has cxx.txt "(96B, 2x): grow_vector() [$F:$L_PUSH]"
has cxx.txt "(96B, 2x): main [$F:$L_GROW]"
hasnt cxx.txt "_ZN"
# --top 1: only the largest entry point
"$MEMTRAIL" report cxx.data --show-maximum --top 1 >top.txt 2>/dev/null
[ "$(grep -c '^  -> ' top.txt)" = 1 ] && has top.txt "(72,704B, 1x): malloc" ||
	mt_fail "--top 1: $(grep '^  -> ' top.txt)"
# the leaks: the orphan Node (24 B) from make_orphan; libstdc++ freed its
# pool at exit
"$MEMTRAIL" report cxx.data --show-leaks -t 0 >cxxl.txt 2>/dev/null
has cxxl.txt "leaked: 24B"
has cxxl.txt "(24B, 1x): make_orphan(long) ["
hasnt cxxl.txt "72,704B"
# with --keep-runtime the pool is still live at exit: leaked with the Node
MT_KEEP_RUNTIME=1 mt_record cxxk.data cxxk "$CXX"
"$MEMTRAIL" report cxxk.data --show-leaks -t 0 >cxxk.txt 2>/dev/null
has cxxk.txt "leaked: 72,728B"
has cxxk.txt "(72,704B, 1x): malloc"
has cxxk.txt "(24B, 1x): make_orphan(long) ["
mt_finish
