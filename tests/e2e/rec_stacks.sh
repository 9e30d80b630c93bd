#!/bin/sh
# rec_stacks.sh - every stack the log names is the one the program was
# in, though the recorder's tables keep a stack as the frames it does not
# share with an earlier one (recorder/tables.c): rec_stacks.c's two
# threads allocate from the 2,047 nodes of a tree of calls each, every
# node its own stack sharing its outer frames with its parent's, and write
# each allocation's callers as backtrace(3) gives them (an independent
# unwinder, libgcc's). For every allocation the log's stack, frame 0 aside
# (malloc's call site, where the program's is backtrace's), must be the
# program's; frame 0 one address for all; and two allocations must have
# one stack id exactly when their backtraces are equal (no two stacks
# merged, none split: the same path in both threads, each with a stack
# table of its own, is one id in the log's).
. "$(dirname "$0")/lib.sh"
mt_need_cmd python3 cc
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
cd "$MT_TMP" || exit 1

cc -O0 -g -pthread -o rec_stacks "$MT_TOP/tests/e2e/rec_stacks.c" || mt_skip "cannot build rec_stacks"
mt_record st.mt st ./rec_stacks "$MT_TMP/st.truth"
if [ "$(cat st.rc)" != 0 ] || [ "$(cat st.out)" != "4094 nodes" ]; then
	mt_fail "rec_stacks: exit $(cat st.rc), output $(cat st.out): $(cat st.err)"
	mt_finish
fi
"$MEMTRAIL" dump st.mt >st.dump 2>st.dump.err || mt_fail "dump: $(cat st.dump.err)"

if python3 - st.dump st.truth >st.check 2>&1 <<'PY'; then
import sys
stacks, alloc, thread = {}, {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "stack":
        stacks[int(f[1])] = [int(x, 16) for x in f if x.startswith("0x")]
    elif f[0] == "alloc":
        kv = dict(x.split("=", 1) for x in f[1:] if "=" in x)
        alloc[int(kv["size"])] = int(kv["stack"])
        thread[int(kv["size"])] = kv["thread"]
truth = {}
for line in open(sys.argv[2]):
    f = line.split()
    truth[int(f[0])] = tuple(int(x, 16) for x in f[1:])
bad = []
if len(truth) != 4094:
    bad.append("%d nodes in the program's file, not 4094" % len(truth))
firsts, by_truth, by_id = set(), {}, {}
for size, bt in sorted(truth.items()):
    if size not in alloc:
        bad.append("no allocation of %d B in the log" % size)
        continue
    sid = alloc[size]
    frames = stacks.get(sid)
    if frames is None:
        bad.append("stack %d of %d B not in the log" % (sid, size))
        continue
    firsts.add(frames[0])
    if tuple(frames[1:]) != bt:
        bad.append("%d B: stack %d is %s, the program was in %s" % (
            size, sid, " ".join(map(hex, frames[1:])), " ".join(map(hex, bt))))
    by_truth.setdefault(bt, set()).add(sid)
    by_id.setdefault(sid, set()).add(bt)
# two threads at once (rec_stacks.c's barrier): two stack tables
if len(set(thread[s] for s in truth if s in thread)) != 2:
    bad.append("the nodes' allocations are by %d threads, not 2" % len(set(thread.values())))
if len(firsts) != 1:
    bad.append("frame 0 takes %d values, not 1" % len(firsts))
split = [t for t, ids in by_truth.items() if len(ids) > 1]
merged = [i for i, ts in by_id.items() if len(ts) > 1]
if split:
    bad.append("%d stacks have more than one id" % len(split))
if merged:
    bad.append("%d ids stand for more than one stack" % len(merged))
# the threads walk the same tree: each path is one stack of two allocations
if len(by_truth) != 2047:
    bad.append("%d distinct stacks, not 2047" % len(by_truth))
for b in bad[:10]:
    print(b)
print("%d allocations, %d stacks, %d ids" % (len(truth), len(by_truth), len(by_id)))
sys.exit(1 if bad else 0)
PY
	mt_ok "rec_stacks: $(tail -1 st.check), each the program's own"
else
	mt_fail "rec_stacks: $(cat st.check)"
fi
mt_finish
