/*
 * format.h - the memtrail event log (memtrail.data), version 5 (readers
 * also take versions 2, 3 and 4: see VERSIONS at the end of this comment).
 *
 * This is the single definition of the on-disk format shared by the writer
 * (lib/writer.c, used inside the recorded program) and the reader
 * (lib/reader.c, used by every tool). man/memtrail-format.5 documents the same
 * thing for users. It holds constants, the END figures' struct and the
 * varint helpers only; no I/O.
 *
 * All fixed-size integers are little-endian.
 *
 * FILE = HEADER CHUNK*
 *
 * HEADER (raw, uncompressed, at offset 0):
 *   off  size  field
 *   0    8     magic "MEMTRAIL"
 *   8    2     format version (MT_FORMAT_VERSION)
 *   10   1     pointer size in bytes (8 on x86-64 and aarch64)
 *   11   1     flags (0)
 *   12   4     pid of the recorded process
 *   16   8     start time, ns since the Unix epoch (CLOCK_REALTIME)
 *   24   4     L, length of the command line in bytes (<= MT_MAX_CMDLINE)
 *   28   L     the command line: each argument followed by a NUL byte
 *
 * CHUNK (repeated until end of file):
 *   0    4     magic "MTCK"
 *   4    4     C, compressed size (1 <= C <= MT_MAX_CHUNK_COMPRESSED)
 *   8    4     U, decompressed size (1 <= U <= MT_MAX_CHUNK)
 *   12   C     exactly one zstd frame, with content size and checksum,
 *              that decompresses to exactly U bytes of records.
 * A chunk is written with a single write(2) once complete, so a log cut at
 * any byte holds complete chunks followed by at most one partial one. Each
 * chunk spans at most about one second of events. A chunk decodes on its own:
 * its first record is CHUNK_BEGIN, which resets the delta state.
 *
 * A decompressed chunk = CHUNK_BEGIN, then RECORDS, then the side streams
 * of each address state (see below; version 5: of each state that has
 * fields in the chunk, by increasing number; before: the chunk's alone):
 *   RECORDS  the records that follow CHUNK_BEGIN, each a type byte then its
 *            fields, except that the fields of events (ALLOC, FREE,
 *            REALLOC) are not here but in the side streams of the
 *            current thread's address state, in order:
 *   STACKS   uv stack of each ALLOC and REALLOC, and of the block a FREE
 *            or a REALLOC's old half ends when the record carries it
 *   SIZES    uv size of the same events and blocks, in the same order
 *   KEYS     uv k of each address field (ADDR below)
 *   DELTAS   sv delta of each address field whose k is 0
 * CHUNK_BEGIN gives the side streams' lengths; RECORDS is the rest.
 * (Each kind of value in a stream of its own, and each thread's in its
 * state's: zstd finds the repeats of each, which interleaving them, as
 * events of several threads interleave, would hide.)
 *
 * RECORDS, each a type byte then its fields.
 *   uv = unsigned LEB128 varint (at most 10 bytes, value < 2^64)
 *   sv = signed varint: zigzag-encoded then uv
 *   str = uv length (<= MT_MAX_STRING) then that many bytes, no NUL
 * Decoding state, reset by CHUNK_BEGIN:
 *   time    ns since recording start (CLOCK_MONOTONIC); set by CHUNK_BEGIN,
 *           advanced only by TIME. Every record happens at the current time.
 *   thread  the thread index of the events that follow; none at the chunk's
 *           start (an event before the chunk's first SWITCH is corrupt).
 *   address states, MT_ADDR_STATES of them (version 5; one before): each
 *           holds two address histories, `allocated` and `freed`: the
 *           addresses of the chunk's ALLOCs (and REALLOCs' new blocks),
 *           and of its FREEs (and REALLOCs' old blocks), in order, of the
 *           threads whose index mod MT_ADDR_STATES is the state's number;
 *           all empty at the chunk's start; and its side streams. An
 *           event's fields are in the side streams of the current
 *           thread's (SWITCH) state, its address fields use that state's
 *           histories only.
 * ADDR(h) = KEYS uv k, then, only when k = 0, DELTAS sv (address - the
 * latest address of the history the address joins, or 0 when it is empty):
 *   k in 1..MT_ADDR_HISTORY names the k-th latest address of history h
 *   of the current thread's state in this chunk (1 = the latest); k beyond
 *   the history is corrupt. A block freed soon after it was allocated, or
 *   allocated where a block was just freed (allocators reuse them), costs a
 *   small k that repeats, not a fresh address.
 * Why a state per thread: threads take their blocks from allocator arenas
 * of their own, and their events interleave as the scheduler had them run.
 * With one state (versions 2 to 4) every thread switch made the delta jump
 * between arenas and pushed other threads' addresses into the histories,
 * and the threads' stacks, sizes and keys interleaved in the streams as
 * the scheduler had it, so the same program's logs varied tenfold in size
 * from run to run. With a state per thread, a thread's fields encode the
 * same whatever other threads do in between; only RECORDS (the SWITCH
 * records) shows the interleaving. The states are a fixed number, the
 * thread index picking one, so that a writer's and a reader's memory stays
 * bounded however many threads a program starts; threads 16 apart share a
 * state (correct, only less compact when they are busy at the same time).
 * The writer quantizes time: by default to a power of two of at most
 * 1/16,384 of the time elapsed, between about 1 us and 1 ms (a fixed quantum
 * can be asked for). TIME is written only when the quantized clock has
 * moved since the last record, so most events carry no time at all. Events are in true order (log order); times only place
 * them on the timeline.
 *
 *   0x01 CHUNK_BEGIN  uv seq, uv time, [uv mask,] n x (uv stacks_len,
 *                     uv sizes_len, uv keys_len, uv deltas_len)
 *        seq = number of events (ALLOC, FREE, REALLOC, SNAPSHOT) written in
 *        all earlier chunks; time = absolute time of the chunk's start;
 *        version 5: mask (< 2^MT_ADDR_STATES), bit i set when address
 *        state i has side streams in this chunk, n = its bits set; before,
 *        no mask and n = 1; then the byte lengths of each such state's
 *        streams STACKS..DELTAS, which end the chunk in that order (their
 *        sum is at most what follows CHUNK_BEGIN; a state not in mask has
 *        them empty). Only first.
 *   0x02 STACK        uv id, uv fn, uv n, n x sv (ip - previous ip), uv tag
 *        A distinct call stack, written once, before any event refers to it.
 *        tag (version 4 on; absent before, read as 0) is the tag path that
 *        was innermost on the allocating thread (TAG below; 0 = none): the
 *        same frames under two tag paths are two stacks, so every event
 *        of a stack had its tag path and ALLOC records need no field.
 *        ids are 0, 1, 2... in order of first use. fn is the entry point
 *        (enum mt_fn). The n <= MT_MAX_DEPTH frames are innermost first; the
 *        recorder's own frames are removed, so frame 0 is the return address
 *        in the function that called the entry point. Every frame is a return
 *        address: symbolize ip - 1. "previous ip" starts at 0 for each stack.
 *   0x03 ALLOC        [STACKS uv stack, SIZES uv size, ADDR(freed)]
 *        A new block of `size` requested bytes at address, by the current
 *        thread; address joins `allocated`. [Brackets: the fields are
 *        in the streams named, not in RECORDS.]
 *   0x04 FREE         [ADDR(allocated), BLOCK]
 *        The block at address is released by the current thread; address
 *        joins `freed`. BLOCK = the stack id and the requested size of the
 *        block it ends: when the address was named from `allocated` (k > 0)
 *        they are not written (the block is that allocation's: the stack
 *        and size of the ALLOC or REALLOC whose address k named); when
 *        k = 0 they follow, STACKS uv stack then SIZES uv size. In version
 *        4 the entry k names is the latest allocation at the address in
 *        the chunk, the block being freed. In version 5 a thread may free
 *        a block that another thread allocated at an address its own
 *        history holds from an older allocation: the writer names an
 *        entry (k > 0) only when that allocation's stack and size are the
 *        freed block's, and writes k = 0 and BLOCK otherwise. So a reader needs no table of live blocks to
 *        know what a free releases, and most frees, which follow their
 *        allocation within the chunk, cost an address only. The recorder
 *        writes a FREE for live blocks only: an allocation at an address
 *        still live (its free went unseen) is preceded by the old block's
 *        FREE. (Version 3: [ADDR(allocated)] only; replay then looks the
 *        block up, and ignores a free of an address that is not live.)
 *   0x05 REALLOC      [STACKS uv stack, SIZES uv size, ADDR(allocated) old,
 *                     ADDR(freed) new, BLOCK(old)]
 *        realloc(old, size) returned new: one free of old and one allocation
 *        of size bytes at new, at the same instant. old is decoded and joins
 *        `freed` before new is decoded (so new == old is k = 1); then new
 *        joins `allocated`. BLOCK(old) is old's stack and size as in FREE,
 *        taken from the allocation old's k named (before new joined), else
 *        written after new's address. The recorder writes REALLOC only when
 *        old was live. (Version 3: without BLOCK(old).)
 *        realloc(NULL, n) is written as ALLOC, realloc(p, 0) that frees as FREE.
 *   0x06 THREAD       uv index, uv tid
 *        Thread `index` (0, 1, 2... in order of first event; 0 is the first
 *        thread seen) is kernel thread `tid`. Written before its first event.
 *   0x07 MODULE       uv base, str path, str build_id, uv nseg,
 *                     nseg x (uv start, uv size)
 *        A loaded ELF object: base = load bias (dlpi_addr), build_id the raw
 *        GNU build-id bytes (may be empty), segments = the absolute address
 *        ranges of its executable PT_LOAD segments. Written at start for
 *        every module, and after each dlopen for the new ones. Path "" is the
 *        main program when its name is unknown; "[vdso]" the vDSO.
 *   0x08 UNLOAD       uv base
 *        The module loaded at base was dlclose'd and unmapped.
 *   0x09 SNAPSHOT     uv index, str label
 *        memtrail_snapshot() / signal / interval marker; index 0, 1, 2...
 *   0x0A END          uv how, sv code, uv allocations, uv frees,
 *                     uv bytes_allocated, uv peak_bytes, uv peak_blocks,
 *                     uv peak_time, uv leaked_bytes, uv leaked_blocks
 *        Recording ended cleanly: how = enum mt_end_how, code = exit status
 *        or signal number. A log without END was cut short (crash, SIGKILL,
 *        full disk): readers warn "truncated after N events". The figures
 *        are the run's totals as the recorder counted them, with replay's
 *        definitions: allocations and frees as replayed (a REALLOC is one
 *        of each when its old block is live; a FREE of an address that is
 *        not live counts nothing; an ALLOC at a live address frees the old
 *        block first), peak = the largest live bytes after any event (the
 *        first time it is reached, with the live blocks then and the time
 *        of that event), leaked = live at END. The recorder writes END as
 *        the last record of the last chunk, so a tool can take them from
 *        the last chunk alone. how = MT_END_STOPPED follows a STOP record:
 *        the recorder stopped early (disk full, out of memory) while the
 *        program went on; what was live then is "live when recording
 *        stopped", not leaked, and the figures are the recorder's count up
 *        to the stop (a chunk that could not be written may hold events
 *        the log lacks: a replay's own figures then describe the log).
 *   0x0B STOP         str reason
 *        The recorder stopped recording early (e.g. disk full, fork child);
 *        END with how = MT_END_STOPPED follows when it could still write.
 *   0x0C TIME         uv dt
 *        time advances by dt ns (dt >= 1).
 *   0x0D SWITCH       uv thread
 *        The events that follow are by thread index `thread` (announced by
 *        an earlier THREAD record).
 *   0x0E THREAD_NAME  uv index, str name
 *        Thread `index` (announced by an earlier THREAD record) is named
 *        `name` (its comm: what pthread_setname_np or prctl(PR_SET_NAME)
 *        set, else the program's name), read when the thread exited, or
 *        at END for a thread still running then. At most one per thread;
 *        a later one replaces an earlier. Version 3 on.
 *   0x11 TAG          uv id, uv parent, str name
 *        Tag path `id` (1, 2, 3... in order of first use; 0 is "no tag")
 *        is tag path `parent` (0: none; an earlier TAG otherwise) with the
 *        scope `name` (memtrail_tag_push's argument, non-empty) inside it.
 *        Written when a thread first pushes that path, before any STACK
 *        names it. Readers show the path as the names from the outermost
 *        joined with "/". Version 4 on.
 *   0x10 LEAK         uv n, n x (uv ((address - prev) << 2 | kind), uv stack,
 *                     uv size), uv last, and when last = 1: 4 x (uv bytes,
 *                     uv blocks)
 *        A leak check (version 4 on): which of the blocks live at this
 *        point of the log the program could still reach, memcheck's way
 *        (enum mt_leak_kind). A check is one or more LEAK records in a
 *        row; together they list every block that is not reachable, in
 *        increasing address order, each with its kind (0 definitely, 1
 *        indirectly, 2 possibly lost), its stack id and its requested
 *        size (as a FREE names its block, so that readers need no table of
 *        live blocks); prev is the address listed before
 *        it in the same record (0 for the record's first). At most
 *        MT_LEAK_PER_RECORD addresses a record; the last (last = 1) ends
 *        the check with its totals, bytes and blocks per kind in enum
 *        order (reachable: the live blocks not listed). Every listed
 *        address is a live block. The recorder writes one check just
 *        before END(EXIT); none where it could not scan (other ends, a
 *        thread that would not stop), and readers then say "not
 *        classified".
 *   0x12 SAMPLE       uv mean
 *        The recorder samples (memtrail record --sample): of the allocations
 *        only some are in the log, drawn as jemalloc's and tcmalloc's heap
 *        profilers draw them. Each thread counts down the bytes it
 *        allocates; the allocation that takes the count to zero or below is
 *        recorded, and the count starts again from a fresh interval,
 *        exponentially distributed with mean `mean` bytes (1 to 2^40). Sampling
 *        points thus fall on the bytes allocated as a Poisson process, and a
 *        block of s bytes is recorded with probability p = 1 - exp(-s/mean).
 *        Readers weigh each recorded block by 1/p: it stands for s/p bytes
 *        and 1/p blocks (unbiased estimates; lib/replay.c weigh). A FREE or REALLOC is written only for a
 *        recorded block; a realloc whose old block was not recorded is an
 *        ALLOC if its new block is, and nothing otherwise. At most one, in
 *        the first chunk before any event. END's figures are the recorder's
 *        count of the recorded blocks, unweighted. Version 4 on.
 *   0x13 BASE         uv n, n x (uv stack, uv bytes, uv blocks), uv last, and
 *                     when last = 1: uv allocations, uv frees,
 *                     uv bytes_allocated, uv peak_bytes, uv peak_blocks,
 *                     uv peak_time
 *        The state of the run where a segment of a bounded log begins
 *        (memtrail record --max-size; version 5). A bounded log is a ring
 *        of files FILE.seg1, FILE.seg2, ...; the oldest are deleted as the
 *        newest grow, so every segment is a log of its own: the header,
 *        then, in its first chunks, every MODULE loaded, every TAG,
 *        THREAD for every thread index so far (the names of threads that
 *        ended before are not repeated), STACK for every stack so far (ids 0, 1, 2...
 *        again), then BASE, and only then events. BASE lists each stack
 *        with live blocks then (stack, live bytes, live blocks; at most
 *        MT_BASE_PER_RECORD a record, a state is one or more BASE records
 *        in a row) and, in its last record, the run's figures so far as
 *        END counts them. CHUNK_BEGIN's seq goes on from the whole run. A
 *        reader that starts at a segment takes its tallies from BASE (a
 *        FREE names its block, so no table of live blocks is needed); one
 *        that comes to a segment from the one before skips its records up
 *        to BASE, which repeat what it knows. The first segment has no
 *        BASE.
 * Unknown record types are an error (the format version changes instead;
 * records have no length, so a reader cannot skip one it does not know).
 *
 * VERSIONS. 5 (written now): an address state, with its side streams, per
 * thread (MT_ADDR_STATES above; CHUNK_BEGIN's mask); otherwise as 4.
 * 4: one address state for all threads; FREE and REALLOC name the block
 * they end (BLOCK above); LEAK; TAG, and STACK's tag; SAMPLE (4 on).
 * 3: THREAD_NAME and RSS; frees name an address only; no leak kinds, no
 * tags. 2: neither. Readers take all four.
 */
