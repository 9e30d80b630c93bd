/*
 * writer.c - the event-log writer: header, record encoding, chunk framing,
 * zstd compression, one write(2) per chunk. See writer.h for the contract
 * and format.h for the bytes.
 *
 * Not for: locking, deciding what to record, reading. Nothing here calls
 * malloc: memory comes from the caller's allocator (struct mt_writer_mem),
 * including zstd's, through ZSTD_customMem.
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "error.h"
#include "format.h"
#include "writer.h"

#define MT_WRITER_LIKELY(x)   __builtin_expect(!!(x), 1)
#define MT_WRITER_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Room kept past the chunk limit so that any one record fits. */
#define MAX_BUILD_ID   64
#define MAX_SEGS       64
#define RECORD_SLACK   (2 * MT_MAX_STRING + MAX_BUILD_ID + \
			(MAX_SEGS * 2 + MT_MAX_DEPTH + 32) * MT_MAX_VARINT)
/* Room for the TIME and SWITCH records that may precede any record. */
#define PREFIX_MAX     (2 + 2 * MT_MAX_VARINT)
/* The most bytes of an event (a REALLOC's) and its fields. */
#define EVENT_MAX      (1 + 8 * MT_MAX_VARINT)
#define NO_THREAD      UINT32_MAX
#define IDLE_EVERY_NS  100000000ull
/* A chunk's parts: RECORDS, then each address state's side streams. */
#define SIDES          (MT_STREAMS - 1)
#define PARTS          (1 + MT_ADDR_STATES * SIDES)
/* CHUNK_BEGIN: type, seq, time, the states' mask and the side streams'
 * lengths. */
#define CHUNK_BEGIN_MAX (1 + (3 + PARTS) * MT_MAX_VARINT)

/*
 * One address history: n addresses were put since the writer began, the
 * chunk's first at number base. The direct-mapped index finds an
 * address's latest number, from which k follows (a collision only costs
 * a miss: any k that names the address decodes right); the addresses
 * themselves are the reader's to keep.
 */
#define HIST_INDEX     (4 * MT_ADDR_HISTORY)
struct hist_slot {
	uint64_t addr;
	uint64_t num;
};
struct history {
	uint64_t n, base;
	uint64_t last;         /* the latest address in this chunk, 0 at its start */
	struct hist_slot index[HIST_INDEX];
};

/*
 * An address state (format.h): the threads whose index mod MT_ADDR_STATES
 * is its number. at[i]: where its side stream i's next byte goes in the
 * chunk being built. hist[0] the addresses allocated, hist[1] the
 * addresses freed; the stack and size of each allocation of hist[0], by
 * its number mod MT_ADDR_HISTORY, tell whether a free may name its block
 * from there.
 */
struct addr_state {
	uint8_t *at[MT_STREAMS];
	struct history hist[2];
	uint32_t astack[MT_ADDR_HISTORY];
	uint64_t asize[MT_ADDR_HISTORY];
};
_Static_assert(MT_ADDR_STATES <= 32 && !(MT_ADDR_STATES & (MT_ADDR_STATES - 1)),
	       "the ready mask holds every state; thread & (n - 1) picks one");

struct mt_writer {
	int fd;
	int err;
	int err_errno;         /* errno of the failed write, for messages */
	struct mt_writer_mem mem;
	int level;
	size_t chunk_bytes;
	uint64_t chunk_ns;

	/* The chunk being built: its streams (format.h CHUNK), each in a
	 * buffer of raw_cap bytes; stream 0 (records) is raw / used. Two sets
	 * for the deferred mode. */
	uint8_t *rawbuf[2];
	uint8_t *raw;          /* rawbuf[cur] */
	/* Each address state's side streams (format.h CHUNK), allocated when
	 * the state is first used: sbuf[set][state][i], i >= 1; side[state][i]
	 * the current set's (the state's at[i] is where the next byte goes). */
	uint8_t *sbuf[2][MT_ADDR_STATES][MT_STREAMS];
	uint8_t *side[MT_ADDR_STATES][MT_STREAMS];
	int cur;
	size_t raw_cap;
	size_t used;           /* bytes in raw; 0: no chunk open */
	/* Events that certainly fit in the chunk (each at most EVENT_MAX bytes)
	 * before its size must be added up again (chunk_total). */
	size_t quick;
	uint64_t chunk_seq;    /* events before the chunk being built */
	/* Deferred mode (opts->wait set): a full chunk is sealed, not
	 * compressed; sealed_len > 0 while it waits for
	 * mt_writer_write_sealed(). Set under the caller's record lock,
	 * cleared under its I/O lock. */
	struct sealed {
		const uint8_t *p[PARTS];
		size_t n[PARTS];
		uint64_t seq, t0;
		uint64_t no;   /* the chunk's number (begun) */
	} sealed;
	size_t sealed_len;
	uint64_t seals;
	void (*wait)(void *ctx);
	void *wait_ctx;
	uint64_t (*rss)(void *ctx);
	void *rss_ctx;
	int ended;             /* END ends the chunk being built: it stays its last
				  record (a chunk after it, when a failed exec
				  takes END back, starts afresh) */
	uint64_t idle_after;   /* I/O side: a written chunk's buffers go idle
				  (mem.idle) if it began at this time or later */
	int keep_full;         /* ... and only if it was sealed part-empty */
	int keep_io;           /* the output buffer and the context never go idle */
	uint8_t *out;          /* chunk header + compressed frame */
	size_t out_cap;
	ZSTD_CCtx *cctx;

