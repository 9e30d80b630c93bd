#!/bin/sh
# report_top_sites.sh - `memtrail report --top-sites N` on samples/phases.c:
# the functions by self bytes (their allocation sites) and by total bytes,
# at the peak, at the end and for a diff, in text and JSON, with exactly
# the figures the sample's comment works out; --sites prints the same
# allocation sites at the top of the tree.
#
# The figures (from samples/phases.c's header comment):
#   at the peak, 362,624 B in 23 blocks, 31 calls behind them:
#     xmalloc (every malloc of the program): config 1,024 + entries 1,024
#       + row table 128 + rows 8..15 8 x 4,096 + scratch 262,144
#       = 297,088 B in 15 blocks; calls: load_config 5 + build_index 17
#       (table + 16 rows) + make_report 1 = 23
#     grow_rows (realloc of rows 0..7 to 8,192): 65,536 B, 8 blocks, 8 calls
#   so by self: xmalloc, grow_rows; every other function holds no block
#   itself. Totals: main 362,624 / 23 / 31, make_report 262,144 / 1 / 1,
#   build_index 128 + 32,768 = 32,896 / 9 / 17, load_config 2,048 / 5 / 5.
#   at the end (leaked 9,216 B in 3 blocks): xmalloc's config (load_config,
#     1 call) and rows 14, 15 (build_index's row line, 16 calls): self
#     xmalloc 9,216 / 3 / 17; totals build_index 8,192 / 2 / 16,
#     load_config 1,024 / 1 / 1.
#   snapshot 0 -> 1: grow_rows +65,536 B, +8 blocks (8 calls); xmalloc
#     -32,768 (rows 0..7 went to realloc) - 8,192 (rows 8..11 4,096 ->
#     2,048, the 4 new mallocs of replace_rows) = -40,960 B, -8 blocks,
#     4 calls.
# Rows of libc's frames (__libc_start_main...) are left out of the checks:
# their names are the C library's. Then python3's leaks: no allocator
# function (malloc, ld.so's inline calloc...) is a site.
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3
mt_have_memtrail || mt_skip "memtrail not built"
BIN=$MT_SAMPLES/phases
[ -x "$BIN" ] || mt_skip "$BIN not built (make samples)"
cd "$MT_TMP" || exit 1

mt_record phases.data rec "$BIN"
[ "$(cat rec.rc)" = 0 ] || { cat rec.err; mt_fail "record failed"; mt_finish; }
r() { timeout "$MT_TIMEOUT" "$MEMTRAIL" report phases.data "$@"; }

# rows FILE SECTION LIST: the rows of list LIST ("self" or "total") of the
# section whose header starts with SECTION, the phases.c functions only:
# "NAME SELF_B SELF_K SELF_C TOTAL_B TOTAL_K TOTAL_C SELF% TOTAL%"
rows() {
	python3 - "$@" <<'EOF'
import sys
path, section, which = sys.argv[1:4]
lines = open(path).read().split("\n")
i = next(i for i, l in enumerate(lines) if l.startswith(section))
i = next(j for j in range(i, len(lines)) if lines[j] == "  by %s:" % which)
ours = {"main", "xmalloc", "grow_rows", "make_report", "build_index", "load_config",
        "replace_rows"}
for l in lines[i + 2:]:
    f = l.split()
    if not l.startswith("   ") or len(f) != 9:
        break
    if f[8] in ours:
        n = [x.replace(",", "") for x in f]
        print(n[8], n[0], n[2], n[3], n[4], n[6], n[7], f[1], f[5])
EOF
}
check() {   # check NAME FILE EXPECTED
	if [ "$(cat "$2")" = "$3" ]; then
		mt_ok "$1"
	else
		mt_fail "$1:"; echo "--- expected"; echo "$3"; echo "--- got"; cat "$2"
	fi
}

r --show-maximum --top-sites 20 >max.txt 2>max.err || { cat max.err; mt_fail "report failed"; }
rows max.txt "maximum:" self >max.self
check "peak, by self: xmalloc then grow_rows" max.self "xmalloc 297088 15 23 297088 15 23 81.93% 81.93%
grow_rows 65536 8 8 65536 8 8 18.07% 18.07%"
rows max.txt "maximum:" total >max.total
check "peak, by total" max.total "main 0 0 0 362624 23 31 0.00% 100.00%
xmalloc 297088 15 23 297088 15 23 81.93% 81.93%
make_report 0 0 0 262144 1 1 0.00% 72.29%
grow_rows 65536 8 8 65536 8 8 18.07% 18.07%
build_index 0 0 0 32896 9 17 0.00% 9.07%
load_config 0 0 0 2048 5 5 0.00% 0.56%"
# N rows of each list: the two sites, then the top of the totals
r --show-maximum --top-sites 1 >max1.txt
awk 'NF == 9 && $9 != "function"' max1.txt >max1.rows
# the first row of each of the longer lists
first_rows() { awk '/^  by / { n = 0 } NF == 9 && $9 != "function" && n++ == 0' "$1"; }
check "--top-sites 1: the first row of each list" max1.rows "$(first_rows max.txt)"
[ "$(wc -l <max1.rows)" = 2 ] || mt_fail "--top-sites 1: not 2 rows"