#ifndef MT_FORMAT_H
#define MT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define MT_MAGIC              "MEMTRAIL"
#define MT_MAGIC_LEN          8
#define MT_CHUNK_MAGIC        "MTCK"
#define MT_FORMAT_VERSION     5
#define MT_FORMAT_VERSION_MIN 2     /* the oldest a reader takes */
#define MT_HEADER_FIXED       28
#define MT_CHUNK_HEADER       12
#define MT_MAX_CMDLINE        65536
#define MT_MAX_CHUNK          (16u << 20)   /* decompressed bytes */
#define MT_MAX_CHUNK_COMPRESSED (17u << 20)
#define MT_MAX_STRING         4096
#define MT_MAX_DEPTH          256
#define MT_DEFAULT_DEPTH      64
#define MT_MAX_VARINT         10

enum mt_record {
	MT_REC_CHUNK_BEGIN = 0x01,
	MT_REC_STACK       = 0x02,
	MT_REC_ALLOC       = 0x03,
	MT_REC_FREE        = 0x04,
	MT_REC_REALLOC     = 0x05,
	MT_REC_THREAD      = 0x06,
	MT_REC_MODULE      = 0x07,
	MT_REC_UNLOAD      = 0x08,
	MT_REC_SNAPSHOT    = 0x09,
	MT_REC_END         = 0x0A,
	MT_REC_STOP        = 0x0B,
	MT_REC_TIME        = 0x0C,
	MT_REC_SWITCH      = 0x0D,
	MT_REC_THREAD_NAME = 0x0E,  /* version 3 on */
	MT_REC_RSS         = 0x0F,  /* version 3 on */
	MT_REC_LEAK        = 0x10,  /* version 4 on */
	MT_REC_TAG         = 0x11,  /* version 4 on */
	MT_REC_SAMPLE      = 0x12,  /* version 4 on */
	MT_REC_BASE        = 0x13,  /* version 5 on: a segment's start */
};