	uint64_t events;       /* events put so far */
	uint64_t chunk_t;      /* time of the current chunk's CHUNK_BEGIN */
	uint64_t quantum;      /* fixed time quantum, ns; 0: adaptive_quantum() */
	uint64_t next_tick;    /* the quantized clock moves at this time */
	uint64_t time;         /* delta state: the log's current (quantized) time */
	uint32_t thread;       /* delta state: current thread, NO_THREAD at chunk start */
	/* The address states (format.h), MT_ADDR_STATES of them in one
	 * allocation, each zeroed when first used (ready: a bit per state), so
	 * that a program of one thread touches the memory of one; as: the
	 * current thread's. */
	struct addr_state *states;
	uint32_t ready;
	struct addr_state *as;
	uint64_t written;
	/* Where the chunk that failed to be written began, and its seq: a
	 * recovery cuts the file back there (mt_writer_recover). */
	uint64_t fail_off, fail_seq;
	/* Chunks begun (use_set), the number of the last one written whole,
	 * and of the one being written with where its write ends
	 * (written's value then; it began at fail_off): mt_writer_resume
	 * writes none twice, and keeps no part of one. */
	uint64_t begun, done_no, wr_no, wr_end;
	int header_done;
	/*
	 * The event being put, as it began (with undo_on: mt_writer_undo).
	 * An event record changes its address state (side streams,
	 * histories) before its end commits it (used, events): a process
	 * killed in between would leave the chunk's streams at odds with its
	 * records. events: w->events then, UINT64_MAX while being saved.
	 */
	int undo_on;
	struct {
		uint64_t events;
		size_t used;
		struct addr_state *as;
		uint8_t *at[MT_STREAMS];
		uint64_t n[2], last[2];
		size_t slot[2];
	} undo;
};

static void *zstd_alloc(void *opaque, size_t size)
{
	const struct mt_writer_mem *mem = opaque;
	return mem->alloc(mem->opaque, size);
}

static void zstd_free(void *opaque, void *ptr)
{
	const struct mt_writer_mem *mem = opaque;
	if (ptr)
		mem->free(mem->opaque, ptr);
}

/*
 * The compression context. Its output is w->out, which holds a whole
 * chunk's worst case, so zstd is told to write there directly
 * (stableOutBuffer) and keeps no output buffer of its own (128 KiB less).
 * In deferred mode the context is released with the buffers that go idle
 * (mt_writer_write_sealed) and made again by the next chunk: its window
 * and tables (0.9 MiB for a 1 MiB chunk at level 1) are then resident only
 * while a chunk is compressed, and a new context costs less than the
 * page faults that would bring the old one's pages back.
 */
static ZSTD_CCtx *cctx_new(struct mt_writer *w)
{
	ZSTD_customMem cm = { zstd_alloc, zstd_free, &w->mem };
	ZSTD_CCtx *c = ZSTD_createCCtx_advanced(cm);

	if (c && (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, w->level)) ||
		  ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)) ||
		  ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1)) ||
		  ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_stableOutBuffer, 1)))) {
		ZSTD_freeCCtx(c);
		c = NULL;
	}
	return c;
}

/* Builds chunks in buffer set b from now on (empty). */
static void use_set(struct mt_writer *w, int b)
{
	w->cur = b;
	w->begun++;
	w->raw = w->rawbuf[b];
	w->used = 0;
	w->quick = 0;
	for (uint32_t m = w->ready; m; m &= m - 1) {
		int st = __builtin_ctz(m);

		for (int i = 1; i < MT_STREAMS; i++)
			w->side[st][i] = w->states[st].at[i] = w->sbuf[b][st][i];
	}
}

struct mt_writer *mt_writer_new(int fd, const struct mt_writer_mem *mem,
				const struct mt_writer_opts *opts)
{
	struct mt_writer *w = mem->alloc(mem->opaque, sizeof(*w));
	if (!w)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->mem = *mem;
	w->level = opts && opts->level ? opts->level : 1;
	w->chunk_bytes = opts && opts->chunk_bytes ? opts->chunk_bytes : (1u << 20);
	if (w->chunk_bytes > MT_MAX_CHUNK - RECORD_SLACK)
		w->chunk_bytes = MT_MAX_CHUNK - RECORD_SLACK;
	w->chunk_ns = opts && opts->chunk_ns ? opts->chunk_ns : 1000000000ull;
	w->quantum = opts ? opts->time_quantum_ns : 0;
	w->thread = NO_THREAD;
	w->done_no = w->wr_no = UINT64_MAX;
	w->raw_cap = w->chunk_bytes + RECORD_SLACK;
	w->out_cap = MT_CHUNK_HEADER + ZSTD_compressBound(w->raw_cap + CHUNK_BEGIN_MAX);
	w->wait = opts ? opts->wait : NULL;
	w->wait_ctx = opts ? opts->wait_ctx : NULL;
	w->rss = opts ? opts->rss : NULL;
	w->rss_ctx = opts ? opts->rss_ctx : NULL;
	for (int b = 0; b < (w->wait ? 2 : 1); b++)
		if (!(w->rawbuf[b] = mem->alloc(mem->opaque, w->raw_cap)))
			goto fail;
	use_set(w, 0);
	if (!(w->states = mem->alloc(mem->opaque, MT_ADDR_STATES * sizeof(*w->states))))
		goto fail;
	w->out = mem->alloc(mem->opaque, w->out_cap);
	if (!w->out || !(w->cctx = cctx_new(w)))
		goto fail;
	return w;
fail:
	mt_writer_free(w);
	return NULL;
}

void mt_writer_free(struct mt_writer *w)
{
	if (!w)
		return;
	ZSTD_freeCCtx(w->cctx);
	for (int b = 0; b < 2; b++) {
		if (w->rawbuf[b])
			w->mem.free(w->mem.opaque, w->rawbuf[b]);
		for (int st = 0; st < MT_ADDR_STATES; st++)
			for (int i = 1; i < MT_STREAMS; i++)
				if (w->sbuf[b][st][i])
					w->mem.free(w->mem.opaque, w->sbuf[b][st][i]);
	}
	if (w->out)
		w->mem.free(w->mem.opaque, w->out);
	if (w->states)
		w->mem.free(w->mem.opaque, w->states);
	w->mem.free(w->mem.opaque, w);
}

/* The sticky error is set on the I/O side and read on the record side. */
static inline int werr(const struct mt_writer *w)
{
	return __atomic_load_n(&w->err, __ATOMIC_ACQUIRE);
}

static inline int set_err(struct mt_writer *w, int err)
{
	if (err == MT_E_IO)
		w->err_errno = errno;
	__atomic_store_n(&w->err, err, __ATOMIC_RELEASE);
	return err;
}

