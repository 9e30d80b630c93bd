#!/bin/sh
# rec_sample.sh - `memtrail record --sample BYTES` (format.h SAMPLE) on
# samples/sampled.c, whose exact figures its comment works out:
#   - unsampled, the figures are the exact ones (and the log has no SAMPLE);
#   - sampled at 1 KiB with a fixed seed (MEMTRAIL_SAMPLE_SEED), the
#     independent decoder (rec_decode.py) accepts the log: one SAMPLE of
#     1024 before any event, END's figures = its own count of the recorded
#     blocks, every free names its block, no free of a block not recorded;
#   - the estimates are within 5 standard errors of the exact figures. A
#     block of s bytes is recorded with probability p = 1 - exp(-s/1024)
#     and weighed s/p, independently of the others (the sampling points
#     are a Poisson process on the bytes), so a stack of n blocks of s
#     bytes has variance n s^2 (1-p)/p. Per stack:
#         grow's malloc   16,384 x 512 B    SE  81,367 B (0.97 %)
#         grow's realloc  16,384 x 1,024 B  SE  99,991 B (0.60 %)
#         small_a         262,144 x 64 B    SE 129,029 B (0.77 %)
#         small_b         65,536 x 256 B    SE 122,971 B (0.73 %)
#         big             32 x 1 MiB        p = 1: exact
#     bytes allocated: SE 219,976 B (0.24 %); live at the peak (reached
#     as big() ends: every later event frees, every earlier one but the
#     realloc's old halves adds): SE 204,374 B (0.24 %). The script
#     recomputes these from the sizes and counts and checks |estimate -
#     exact| <= 5 SE; big's 33,554,432 B exactly;
#   - block counts are estimates too (a recorded block stands for 1/p
#     blocks, rounded down or up at random with mean 1/p): allocations
#     (360,480) and blocks at the peak (344,096) within 5 SE, the SE
#     worked out the same way from n (1-p)/p per stack plus the rounding's;
#   - `--show-sizes` buckets each call by the size it asked for (64, 256,
#     512, 1,024 B and big's 32 calls of 1 MiB exactly);
#   - live bytes and blocks return to exactly 0 (every free subtracts what
#     its allocation added), and grow's malloc has 0 B live at the peak (all
#     realloc'd);
#   - the summary says "sampled every 1.00 KiB: figures are estimates" with
#     the bound on the peak's standard error, sqrt(1024 / peak bytes), and
#     its JSON has sample_bytes, the viewer's status line "sampled every
#     1.00 KiB: estimates" beside the peak, `memtrail dump` "sample
#     mean=1024"; the same seed gives the same figures (at the same
#     addresses: setarch -R);
#   - on other samples (threads, C++, realloc(p, 0), forks followed), at
#     256 B: the program's output and exit status are its own, and the
#     decoder accepts every log (END = its count, frees name their blocks);
#   - a bad size is a one-line error.
# Not for: the cost of sampling (make bench).
. "$(dirname "$0")/lib.sh"
mt_need_recorder
mt_need_cmd python3
mt_have_memtrail || mt_skip "memtrail not built"

cd "$MT_TMP" || exit 1
prog="$MT_SAMPLES/sampled"
[ -x "$prog" ] || mt_skip "samples/sampled not built"

# ---- unsampled: exact ------------------------------------------------------
mt_record full.data full "$prog"
mt_summary full.data full.json
got=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j["bytes_allocated"], j["peak_bytes"], j["peak_blocks"], j["leaked_bytes"], "sample_bytes" in j)' full.json)
if [ "$got" = "92274688 83886080 344096 0 False" ]; then
	mt_ok "unsampled: exact figures ($got)"
else
	mt_fail "unsampled: '$got', want '92274688 83886080 344096 0 False'"
fi
python3 "$MT_TOP/tests/e2e/rec_decode.py" full.data >full.dec 2>full.dec.err
if [ -z "$(mt_val sample full.dec)" ] && [ "$(mt_val allocs full.dec)" -ge 360480 ]; then
	mt_ok "unsampled: no SAMPLE record, every allocation in the log"
else
	mt_fail "unsampled: sample='$(mt_val sample full.dec)' allocs=$(mt_val allocs full.dec)"
fi

# ---- sampled at 1 KiB, seed 7 ----------------------------------------------
# Without address space randomisation (setarch -R) where it can be turned
# off: the blocks' counts round by a hash of their addresses, so that two
# runs give the same counts too only at the same addresses.
norand=
setarch "$(uname -m)" -R true 2>/dev/null && norand="setarch $(uname -m) -R"
mt_record_sampled() {
	env MEMTRAIL_SAMPLE_SEED=7 timeout "$MT_TIMEOUT" $norand "$MEMTRAIL" record --sample 1k \
		-o "$1" -- "$prog" >"$1.out" 2>"$1.err" </dev/null
	echo $? >"$1.rc"
}
mt_record_sampled s1.data
mt_record_sampled s2.data
if [ "$(cat s1.data.rc)" = 0 ] && grep -q "(sampled every 1.00 KiB: estimates)" s1.data.err; then
	mt_ok "sampled: exit 0, closing line says so"