/* SAMPLE's largest mean (1 TiB): a weighed figure then fits its 63 bits. */
#define MT_SAMPLE_MAX ((uint64_t)1 << 40)

/* Stacks a BASE record lists at most (a state spans several records). */
#define MT_BASE_PER_RECORD    300

/* Tag paths a log may define (ids 1 .. MT_MAX_TAGS), and their depth. */
#define MT_MAX_TAGS           (1u << 20)
#define MT_MAX_TAG_DEPTH      64

/*
 * The kinds of a leak check (LEAK records), valgrind memcheck's: in the
 * order reports give them.
 */
enum mt_leak_kind {
	MT_LEAK_DEFINITE = 0,   /* no pointer to it anywhere reachable */
	MT_LEAK_INDIRECT = 1,   /* pointed to only from lost blocks */
	MT_LEAK_POSSIBLE = 2,   /* only pointers into its middle */
	MT_LEAK_REACHABLE = 3,  /* a pointer to its start from a root, or a
				 * reachable block */
	MT_LEAK_KINDS
};

/* A leak check's totals (the LEAK record that ends it), per kind. */
struct mt_leak_totals {
	uint64_t bytes[MT_LEAK_KINDS];
	uint64_t blocks[MT_LEAK_KINDS];
};

/* A kind's name in reports ("definitely lost:") and its JSON key stem. */
static inline const char *mt_leak_kind_label(unsigned k)
{
	static const char *const l[MT_LEAK_KINDS] = {
		"definitely lost:", "indirectly lost:", "possibly lost:", "still reachable:",
	};
	return k < MT_LEAK_KINDS ? l[k] : "?";
}