/* Writes all of buf; loops on a short write or EINTR. */
static int write_all(struct mt_writer *w, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(w->fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return MT_E_IO;
		}
		if (n == 0) {
			errno = ENOSPC;
			return MT_E_IO;
		}
		buf += n;
		len -= (size_t)n;
		w->written += (uint64_t)n;
	}
	return 0;
}

int mt_writer_header(struct mt_writer *w, uint32_t pid, uint64_t start_realtime_ns,
		     const char *cmdline, size_t len)
{
	uint8_t h[MT_HEADER_FIXED];

	if (werr(w))
		return werr(w);
	if (len > MT_MAX_CMDLINE) {
		/* Cut after the last whole argument that fits. */
		len = MT_MAX_CMDLINE;
		while (len > 0 && cmdline[len - 1] != '\0')
			len--;
	}
	memcpy(h, MT_MAGIC, MT_MAGIC_LEN);
	mt_put_u16(h + 8, MT_FORMAT_VERSION);
	h[10] = (uint8_t)sizeof(void *);
	h[11] = 0;
	mt_put_u32(h + 12, pid);
	mt_put_u64(h + 16, start_realtime_ns);
	mt_put_u32(h + 24, (uint32_t)len);
	int err = write_all(w, h, sizeof(h));
	if (!err && len)
		err = write_all(w, (const uint8_t *)cmdline, len);
	if (err)
		return set_err(w, err);
	w->header_done = 1;
	return 0;
}

/*
 * Compresses one chunk (format.h CHUNK: CHUNK_BEGIN with the stream
 * lengths, then the streams in order) into one zstd frame, fed piece by
 * piece so that the streams need no copying, and writes it.
 */
static int compress_write(struct mt_writer *w, const struct sealed *c)
{
	uint8_t hdr[CHUNK_BEGIN_MAX], *q = hdr;
	size_t len = 0, i;

	*q++ = MT_REC_CHUNK_BEGIN;
	q += mt_put_uv(q, c->seq);
	q += mt_put_uv(q, c->t0);
	/* the states with fields in this chunk, then their streams' lengths */
	uint64_t mask = 0;
	for (i = 1; i < PARTS; i++)
		if (c->n[i])
			mask |= 1ull << ((i - 1) / SIDES);
	q += mt_put_uv(q, mask);
	for (i = 1; i < PARTS; i++)
		if (mask >> ((i - 1) / SIDES) & 1)
			q += mt_put_uv(q, c->n[i]);
	for (i = 0; i < PARTS; i++)
		len += c->n[i];
	len += (size_t)(q - hdr);

	ZSTD_outBuffer out = { w->out + MT_CHUNK_HEADER, w->out_cap - MT_CHUNK_HEADER, 0 };
	w->fail_off = w->written;
	w->fail_seq = c->seq;
	/* no context: zstd could not have its memory, as when it fails to
	 * while compressing (MT_E_ZSTD: the chunk can be dropped, and STOP
	 * and END written after the last chunk whole, mt_writer_recover) */
	if (!w->cctx && !(w->cctx = cctx_new(w)))
		return set_err(w, MT_E_ZSTD);
	if (ZSTD_isError(ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(w->cctx, len)))
		return set_err(w, MT_E_ZSTD);
	for (i = 0; i <= PARTS; i++) {
		ZSTD_inBuffer in = { i ? c->p[i - 1] : hdr, i ? c->n[i - 1] : (size_t)(q - hdr), 0 };
		ZSTD_EndDirective end = i == PARTS ? ZSTD_e_end : ZSTD_e_continue;

		if (i && i < PARTS && !in.size)
			continue;
		size_t r;

		do {
			r = ZSTD_compressStream2(w->cctx, &out, &in, end);
			if (ZSTD_isError(r) || (out.pos == out.size && r))
				return set_err(w, MT_E_ZSTD);
		} while (end == ZSTD_e_end ? r != 0 : in.pos < in.size);
	}
	memcpy(w->out, MT_CHUNK_MAGIC, 4);
	mt_put_u32(w->out + 4, (uint32_t)out.pos);
	mt_put_u32(w->out + 8, (uint32_t)len);
	w->wr_no = c->no;
	w->wr_end = w->written + MT_CHUNK_HEADER + out.pos;
	int err = write_all(w, w->out, MT_CHUNK_HEADER + out.pos);
	if (err)
		return set_err(w, err);
	w->done_no = c->no;
	return 0;
}

/*
 * The resident set as the chunk being built ends, or just before END
 * (mt_writer_opts.rss): with the sample it began with, each chunk brackets
 * its events, the peak's chunk included. The raw buffer's slack holds it.
 */
static void put_rss(struct mt_writer *w)
{
	uint64_t rss;
	uint8_t *p;

	if (!w->rss || !w->used || w->ended || !(rss = w->rss(w->rss_ctx)))
		return;
	p = w->raw + w->used;
	*p++ = MT_REC_RSS;
	p += mt_put_uv(p, rss);
	w->used = (size_t)(p - w->raw);
}

/* The bytes in all the chunk's streams. */
static size_t chunk_total(const struct mt_writer *w)
{
	size_t n = w->used;

	for (uint32_t m = w->ready; m; m &= m - 1) {
		int st = __builtin_ctz(m);

		for (int i = 1; i < MT_STREAMS; i++)
			n += (size_t)(w->states[st].at[i] - w->side[st][i]);
	}
	return n;
}

/* The chunk being built, as compress_write takes it. */
static void current(const struct mt_writer *w, struct sealed *c)
{
	c->p[0] = w->raw;
	c->n[0] = w->used;
	for (int st = 0; st < MT_ADDR_STATES; st++) {
		for (int i = 1; i < MT_STREAMS; i++) {
			int ready = w->ready >> st & 1;

			c->p[1 + st * SIDES + i - 1] = ready ? w->side[st][i] : NULL;
			c->n[1 + st * SIDES + i - 1] = ready ?
				(size_t)(w->states[st].at[i] - w->side[st][i]) : 0;
		}
	}
	c->seq = w->chunk_seq;
	c->t0 = w->chunk_t;
	c->no = w->begun;
}

