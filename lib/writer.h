/*
 * writer.h - writes an event log (lib/format.h): the header, then records
 * gathered into chunks, each compressed into one zstd frame and written with
 * a single write(2).
 *
 * For: the recorder (recorder/), which runs inside the profiled program, and
 * tests. The writer never calls malloc: all its memory comes from the
 * allocator the caller passes in (the recorder passes an mmap-based one, so
 * nothing the writer does goes through the malloc hooks, and it stays usable
 * in a signal handler or after fork). Once created, putting records and
 * flushing allocate nothing more except zstd's workspace on the first flush
 * and an address state's buffers when a thread first uses it (below).
 * A chunk is built in buffers as large as a chunk (twice over in deferred
 * mode), one for its records and four (its side streams, format.h CHUNK)
 * per address state: those of a state are allocated when a thread first
 * uses it, the one put that can then fail with MT_E_NOMEM (sticky); only
 * what a chunk fills is touched. The address states' histories
 * (MT_ADDR_STATES of about 160 KiB) are one allocation, made by
 * mt_writer_new, each touched once a thread uses it.
 *
 * Not for: locking (the caller serializes every call on one writer), reading
 * logs (lib/reader.c), deciding what to record.
 *
 * Chunking: a chunk is flushed before a record would take its raw size (all
 * streams) past the chunk limit (default 1 MiB) or when the record's time is
 * a chunk period (default 1 s) or more after the chunk's start. Every chunk starts with
 * CHUNK_BEGIN. Times passed in are ns since recording start. The writer
 * quantizes them (down to a multiple of the time quantum: fixed if asked
 * for, else a power of two of at most 1/16,384 of the time elapsed, within
 * MT_TIME_QUANTUM_MIN..MAX) and writes TIME only when that clock moved; a
 * time earlier than the log's current time is taken as the current time, so
 * the log's time never goes backwards. Thread changes between events are
 * written as SWITCH records.
 */
#ifndef MT_WRITER_H
#define MT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

struct mt_writer;

/* The allocator the writer (and zstd, through it) uses for all its memory. */
struct mt_writer_mem {
	void *(*alloc)(void *opaque, size_t size);
	void (*free)(void *opaque, void *ptr);
	void *opaque;
	/*
	 * Optional: the len bytes at ptr, in memory from alloc, are not
	 * needed until written again, so their pages may be dropped. In
	 * deferred mode the writer says so of a chunk's buffers and of its
	 * compressed output once it is written (and frees its compression
	 * context, made again for the next chunk), for chunks that begin 0.1 s
	 * or more after the last one that did (the pages are faulted in again
	 * when the set is next filled): the other set takes the events
	 * meanwhile, and only one set is full at a time.
	 */
	void (*idle)(void *opaque, void *ptr, size_t len);
};

struct mt_writer_opts {
	int level;            /* zstd level; 0 means the default (1) */
	size_t chunk_bytes;   /* raw bytes per chunk; 0 means 1 MiB */
	uint64_t chunk_ns;    /* time span per chunk; 0 means 1 s */
	uint64_t time_quantum_ns; /* 0: adaptive (see above); 1 keeps exact ns */
	/*
	 * Deferred mode, when set: a full chunk is not compressed by the put
	 * that fills it but sealed (the writer goes on in a second buffer)
	 * for the caller to compress and write later with
	 * mt_writer_write_sealed(), outside its record lock. If a chunk is
	 * still sealed when the next one fills, the put calls wait(wait_ctx),
	 * which must return only once no chunk is sealed (typically: take
	 * the caller's I/O lock, mt_writer_write_sealed(), release it).
	 */
	void (*wait)(void *ctx);
	void *wait_ctx;
	/*
	 * When set, called as each chunk begins: the process's resident set in
	 * bytes (0: unknown), written as an RSS record, so a log has a sample
	 * about every chunk_ns and one in every chunk (the peak's too).
	 */
	uint64_t (*rss)(void *ctx);
	void *rss_ctx;
};

/*
 * A writer on the open file descriptor fd (not closed by the writer). mem is
 * copied; opts may be NULL for the defaults. Returns NULL when out of memory.
 */
struct mt_writer *mt_writer_new(int fd, const struct mt_writer_mem *mem,
				const struct mt_writer_opts *opts);

/* Frees the writer without flushing; NULL is a no-op. */
void mt_writer_free(struct mt_writer *w);

/*
 * Writes the file header at the current file position (must be first).
 * cmdline holds the arguments, each followed by a NUL, len bytes in all
 * (cut to MT_MAX_CMDLINE at an argument boundary). Returns 0 or MT_E_IO.
 */