static inline const char *mt_leak_kind_key(unsigned k)
{
	static const char *const l[MT_LEAK_KINDS] = {
		"definitely_lost", "indirectly_lost", "possibly_lost", "reachable",
	};
	return k < MT_LEAK_KINDS ? l[k] : "?";
}

/* Blocks one LEAK record lists at most (so that it fits any chunk). */
#define MT_LEAK_PER_RECORD    300

/* The streams of a chunk (see CHUNK above). */
enum mt_stream {
	MT_STREAM_RECORDS = 0,
	MT_STREAM_STACKS,
	MT_STREAM_SIZES,
	MT_STREAM_KEYS,
	MT_STREAM_DELTAS,
	MT_STREAMS
};

/* Addresses an ALLOC or FREE may name by their place in history. */
#define MT_ADDR_HISTORY       1024
/* Address states of a version 5 chunk: thread index mod this picks one
 * (a power of two). */
#define MT_ADDR_STATES        16

/* The bounds of the writer's default time quantum, ns (see TIME). */
#define MT_TIME_QUANTUM_MIN   1024
#define MT_TIME_QUANTUM_MAX   (1u << 20)

/* The figures an END record carries, in their order on disk. */
#define MT_END_TOTALS_N       8
struct mt_totals {
	uint64_t allocations;
	uint64_t frees;
	uint64_t bytes_allocated;
	uint64_t peak_bytes;
	uint64_t peak_blocks;
	uint64_t peak_time_ns;
	uint64_t leaked_bytes;
	uint64_t leaked_blocks;
};

