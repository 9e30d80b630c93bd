/*
 * testlog.h - a test-only encoder of event logs, written from lib/format.h
 * alone (not with lib/writer.c), so the reader and replay tests check the
 * format from the other side.
 *
 * Records go into the current chunk; tl_flush() compresses it into one zstd
 * frame (with content size and checksum) and starts a new chunk whose
 * CHUNK_BEGIN carries the events so far and the current time. The file
 * image stays in memory: tests write it whole or cut at any byte.
 *
 * Not for: anything but tests. Aborts on out of memory.
 */
#ifndef MT_TESTLOG_H
#define MT_TESTLOG_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

struct testlog;

/*
 * The format version tl_new writes: 3, whose frees name an address only,
 * so that hand-made logs test the replay's live table and its choices for
 * odd frees and allocations (which version 4 cannot express).
 */
#define TL_VERSION 3

/* A log with header pid and cmdline (arguments each ended by a NUL). */
struct testlog *tl_new(uint32_t pid, const char *cmdline, size_t len);
/*
 * The same in another format version, records as that version has them:
 * from 4 on, STACK's tag, and each free's block (the log keeps its live
 * blocks for that; a free of an address not live aborts).
 */
struct testlog *tl_new_version(uint32_t pid, const char *cmdline, size_t len, unsigned version);
void tl_free(struct testlog *t);

/*
 * Records; dt is added to the time (ns) with a TIME record first when not 0,
 * addresses are absolute, and an event by another thread than the current
 * one gets a SWITCH first. Times are exact (no quantum).
 */
void tl_thread(struct testlog *t, uint32_t index, uint32_t tid);
void tl_thread_name(struct testlog *t, uint32_t index, const char *name);
void tl_stack(struct testlog *t, uint32_t id, unsigned fn, unsigned n, const uint64_t *ips);
/* A STACK with its tag path (format.h; tl_stack's is 0), and a TAG. */
void tl_stack_tagged(struct testlog *t, uint32_t id, unsigned fn, uint32_t tag, unsigned n,
		     const uint64_t *ips);
void tl_tag(struct testlog *t, uint32_t id, uint32_t parent, const char *name);
void tl_alloc(struct testlog *t, uint64_t dt, uint64_t addr, uint64_t size,
	      uint32_t stack, uint32_t thread);
void tl_free_block(struct testlog *t, uint64_t dt, uint64_t addr, uint32_t thread);
void tl_realloc(struct testlog *t, uint64_t dt, uint64_t old_addr, uint64_t new_addr,
		uint64_t size, uint32_t stack, uint32_t thread);
void tl_module(struct testlog *t, uint64_t dt, uint64_t base, const char *path,
	       const uint8_t *build_id, size_t build_id_len, size_t nseg,
	       const uint64_t *segs);
void tl_unload(struct testlog *t, uint64_t dt, uint64_t base);
/* A resident-set sample (RSS, version 3 on). */
void tl_rss(struct testlog *t, uint64_t dt, uint64_t bytes);
void tl_snapshot(struct testlog *t, uint64_t dt, uint32_t index, const char *label);
/* END with all figures 0 (replay ignores them), or with tot. */
void tl_end(struct testlog *t, uint64_t dt, unsigned how, int64_t code);
void tl_end_totals(struct testlog *t, uint64_t dt, unsigned how, int64_t code,
		   const struct mt_totals *tot);
void tl_stop(struct testlog *t, uint64_t dt, const char *reason);
/* Appends raw bytes to the current chunk's RECORDS stream (format.h). */
void tl_raw(struct testlog *t, const void *p, size_t n);
/* Appends raw bytes to the file image (e.g. a hand-made chunk). */
void tl_raw_file(struct testlog *t, const void *p, size_t n);

/* Closes the current chunk (no-op when it holds only CHUNK_BEGIN). */
void tl_flush(struct testlog *t);

/* The file image (flushes first); owned by t. */
const uint8_t *tl_image(struct testlog *t, size_t *len);
/* File offset where each chunk starts: chunk k at tl_chunk_offset(t, k). */
size_t tl_nchunks(const struct testlog *t);
size_t tl_chunk_offset(const struct testlog *t, size_t k);
/* Events written so far (ALLOC, FREE, REALLOC, SNAPSHOT). */
uint64_t tl_events(const struct testlog *t);

/* ---- the tests' surroundings -------------------------------------------- */

/* The source tree: $MT_TOP, else the current directory, as an absolute path. */
const char *tl_top(void);

/*
 * The build directory, where memtrail, libmemtrail.so and the samples are:
 * $MT_BUILD, else tl_top()/build, as an absolute path (commands run
 * elsewhere).
 */
const char *tl_build(void);

/* xorshift64*: the next number of the sequence in *state (not 0), the same
 * on every platform. */
uint64_t tl_rand(uint64_t *state);

/* Writes len bytes of data to path; aborts on failure. */
void tl_write_file(const char *path, const void *data, size_t len);
/* Writes the image (flushed) to path. */
void tl_write(struct testlog *t, const char *path);

#endif