int mt_writer_write_sealed(struct mt_writer *w)
{
	size_t len = __atomic_load_n(&w->sealed_len, __ATOMIC_ACQUIRE);
	int err = 0;
	if (!len)
		return 0;
	if (!werr(w))
		err = compress_write(w, &w->sealed);
	/* Pages given back are faulted in again by the next chunk in that
	 * set: at most ten times a second (churn writes 40 chunks a second:
	 * giving them all back cost 5 % more CPU); with keep_full, only
	 * after a chunk sealed less than half full, by the clock (see
	 * mt_writer_keep_full). */
	size_t raw = 0;
	for (size_t i = 0; i < PARTS; i++)
		raw += w->sealed.n[i];
	if (!err && !werr(w) && w->mem.idle && w->sealed.t0 >= w->idle_after &&
	    (!w->keep_full || raw < w->chunk_bytes / 2)) {
		w->idle_after = w->sealed.t0 + IDLE_EVERY_NS;
		for (size_t i = 0; i < PARTS; i++)
			if (w->sealed.n[i])
				w->mem.idle(w->mem.opaque, (void *)(uintptr_t)w->sealed.p[i],
					    w->sealed.n[i]);
		if (!w->keep_io) {
			w->mem.idle(w->mem.opaque, w->out, w->out_cap);
			ZSTD_freeCCtx(w->cctx);
			w->cctx = NULL;
		}
	}
	__atomic_store_n(&w->sealed_len, 0, __ATOMIC_RELEASE);
	return err ? err : werr(w);
}

void mt_writer_discard_sealed(struct mt_writer *w, int err)
{
	if (err)
		set_err(w, err);
	__atomic_store_n(&w->sealed_len, 0, __ATOMIC_RELEASE);
}

int mt_writer_flush(struct mt_writer *w)
{
	struct sealed c;
	int err = mt_writer_write_sealed(w);
	if (err)
		return err;
	if (werr(w))
		return werr(w);
	if (w->used == 0)
		return 0;
	put_rss(w);
	current(w, &c);
	err = compress_write(w, &c);
	use_set(w, w->cur);
	return err;
}

static int seal(struct mt_writer *w);

int mt_writer_seal_old(struct mt_writer *w, uint64_t t, uint64_t age)
{
	if (werr(w))
		return werr(w);
	if (w->used == 0 || t < w->chunk_t || t - w->chunk_t < age)
		return 0;
	return w->wait ? seal(w) : mt_writer_flush(w);
}

int mt_writer_recover(struct mt_writer *w, uint64_t *off)
{
	int err = werr(w);
	if (err != MT_E_IO && err != MT_E_ZSTD)
		return err ? err : MT_E_ARG;
	if (!w->header_done)
		return err;
	__atomic_store_n(&w->sealed_len, 0, __ATOMIC_RELEASE);
	use_set(w, w->cur);
	w->events = w->fail_seq;
	w->written = w->fail_off;
	w->err_errno = 0;
	__atomic_store_n(&w->err, 0, __ATOMIC_RELEASE);
	*off = w->fail_off;
	return 0;
}

static void undo_restore(struct mt_writer *w);

uint64_t mt_writer_resume(struct mt_writer *w, uint64_t size)
{
	/* it died putting an event: the chunk as before it */
	undo_restore(w);
	w->undo.as = NULL;
	/* it died in a chunk's write_all: the chunk is whole in the file
	 * (every write returned), or what of it is there goes */
	if (w->wr_no != UINT64_MAX && w->wr_no != w->done_no) {
		if (w->written >= w->wr_end)
			w->done_no = w->wr_no;
		else
			w->written = w->fail_off;
	}
	/* a chunk written whole, and the process died before it let go of
	 * it: the sealed one (mt_writer_write_sealed), or the one being
	 * built (mt_writer_flush) */
	if (__atomic_load_n(&w->sealed_len, __ATOMIC_ACQUIRE) && w->sealed.no == w->done_no)
		__atomic_store_n(&w->sealed_len, 0, __ATOMIC_RELEASE);
	else if (w->used && w->begun == w->done_no)
		use_set(w, w->cur);
	/* (a write cut short within the last write(2) is not counted) */
	return size > w->written ? w->written : size;
}

void mt_writer_keep_full(struct mt_writer *w)
{
	w->keep_full = 1;
}

void mt_writer_keep_io(struct mt_writer *w, int on)
{
	w->keep_io = on;
}

void mt_writer_set_fd(struct mt_writer *w, int fd)
{
	w->fd = fd;
}

/* Deferred mode: hand the full chunk over and continue in the other buffer. */
static int seal(struct mt_writer *w)
{
	if (__atomic_load_n(&w->sealed_len, __ATOMIC_ACQUIRE))
		w->wait(w->wait_ctx);
	if (__atomic_load_n(&w->sealed_len, __ATOMIC_ACQUIRE))
		return set_err(w, MT_E_ARG);   /* wait() broke its contract */
	put_rss(w);
	current(w, &w->sealed);
	size_t total = chunk_total(w);
	use_set(w, w->cur ^ 1);
	__atomic_store_n(&w->sealed_len, total, __ATOMIC_RELEASE);
	w->seals++;
	return werr(w);
}

/*
 * The default quantum at time t: the power of two at or below t / 2^14,
 * between MT_TIME_QUANTUM_MIN and MT_TIME_QUANTUM_MAX. Early in a run (and
 * in a short one) times stay fine; later, ticks are never coarser than
 * 1/16,384 of the time elapsed, far finer than the ~1/1,000 of a run that
 * a timeline shows, and TIME records stay rare however fast events come.
 */
static uint64_t adaptive_quantum(uint64_t t)
{
	uint64_t q = t >> 14;

	if (q <= MT_TIME_QUANTUM_MIN)
		return MT_TIME_QUANTUM_MIN;
	if (q >= MT_TIME_QUANTUM_MAX)
		return MT_TIME_QUANTUM_MAX;
	return 1ull << (63 - __builtin_clzll(q));
}

/*
 * Makes room for a record of at most max bytes at time t, flushing the chunk
 * first when it is full or old, and starting a new chunk with CHUNK_BEGIN
 * when needed. t is quantized (and never goes back): when the quantized
 * clock moved since the last record, TIME is written first. Returns the
 * write position, or NULL with w->err set.
 */