/* Allocation entry points; the report shows mt_fn_name() at the tree root. */
enum mt_fn {
	MT_FN_MALLOC = 0,
	MT_FN_CALLOC,
	MT_FN_REALLOC,
	MT_FN_REALLOCARRAY,
	MT_FN_MEMALIGN,
	MT_FN_POSIX_MEMALIGN,
	MT_FN_ALIGNED_ALLOC,
	MT_FN_VALLOC,
	MT_FN_PVALLOC,
	MT_FN_NEW,              /* operator new(size_t), and nothrow */
	MT_FN_NEW_ARRAY,        /* operator new[](size_t), and nothrow */
	MT_FN_NEW_ALIGNED,      /* operator new(size_t, align_val_t), and nothrow */
	MT_FN_NEW_ARRAY_ALIGNED,
	MT_FN_COUNT
};

enum mt_end_how {
	MT_END_EXIT = 0,        /* exit()/return from main: code = status */
	MT_END__EXIT = 1,       /* _exit()/_Exit(): code = status */
	MT_END_SIGNAL = 2,      /* fatal signal: code = signal number */
	MT_END_EXEC = 3,        /* the process exec'd another program */
	MT_END_STOPPED = 4,     /* recording stopped early (STOP says why); the
				 * process went on unrecorded: code = 0 */
};

