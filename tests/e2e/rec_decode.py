#!/usr/bin/env python3
# rec_decode.py - an independent decoder of a memtrail log (lib/format.h,
# version 5; 4 with one address state for all threads; 3 also without the
# blocks of frees, LEAK, TAG and STACK's tag; 2 also without THREAD_NAME
# and RSS) for the recorder's end-to-end tests: it does not use lib/reader.c,
# so the recorder's output is checked against the format itself.
# Checks the framing (magic, sizes, one zstd frame per chunk of exactly U
# bytes with content size, CHUNK_BEGIN first, seq = events before), stack ids
# in order, time never decreasing, TIME > 0, SWITCH to a known thread before
# any event; replays live blocks and counts END's figures itself
# (replayed_totals, to compare with end_totals); from version 4 checks that
# every free names the block its own table has at the address
# (block_mismatch counts those that do not; in version 5 a free by one
# thread of a block another allocated at an address the first thread's
# history holds from an older block must not name that older block:
# stale_entries counts the frees where that arose). Of the program's own blocks
# (frame 0 in the main program) it also counts the frees and reallocs by
# a thread other than the one that allocated the block
# (exe_xthread_frees); SAMPLE at most once, before any event
# (sample=MEAN). Prints key=value
# lines (see the end of main); with -v every record too.
# Not for: anything but tests.
import ctypes, struct, sys

zs = ctypes.CDLL("libzstd.so.1")
zs.ZSTD_decompress.restype = ctypes.c_size_t
zs.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
zs.ZSTD_isError.argtypes = [ctypes.c_size_t]
zs.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
zs.ZSTD_getFrameContentSize.argtypes = [ctypes.c_void_p, ctypes.c_size_t]

def unz(b, u):
    dst = ctypes.create_string_buffer(u)
    r = zs.ZSTD_decompress(dst, u, b, len(b))
    if zs.ZSTD_isError(r) or r != u:
        raise ValueError("zstd")
    if zs.ZSTD_getFrameContentSize(b, len(b)) != u:
        raise ValueError("content size")
    return dst.raw