r --show-leaks --top-sites 20 >leaks.txt
rows leaks.txt "leaked:" self >leaks.self
check "leaks, by self" leaks.self "xmalloc 9216 3 17 9216 3 17 100.00% 100.00%"
rows leaks.txt "leaked:" total >leaks.total
check "leaks, by total" leaks.total "main 0 0 0 9216 3 17 0.00% 100.00%
xmalloc 9216 3 17 9216 3 17 100.00% 100.00%
build_index 0 0 0 8192 2 16 0.00% 88.89%
load_config 0 0 0 1024 1 1 0.00% 11.11%"

# a diff: grown first, then shrunk; percentages of the gross change, the
# sum of each stack's |change|: grow_rows' +65,536, build_index's row line
# -32,768 (rows 0..7) - 16,384 (rows 8..11), replace_rows' +8,192 (4 x
# 2,048): 122,880 B, so 53.33% and 33.33%
r --diff 0 1 --top-sites 20 >diff.txt
rows diff.txt "snapshot 0 " self >diff.self
check "diff 0 1, by self" diff.self "grow_rows +65536 +8 8 +65536 +8 8 +53.33% +53.33%
xmalloc -40960 -8 4 -40960 -8 4 -33.33% -33.33%"

# JSON: the first tree's lists
r --show-maximum --top-sites 2 --format json >max.json
python3 - max.json >json.check <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))["top_sites"]
ok = (d["bytes"], d["blocks"], d["calls"]) == (362624, 23, 31)
ok = ok and [f["function"] for f in d["by_self"]] == ["xmalloc", "grow_rows"]
ok = ok and d["by_self"][0]["self"] == {"bytes": 297088, "blocks": 15, "calls": 23}
ok = ok and d["by_self"][1]["total"] == {"bytes": 65536, "blocks": 8, "calls": 8}
ok = ok and len(d["by_total"]) == 2 and all(f["total"]["bytes"] == 362624 for f in d["by_total"])
print("ok" if ok else "bad: %s" % d)
EOF
check "json: the peak's lists" json.check "ok"

# --sites: the same two sites at the top of the tree
r --show-maximum --sites >sites.txt
if grep -q '^  -> 81.93% (297,088B, 15x): xmalloc \[samples/phases.c:[0-9]*\] via malloc$' sites.txt &&
   grep -q '^  -> 18.07% (65,536B, 8x): grow_rows \[samples/phases.c:[0-9]*\] via realloc$' sites.txt; then
	mt_ok "--sites: xmalloc via malloc, grow_rows via realloc at the top"
else
	mt_fail "--sites: not the two sites at the top"; cat sites.txt
fi
# A real program: python3's sites and self list name no allocator function
# (its loader's blocks come through ld.so's inline malloc and calloc, which
# the entry points' tree shows as frames of their own when libc's debug info
# is there: the site is then their caller, _dl_new_object...)
mt_record py.data pyrec /usr/bin/python3 -c 'import json; print(len(json.dumps(list(range(1000)))))'
[ "$(cat pyrec.rc)" = 0 ] || { cat pyrec.err; mt_fail "record python3 failed"; }
py() { timeout "$MT_TIMEOUT" "$MEMTRAIL" report py.data --show-leaks "$@"; }
alloc_re='(malloc|calloc|realloc|reallocarray|memalign|posix_memalign|aligned_alloc|valloc|pvalloc|operator new[^ ]*)'
py --sites -t 0 >py-sites.txt 2>&1 || mt_fail "python3: report --sites failed"
py --top-sites 1000 >py-top.txt 2>&1 || mt_fail "python3: report --top-sites failed"
if grep -Eq "^  -> [^:]*: $alloc_re( \[| via )" py-sites.txt ||
   awk 'NF >= 9 && $9 != "function" { $1 = $2 = $3 = $4 = $5 = $6 = $7 = $8 = ""; print }' \
	py-top.txt | grep -Eqx " *$alloc_re"; then
	grep -E "$alloc_re" py-sites.txt py-top.txt | head
	mt_fail "python3: an allocator function as a site"
else
	mt_ok "python3: no allocator function among the sites and the self list"
fi
py -t 0 >py-entries.txt 2>&1
if grep -q 'calloc \[include/rtld-malloc.h:[0-9]*\]$' py-entries.txt; then
	if grep -Eq '^  -> [^:]*: _dl_[a-z_]* \[[^]]*\] via calloc$' py-sites.txt; then
		mt_ok "python3: ld.so's inline calloc: the site is its caller"
	else
		mt_fail "python3: no _dl_* site via calloc"
	fi
fi

# errors
if r --top-sites 3 --format collapsed >/dev/null 2>err.txt; then
	mt_fail "--top-sites --format collapsed accepted"
else
	check "--top-sites with collapsed: an error" err.txt \
		"memtrail: error: --top-sites is written as --format text or json only"
fi

mt_finish