else
	mt_fail "sampled: rc $(cat s1.data.rc), closing line: $(cat s1.data.err)"
fi
if python3 "$MT_TOP/tests/e2e/rec_decode.py" s1.data >s1.dec 2>s1.dec.err; then
	e=$(mt_val end_totals s1.dec)
	r=$(mt_val replayed_totals s1.dec)
	if [ "$(mt_val sample s1.dec)" = 1024 ] && [ "$e" = "$r" ] &&
	   [ "$(mt_val block_mismatch s1.dec)" = 0 ] && [ "$(mt_val ignored_frees s1.dec)" = 0 ] &&
	   [ "$(mt_val live s1.dec)" = 0 ] && [ "$(mt_val allocs s1.dec)" -lt 80000 ]; then
		mt_ok "decoder: SAMPLE 1024, END = its count ($e), frees of recorded blocks only"
	else
		mt_fail "decoder: sample=$(mt_val sample s1.dec) end '$e' replayed '$r'" \
			"mismatch=$(mt_val block_mismatch s1.dec) ignored=$(mt_val ignored_frees s1.dec)" \
			"live=$(mt_val live s1.dec) allocs=$(mt_val allocs s1.dec)"
	fi
else
	mt_fail "decoder rejects the sampled log: $(cat s1.dec.err)"
fi

mt_summary s1.data s1.json
"$MEMTRAIL" report --summary s1.data >s1.txt 2>&1
"$MEMTRAIL" report --show-maximum --sites --format collapsed s1.data >s1.peak 2>s1.peak.err
# the bound on the standard error, sqrt(interval / bytes), at the peak
se=$(python3 -c 'import json,math,sys; print("%.1f" % (100.0 * math.sqrt(1024 / json.load(open(sys.argv[1]))["peak_bytes"])))' s1.json)
if grep -q "^sampled every 1.00 KiB: figures are estimates (the peak within $se %, one standard error at most)$" s1.txt &&
   [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sample_bytes"])' s1.json)" = 1024 ]; then
	mt_ok "summary: says it is sampled (text and JSON)"
else
	mt_fail "summary: $(head -3 s1.txt)"
fi

python3 - s1.json s1.peak >check.out 2>&1 <<'PY'
import json, math, sys
j = json.load(open(sys.argv[1]))
m = 1024.0
def var(n, s):
    p = -math.expm1(-s / m)
    return n * s * s * (1 - p) / p
stacks = {  # name in the sites tree: (blocks, bytes each) live at the peak
    "grow [samples/sampled.c": (16384, 1024),
    "small_a [samples/sampled.c": (262144, 64),
    "small_b [samples/sampled.c": (65536, 256),
    "big [samples/sampled.c": (32, 1 << 20),
}
bad = 0
def check(what, got, exact, v):
    global bad
    se = math.sqrt(v)
    ok = abs(got - exact) <= 5 * se
    print("%s %s: estimate %d, exact %d, error %+.3f %%, %.2f SE (SE %.0f)" % (
        "ok" if ok else "FAIL", what, got, exact, 100.0 * (got - exact) / exact,
        (got - exact) / se if se else 0.0, se))
    bad += not ok
v_peak = sum(var(n, s) for n, s in stacks.values())
check("peak", j["peak_bytes"], 83886080, v_peak)
check("bytes allocated", j["bytes_allocated"], 92274688, v_peak + var(16384, 512))
if j["leaked_bytes"] != 0:
    print("FAIL leaked_bytes", j["leaked_bytes"]); bad += 1
# Blocks: a recorded block stands for 1/p of them, a whole number drawn
# floor(1/p) or floor(1/p) + 1 with mean 1/p: variance per block of the
# program (1 - p) / p + p f (1 - f), f the fraction of 1/p.
def var_n(n, s):
    p = -math.expm1(-s / m)
    f = 1 / p - math.floor(1 / p)
    return n * ((1 - p) / p + p * f * (1 - f))
vn_peak = sum(var_n(n, s) for n, s in stacks.values())
check("blocks at the peak", j["peak_blocks"], 344096, vn_peak)
check("allocations", j["allocations"], 360480, vn_peak + var_n(16384, 512))
if j["frees"] != j["allocations"] or j["leaked_blocks"] != 0:
    print("FAIL frees %d of %d allocations, %d blocks leaked" % (
        j["frees"], j["allocations"], j["leaked_blocks"])); bad += 1
rows = {}
for line in open(sys.argv[2]):
    path, val = line.rsplit(" ", 1)
    for name in stacks:
        if name in path:
            key = name + ("/malloc" if path.endswith("malloc") else "/realloc")
            rows[key] = rows.get(key, 0) + int(val)
want = {
    "grow [samples/sampled.c/realloc": "grow [samples/sampled.c",
    "small_a [samples/sampled.c/malloc": "small_a [samples/sampled.c",
    "small_b [samples/sampled.c/malloc": "small_b [samples/sampled.c",
    "big [samples/sampled.c/malloc": "big [samples/sampled.c",
}
for key, name in want.items():
    n, s = stacks[name]
    check(key, rows.get(key, 0), n * s, var(n, s))