static uint8_t *begin(struct mt_writer *w, uint64_t t, size_t max)
{
	uint64_t tq = w->time;

	if (werr(w))
		return NULL;
	/* Most records fall within the current quantum: no division. */
	if (MT_WRITER_UNLIKELY(t >= w->next_tick)) {
		uint64_t q = w->quantum ? w->quantum : adaptive_quantum(t);

		tq = t - t % q;
		if (tq < w->time)
			tq = w->time;
		w->next_tick = tq + q;
	}
	max += PREFIX_MAX;
	/* the caller's record goes in next: the events' count starts again */
	w->quick = 0;
	if (w->used > 0 &&
	    (chunk_total(w) + max > w->chunk_bytes || tq - w->chunk_t >= w->chunk_ns)) {
		if ((w->wait ? seal(w) : mt_writer_flush(w)) < 0)
			return NULL;
	}
	if (w->used == 0) {
		w->chunk_seq = w->events;
		w->chunk_t = tq;
		w->time = tq;
		w->thread = NO_THREAD;
		for (uint32_t m = w->ready; m; m &= m - 1) {
			struct addr_state *as = &w->states[__builtin_ctz(m)];

			for (int i = 0; i < 2; i++) {
				as->hist[i].base = as->hist[i].n;
				as->hist[i].last = 0;
			}
		}
		w->ended = 0;
		if (w->rss) {
			uint64_t rss = w->rss(w->rss_ctx);

			if (rss) {
				uint8_t *p = w->raw;

				*p++ = MT_REC_RSS;
				p += mt_put_uv(p, rss);
				w->used = (size_t)(p - w->raw);
			}
		}
	} else if (tq != w->time) {
		uint8_t *p = w->raw + w->used;
		*p++ = MT_REC_TIME;
		p += mt_put_uv(p, tq - w->time);
		w->used = (size_t)(p - w->raw);
		w->time = tq;
	}
	return w->raw + w->used;
}

/*
 * Makes address state st ready on its first use: its histories zeroed,
 * its side streams' buffers allocated (for both sets in deferred mode).
 * Returns 0, or MT_E_NOMEM as the sticky error.
 */
static int state_init(struct mt_writer *w, unsigned st)
{
	for (int b = 0; b < (w->wait ? 2 : 1); b++)
		for (int i = 1; i < MT_STREAMS; i++)
			if (!(w->sbuf[b][st][i] = w->mem.alloc(w->mem.opaque, w->raw_cap)))
				return set_err(w, MT_E_NOMEM);
	memset(&w->states[st], 0, sizeof(w->states[st]));
	for (int i = 1; i < MT_STREAMS; i++)
		w->side[st][i] = w->states[st].at[i] = w->sbuf[w->cur][st][i];
	w->ready |= 1u << st;
	return 0;
}

/* SWITCH to thread (its address state st ready) at p; the byte after it. */
static inline uint8_t *put_switch(struct mt_writer *w, uint8_t *p, uint32_t thread, unsigned st)
{
	*p++ = MT_REC_SWITCH;
	p += mt_put_uv(p, thread);
	w->thread = thread;
	w->as = &w->states[st];
	return p;
}

/*
 * An event's prefix, out of line: begin() (a new chunk, TIME), then SWITCH
 * when the thread changed, which takes the thread's address state; the
 * prefix is counted in, so the event's type byte goes at the position
 * returned. NULL with w->err set (the state could not be made).
 */
static uint8_t *begin_event_slow(struct mt_writer *w, uint64_t t, size_t max, uint32_t thread)
{
	uint8_t *p = begin(w, t, max);

	if (!p)
		return NULL;
	if (thread != w->thread) {
		unsigned st = thread & (MT_ADDR_STATES - 1);

		if (MT_WRITER_UNLIKELY(!(w->ready & 1u << st)) && state_init(w, st) < 0)
			return NULL;
		p = put_switch(w, p, thread, st);
	}
	w->used = (size_t)(p - w->raw);
	/* this event and the next quick ones fit (begin_event) */
	size_t total = chunk_total(w) + PREFIX_MAX + 2 * EVENT_MAX;
	w->quick = total <= w->chunk_bytes ? (w->chunk_bytes - total) / EVENT_MAX : 0;
	return p;
}

/*
 * Where an event of at most max bytes by thread goes: inline when the
 * quantized clock has not moved, the thread is the last event's and the
 * chunk certainly has room, the case of nearly every event. The room is
 * counted in events of EVENT_MAX bytes (quick) from the last time the
 * chunk's bytes were added up, so that they are not at every event; once
 * the count runs out, begin() tests the bytes themselves, as always: the
 * chunks end where they did.
 */
static inline uint8_t *begin_event(struct mt_writer *w, uint64_t t, size_t max, uint32_t thread)
{
	(void)max;
	if (MT_WRITER_LIKELY(t < w->next_tick && w->quick && !werr(w))) {
		if (MT_WRITER_LIKELY(thread == w->thread)) {
			w->quick--;
			return w->raw + w->used;
		}
		/* another thread's event: its SWITCH counts as one event of
		 * the room (it is shorter than EVENT_MAX), so threads that
		 * alternate do not add the chunk up at every event (churn,
		 * 8 threads: chunk_total was 3 % of the run) */
		unsigned st = thread & (MT_ADDR_STATES - 1);

		if (w->quick >= 2 && (w->ready & 1u << st)) {
			uint8_t *p = put_switch(w, w->raw + w->used, thread, st);

			w->used = (size_t)(p - w->raw);
			w->quick -= 2;
			return p;
		}
	}
	return begin_event_slow(w, t, max, thread);
}

static inline size_t hist_slot_of(uint64_t addr)
{
	return (size_t)((addr >> 4) * 0x9E3779B97F4A7C15ull >> 52) & (HIST_INDEX - 1);
}

