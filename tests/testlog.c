/*
 * testlog.c - the test-only log encoder (see testlog.h). Included by the
 * tests (#include "testlog.c"): it is not a test program itself.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "format.h"
#include "testlog.h"

struct tl_buf {
	uint8_t *p;
	size_t len, cap;
};

struct testlog {
	struct tl_buf file, chunk;
	/* event fields (format.h CHUNK), i >= 1: each address state's
	 * (version 5; state 0's alone before) */
	struct tl_buf side[MT_ADDR_STATES][MT_STREAMS];
	uint64_t chunk_seq, chunk_time;   /* of the chunk being built */
	uint64_t time, events;
	uint32_t thread;           /* current thread (SWITCH state) */
	/* Address states of the chunk (format.h: one before version 5), each
	 * with histories [0] allocated, [1] freed (all of them, each address
	 * with the block allocated there; the encoder searches them, latest
	 * first). */
	struct tl_hent { uint64_t addr, size; uint32_t stack; } *hist[MT_ADDR_STATES][2];
	size_t nhist[MT_ADDR_STATES][2], histcap[MT_ADDR_STATES][2];
	int has_thread;            /* 0 at a chunk's start */
	size_t chunk_start_len;    /* chunk length right after CHUNK_BEGIN */
	size_t *offsets;
	size_t noffsets;
	unsigned version;          /* the header's: which fields STACK has */
	/* Version 4: the live blocks, for the block a free names. */
	struct tl_block { uint64_t addr, size; uint32_t stack; } *live;
	size_t nlive, livecap;
};