static inline const char *mt_fn_name(unsigned fn)
{
	static const char *const names[MT_FN_COUNT] = {
		"malloc", "calloc", "realloc", "reallocarray", "memalign",
		"posix_memalign", "aligned_alloc", "valloc", "pvalloc",
		"operator new", "operator new[]",
		"operator new(align_val_t)", "operator new[](align_val_t)",
	};
	return fn < MT_FN_COUNT ? names[fn] : "?";
}

/* Encode v at p (room for MT_MAX_VARINT bytes); returns bytes written. */
static inline size_t mt_put_uv(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline size_t mt_put_sv(uint8_t *p, int64_t v)
{
	return mt_put_uv(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/*
 * Decode a varint from [*p, end). Returns 0 and advances *p, or -1 when the
 * input ends early or the varint is longer than 10 bytes / overflows.
 */
static inline int mt_get_uv(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t r = 0;
	unsigned shift = 0;
	for (;;) {
		if (q >= end || shift > 63)
			return -1;
		uint8_t b = *q++;
		if (shift == 63 && (b & 0x7e))
			return -1;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	*p = q;
	*v = r;
	return 0;
}

static inline int mt_get_sv(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t u;
	if (mt_get_uv(p, end, &u) < 0)
		return -1;
	*v = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
	return 0;
}

static inline void mt_put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void mt_put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void mt_put_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline uint16_t mt_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t mt_get_u32(const uint8_t *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | p[i]; return v; }
static inline uint64_t mt_get_u64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

#endif