if rows.get("big [samples/sampled.c/malloc") != 33554432:
    print("FAIL big not exact"); bad += 1
if rows.get("grow [samples/sampled.c/malloc", 0) != 0:
    print("FAIL grow's malloc live at the peak", rows["grow [samples/sampled.c/malloc"]); bad += 1
sys.exit(1 if bad else 0)
PY
if [ $? = 0 ]; then
	mt_ok "estimates within 5 SE, big exact, live back to 0:"
	sed 's/^/    /' check.out
else
	mt_fail "estimates: $(cat check.out)"
fi

"$MEMTRAIL" report --summary --format json s2.data >s2.json 2>&1
"$MEMTRAIL" report --show-maximum --sites --format collapsed s2.data >s2.peak 2>&1
# (counts only at the same addresses: without setarch, bytes alone)
same=$(python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
k = ("bytes_allocated", "peak_bytes", "leaked_bytes")
if sys.argv[3]:
    k += ("allocations", "peak_blocks")
print(all(a[x] == b[x] for x in k))' s1.json s2.json "$norand")
if [ "$same" = True ] && cmp -s s1.peak s2.peak; then
	mt_ok "the same seed draws the same blocks"
else
	mt_fail "seed 7 twice: figures differ"
fi

# the sizes histogram buckets each call by the size it asked for: only
# the sample's five sizes have calls, big's 32 exactly
"$MEMTRAIL" report --show-sizes s1.data >s1.sizes 2>&1
rows=$(awk '/^ *[0-9,]+ - [0-9,]+ / && $4 != "0" { printf "%s-%s:%s ", $1, $3, ($1 == "1,048,576" ? $4 : "n") }' s1.sizes)
if [ "$rows" = "64-127:n 256-511:n 512-1,023:n 1,024-2,047:n 1,048,576-2,097,151:32 " ]; then
	mt_ok "sizes: calls in the buckets of the sizes asked for"
else
	mt_fail "sizes: non-empty rows '$rows'"
fi

if "$MEMTRAIL" dump s1.data 2>/dev/null | tail -n 1 | grep -q '^sample mean=1024$'; then
	mt_ok "dump: sample mean=1024"
else
	mt_fail "dump: last line $("$MEMTRAIL" dump s1.data 2>&1 | tail -n 1)"
fi

if command -v tmux >/dev/null 2>&1 && mt_tmux_start 160 30; then
	trap 'mt_tmux_stop' EXIT
	mt_tmux_keys "cd '$MT_TMP' && '$MEMTRAIL' view s1.data" Enter
	if mt_tmux_wait '\| peak [0-9,]+ B \| sampled every 1.00 KiB: estimates \|' 15; then
		mt_ok "viewer: the status line says the log is sampled"
	else
		mt_fail "viewer: no 'sampled every 1.00 KiB' on the status line"
	fi
	mt_tmux_keys q
	mt_tmux_stop
else
	mt_ok "viewer: not checked (no tmux)"
fi

# ---- other programs ------------------------------------------------------------
for name in threads cxx_new realloc_zero forker tags; do
	p="$MT_SAMPLES/$name"
	[ -x "$p" ] || continue
	timeout "$MT_TIMEOUT" "$p" >"$name.native" 2>&1 </dev/null
	nrc=$?
	follow=""
	[ "$name" = forker ] && follow=--follow-children
	timeout "$MT_TIMEOUT" "$MEMTRAIL" record --sample 256 $follow -o "$name.data" -- "$p" \
		>"$name.sampled" 2>"$name.err" </dev/null
	src=$?
	bad=""
	[ "$src" = "$nrc" ] || bad="exit $src, native $nrc"
	cmp -s "$name.native" "$name.sampled" || bad="$bad; output differs"
	for log in "$name.data" "$name.data".[0-9]*; do
		[ -f "$log" ] || continue
		if python3 "$MT_TOP/tests/e2e/rec_decode.py" "$log" >"$log.dec" 2>"$log.dec.err"; then
			[ "$(mt_val end_totals "$log.dec")" = "$(mt_val replayed_totals "$log.dec")" ] &&
			[ "$(mt_val block_mismatch "$log.dec")" = 0 ] &&
			[ "$(mt_val sample "$log.dec")" = 256 ] || bad="$bad; $log: decoder figures"
		else
			bad="$bad; $log: decoder: $(tail -n 1 "$log.dec.err")"
		fi
	done
	if [ -z "$bad" ]; then
		mt_ok "$name at 256 B: same output and exit, every log decodes"
	else
		mt_fail "$name at 256 B:$bad"
	fi
done

# ---- bad input ---------------------------------------------------------------
"$MEMTRAIL" record --sample 12q -o bad.data -- "$prog" >bad.out 2>bad.err
rc=$?
if [ $rc != 0 ] && [ "$(wc -l <bad.err)" = 1 ] &&
   grep -q "^memtrail: error: --sample: '12q' is not a size" bad.err && [ ! -e bad.data ]; then
	mt_ok "--sample 12q: one-line error, exit $rc"
else
	mt_fail "--sample 12q: rc $rc, $(cat bad.err)"
fi
mt_finish