def main():
    verbose = "-v" in sys.argv
    path = [a for a in sys.argv[1:] if a != "-v"][0]
    data = open(path, "rb").read()
    assert data[:8] == b"MEMTRAIL", "magic"
    ver, psz, flags, pid, start, L = struct.unpack_from("<HBBIQI", data, 8)
    assert ver in (2, 3, 4, 5), "version"
    cmd = data[28:28 + L]
    off = 28 + L
    st = dict(allocs=0, frees=0, reallocs=0, bytes=0, snapshots=0, stacks=0, threads=0,
              modules=0, unloads=0, chunks=0, end=None, stop=None, live=0, live_blocks=0,
              peak=0, truncated=0, ignored_frees=0, maxdepth=0, double_allocs=0, block_mismatch=0,
              exe_allocs=0, exe_frees=0, exe_bytes=0, times=0, switches=0, thread_names=0,
              end_totals=None, replayed_totals=None, exe_xthread_frees=0,
              stale_entries=0)
    # END's figures as the replay defines them (lib/summary.c), counted here
    tot = dict(allocations=0, frees=0, bytes_allocated=0, peak_bytes=0, peak_blocks=0,
               peak_time=0)
    live_bytes = 0
    # exe_*: only blocks whose frame 0 lies in the main program (the first
    # module), i.e. what the program itself asked for, not libc's internals.
    exe_live = {}
    exe_owner = {}   # address -> the thread that allocated the program's block
    def is_exe(sid):
        ips = stacks[sid][1]
        if not ips or not modules:
            return False
        return any(a <= ips[0] < a + n for a, n in modules[0][2])
    live = {}
    stacks = {}
    tags = []      # (parent, name) of tag path id - 1
    modules = []   # (path, base, segs, time)
    unloads = []
    alloc_stacks = set()
    snaps = []
    seq = 0
    leak_kind = {}; leak_last = [-1]
    lastt = 0
    while off < len(data):
        if len(data) - off < 12 or data[off:off+4] != b"MTCK":
            st["truncated"] = 1; break
        C, U = struct.unpack_from("<II", data, off + 4)
        if off + 12 + C > len(data):
            st["truncated"] = 1; break
        raw = unz(data[off+12:off+12+C], U)
        off += 12 + C
        st["chunks"] += 1
        p = 0
        def uv():
            nonlocal p
            r = 0; s = 0
            while True:
                b = raw[p]; p += 1
                r |= (b & 0x7f) << s; s += 7
                if not b & 0x80: return r
        def sv():
            u = uv(); return (u >> 1) ^ -(u & 1)
        def bstr():
            nonlocal p
            n = uv(); s = raw[p:p+n]; p += n; return s
        assert raw[0] == 1, "chunk must start with CHUNK_BEGIN"
        t = 0; addr = 0; th = None
        # address states (version 5: one per thread index mod 16, else
        # one): hist, the address histories allocated and freed, and
        # hmeta, the (stack, size) of each address of hist[0]; those of
        # the current thread's state
        states = {}
        def state(th):
            return states.setdefault(th % 16 if ver >= 5 else 0, (([], []), []))
        hist, hmeta = state(0)
        lastk = 0         # k of the latest address field
        # CHUNK_BEGIN: seq, time, then (version 5) the mask of the address
        # states that have side streams, then the lengths of each one's
        # (before: the chunk's) side streams STACKS SIZES KEYS DELTAS,
        # which end the chunk; RECORDS is the rest
        p = 1; cs = uv(); t = uv()
        mask = uv() if ver >= 5 else 1
        assert mask < 1 << 16, "state mask"
        sts = [i for i in range(16) if mask >> i & 1]
        lens = [[uv() for _ in range(4)] for _ in sts]
        end = len(raw) - sum(map(sum, lens))
        assert end >= p, "stream lengths"
        sides = {}; q = end
        for i, ln in zip(sts, lens):
            sides[i] = []
            for n in ln:
                sides[i].append([q, q + n]); q += n
        def field(i):
            # a uv from side stream i (0 STACKS, 1 SIZES, 2 KEYS, 3 DELTAS)
            # of the current thread's state
            key = th % 16 if ver >= 5 and th is not None else 0
            assert key in sides, "no side streams for state %d" % key
            s = sides[key][i]; r = 0; sh = 0
            while True:
                assert s[0] < s[1], "side stream %d ends early" % i
                b = raw[s[0]]; s[0] += 1
                r |= (b & 0x7f) << sh; sh += 7
                if not b & 0x80: return r
        def block(k, at, a, n0):
            # version 4: the (stack, size) a free names for the block at a,
            # from the allocation k named (at: its index in hist[0]) or the
            # streams; checked against this decoder's own table (n0: the
            # length of hist[0] when the free's address was decoded)
            if ver < 4: return
            b = hmeta[at] if k else (field(0), field(1))
            b = (b[1], b[0])
            if live.get(a) != b: st["block_mismatch"] += 1
            # the thread's latest allocation at a in its history, another
            # block than the one freed: the writer had to write it
            if not k and ver >= 5:
                w = hist[0][max(0, n0 - 1024):n0]
                if a in w:
                    i = n0 - 1 - w[::-1].index(a)
                    if (hmeta[i][1], hmeta[i][0]) != live.get(a): st["stale_entries"] += 1
        def addr_field(h, to):
            nonlocal lastk
            k = lastk = field(2)
            if k:
                assert k <= 1024 and k <= len(hist[h]), ("history", k)
                a = hist[h][-k]
            else:
                u = field(3); d = (u >> 1) ^ -(u & 1)
                a = ((hist[to][-1] if hist[to] else 0) + d) & 0xffffffffffffffff
            hist[to].append(a)
            return a
        assert cs == seq, ("seq", cs, seq)
        assert t >= lastt
        def gone(a):
            # a block leaves the live set (a free, or an ALLOC over it)
            nonlocal live_bytes
            live_bytes -= live.pop(a)[0]; tot["frees"] += 1
        def born(a, size, sid):
            nonlocal live_bytes
            if a in live: st["double_allocs"] += 1; gone(a)
            live[a] = (size, sid); live_bytes += size
            tot["allocations"] += 1; tot["bytes_allocated"] += size
            if live_bytes > tot["peak_bytes"]:
                tot["peak_bytes"] = live_bytes; tot["peak_blocks"] = len(live)
                tot["peak_time"] = t
        while p < end:
            ty = raw[p]; p += 1
            if ty == 2:
                sid = uv(); fn = uv(); n = uv(); prev = 0; ips = []
                for _ in range(n):
                    prev += sv(); ips.append(prev & 0xffffffffffffffff)
                tag = uv() if ver >= 4 else 0
                assert tag <= len(tags), ("stack tag", tag)
                assert sid == len(stacks), ("stack id", sid)
                stacks[sid] = (fn, ips); st["stacks"] += 1
                st["maxdepth"] = max(st["maxdepth"], n)
                if verbose: print("STACK", sid, fn, [hex(i) for i in ips])
            elif ty == 3:
                sid = field(0); size = field(1); addr = addr_field(1, 0)
                hmeta.append((sid, size))
                assert sid in stacks and th is not None
                alloc_stacks.add(sid)
                if is_exe(sid):
                    exe_live[addr] = size; exe_owner[addr] = th
                    st["exe_allocs"] += 1; st["exe_bytes"] += size
                born(addr, size, sid); st["allocs"] += 1; st["bytes"] += size; seq += 1
                if verbose: print("ALLOC", t, hex(addr), size, sid, th)
            elif ty == 4:
                a = addr_field(0, 1); seq += 1
                block(lastk, len(hist[0]) - lastk, a, len(hist[0]))
                assert th is not None
                if a in live: gone(a); st["frees"] += 1
                else: st["ignored_frees"] += 1
                if a in exe_live:
                    if exe_owner[a] != th: st["exe_xthread_frees"] += 1
                    del exe_live[a]; st["exe_frees"] += 1
                if verbose: print("FREE", t, hex(a), th)
            elif ty == 5:
                sid = field(0); size = field(1)
                old = addr_field(0, 1); k = lastk; n0 = len(hist[0]); at = n0 - k
                addr = addr_field(1, 0)
                hmeta.append((sid, size))
                block(k, at, old, n0)
                seq += 1
                assert sid in stacks and th is not None
                if old in live: gone(old); st["frees"] += 1
                else: st["ignored_frees"] += 1
                if old in exe_live:
                    if exe_owner[old] != th: st["exe_xthread_frees"] += 1
                    del exe_live[old]; st["exe_frees"] += 1
                if is_exe(sid):
                    exe_live[addr] = size; exe_owner[addr] = th
                    st["exe_allocs"] += 1; st["exe_bytes"] += size
                born(addr, size, sid); st["allocs"] += 1; st["bytes"] += size; st["reallocs"] += 1
                if verbose: print("REALLOC", t, hex(old), hex(addr), size, sid, th)
            elif ty == 0x12:
                # SAMPLE: one, before any event, mean >= 1 (the decoder's
                # figures stay the recorded blocks' own, as END's are)
                assert ver >= 4, "SAMPLE before version 4"
                mean = uv()
                assert mean >= 1 and "sample" not in st and seq == 0, ("sample", mean, seq)
                st["sample"] = mean
                if verbose: print("SAMPLE", mean)
            elif ty == 0x11:
                assert ver >= 4, "TAG before version 4"
                tid_ = uv(); parent = uv(); name = bstr()
                assert tid_ == len(tags) + 1 and parent < tid_ and name, ("tag", tid_, parent)
                tags.append((parent, name.decode(errors="replace")))
                if verbose: print("TAG", tid_, parent, name.decode(errors="replace"))
            elif ty == 6:
                idx = uv(); tid = uv()
                assert idx == st["threads"]; st["threads"] += 1
                if verbose: print("THREAD", idx, tid)
            elif ty == 7:
                base = uv(); path = bstr(); bid = bstr(); n = uv()
                segs = [(uv(), uv()) for _ in range(n)]
                st["modules"] += 1
                modules.append((path.decode(errors="replace"), base, segs, t))
                if verbose: print("MODULE", hex(base), path.decode(), bid.hex(), [(hex(a), b) for a, b in segs])
            elif ty == 8:
                base = uv(); st["unloads"] += 1
                unloads.append((base, t))
                if verbose: print("UNLOAD", hex(base))
            elif ty == 9:
                idx = uv(); label = bstr(); seq += 1
                snaps.append((idx, label.decode(), live_bytes, len(live)))
                st["snapshots"] += 1
                if verbose: print("SNAPSHOT", idx, label, live_bytes)
            elif ty == 10:
                how = uv(); code = sv()
                st["end"] = (how, code)
                st["end_totals"] = " ".join(str(uv()) for _ in range(8))
                # what this decoder counted, in the same order
                st["replayed_totals"] = " ".join(str(x) for x in (
                    tot["allocations"], tot["frees"], tot["bytes_allocated"],
                    tot["peak_bytes"], tot["peak_blocks"], tot["peak_time"],
                    live_bytes, len(live)))
                if verbose: print("END", how, code, st["end_totals"])
            elif ty == 11:
                st["stop"] = bstr().decode()
            elif ty == 12:
                dt = uv(); assert dt > 0, "TIME 0"; t += dt; st["times"] += 1
            elif ty == 13:
                th = uv(); assert th < st["threads"], ("switch", th); st["switches"] += 1
                hist, hmeta = state(th)
            elif ty == 14:
                idx = uv(); name = bstr()
                assert ver >= 3 and idx < st["threads"], ("thread name", idx)
                st["thread_names"] += 1
                if verbose: print("THREAD_NAME", idx, name.decode(errors="replace"))
            elif ty == 15:
                rss = uv(); assert ver >= 3 and rss > 0, ("rss", rss)
                st["rss"] = st.get("rss", 0) + 1
                st["max_rss"] = max(st.get("max_rss", 0), rss)
                if verbose: print("RSS", rss)
            elif ty == 16:
                # LEAK: the lost blocks by address with their kinds; the
                # last record of a check carries the totals per kind
                assert ver >= 4, "leak in version < 4"
                n = uv(); prev = 0
                for i in range(n):
                    v = uv(); d, kind = v >> 2, v & 3
                    sid = uv(); size = uv()
                    assert kind < 3 and (i == 0 or d > 0), ("leak entry", v)
                    prev += d
                    assert prev in live, ("leak of a block not live", hex(prev))
                    # the block as this decoder's own table has it
                    if live[prev] != (size, sid): st["block_mismatch"] += 1
                    assert prev > leak_last[0], "leak order"
                    leak_last[0] = prev
                    leak_kind[prev] = kind
                if uv():
                    tl = [(uv(), uv()) for _ in range(4)]
                    # the listed blocks' own figures, reachable the rest
                    mine = [[0, 0] for _ in range(4)]
                    for a, k in leak_kind.items():
                        mine[k][0] += live[a][0]; mine[k][1] += 1
                    mine[3] = [live_bytes - sum(m[0] for m in mine[:3]),
                               len(live) - sum(m[1] for m in mine[:3])]
                    assert [list(x) for x in tl] == mine, ("leak totals", tl, mine)
                    st["leak_totals"] = " ".join("%d %d" % x for x in tl)
                    st["leak_seq"] = seq
                    leak_kind.clear(); leak_last[0] = -1
                if verbose: print("LEAK", n)
            else:
                raise ValueError("record type %d" % ty)
            lastt = t
            if live_bytes > st["peak"]: st["peak"] = live_bytes
        assert p == end
        assert all(s[0] == s[1] for sd in sides.values() for s in sd), "side stream bytes left over"
    st["live"] = live_bytes; st["live_blocks"] = len(live)
    st["exe_live"] = sum(exe_live.values()); st["exe_live_blocks"] = len(exe_live)
    st["cmd"] = cmd.replace(b"\0", b" ").decode(errors="replace").strip()
    st["pid"] = pid
    for k, v in st.items():
        print("%s=%s" % (k, v))
    for s in snaps:
        print("snapshot=%d %s %d %d" % s)
    def mod_of(ip):
        for path, base, segs, _ in modules:
            for a, n in segs:
                if a <= ip < a + n:
                    return path
        return "?"
    for path, base, segs, t in modules:
        print("module=%s %#x %d" % (path, base, t))
    for base, t in unloads:
        print("unload=%#x %d" % (base, t))
    # Frame 0 of every stack, by module; frames inside the recorder itself.
    self_frames = 0
    for sid, (fn, ips) in sorted(stacks.items()):
        print("frame0=%d %s %s" % (sid, fn, mod_of(ips[0]) if ips else "-"))
        self_frames += sum(1 for ip in ips if mod_of(ip).endswith("/libmemtrail.so"))
    print("self_frames=%d" % self_frames)

main()
