#!/bin/sh
# report_compare.sh - `memtrail report --compare OLD NEW`: two builds of
# samples/phases.c, the second with 20 rows instead of 16 and a 2,048 B
# config instead of 1,024 B (same lines, so the same frames), built
# -no-pie so that every address differs from the first's. Worked out from
# the sample's top comment:
#   peak    the config +1,024 B (load_config), the row table 20 x 8 - 16 x 8
#           = +32 B and 4 more rows of 4,096 B = +16,384 B in 4 blocks
#           (build_index): +17,440 B, 23 -> 27 blocks;
#   leaked  the config +1,024 B (load_config); rows 18 and 19 leak where 14
#           and 15 did (same stack, same size): 0;
#   allocations +4, bytes allocated +17,440 B.
# The trees (text and collapsed) hold exactly those branches; a compare of
# a run with a build of the same source that differs only in addresses is
# all zero; NEW defaults to memtrail.data; bad uses are one-line errors.
#
# Not for: --diff within one log (report_phases.sh).

[ -z "${MT_TMP:-}" ] && own_tmp=1
. "$(dirname "$0")/lib.sh"
mt_need_cmd cc
mt_have_memtrail || mt_skip "memtrail not built"
trap '[ -n "${own_tmp:-}" ] && rm -rf "$MT_TMP"' EXIT
cd "$MT_TMP" || exit 1
SRC=$MT_TOP/samples/phases.c
mkdir a b c
cp "$SRC" a/phases.c
cp "$SRC" c/phases.c
sed -e 's/^#define NROWS\t\t16$/#define NROWS\t\t20/' \
    -e 's/char name\[1024 - /char name[2048 - /' "$SRC" >b/phases.c
if [ "$(diff a/phases.c b/phases.c | grep -c '^>')" != 2 ]; then
	mt_fail "the variant of phases.c differs in $(diff a/phases.c b/phases.c | grep -c '^>') lines, not 2"
fi
# Relative paths in DWARF: the frames' files are "phases.c" in every build.
if ! (cd a && cc -g -O0 -I"$MT_TOP/include" -o phases phases.c) ||
    ! (cd b && cc -g -O0 -fno-pie -no-pie -I"$MT_TOP/include" -o phases phases.c) ||
    ! (cd c && cc -g -O0 -fno-pie -no-pie -I"$MT_TOP/include" -o phases phases.c); then
	mt_skip "cannot build phases.c"
fi
mt_record a.data a a/phases
mt_record b.data b b/phases
mt_record c.data c c/phases

"$MEMTRAIL" report --compare a.data b.data --show-maximum --show-leaks >cmp.txt 2>cmp.err
if mt_chain cmp.txt "compare: a.data -> b.data" \
    "  peak                     362,624B         380,064B          +17,440B" \
    "  peak blocks                    23               27               +4" \
    "  leaked                     9,216B          10,240B           +1,024B" \
    "  leaked blocks                   3                3                0" \
    "  allocations                    35               39               +4" \
    "  allocated                403,584B         421,024B          +17,440B" \
    "maximum, a.data -> b.data: +17,440B" \
    "  -> +100.00% (+17,440B, +4x): malloc" \
    "+93.94% (+16,384B, +4x): build_index [phases.c:" \
    "+5.87% (+1,024B, 0x): load_config [phases.c:" \
    "leaked, a.data -> b.data: +1,024B" \
    "+100.00% (+1,024B, 0x): load_config [phases.c:"; then
	mt_ok "--compare: the table and the trees of what grew"
else
	mt_fail "--compare text ($MT_TMP/cmp.txt)"
fi
if grep -q -e '0x[0-9a-f]' -e '?' cmp.txt; then
	mt_fail "--compare: a frame not named ($MT_TMP/cmp.txt)"
fi

# Collapsed: the peak's changed branches, exactly.
"$MEMTRAIL" report --compare a.data b.data --format collapsed >cmp.col 2>cmp.col.err
got=$(sed 's/^.*;main \[[^]]*\];\([a-z_]*\) \[[^]]*\];xmalloc \[[^]]*\];malloc \(.*\)$/\1 \2/' cmp.col |
	sort | tr '\n' ' ')
if [ "$got" = "build_index 16384 build_index 32 load_config 1024 " ]; then
	mt_ok "--compare --format collapsed: +16,384 and +32 under build_index, +1,024 under load_config"
else
	mt_fail "--compare --format collapsed: '$got' ($MT_TMP/cmp.col)"
fi
"$MEMTRAIL" report --compare a.data b.data --show-leaks --format collapsed >cmpl.col 2>&1
if [ "$(wc -l <cmpl.col)" = 1 ] && grep -q 'load_config \[phases.c:[0-9]*\];xmalloc \[phases.c:[0-9]*\];malloc 1024$' cmpl.col; then
	mt_ok "--compare --show-leaks --format collapsed: +1,024 under load_config alone"
else
	mt_fail "--compare --show-leaks collapsed ($MT_TMP/cmpl.col)"
fi

# The same source built apart: every address differs, nothing changed.
cp a.data memtrail.data
"$MEMTRAIL" report --compare c.data --show-maximum --show-leaks >same.txt 2>same.err
if grep -qx "compare: c.data -> memtrail.data" same.txt &&
    grep -qx "maximum, c.data -> memtrail.data: 0B" same.txt &&
    grep -qx "leaked, c.data -> memtrail.data: 0B" same.txt &&
    ! grep -q -e '+[1-9]' -e '-[1-9]' same.txt; then
	mt_ok "--compare OLD alone: NEW is memtrail.data; two builds of one source meet at every frame"
else
	mt_fail "--compare of two builds of one source ($MT_TMP/same.txt)"
fi

# Errors.
for args in "--compare a.data --diff peak end b.data" "--compare a.data --by-thread b.data" \
    "--compare a.data --summary b.data" "--compare a.data --format massif b.data" \
    "--compare nosuch.data b.data"; do
	# shellcheck disable=SC2086
	if "$MEMTRAIL" report $args >e.out 2>e.err || [ "$(wc -l <e.err)" -lt 1 ] ||
	    ! head -n 1 e.err | grep -q '^memtrail: error: '; then
		mt_fail "report $args: not an error ($(head -n 1 e.err))"
	else
		mt_ok "report $args: $(head -n 1 e.err)"
	fi
done
mt_finish