int mt_writer_header(struct mt_writer *w, uint32_t pid, uint64_t start_realtime_ns,
		     const char *cmdline, size_t len);

/*
 * Records (see lib/format.h for their meaning). Each returns 0, or a
 * negative MT_E_* when a chunk flush it triggered failed (MT_E_IO with errno
 * set, MT_E_ZSTD), MT_E_NOMEM when an event's address state could not get
 * its buffers, or MT_E_RANGE for an argument beyond the format's limits.
 * After an I/O, zstd or memory error the writer is broken: every later call
 * returns the same error without writing (see mt_writer_error).
 */
/* tag: the stack's tag path (0: none), defined by mt_writer_tag first. */
int mt_writer_stack(struct mt_writer *w, uint64_t t, uint32_t id, unsigned fn, uint32_t tag,
		    const uint64_t *ips, unsigned n);
/* TAG: path id (1..MT_MAX_TAGS, parent < id) is parent with name inside;
 * name not empty, at most MT_MAX_STRING bytes (MT_E_RANGE otherwise). */
int mt_writer_tag(struct mt_writer *w, uint64_t t, uint32_t id, uint32_t parent, const char *name);
/* SAMPLE: the log records one allocation per mean bytes on average
 * (mean >= 1; MT_E_RANGE otherwise); before the first event. */
int mt_writer_sample(struct mt_writer *w, uint64_t t, uint64_t mean);
int mt_writer_alloc(struct mt_writer *w, uint64_t t, uint64_t addr, uint64_t size,
		    uint32_t stack, uint32_t thread);
/* A free names the block it ends: its requested size and stack id. */
int mt_writer_free_block(struct mt_writer *w, uint64_t t, uint64_t addr, uint64_t size,
			 uint32_t stack, uint32_t thread);
int mt_writer_realloc(struct mt_writer *w, uint64_t t, uint64_t old_addr, uint64_t old_size,
		      uint32_t old_stack, uint64_t new_addr, uint64_t size, uint32_t stack,
		      uint32_t thread);
int mt_writer_thread(struct mt_writer *w, uint64_t t, uint32_t index, uint32_t tid);
int mt_writer_thread_name(struct mt_writer *w, uint64_t t, uint32_t index, const char *name);
/* segs holds nseg (start, size) pairs: 2 * nseg numbers. */
int mt_writer_module(struct mt_writer *w, uint64_t t, uint64_t base, const char *path,
		     const uint8_t *build_id, size_t build_id_len,
		     const uint64_t *segs, size_t nseg);
int mt_writer_unload(struct mt_writer *w, uint64_t t, uint64_t base);
int mt_writer_snapshot(struct mt_writer *w, uint64_t t, uint32_t index, const char *label);
/* END with the run's figures (format.h END; the caller counts them). */
int mt_writer_end(struct mt_writer *w, uint64_t t, unsigned how, int64_t code,
		  const struct mt_totals *tot);
/*
 * A leak check (format.h LEAK): lost[0..n) are the blocks that are not
 * reachable, by increasing address, each address | its enum mt_leak_kind
 * (addresses are at least 4-aligned), with its stack and size; tot the
 * totals per kind. Written as as many LEAK records as it takes. A long
 * list may come in parts: more != 0 when another call goes on with the
 * next blocks (n is then a multiple of MT_LEAK_PER_RECORD: the records
 * are those of one call); tot is read by the last part only.
 */
struct mt_leak_entry {
	uint64_t addr_kind;
	uint64_t size;
	uint32_t stack;
};
int mt_writer_leak(struct mt_writer *w, uint64_t t, const struct mt_leak_entry *lost, size_t n,
		   int more, const struct mt_leak_totals *tot);
int mt_writer_stop(struct mt_writer *w, uint64_t t, const char *reason);
/*
 * A segment's BASE (format.h): the n stacks with live blocks (bytes,
 * blocks per stack) and the run's figures so far (tot; its leaked_* are
 * not written). Written as as many BASE records as it takes.
 */
struct mt_base_entry {
	uint32_t stack;
	uint64_t bytes, blocks;
};
int mt_writer_base(struct mt_writer *w, uint64_t t, const struct mt_base_entry *e, size_t n,
		   const struct mt_totals *tot);
/*
 * The log goes on in a new file, fd (a bounded log's next segment): the
 * chunk being built and any sealed one must have been written (flush
 * first). The byte count starts again from 0; write the header next.
 */
void mt_writer_new_file(struct mt_writer *w, int fd);

/*
 * Compresses the records gathered so far into a chunk and writes it with one
 * write(2) (looping only on a short write), after the sealed chunk if one is
 * pending. No-op when there are none. Returns 0, MT_E_IO (errno set) or
 * MT_E_ZSTD. In deferred mode, call it under the caller's I/O lock too.
 */