static void tl_put(struct tl_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void tl_byte(struct testlog *t, uint8_t v)
{
	tl_put(&t->chunk, &v, 1);
}

static void tl_uv(struct testlog *t, uint64_t v)
{
	uint8_t tmp[MT_MAX_VARINT];

	tl_put(&t->chunk, tmp, mt_put_uv(tmp, v));
}

static void tl_sv(struct testlog *t, int64_t v)
{
	uint8_t tmp[MT_MAX_VARINT];

	tl_put(&t->chunk, tmp, mt_put_sv(tmp, v));
}

/* The current thread's address state (format.h): one before version 5. */
static unsigned tl_state(const struct testlog *t)
{
	return t->version >= 5 ? t->thread % MT_ADDR_STATES : 0;
}

/* A field of an event, to side stream i of the current thread's state. */
static void tl_field(struct testlog *t, int i, uint64_t v)
{
	uint8_t tmp[MT_MAX_VARINT];

	tl_put(&t->side[tl_state(t)][i], tmp, mt_put_uv(tmp, v));
}

static void tl_str(struct testlog *t, const void *s, size_t n)
{
	tl_uv(t, n);
	tl_put(&t->chunk, s, n);
}

static void tl_begin(struct testlog *t)
{
	t->chunk.len = 0;
	for (int i = 1; i < MT_STREAMS; i++)
		for (int st = 0; st < MT_ADDR_STATES; st++)
			t->side[st][i].len = 0;
	t->has_thread = 0;
	memset(t->nhist, 0, sizeof(t->nhist));
	/* CHUNK_BEGIN goes in front at tl_flush, with the streams' lengths. */
	t->chunk_seq = t->events;
	t->chunk_time = t->time;
	t->chunk_start_len = 0;
}

struct testlog *tl_new_version(uint32_t pid, const char *cmdline, size_t len, unsigned version)
{
	struct testlog *t = calloc(1, sizeof(*t));
	uint8_t h[MT_HEADER_FIXED];

	if (!t)
		abort();
	t->version = version;
	memcpy(h, MT_MAGIC, MT_MAGIC_LEN);
	mt_put_u16(h + 8, (uint16_t)version);
	h[10] = 8;
	h[11] = 0;
	mt_put_u32(h + 12, pid);
	mt_put_u64(h + 16, 1700000000ull * 1000000000ull);
	mt_put_u32(h + 24, (uint32_t)len);
	tl_put(&t->file, h, sizeof(h));
	tl_put(&t->file, cmdline, len);
	tl_begin(t);
	return t;
}

struct testlog *tl_new(uint32_t pid, const char *cmdline, size_t len)
{
	return tl_new_version(pid, cmdline, len, TL_VERSION);
}

void tl_free(struct testlog *t)
{
	if (!t)
		return;
	free(t->file.p);
	free(t->chunk.p);
	for (int i = 1; i < MT_STREAMS; i++)
		for (int st = 0; st < MT_ADDR_STATES; st++)
			free(t->side[st][i].p);
	free(t->offsets);
	free(t->live);
	for (int i = 0; i < MT_ADDR_STATES; i++) {
		free(t->hist[i][0]);
		free(t->hist[i][1]);
	}
	free(t);
}

void tl_thread(struct testlog *t, uint32_t index, uint32_t tid)
{
	tl_byte(t, MT_REC_THREAD);
	tl_uv(t, index);
	tl_uv(t, tid);
}

void tl_thread_name(struct testlog *t, uint32_t index, const char *name)
{
	tl_byte(t, MT_REC_THREAD_NAME);
	tl_uv(t, index);
	tl_str(t, name, strlen(name));
}

void tl_stack_tagged(struct testlog *t, uint32_t id, unsigned fn, uint32_t tag, unsigned n,
		     const uint64_t *ips)
{
	uint64_t prev = 0;
	unsigned i;

	tl_byte(t, MT_REC_STACK);
	tl_uv(t, id);
	tl_uv(t, fn);
	tl_uv(t, n);
	for (i = 0; i < n; i++) {
		tl_sv(t, (int64_t)(ips[i] - prev));
		prev = ips[i];
	}
	if (t->version >= 4)
		tl_uv(t, tag);
}

void tl_stack(struct testlog *t, uint32_t id, unsigned fn, unsigned n, const uint64_t *ips)
{
	tl_stack_tagged(t, id, fn, 0, n, ips);
}

void tl_tag(struct testlog *t, uint32_t id, uint32_t parent, const char *name)
{
	tl_byte(t, MT_REC_TAG);
	tl_uv(t, id);
	tl_uv(t, parent);
	tl_str(t, name, strlen(name));
}

/* TIME when dt > 0: the record that follows happens dt ns later. */
static void tl_time(struct testlog *t, uint64_t dt)
{
	if (!dt)
		return;
	tl_byte(t, MT_REC_TIME);
	tl_uv(t, dt);
	t->time += dt;
}

/* SWITCH when an event's thread differs from the current one. */
static void tl_switch(struct testlog *t, uint32_t thread)
{
	if (t->has_thread && t->thread == thread)
		return;
	tl_byte(t, MT_REC_SWITCH);
	tl_uv(t, thread);
	t->thread = thread;
	t->has_thread = 1;
}

/* Version 4: the live block at addr, NULL before version 4 (a free of an
 * address not live cannot be written in version 4). */
static struct tl_block *tl_live(struct testlog *t, uint64_t addr)
{
	size_t i;

	if (t->version < 4)
		return NULL;
	for (i = 0; i < t->nlive && t->live[i].addr != addr; i++)
		;
	if (i == t->nlive)
		abort();
	return &t->live[i];
}

/*
 * An ADDR field against history h of the current thread's address state
 * (format.h); addr then joins history to, with the block (size, stack)
 * allocated there when to is 0. A free's address (blk, the block it ends)
 * names an entry only when the reader would take that very block from it
 * (version 5: the entry may be the thread's older block at the address).
 * Returns its k (0: a delta).
 */
static size_t tl_addr(struct testlog *t, int h, int to, uint64_t addr,
		      const struct tl_block *blk, uint64_t size, uint32_t stack)
{
	unsigned st = tl_state(t);
	struct tl_hent *hh = t->hist[st][h];
	size_t nh = t->nhist[st][h], nt = t->nhist[st][to];
	size_t found;
	size_t k;

	for (k = 1; k <= nh && k <= MT_ADDR_HISTORY; k++)
		if (hh[nh - k].addr == addr)
			break;
	found = k <= nh && k <= MT_ADDR_HISTORY ? k : 0;
	if (found && blk && t->version >= 5 &&
	    (hh[nh - k].size != blk->size || hh[nh - k].stack != blk->stack))
		found = 0;
	if (found) {
		tl_field(t, MT_STREAM_KEYS, k);
	} else {
		int64_t d = (int64_t)(addr - (nt ? t->hist[st][to][nt - 1].addr : 0));

		tl_field(t, MT_STREAM_KEYS, 0);
		tl_field(t, MT_STREAM_DELTAS, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
	}
	if (nt == t->histcap[st][to]) {
		t->histcap[st][to] = t->histcap[st][to] ? 2 * t->histcap[st][to] : 256;
		t->hist[st][to] = realloc(t->hist[st][to],
					  t->histcap[st][to] * sizeof(struct tl_hent));
		if (!t->hist[st][to])
			abort();
	}
	t->hist[st][to][nt].addr = addr;
	t->hist[st][to][nt].size = size;
	t->hist[st][to][nt].stack = stack;
	t->nhist[st][to]++;
	return found;
}

/* Version 4: a block becomes live (one at the address is replaced). */
static void tl_born(struct testlog *t, uint64_t addr, uint64_t size, uint32_t stack)
{
	if (t->version < 4)
		return;
	for (size_t i = 0; i < t->nlive; i++) {
		if (t->live[i].addr == addr) {
			t->live[i].size = size;
			t->live[i].stack = stack;
			return;
		}
	}
	if (t->nlive == t->livecap) {
		t->livecap = t->livecap ? 2 * t->livecap : 64;
		t->live = realloc(t->live, t->livecap * sizeof(*t->live));
		if (!t->live)
			abort();
	}
	t->live[t->nlive].addr = addr;
	t->live[t->nlive].size = size;
	t->live[t->nlive++].stack = stack;
}

/*
 * Version 4: the block blk a free ends, its fields written unless k named
 * it from the allocated history (the writer's rule, lib/writer.c); it is
 * no longer live.
 */
static void tl_block(struct testlog *t, struct tl_block *blk, size_t k)
{
	if (!blk)
		return;
	if (!k) {
		tl_field(t, MT_STREAM_STACKS, blk->stack);
		tl_field(t, MT_STREAM_SIZES, blk->size);
	}
	*blk = t->live[--t->nlive];
}

void tl_alloc(struct testlog *t, uint64_t dt, uint64_t addr, uint64_t size,
	      uint32_t stack, uint32_t thread)
{
	tl_time(t, dt);
	tl_switch(t, thread);
	tl_byte(t, MT_REC_ALLOC);
	tl_field(t, MT_STREAM_STACKS, stack);
	tl_field(t, MT_STREAM_SIZES, size);
	tl_addr(t, 1, 0, addr, NULL, size, stack);
	tl_born(t, addr, size, stack);
	t->events++;
}

void tl_free_block(struct testlog *t, uint64_t dt, uint64_t addr, uint32_t thread)
{
	tl_time(t, dt);
	tl_switch(t, thread);
	tl_byte(t, MT_REC_FREE);
	struct tl_block *blk = tl_live(t, addr);

	tl_block(t, blk, tl_addr(t, 0, 1, addr, blk, 0, 0));
	t->events++;
}

void tl_realloc(struct testlog *t, uint64_t dt, uint64_t old_addr, uint64_t new_addr,
		uint64_t size, uint32_t stack, uint32_t thread)
{
	tl_time(t, dt);
	tl_switch(t, thread);
	tl_byte(t, MT_REC_REALLOC);
	tl_field(t, MT_STREAM_STACKS, stack);
	tl_field(t, MT_STREAM_SIZES, size);
	struct tl_block *blk = tl_live(t, old_addr);
	size_t k = tl_addr(t, 0, 1, old_addr, blk, 0, 0);

	tl_addr(t, 1, 0, new_addr, NULL, size, stack);
	tl_block(t, blk, k);
	tl_born(t, new_addr, size, stack);
	t->events++;
}

void tl_module(struct testlog *t, uint64_t dt, uint64_t base, const char *path,
	       const uint8_t *build_id, size_t build_id_len, size_t nseg,
	       const uint64_t *segs)
{
	size_t i;

	tl_time(t, dt);
	tl_byte(t, MT_REC_MODULE);
	tl_uv(t, base);
	tl_str(t, path, strlen(path));
	tl_str(t, build_id, build_id_len);
	tl_uv(t, nseg);
	for (i = 0; i < 2 * nseg; i++)
		tl_uv(t, segs[i]);
}

void tl_rss(struct testlog *t, uint64_t dt, uint64_t bytes)
{
	tl_time(t, dt);
	tl_byte(t, MT_REC_RSS);
	tl_uv(t, bytes);
}

void tl_unload(struct testlog *t, uint64_t dt, uint64_t base)
{
	tl_time(t, dt);
	tl_byte(t, MT_REC_UNLOAD);
	tl_uv(t, base);
}

void tl_snapshot(struct testlog *t, uint64_t dt, uint32_t index, const char *label)
{
	tl_time(t, dt);
	tl_byte(t, MT_REC_SNAPSHOT);
	tl_uv(t, index);
	tl_str(t, label, strlen(label));
	t->events++;
}

void tl_end_totals(struct testlog *t, uint64_t dt, unsigned how, int64_t code,
		   const struct mt_totals *tot)
{
	tl_time(t, dt);
	tl_byte(t, MT_REC_END);
	tl_uv(t, how);
	tl_sv(t, code);
	tl_uv(t, tot->allocations);
	tl_uv(t, tot->frees);
	tl_uv(t, tot->bytes_allocated);
	tl_uv(t, tot->peak_bytes);
	tl_uv(t, tot->peak_blocks);
	tl_uv(t, tot->peak_time_ns);
	tl_uv(t, tot->leaked_bytes);
	tl_uv(t, tot->leaked_blocks);
}

void tl_end(struct testlog *t, uint64_t dt, unsigned how, int64_t code)
{
	static const struct mt_totals zero;

	tl_end_totals(t, dt, how, code, &zero);
}

void tl_stop(struct testlog *t, uint64_t dt, const char *reason)
{
	tl_time(t, dt);
	tl_byte(t, MT_REC_STOP);
	tl_str(t, reason, strlen(reason));
}

void tl_raw(struct testlog *t, const void *p, size_t n)
{
	tl_put(&t->chunk, p, n);
}

void tl_raw_file(struct testlog *t, const void *p, size_t n)
{
	tl_flush(t);
	tl_put(&t->file, p, n);
}

void tl_flush(struct testlog *t)
{
	ZSTD_CCtx *cctx;
	size_t bound, n;
	uint8_t h[MT_CHUNK_HEADER];
	uint8_t *out;
	struct tl_buf whole = { 0 };
	uint8_t tmp[MT_MAX_VARINT];
	uint8_t type = MT_REC_CHUNK_BEGIN;
	int i, st, nst = t->version >= 5 ? MT_ADDR_STATES : 1;

	if (t->chunk.len == t->chunk_start_len)
		return;
	/* CHUNK_BEGIN, RECORDS, then the side streams (each state's). */
	tl_put(&whole, &type, 1);
	tl_put(&whole, tmp, mt_put_uv(tmp, t->chunk_seq));
	tl_put(&whole, tmp, mt_put_uv(tmp, t->chunk_time));
	/* version 5: the mask of the states that have fields */
	uint64_t mask = 0;
	for (st = 0; st < nst; st++)
		for (i = 1; i < MT_STREAMS; i++)
			if (t->side[st][i].len)
				mask |= 1ull << st;
	if (t->version >= 5)
		tl_put(&whole, tmp, mt_put_uv(tmp, mask));
	else
		mask = 1;
	for (st = 0; st < nst; st++)
		for (i = 1; i < MT_STREAMS && (mask >> st & 1); i++)
			tl_put(&whole, tmp, mt_put_uv(tmp, t->side[st][i].len));
	tl_put(&whole, t->chunk.p, t->chunk.len);
	for (st = 0; st < nst; st++)
		for (i = 1; i < MT_STREAMS; i++)
			if (t->side[st][i].len)
				tl_put(&whole, t->side[st][i].p, t->side[st][i].len);
	bound = ZSTD_compressBound(whole.len);
	out = malloc(bound);
	cctx = ZSTD_createCCtx();
	if (!out || !cctx)
		abort();
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
	n = ZSTD_compress2(cctx, out, bound, whole.p, whole.len);
	if (ZSTD_isError(n))
		abort();
	ZSTD_freeCCtx(cctx);
	t->offsets = realloc(t->offsets, (t->noffsets + 1) * sizeof(*t->offsets));
	if (!t->offsets)
		abort();
	t->offsets[t->noffsets++] = t->file.len;
	memcpy(h, MT_CHUNK_MAGIC, 4);
	mt_put_u32(h + 4, (uint32_t)n);
	mt_put_u32(h + 8, (uint32_t)whole.len);
	tl_put(&t->file, h, sizeof(h));
	tl_put(&t->file, out, n);
	free(out);
	free(whole.p);
	tl_begin(t);
}

const uint8_t *tl_image(struct testlog *t, size_t *len)
{
	tl_flush(t);
	*len = t->file.len;
	return t->file.p;
}

size_t tl_nchunks(const struct testlog *t)
{
	return t->noffsets;
}

size_t tl_chunk_offset(const struct testlog *t, size_t k)
{
	return t->offsets[k];
}

uint64_t tl_events(const struct testlog *t)
{
	return t->events;
}

void tl_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		abort();
}

void tl_write(struct testlog *t, const char *path)
{
	size_t len;
	const uint8_t *p = tl_image(t, &len);

	tl_write_file(path, p, len);
}

/* ---- the tests' surroundings -------------------------------------------- */

const char *tl_top(void)
{
	static char buf[PATH_MAX];
	const char *t = getenv("MT_TOP");

	if (!buf[0] && !realpath(t && *t ? t : ".", buf))
		snprintf(buf, sizeof(buf), ".");
	return buf;
}

const char *tl_build(void)
{
	static char buf[PATH_MAX];
	const char *b = getenv("MT_BUILD");

	if (buf[0])
		return buf;
	if (!b || !*b)
		snprintf(buf, sizeof(buf), "%s/build", tl_top());
	else if (!realpath(b, buf))
		snprintf(buf, sizeof(buf), "%s", b);
	return buf;
}

uint64_t tl_rand(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}