/* An uv at p; the byte after it. */
static inline uint8_t *uv_at(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/*
 * The k of the address e's slot names in history h (1 = the latest), 0
 * when it names none in this chunk's last MT_ADDR_HISTORY: e is h's index
 * slot for addr.
 */
static inline uint64_t hist_k(const struct history *h, const struct hist_slot *e, uint64_t addr)
{
	uint64_t age = h->n - e->num;

	return e->addr == addr && e->num >= h->base && age <= MT_ADDR_HISTORY ? age : 0;
}

/* addr joins history h (slot: its index slot). */
static inline void hist_put(struct history *h, size_t slot, uint64_t addr)
{
	h->last = addr;
	h->index[slot].addr = addr;
	h->index[slot].num = h->n++;
}

/*
 * The k that names, in the allocated history, the block a free ends at
 * addr (slot: its index slot), 0 when none does. The entry must carry the
 * block's very stack and size, since the reader takes them from it: the
 * thread's latest allocation at addr may be an older block than the one
 * being freed, which another thread allocated there after it was freed.
 */
static inline uint64_t block_key(const struct addr_state *as, size_t slot, uint64_t addr,
				 uint64_t size, uint32_t stack)
{
	const struct hist_slot *e = &as->hist[0].index[slot];
	uint64_t k = hist_k(&as->hist[0], e, addr);
	size_t i = (size_t)(e->num % MT_ADDR_HISTORY);

	return k && as->astack[i] == stack && as->asize[i] == size ? k : 0;
}

/* A field of an event: uv v appended to side stream i of state as. */
static inline void put_field(struct addr_state *as, int i, uint64_t v)
{
	as->at[i] = uv_at(as->at[i], v);
}

/*
 * An address field (format.h ADDR): k, else 0 and the delta from the
 * latest address of history to, which addr then joins (slot: its index
 * slot). Returns k.
 */
static inline uint64_t put_addr(struct addr_state *as, struct history *to, size_t slot,
				uint64_t addr, uint64_t k)
{
	put_field(as, MT_STREAM_KEYS, k);
	if (!k) {
		int64_t d = (int64_t)(addr - to->last);

		put_field(as, MT_STREAM_DELTAS, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
	}
	hist_put(to, slot, addr);
	return k;
}

/* The allocation just put in as's allocated history: its stack and size. */
static inline void put_joined(struct addr_state *as, uint32_t stack, uint64_t size)
{
	size_t i = (size_t)((as->hist[0].n - 1) % MT_ADDR_HISTORY);

	as->astack[i] = stack;
	as->asize[i] = size;
}

/* The end of an event whose type byte is at p. */
static inline void end_event(struct mt_writer *w, uint8_t *p)
{
	w->used = (size_t)(p + 1 - w->raw);
	/* the count last: it commits the event (undo_restore) */
	__asm__ volatile("" ::: "memory");
	w->events++;
}

static size_t put_str(uint8_t *p, const char *s, size_t len)
{
	if (len > MT_MAX_STRING)
		len = MT_MAX_STRING;
	size_t n = mt_put_uv(p, len);
	memcpy(p + n, s, len);
	return n + len;
}

#define END_RECORD(w, p) ((w)->used = (size_t)((p) - (w)->raw))

int mt_writer_stack(struct mt_writer *w, uint64_t t, uint32_t id, unsigned fn, uint32_t tag,
		    const uint64_t *ips, unsigned n)
{
	if (n > MT_MAX_DEPTH || tag > MT_MAX_TAGS)
		return MT_E_RANGE;
	uint8_t *p = begin(w, t, 1 + 4 * MT_MAX_VARINT + (size_t)n * MT_MAX_VARINT);
	if (!p)
		return werr(w);
	*p++ = MT_REC_STACK;
	p += mt_put_uv(p, id);
	p += mt_put_uv(p, fn);
	p += mt_put_uv(p, n);
	uint64_t prev = 0;
	for (unsigned i = 0; i < n; i++) {
		p += mt_put_sv(p, (int64_t)(ips[i] - prev));
		prev = ips[i];
	}
	p += mt_put_uv(p, tag);
	END_RECORD(w, p);
	return 0;
}

int mt_writer_tag(struct mt_writer *w, uint64_t t, uint32_t id, uint32_t parent, const char *name)
{
	size_t len = strlen(name);

	if (!id || id > MT_MAX_TAGS || parent >= id || !len || len > MT_MAX_STRING)
		return MT_E_RANGE;
	uint8_t *p = begin(w, t, 1 + 3 * MT_MAX_VARINT + len);
	if (!p)
		return werr(w);
	*p++ = MT_REC_TAG;
	p += mt_put_uv(p, id);
	p += mt_put_uv(p, parent);
	p += put_str(p, name, len);
	END_RECORD(w, p);
	return 0;
}

int mt_writer_sample(struct mt_writer *w, uint64_t t, uint64_t mean)
{
	if (!mean || w->events)
		return MT_E_RANGE;
	uint8_t *p = begin(w, t, 1 + MT_MAX_VARINT);
	if (!p)
		return werr(w);
	*p++ = MT_REC_SAMPLE;
	p += mt_put_uv(p, mean);
	END_RECORD(w, p);
	return 0;
}

/*
 * Saves what an event record is about to change in as, where it cannot be
 * known again: where its streams and its record end, the histories'
 * counts and latest addresses, and the index slots of its addresses in
 * the allocations' history (s0) and the frees' (s1). Not what those slots
 * and the allocation's stack and size held: undo_restore empties them
 * instead. An index slot only finds an address's key (one it no longer
 * finds is written as a delta), and a block's stack and size are only
 * compared; their loads were two lines of 64 KiB arrays a save (perf,
 * stl with the drainer: 38 % of undo_save's samples). Stores only, in
 * order: the compiler may not move the state's changes above them.
 */
static __attribute__((noinline)) void undo_save(struct mt_writer *w, struct addr_state *as,
						size_t s0, size_t s1)
{
	w->undo.events = UINT64_MAX;
	__asm__ volatile("" ::: "memory");
	w->undo.as = as;
	w->undo.used = w->used;
	memcpy(w->undo.at, as->at, sizeof(w->undo.at));
	for (int h = 0; h < 2; h++) {
		w->undo.n[h] = as->hist[h].n;
		w->undo.last[h] = as->hist[h].last;
	}
	w->undo.slot[0] = s0;
	w->undo.slot[1] = s1;
	__asm__ volatile("" ::: "memory");
	w->undo.events = w->events;
	__asm__ volatile("" ::: "memory");
}

#define UNDO_SAVE(w, as, s0, s1)                                \
	do {                                                    \
		if (MT_WRITER_UNLIKELY((w)->undo_on))           \
			undo_save((w), (as), (s0), (s1));       \
	} while (0)

/*
 * An event begun (undo_save) and not ended: its changes undone. The index
 * slots it may have written are emptied, as a new writer's are, and the
 * stack and size it may have written for its allocation (at the number
 * its history count gives) are made to match no block: no block's size
 * is UINT64_MAX (such a request fails). No key can then name an entry it
 * wrote; the event is put again after this, and writes both anew.
 */
static void undo_restore(struct mt_writer *w)
{
	struct addr_state *as = w->undo.as;

	if (!as || w->undo.events != w->events)
		return;
	w->used = w->undo.used;      /* (end_event may have moved it) */
	memcpy(as->at, w->undo.at, sizeof(as->at));
	for (int h = 0; h < 2; h++) {
		as->hist[h].n = w->undo.n[h];
		as->hist[h].last = w->undo.last[h];
		as->hist[h].index[w->undo.slot[h]] = (struct hist_slot){ 0, 0 };
	}
	as->asize[as->hist[0].n % MT_ADDR_HISTORY] = UINT64_MAX;
}

void mt_writer_undo(struct mt_writer *w, int on)
{
	if (w->undo_on != on)
		w->undo_on = on;
}

int mt_writer_alloc(struct mt_writer *w, uint64_t t, uint64_t addr, uint64_t size,
		    uint32_t stack, uint32_t thread)
{
	uint8_t *p = begin_event(w, t, 1 + 4 * MT_MAX_VARINT, thread);

	if (!p)
		return werr(w);
	struct addr_state *as = w->as;
	size_t slot = hist_slot_of(addr);

	UNDO_SAVE(w, as, slot, slot);

	*p = MT_REC_ALLOC;
	put_field(as, MT_STREAM_STACKS, stack);
	put_field(as, MT_STREAM_SIZES, size);
	put_addr(as, &as->hist[0], slot, addr, hist_k(&as->hist[1], &as->hist[1].index[slot], addr));
	put_joined(as, stack, size);
	end_event(w, p);
	return 0;
}

int mt_writer_free_block(struct mt_writer *w, uint64_t t, uint64_t addr, uint64_t size,
			 uint32_t stack, uint32_t thread)
{
	uint8_t *p = begin_event(w, t, 1 + 4 * MT_MAX_VARINT, thread);

	if (!p)
		return werr(w);
	struct addr_state *as = w->as;
	size_t slot = hist_slot_of(addr);

	UNDO_SAVE(w, as, slot, slot);
	*p = MT_REC_FREE;
	/* BLOCK unless the address named its allocation (format.h FREE) */
	if (!put_addr(as, &as->hist[1], slot, addr, block_key(as, slot, addr, size, stack))) {
		put_field(as, MT_STREAM_STACKS, stack);
		put_field(as, MT_STREAM_SIZES, size);
	}
	end_event(w, p);
	return 0;
}

int mt_writer_realloc(struct mt_writer *w, uint64_t t, uint64_t old_addr, uint64_t old_size,
		      uint32_t old_stack, uint64_t new_addr, uint64_t size, uint32_t stack,
		      uint32_t thread)
{
	uint8_t *p = begin_event(w, t, 1 + 8 * MT_MAX_VARINT, thread);

	if (!p)
		return werr(w);
	struct addr_state *as = w->as;
	size_t os = hist_slot_of(old_addr), ns = hist_slot_of(new_addr);

	UNDO_SAVE(w, as, ns, os);
	*p = MT_REC_REALLOC;
	put_field(as, MT_STREAM_STACKS, stack);
	put_field(as, MT_STREAM_SIZES, size);
	/* the old block's key is chosen before the new address joins */
	uint64_t k = put_addr(as, &as->hist[1], os, old_addr,
			      block_key(as, os, old_addr, old_size, old_stack));
	put_addr(as, &as->hist[0], ns, new_addr,
		 hist_k(&as->hist[1], &as->hist[1].index[ns], new_addr));
	put_joined(as, stack, size);
	if (!k) {
		put_field(as, MT_STREAM_STACKS, old_stack);
		put_field(as, MT_STREAM_SIZES, old_size);
	}
	end_event(w, p);
	return 0;
}

int mt_writer_thread(struct mt_writer *w, uint64_t t, uint32_t index, uint32_t tid)
{
	uint8_t *p = begin(w, t, 1 + 2 * MT_MAX_VARINT);
	if (!p)
		return werr(w);
	*p++ = MT_REC_THREAD;
	p += mt_put_uv(p, index);
	p += mt_put_uv(p, tid);
	END_RECORD(w, p);
	return 0;
}

int mt_writer_thread_name(struct mt_writer *w, uint64_t t, uint32_t index, const char *name)
{
	uint8_t *p = begin(w, t, 1 + 2 * MT_MAX_VARINT + MT_MAX_STRING);
	if (!p)
		return werr(w);
	*p++ = MT_REC_THREAD_NAME;
	p += mt_put_uv(p, index);
	p += put_str(p, name, strlen(name));
	END_RECORD(w, p);
	return 0;
}

int mt_writer_module(struct mt_writer *w, uint64_t t, uint64_t base, const char *path,
		     const uint8_t *build_id, size_t build_id_len,
		     const uint64_t *segs, size_t nseg)
{
	if (build_id_len > MAX_BUILD_ID || nseg > MAX_SEGS)
		return MT_E_RANGE;
	uint8_t *p = begin(w, t, 1 + 5 * MT_MAX_VARINT + MT_MAX_STRING + build_id_len +
			   nseg * 2 * MT_MAX_VARINT);
	if (!p)
		return werr(w);
	*p++ = MT_REC_MODULE;
	p += mt_put_uv(p, base);
	p += put_str(p, path, strlen(path));
	p += put_str(p, (const char *)build_id, build_id_len);
	p += mt_put_uv(p, nseg);
	for (size_t i = 0; i < nseg; i++) {
		p += mt_put_uv(p, segs[2 * i]);
		p += mt_put_uv(p, segs[2 * i + 1]);
	}
	END_RECORD(w, p);
	return 0;
}

int mt_writer_unload(struct mt_writer *w, uint64_t t, uint64_t base)
{
	uint8_t *p = begin(w, t, 1 + 2 * MT_MAX_VARINT);
	if (!p)
		return werr(w);
	*p++ = MT_REC_UNLOAD;
	p += mt_put_uv(p, base);
	END_RECORD(w, p);
	return 0;
}

int mt_writer_snapshot(struct mt_writer *w, uint64_t t, uint32_t index, const char *label)
{
	uint8_t *p = begin(w, t, 1 + 3 * MT_MAX_VARINT + MT_MAX_STRING);
	if (!p)
		return werr(w);
	*p++ = MT_REC_SNAPSHOT;
	p += mt_put_uv(p, index);
	p += put_str(p, label, strlen(label));
	END_RECORD(w, p);
	w->events++;
	return 0;
}

/* The run's figures END and BASE both carry, in their order (format.h):
 * allocations, frees, bytes allocated, peak bytes, blocks and time. */
static size_t put_run_totals(uint8_t *p, const struct mt_totals *tot)
{
	uint8_t *q = p;

	q += mt_put_uv(q, tot->allocations);
	q += mt_put_uv(q, tot->frees);
	q += mt_put_uv(q, tot->bytes_allocated);
	q += mt_put_uv(q, tot->peak_bytes);
	q += mt_put_uv(q, tot->peak_blocks);
	q += mt_put_uv(q, tot->peak_time_ns);
	return (size_t)(q - p);
}

int mt_writer_end(struct mt_writer *w, uint64_t t, unsigned how, int64_t code,
		  const struct mt_totals *tot)
{
	uint8_t *p;

	/* the resident set as the run ends, before END (always the last) */
	put_rss(w);
	p = begin(w, t, 1 + 10 * MT_MAX_VARINT);
	if (!p)
		return werr(w);
	*p++ = MT_REC_END;
	p += mt_put_uv(p, how);
	p += mt_put_sv(p, code);
	p += put_run_totals(p, tot);
	p += mt_put_uv(p, tot->leaked_bytes);
	p += mt_put_uv(p, tot->leaked_blocks);
	END_RECORD(w, p);
	w->ended = 1;
	return 0;
}

int mt_writer_leak(struct mt_writer *w, uint64_t t, const struct mt_leak_entry *lost, size_t n,
		   int more, const struct mt_leak_totals *tot)
{
	size_t i = 0;

	do {
		size_t k = n - i > MT_LEAK_PER_RECORD ? MT_LEAK_PER_RECORD : n - i;
		int last = i + k == n && !more;
		uint64_t prev = 0;
		uint8_t *p = begin(w, t, 1 + (3 * k + 2 + 2 * MT_LEAK_KINDS) * MT_MAX_VARINT);

		if (!p)
			return werr(w);
		*p++ = MT_REC_LEAK;
		p += mt_put_uv(p, k);
		for (size_t j = 0; j < k; j++) {
			uint64_t a = lost[i + j].addr_kind & ~(uint64_t)3;

			p += mt_put_uv(p, (a - prev) << 2 | (lost[i + j].addr_kind & 3));
			p += mt_put_uv(p, lost[i + j].stack);
			p += mt_put_uv(p, lost[i + j].size);
			prev = a;
		}
		p += mt_put_uv(p, (uint64_t)last);
		if (last)
			for (int kind = 0; kind < MT_LEAK_KINDS; kind++) {
				p += mt_put_uv(p, tot->bytes[kind]);
				p += mt_put_uv(p, tot->blocks[kind]);
			}
		END_RECORD(w, p);
		i += k;
	} while (i < n);
	return 0;
}

int mt_writer_base(struct mt_writer *w, uint64_t t, const struct mt_base_entry *e, size_t n,
		   const struct mt_totals *tot)
{
	size_t i = 0;

	do {
		size_t k = n - i > MT_BASE_PER_RECORD ? MT_BASE_PER_RECORD : n - i;
		int last = i + k == n;
		uint8_t *p = begin(w, t, 1 + (3 * k + 2 + 6) * MT_MAX_VARINT);

		if (!p)
			return werr(w);
		*p++ = MT_REC_BASE;
		p += mt_put_uv(p, k);
		for (size_t j = 0; j < k; j++) {
			p += mt_put_uv(p, e[i + j].stack);
			p += mt_put_uv(p, e[i + j].bytes);
			p += mt_put_uv(p, e[i + j].blocks);
		}
		p += mt_put_uv(p, (uint64_t)last);
		if (last)
			p += put_run_totals(p, tot);
		END_RECORD(w, p);
		i += k;
	} while (i < n);
	return 0;
}

void mt_writer_new_file(struct mt_writer *w, int fd)
{
	w->fd = fd;
	w->written = 0;
	w->header_done = 0;
}

int mt_writer_stop(struct mt_writer *w, uint64_t t, const char *reason)
{
	uint8_t *p = begin(w, t, 1 + 2 * MT_MAX_VARINT + MT_MAX_STRING);
	if (!p)
		return werr(w);
	*p++ = MT_REC_STOP;
	p += put_str(p, reason, strlen(reason));
	END_RECORD(w, p);
	return 0;
}

uint64_t mt_writer_time(const struct mt_writer *w)
{
	return w->time;
}

uint64_t mt_writer_events(const struct mt_writer *w)
{
	return w->events;
}

size_t mt_writer_pending(const struct mt_writer *w)
{
	return chunk_total(w);
}

int mt_writer_error(const struct mt_writer *w)
{
	return werr(w);
}

int mt_writer_errno(const struct mt_writer *w)
{
	return werr(w) == MT_E_IO ? w->err_errno : 0;
}

int mt_writer_sealed_pending(const struct mt_writer *w)
{
	return __atomic_load_n(&w->sealed_len, __ATOMIC_ACQUIRE) != 0;
}

uint64_t mt_writer_seals(const struct mt_writer *w)
{
	return w->seals;
}

uint64_t mt_writer_written(const struct mt_writer *w)
{
	return w->written;
}