int mt_writer_flush(struct mt_writer *w);

/*
 * Deferred mode: compresses and writes the sealed chunk, if any. Needs only
 * the caller's I/O lock (it touches no record state), so puts may go on
 * meanwhile. Returns 0 or the error, as mt_writer_flush.
 */
int mt_writer_write_sealed(struct mt_writer *w);

/*
 * Deferred mode: drops the sealed chunk without writing it (the caller found
 * it must not be written); err, if not 0, becomes the sticky error (for
 * MT_E_IO, errno as set by the caller is kept). Under the I/O lock.
 */
void mt_writer_discard_sealed(struct mt_writer *w, int err);

/*
 * Ends the chunk being built if it holds records and began at least age ns
 * before t: for a program gone idle, whose records would otherwise wait for
 * the next put. In deferred mode the chunk is sealed (write it as after a
 * put that sealed one: mt_writer_seals() changed), else it is compressed
 * and written. Returns 0 or the error, as mt_writer_flush.
 */
int mt_writer_seal_old(struct mt_writer *w, uint64_t t, uint64_t age);

/*
 * After MT_E_IO or MT_E_ZSTD while writing a chunk (a full disk): drops
 * every record not yet written (the failed chunk's and any gathered since),
 * clears the error and sets *off to the file offset where the failed chunk
 * began, which the caller cuts the file back to (a short write may have
 * left part of it) before putting more: typically STOP and END, so that
 * the log still ends cleanly. Event numbering continues from the last
 * chunk written. Returns 0, or the error when there is nothing to recover
 * (no error of that kind, or the header itself was not written). With the
 * record and I/O locks held.
 */
int mt_writer_recover(struct mt_writer *w, uint64_t *off);
/*
 * The process that was writing with w died, maybe inside a call of it
 * (the recorder's spare drainer takes its place; w is in memory both
 * share). A chunk it had written whole is not written again, and the
 * chunk it was cut off writing is written again whole: returns the size
 * the file, of size bytes now, is to be cut back to first (size itself
 * when nothing was cut short). With the record and I/O locks held.
 */
uint64_t mt_writer_resume(struct mt_writer *w, uint64_t size);

/*
 * From now on a chunk sealed full keeps its buffers (mem.idle) when it is
 * written: one sealed full says more are coming, whose pages would be
 * faulted in again at once, with a new compression context. For buffers
 * that are no longer in the program's resident set (the recorder's
 * drainer process: python3 bench, it faulted them in 35 times, a tenth
 * of its system time). Before, they go idle after full chunks too (at
 * most ten times a second), so that a program's peak RSS holds less of
 * them (gcc bench: 1.8 MiB).
 */
void mt_writer_keep_full(struct mt_writer *w);

/*
 * on: the compressed chunk's buffer and the compression context are kept
 * when a chunk's buffers go idle, for a writer whose chunks are compressed
 * in a process of their own (the recorder's drainer), where they count in
 * no program's resident set: stl bench, the drainer faulted 5,000 pages a
 * run back in for them, and made a context every chunk.
 */
void mt_writer_keep_io(struct mt_writer *w, int on);

/*
 * on: each event record saves what it changes before its end commits it,
 * so that mt_writer_resume can take back one whose process was killed in
 * between (the recorder's drainer; a dozen stores an event). Off (the
 * default) where nobody would resume the writer.
 */
void mt_writer_undo(struct mt_writer *w, int on);

/* The descriptor to write to from now on (the caller moved its log). Under
 * the caller's I/O lock. */
void mt_writer_set_fd(struct mt_writer *w, int fd);

/* A sealed chunk waits to be written. */
int mt_writer_sealed_pending(const struct mt_writer *w);

/* Chunks sealed so far: a put that changed it sealed one (record lock held). */
uint64_t mt_writer_seals(const struct mt_writer *w);

/* The log's current time: the quantized time of the last record put. */
uint64_t mt_writer_time(const struct mt_writer *w);

/* Events (ALLOC, FREE, REALLOC, SNAPSHOT) put so far, flushed or not. */
uint64_t mt_writer_events(const struct mt_writer *w);

/* Raw bytes waiting for the next flush. */
size_t mt_writer_pending(const struct mt_writer *w);

/* The sticky error (0 if none). */
int mt_writer_error(const struct mt_writer *w);

/* For a sticky MT_E_IO: the errno of the failed write (else 0). */
int mt_writer_errno(const struct mt_writer *w);

/* Bytes written to the file so far (header and chunks). */
uint64_t mt_writer_written(const struct mt_writer *w);

#endif
