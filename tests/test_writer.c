/*
 * test_writer.c - unit tests of lib/writer: the bytes it puts in a file are
 * read back raw and checked against lib/format.h by a decoder written here
 * (not lib/reader.c): header fields, chunk framing (magic, sizes, one zstd
 * frame with content size and checksum that decompresses to exactly U
 * bytes, CHUNK_BEGIN first), every record field, the quantized clock (TIME)
 * and thread changes (SWITCH), chunk limits by size and by time, the
 * deferred (double-buffered) mode, the time clamp, write errors,
 * a writer resumed after its process was killed at random moments,
 * and that all memory comes from the allocator passed in. Not here: the recorder (tests/e2e/rec_*.sh).
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include <cmocka.h>

#include "error.h"
#include "format.h"
#include "writer.h"

struct fixture {
	char path[64];
	int fd;
	struct mt_writer_mem mem;
	long live_allocs;     /* allocations through mem not yet freed */
	long total_allocs;
	uint8_t *file;        /* the file read back */
	size_t len;
};

static void *count_alloc(void *opaque, size_t size)
{
	struct fixture *f = opaque;
	f->live_allocs++;
	f->total_allocs++;
	return malloc(size);
}

static void count_free(void *opaque, void *p)
{
	struct fixture *f = opaque;
	f->live_allocs--;
	free(p);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	strcpy(f->path, "/tmp/test_writer.XXXXXX");
	f->fd = mkstemp(f->path);
	if (f->fd < 0) {
		free(f);
		return -1;
	}
	f->mem.alloc = count_alloc;
	f->mem.free = count_free;
	f->mem.opaque = f;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	close(f->fd);
	unlink(f->path);
	free(f->file);
	free(f);
	return 0;
}

static void read_back(struct fixture *f)
{
	struct stat st;
	assert_int_equal(fstat(f->fd, &st), 0);
	free(f->file);
	f->len = (size_t)st.st_size;
	f->file = malloc(f->len + 1);
	assert_non_null(f->file);
	assert_int_equal(pread(f->fd, f->file, f->len, 0), (ssize_t)f->len);
}

/* ---- an independent decoder of the chunks ---------------------------------- */

struct rec {
	int type;
	uint64_t time;            /* absolute: the chunk's time at the record */
	uint64_t a, b, c, d, e;   /* fields in order, addresses absolute */
	uint64_t os, oz;          /* REALLOC: the old block's stack and size */
	char str[64];
	size_t slen;
	uint64_t ips[8];
	uint64_t k[2];            /* k of the ADDR fields (format.h), in order */
};

struct chunk {
	size_t off, c, u;
	uint64_t seq, t0;
	int nrec;
	int ntime, nswitch;       /* TIME and SWITCH records (not in recs) */
	uint64_t stream_len[MT_STREAMS];  /* side streams' lengths, all states' */
	struct rec *recs;
};

struct decoded {
	size_t header_len;
	int nchunks;
	struct chunk chunks[256];
	int nrec;                 /* over all chunks */
};

static uint64_t uv(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	assert_int_equal(mt_get_uv(p, end, &v), 0);
	return v;
}

static int64_t sv(const uint8_t **p, const uint8_t *end)
{
	int64_t v = 0;
	assert_int_equal(mt_get_sv(p, end, &v), 0);
	return v;
}

/*
 * Decodes one chunk into recs. TIME and SWITCH records are folded into the
 * state (counted in ntime / nswitch): every record gets the time then
 * current, every event (r->d) the thread then current.
 */
/* Address states of a chunk (format.h), each with histories [0] allocated
 * and [1] freed; cs: the current thread's (thread mod MT_ADDR_STATES). */
static uint64_t hist[MT_ADDR_STATES][2][1 << 16];
static uint64_t nhist[MT_ADDR_STATES][2];
static unsigned cs;
static uint64_t last_k[2];    /* the k of a record's address fields */
static unsigned nk;
/* The stack and size of each allocated address (history 0), for the frees
 * that name their block from there instead of writing it. */
static uint64_t hstack[MT_ADDR_STATES][1 << 16], hsize[MT_ADDR_STATES][1 << 16];

/* The side streams of the chunk being decoded (format.h CHUNK). */
static const uint8_t *sp[MT_ADDR_STATES][MT_STREAMS], *send[MT_ADDR_STATES][MT_STREAMS];

/* A field of an event, from side stream i. */
static uint64_t field(int i)
{
	return uv(&sp[cs][i], send[cs][i]);
}

/* An ADDR field against history h; the address then joins history to. */
static uint64_t addr_field(int h, int to)
{
	uint64_t k = field(MT_STREAM_KEYS), a;
	last_k[nk++ % 2] = k;
	if (k) {
		assert_true(k <= MT_ADDR_HISTORY && k <= nhist[cs][h]);
		a = hist[cs][h][nhist[cs][h] - k];
	} else {
		a = (nhist[cs][to] ? hist[cs][to][nhist[cs][to] - 1] : 0) +
			(uint64_t)sv(&sp[cs][MT_STREAM_DELTAS], send[cs][MT_STREAM_DELTAS]);
	}
	assert_true(nhist[cs][to] < (1 << 16));
	hist[cs][to][nhist[cs][to]++] = a;
	return a;
}

/* A freed block's stack and size: from history 0's slot k back, else the
 * streams. */
static void block_of(uint64_t k, uint64_t at, uint64_t *stack, uint64_t *size)
{
	if (k) {
		*stack = hstack[cs][at];
		*size = hsize[cs][at];
	} else {
		*stack = field(MT_STREAM_STACKS);
		*size = field(MT_STREAM_SIZES);
	}
}

static void decode_chunk(struct chunk *ch, const uint8_t *raw, size_t u)
{
	const uint8_t *p = raw, *end = raw + u;
	uint64_t time = 0, addr = 0, thread = UINT64_MAX;
	memset(nhist, 0, sizeof(nhist));
	cs = 0;
	ch->recs = calloc(u, sizeof(struct rec));   /* >= one byte per record */
	assert_non_null(ch->recs);
	assert_int_equal(*p, MT_REC_CHUNK_BEGIN);
	while (p < end) {
		struct rec *r = &ch->recs[ch->nrec++];
		r->type = *p++;
		switch (r->type) {
		case MT_REC_CHUNK_BEGIN: {
			assert_int_equal(ch->nrec, 1);
			ch->seq = uv(&p, end);
			ch->t0 = time = uv(&p, end);
			addr = 0;
			/* The side streams end the chunk: each address
			 * state's, in order. */
			uint64_t n[MT_ADDR_STATES][MT_STREAMS] = { { 0 } }, sum = 0;
			uint64_t mask = uv(&p, end);
			assert_true(mask < 1u << MT_ADDR_STATES);
			for (int st = 0; st < MT_ADDR_STATES; st++) {
				for (int i = 1; i < MT_STREAMS && (mask >> st & 1); i++) {
					n[st][i] = uv(&p, end);
					sum += n[st][i];
				}
			}
			assert_true(sum <= (uint64_t)(end - p));
			end -= sum;
			const uint8_t *q = end;
			for (int st = 0; st < MT_ADDR_STATES; st++) {
				for (int i = 1; i < MT_STREAMS; i++) {
					sp[st][i] = q;
					send[st][i] = q + n[st][i];
					q += n[st][i];
					ch->stream_len[i] += n[st][i];
				}
			}
			break;
		}
		case MT_REC_TIME: {
			uint64_t dt = uv(&p, end);
			assert_true(dt > 0);
			time += dt;
			ch->ntime++;
			ch->nrec--;
			continue;
		}
		case MT_REC_SWITCH:
			thread = uv(&p, end);
			cs = (unsigned)(thread % MT_ADDR_STATES);
			ch->nswitch++;
			ch->nrec--;
			continue;
		case MT_REC_STACK: {
			r->a = uv(&p, end);
			r->b = uv(&p, end);
			r->c = uv(&p, end);
			uint64_t prev = 0;
			for (uint64_t i = 0; i < r->c; i++) {
				prev += (uint64_t)sv(&p, end);
				if (i < 8)
					r->ips[i] = prev;
			}
			r->d = uv(&p, end);           /* tag path */
			break;
		}
		case MT_REC_TAG:
			r->a = uv(&p, end);
			r->b = uv(&p, end);
			r->slen = uv(&p, end);
			memcpy(r->str, p, r->slen < 63 ? r->slen : 63);
			p += r->slen;
			break;
		case MT_REC_ALLOC:
			assert_true(thread != UINT64_MAX);
			r->c = field(MT_STREAM_STACKS);
			r->b = field(MT_STREAM_SIZES);
			addr = addr_field(1, 0);
			hstack[cs][nhist[cs][0] - 1] = r->c;
			hsize[cs][nhist[cs][0] - 1] = r->b;
			r->a = addr;
			r->d = thread;
			break;
		case MT_REC_FREE: {
			assert_true(thread != UINT64_MAX);
			r->a = addr_field(0, 1);
			uint64_t k = last_k[(nk - 1) % 2];
			block_of(k, nhist[cs][0] - k, &r->c, &r->b);
			r->d = thread;
			break;
		}
		case MT_REC_REALLOC: {
			assert_true(thread != UINT64_MAX);
			r->c = field(MT_STREAM_STACKS);
			r->b = field(MT_STREAM_SIZES);
			r->a = addr_field(0, 1);
			uint64_t k = last_k[(nk - 1) % 2], at = nhist[cs][0] - k;
			addr = addr_field(1, 0);
			hstack[cs][nhist[cs][0] - 1] = r->c;
			hsize[cs][nhist[cs][0] - 1] = r->b;
			r->e = addr;
			r->d = thread;
			block_of(k, at, &r->os, &r->oz);
			break;
		}
		case MT_REC_THREAD:
			r->a = uv(&p, end);
			r->b = uv(&p, end);
			break;
		case MT_REC_MODULE: {
			r->a = uv(&p, end);
			r->slen = uv(&p, end);
			memcpy(r->str, p, r->slen < 63 ? r->slen : 63);
			p += r->slen;
			r->b = uv(&p, end);           /* build-id length */
			memcpy(&r->ips[0], p, r->b < 8 ? r->b : 8);
			p += r->b;
			r->c = uv(&p, end);           /* nseg */
			for (uint64_t i = 0; i < r->c; i++) {
				uint64_t s = uv(&p, end), n = uv(&p, end);
				if (i < 3) {
					r->ips[2 + 2 * i] = s;
					r->ips[3 + 2 * i] = n;
				}
			}
			break;
		}
		case MT_REC_UNLOAD:
		case MT_REC_RSS:
			r->a = uv(&p, end);
			break;
		case MT_REC_SNAPSHOT:
			r->a = uv(&p, end);
			r->slen = uv(&p, end);
			memcpy(r->str, p, r->slen < 63 ? r->slen : 63);
			p += r->slen;
			break;
		case MT_REC_END:
			r->a = uv(&p, end);
			r->b = (uint64_t)sv(&p, end);
			for (int i = 0; i < 8; i++)
				r->ips[i] = uv(&p, end);   /* the figures, in order */
			break;
		case MT_REC_STOP:
			r->slen = uv(&p, end);
			memcpy(r->str, p, r->slen < 63 ? r->slen : 63);
			p += r->slen;
			break;
		default:
			fail_msg("unknown record type %d", r->type);
		}
		r->time = time;
		if (r->type == MT_REC_ALLOC || r->type == MT_REC_FREE || r->type == MT_REC_REALLOC) {
			r->k[0] = last_k[r->type == MT_REC_REALLOC ? 0 : (nk - 1) % 2];
			r->k[1] = r->type == MT_REC_REALLOC ? last_k[1] : 0;
			nk = 0;
		}
		assert_true(p <= end);
	}
	/* Every side-stream byte belongs to an event. */
	for (int st = 0; st < MT_ADDR_STATES; st++)
		for (int i = 1; i < MT_STREAMS; i++)
			assert_true(sp[st][i] == send[st][i]);
}

/* Checks the framing of every chunk and decodes them. */
static void decode(struct fixture *f, struct decoded *d)
{
	read_back(f);
	memset(d, 0, sizeof(*d));
	assert_true(f->len >= MT_HEADER_FIXED);
	d->header_len = MT_HEADER_FIXED + mt_get_u32(f->file + 24);
	size_t off = d->header_len;
	while (off < f->len) {
		struct chunk *ch = &d->chunks[d->nchunks++];
		assert_true(d->nchunks < 256);
		assert_true(off + MT_CHUNK_HEADER <= f->len);
		assert_memory_equal(f->file + off, MT_CHUNK_MAGIC, 4);
		ch->off = off;
		ch->c = mt_get_u32(f->file + off + 4);
		ch->u = mt_get_u32(f->file + off + 8);
		assert_true(ch->c >= 1 && ch->c <= MT_MAX_CHUNK_COMPRESSED);
		assert_true(ch->u >= 1 && ch->u <= MT_MAX_CHUNK);
		assert_true(off + MT_CHUNK_HEADER + ch->c <= f->len);
		const uint8_t *frame = f->file + off + MT_CHUNK_HEADER;
		/* Exactly one frame, with content size and checksum. */
		assert_int_equal(ZSTD_findFrameCompressedSize(frame, ch->c), ch->c);
		ZSTD_frameHeader fh;
		assert_int_equal(ZSTD_getFrameHeader(&fh, frame, ch->c), 0);
		assert_int_equal(fh.frameContentSize, ch->u);
		assert_int_equal(fh.checksumFlag, 1);
		uint8_t *raw = malloc(ch->u + 1);
		assert_non_null(raw);
		assert_int_equal(ZSTD_decompress(raw, ch->u + 1, frame, ch->c), ch->u);
		decode_chunk(ch, raw, ch->u);
		d->nrec += ch->nrec;
		free(raw);
		off += MT_CHUNK_HEADER + ch->c;
	}
	assert_int_equal(off, f->len);
}

static void free_decoded(struct decoded *d)
{
	for (int i = 0; i < d->nchunks; i++)
		free(d->chunks[i].recs);
}

/* ---- tests ------------------------------------------------------------------ */

static void test_header(void **state)
{
	struct fixture *f = *state;
	static const char cmd[] = "prog\0-x\0arg two";   /* 3 args, 16 bytes */
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, NULL);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 4242, 1700000000123456789ull, cmd, sizeof(cmd)), 0);
	assert_int_equal(mt_writer_flush(w), 0);      /* nothing pending: no chunk */
	mt_writer_free(w);
	read_back(f);
	assert_int_equal(f->len, MT_HEADER_FIXED + sizeof(cmd));
	assert_memory_equal(f->file, "MEMTRAIL", 8);
	assert_int_equal(mt_get_u16(f->file + 8), MT_FORMAT_VERSION);
	assert_int_equal(f->file[10], sizeof(void *));
	assert_int_equal(f->file[11], 0);
	assert_int_equal(mt_get_u32(f->file + 12), 4242);
	assert_true(mt_get_u64(f->file + 16) == 1700000000123456789ull);
	assert_int_equal(mt_get_u32(f->file + 24), sizeof(cmd));
	assert_memory_equal(f->file + 28, cmd, sizeof(cmd));
}

static void test_records(void **state)
{
	struct fixture *f = *state;
	static const uint64_t ips[3] = { 0x401000, 0x400f00, 0x7f0000001234 };
	static const uint64_t segs[4] = { 0x400000, 0x2000, 0x600000, 0x100 };
	static const uint8_t bid[4] = { 0xde, 0xad, 0xbe, 0xef };
	static const struct mt_totals tot = { 1, 2, 3, 4, 5, 6, 7, 0x123456789ull };
	struct mt_writer_opts o = { .time_quantum_ns = 1 };
	struct decoded d;
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, &o);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "a", 2), 0);
	assert_int_equal(mt_writer_module(w, 5, 0x400000, "/bin/prog", bid, 4, segs, 2), 0);
	assert_int_equal(mt_writer_thread(w, 6, 0, 777), 0);
	assert_int_equal(mt_writer_stack(w, 7, 0, 1, 0, ips, 3), 0);
	assert_int_equal(mt_writer_alloc(w, 10, 0x7f00aa001000, 48, 0, 0), 0);
	assert_int_equal(mt_writer_alloc(w, 15, 0x5500000010, 0, 0, 0), 0);
	assert_int_equal(mt_writer_realloc(w, 20, 0x7f00aa001000, 48, 0, 0x5500000040, 4096, 0, 0), 0);
	assert_int_equal(mt_writer_free_block(w, 30, 0x5500000010, 0, 0, 0), 0);
	assert_int_equal(mt_writer_time(w), 30);
	assert_int_equal(mt_writer_snapshot(w, 40, 0, "phase one"), 0);
	assert_int_equal(mt_writer_unload(w, 45, 0x400000), 0);
	assert_int_equal(mt_writer_stop(w, 46, "disk full"), 0);
	assert_int_equal(mt_writer_end(w, 50, MT_END_SIGNAL, -11, &tot), 0);
	assert_int_equal(mt_writer_events(w), 5);
	assert_true(mt_writer_pending(w) > 0);
	assert_int_equal(mt_writer_flush(w), 0);
	assert_int_equal(mt_writer_pending(w), 0);
	mt_writer_free(w);

	decode(f, &d);
	assert_int_equal(d.nchunks, 1);
	struct rec *r = d.chunks[0].recs;
	assert_int_equal(d.chunks[0].nrec, 12);   /* CHUNK_BEGIN + the 11 above */
	assert_int_equal(d.chunks[0].seq, 0);
	assert_int_equal(d.chunks[0].t0, 5);
	assert_int_equal(r[1].type, MT_REC_MODULE);
	assert_int_equal(r[1].time, 5);
	assert_int_equal(r[1].a, 0x400000);
	assert_string_equal(r[1].str, "/bin/prog");
	assert_int_equal(r[1].b, 4);
	assert_memory_equal(&r[1].ips[0], bid, 4);
	assert_int_equal(r[1].c, 2);
	assert_int_equal(r[1].ips[2], 0x400000);
	assert_int_equal(r[1].ips[3], 0x2000);
	assert_int_equal(r[1].ips[4], 0x600000);
	assert_int_equal(r[1].ips[5], 0x100);
	assert_int_equal(r[2].type, MT_REC_THREAD);
	assert_int_equal(r[2].a, 0);
	assert_int_equal(r[2].b, 777);
	assert_int_equal(r[3].type, MT_REC_STACK);
	assert_int_equal(r[3].a, 0);
	assert_int_equal(r[3].b, 1);
	assert_int_equal(r[3].c, 3);
	assert_memory_equal(r[3].ips, ips, sizeof(ips));
	assert_int_equal(r[3].d, 0);              /* no tag path */
	assert_int_equal(r[4].type, MT_REC_ALLOC);
	assert_int_equal(r[4].time, 10);
	assert_true(r[4].a == 0x7f00aa001000);
	assert_int_equal(r[4].b, 48);
	assert_int_equal(r[4].c, 0);
	assert_int_equal(r[4].d, 0);
	/* Times 5 (chunk start), 6, 7, 10, 15, 20, 30, 40, 45, 46, 50: one
	 * TIME each after the first; thread 0 throughout: one SWITCH. */
	assert_int_equal(d.chunks[0].ntime, 10);
	assert_int_equal(d.chunks[0].nswitch, 1);
	assert_int_equal(r[5].type, MT_REC_ALLOC);
	assert_true(r[5].a == 0x5500000010);     /* a negative address delta */
	assert_int_equal(r[5].b, 0);
	assert_int_equal(r[6].type, MT_REC_REALLOC);
	assert_int_equal(r[6].time, 20);
	assert_true(r[6].a == 0x7f00aa001000);
	assert_true(r[6].e == 0x5500000040);
	assert_int_equal(r[6].b, 4096);
	assert_int_equal(r[6].c, 0);
	assert_int_equal(r[6].os, 0);
	assert_int_equal(r[6].oz, 48);
	assert_int_equal(r[7].type, MT_REC_FREE);
	assert_int_equal(r[7].time, 30);
	assert_true(r[7].a == 0x5500000010);
	assert_int_equal(r[7].b, 0);
	assert_int_equal(r[7].c, 0);
	assert_int_equal(r[8].type, MT_REC_SNAPSHOT);
	assert_int_equal(r[8].a, 0);
	assert_string_equal(r[8].str, "phase one");
	assert_int_equal(r[9].type, MT_REC_UNLOAD);
	assert_int_equal(r[9].a, 0x400000);
	assert_int_equal(r[10].type, MT_REC_STOP);
	assert_string_equal(r[10].str, "disk full");
	assert_int_equal(r[11].type, MT_REC_END);
	assert_int_equal(r[11].time, 50);
	assert_int_equal(r[11].a, MT_END_SIGNAL);
	assert_int_equal((int64_t)r[11].b, -11);
	assert_memory_equal(r[11].ips, &tot, sizeof(tot));
	free_decoded(&d);
	/* Everything the writer took from the allocator went back. */
	assert_true(f->total_allocs >= 3);
	assert_int_equal(f->live_allocs, 0);
}

/* TAG records and a STACK that names one; the limits of both. */
static void test_tags(void **state)
{
	struct fixture *f = *state;
	uint64_t ip = 0x401000;
	struct decoded d;
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, NULL);

	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "a", 2), 0);
	assert_int_equal(mt_writer_tag(w, 0, 1, 0, "parser"), 0);
	assert_int_equal(mt_writer_tag(w, 0, 2, 1, "lexer"), 0);
	assert_int_equal(mt_writer_tag(w, 0, 0, 0, "zero"), MT_E_RANGE);
	assert_int_equal(mt_writer_tag(w, 0, 3, 3, "self"), MT_E_RANGE);
	assert_int_equal(mt_writer_tag(w, 0, 3, 0, ""), MT_E_RANGE);
	assert_int_equal(mt_writer_stack(w, 0, 0, MT_FN_MALLOC, 2, &ip, 1), 0);
	assert_int_equal(mt_writer_stack(w, 0, 1, MT_FN_MALLOC, MT_MAX_TAGS + 1, &ip, 1),
			 MT_E_RANGE);
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);

	decode(f, &d);
	struct rec *r = d.chunks[0].recs;
	assert_int_equal(d.chunks[0].nrec, 4);
	assert_int_equal(r[1].type, MT_REC_TAG);
	assert_int_equal(r[1].a, 1);
	assert_int_equal(r[1].b, 0);
	assert_string_equal(r[1].str, "parser");
	assert_int_equal(r[2].type, MT_REC_TAG);
	assert_int_equal(r[2].a, 2);
	assert_int_equal(r[2].b, 1);
	assert_string_equal(r[2].str, "lexer");
	assert_int_equal(r[3].type, MT_REC_STACK);
	assert_int_equal(r[3].ips[0], ip);
	assert_int_equal(r[3].d, 2);
	free_decoded(&d);
}

/* Many events in small chunks: sizes stay under the limit, seq counts. */
static void test_chunk_size_limit(void **state)
{
	struct fixture *f = *state;
	struct mt_writer_opts o = { .level = 3, .chunk_bytes = 4096 };
	static const uint64_t ip = 0x1234;
	struct decoded d;
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, &o);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, &ip, 1), 0);
	for (unsigned i = 0; i < 5000; i++) {
		assert_int_equal(mt_writer_alloc(w, i, 0x10000 + 32 * (uint64_t)i, i, 0, 0), 0);
		assert_int_equal(mt_writer_free_block(w, i, 0x10000 + 32 * (uint64_t)i, i, 0, 0), 0);
	}
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);

	decode(f, &d);
	/* ALLOC is type, stack, size (1 byte below 128, else 2), k = 0 and an
	 * address delta of 1 byte (the first: 3); FREE of the latest ALLOC is
	 * type and k = 1: 128 * 5 + 4,872 * 6 + 2 + 5,000 * 2 = 39,874 bytes
	 * cannot fit in fewer than 10 chunks of 4,096. */
	assert_true(d.nchunks >= 10);
	uint64_t events = 0, last_time = 0;
	for (int c = 0; c < d.nchunks; c++) {
		struct chunk *ch = &d.chunks[c];
		assert_true(ch->u <= 4096);
		assert_int_equal(ch->seq, events);
		for (int i = 0; i < ch->nrec; i++) {
			struct rec *r = &ch->recs[i];
			assert_true(r->time >= last_time);
			last_time = r->time;
			if (r->type == MT_REC_ALLOC) {
				/* The i-th allocation: address and size as written. */
				uint64_t k = events / 2;
				assert_true(r->a == 0x10000 + 32 * k);
				assert_int_equal(r->b, k);
				/* Before 2^24 ns the default quantum is 1,024 ns. */
				assert_int_equal(r->time, k - k % 1024);
			}
			if (r->type == MT_REC_ALLOC || r->type == MT_REC_FREE)
				events++;
		}
	}
	assert_int_equal(events, 10000);
	/* The clock moves at 1,024, 2,048, 3,072 and 4,096 ns only (a chunk
	 * that starts after a move carries its time in CHUNK_BEGIN). */
	int ntime = 0;
	for (int c = 0; c < d.nchunks; c++)
		ntime += d.chunks[c].ntime;
	assert_true(ntime <= 4);
	free_decoded(&d);
}

/*
 * The quantized clock: a time becomes the multiple of the quantum at or
 * below it, TIME is written only when that moves, and events of other
 * threads get SWITCH only when the thread changes.
 */
static void test_time_quantum(void **state)
{
	struct fixture *f = *state;
	struct mt_writer_opts o = { .time_quantum_ns = 1000 };
	static const uint64_t ip = 0x1234;
	static const uint64_t times[] = { 10, 999, 1000, 1500, 1999, 7300, 7301, 5000, 20000 };
	static const uint64_t want[] = { 0, 0, 1000, 1000, 1000, 7000, 7000, 7000, 20000 };
	static const uint32_t threads[] = { 0, 0, 1, 1, 0, 0, 0, 2, 2 };
	struct decoded d;
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, &o);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, &ip, 1), 0);
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		assert_int_equal(mt_writer_alloc(w, times[i], 0x1000 + 16 * i, i, 0, threads[i]), 0);
		assert_int_equal(mt_writer_time(w), want[i]);
	}
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);

	decode(f, &d);
	assert_int_equal(d.nchunks, 1);
	struct chunk *ch = &d.chunks[0];
	assert_int_equal(ch->nrec, 1 + 1 + 9);
	for (int i = 0; i < 9; i++) {
		assert_int_equal(ch->recs[2 + i].time, want[i]);
		assert_int_equal(ch->recs[2 + i].d, threads[i]);
		assert_true(ch->recs[2 + i].a == 0x1000 + 16 * (uint64_t)i);
	}
	/* Distinct quantized times: 0 (chunk start), 1000, 7000, 20000. */
	assert_int_equal(ch->ntime, 3);
	/* Thread runs: 0, 1, 0, 2. */
	assert_int_equal(ch->nswitch, 4);
	free_decoded(&d);
}

/*
 * The default quantum: a power of two at or below t / 2^14, at least 1,024
 * and at most 2^20 ns.
 */
static void test_adaptive_quantum(void **state)
{
	struct fixture *f = *state;
	static const uint64_t ip = 0x1234;
	/* t, and t rounded down to its quantum: 1,024 below 2^24 ns; at 10 s,
	 * 10^10 / 2^14 = 610,351 -> 2^19; at 100 s the 2^20 cap. */
	static const uint64_t t[][2] = {
		{ 5000, 4096 },
		{ 16000100, 16000100 - 16000100 % 1024 },
		{ 10000000123ull, 10000000123ull - 10000000123ull % 524288 },
		{ 100000000007ull, 100000000007ull - 100000000007ull % 1048576 },
	};
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, NULL);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, &ip, 1), 0);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(mt_writer_alloc(w, t[i][0], 0x1000, 1, 0, 0), 0);
		assert_int_equal(mt_writer_time(w), t[i][1]);
	}
	mt_writer_free(w);
}

/*
 * Address histories: a free names the k-th latest allocated address, an
 * allocation the k-th latest freed one, a realloc both (its old block
 * joins the freed history first); anything else, or anything from an
 * earlier chunk, is k = 0 and a delta.
 */
static void test_addr_history(void **state)
{
	struct fixture *f = *state;
	static const uint64_t ip = 0x1234;
	struct decoded d;
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, NULL);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, &ip, 1), 0);
	assert_int_equal(mt_writer_alloc(w, 0, 0xa000, 1, 0, 0), 0);        /* 1: k 0 */
	assert_int_equal(mt_writer_alloc(w, 0, 0xb000, 1, 0, 0), 0);        /* 2: k 0 */
	assert_int_equal(mt_writer_alloc(w, 0, 0xc000, 1, 0, 0), 0);        /* 3: k 0 */
	assert_int_equal(mt_writer_free_block(w, 0, 0xa000, 1, 0, 0), 0);   /* 4: k 3 */
	assert_int_equal(mt_writer_alloc(w, 0, 0xa000, 1, 0, 0), 0);        /* 5: k 1 */
	assert_int_equal(mt_writer_free_block(w, 0, 0x9990, 1, 0, 0), 0);   /* 6: k 0 */
	assert_int_equal(mt_writer_free_block(w, 0, 0xc000, 1, 0, 0), 0);   /* 7: k 2 */
	/* old 0xb000 is the 3rd latest allocated; it then is the latest
	 * freed, new 0xc000 the 2nd latest freed. */
	assert_int_equal(mt_writer_realloc(w, 0, 0xb000, 1, 0, 0xc000, 9, 0, 0), 0);    /* 8 */
	assert_int_equal(mt_writer_realloc(w, 0, 0xc000, 9, 0, 0xc000, 10, 0, 0), 0);  /* 9: 1, 1 */
	assert_int_equal(mt_writer_flush(w), 0);
	/* A new chunk starts with empty histories. */
	assert_int_equal(mt_writer_free_block(w, 0, 0xa000, 1, 0, 0), 0);   /* k 0 */
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);

	decode(f, &d);
	assert_int_equal(d.nchunks, 2);
	struct rec *r = d.chunks[0].recs;
	static const uint64_t want_k[9][2] = {
		{ 0, 0 }, { 0, 0 }, { 0, 0 }, { 3, 0 }, { 1, 0 }, { 0, 0 }, { 2, 0 },
		{ 3, 2 }, { 1, 1 },
	};
	static const uint64_t want_a[9] = {
		0xa000, 0xb000, 0xc000, 0xa000, 0xa000, 0x9990, 0xc000, 0xb000, 0xc000,
	};
	assert_int_equal(d.chunks[0].nrec, 2 + 9);
	for (int i = 0; i < 9; i++) {
		assert_int_equal(r[2 + i].k[0], want_k[i][0]);
		assert_int_equal(r[2 + i].k[1], want_k[i][1]);
		assert_true(r[2 + i].a == want_a[i]);
	}
	assert_true(r[9].e == 0xc000 && r[10].e == 0xc000);
	assert_int_equal(d.chunks[1].recs[1].type, MT_REC_FREE);
	assert_int_equal(d.chunks[1].recs[1].k[0], 0);
	assert_true(d.chunks[1].recs[1].a == 0xa000);
	free_decoded(&d);
}

/*
 * Version 5: each thread's addresses in an address state of its own
 * (thread index mod MT_ADDR_STATES), whatever other threads do in between;
 * a free by one thread of a block another allocated at an address the
 * first thread's history holds from an older block of its own writes the
 * block (k = 0), since the reader would take the older block's.
 */
static void test_thread_states(void **state)
{
	struct fixture *f = *state;
	static const uint64_t ip = 0x1234;
	struct decoded d;
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, NULL);
	uint32_t t16 = MT_ADDR_STATES;   /* shares thread 0's state */

	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, &ip, 1), 0);
	assert_int_equal(mt_writer_stack(w, 0, 1, 0, 0, &ip, 1), 0);
	assert_int_equal(mt_writer_alloc(w, 0, 0xa000, 8, 0, 0), 0);              /* 1 */
	assert_int_equal(mt_writer_alloc(w, 0, 0x7000, 16, 1, 1), 0);             /* 2 */
	/* thread 1's allocation between does not count in thread 0's k */
	assert_int_equal(mt_writer_free_block(w, 0, 0xa000, 8, 0, 0), 0);         /* 3: k 1 */
	/* thread 1 takes the address thread 0 freed */
	assert_int_equal(mt_writer_alloc(w, 0, 0xa000, 16, 1, 1), 0);             /* 4: k 0 */
	/* thread 0 frees it: its own history's 0xa000 is its older block */
	assert_int_equal(mt_writer_free_block(w, 0, 0xa000, 16, 1, 0), 0);        /* 5: k 0 */
	assert_int_equal(mt_writer_alloc(w, 0, 0xa000, 8, 0, 0), 0);              /* 6: k 1 */
	/* thread 1 reallocs thread 0's block at the address of its own older */
	assert_int_equal(mt_writer_realloc(w, 0, 0xa000, 8, 0, 0xb000, 4, 1, 1), 0); /* 7: 0, 0 */
	assert_int_equal(mt_writer_free_block(w, 0, 0xb000, 4, 1, 1), 0);         /* 8: k 1 */
	assert_int_equal(mt_writer_alloc(w, 0, 0xc000, 8, 0, t16), 0);            /* 9: k 0 */
	assert_int_equal(mt_writer_free_block(w, 0, 0xc000, 8, 0, 0), 0);         /* 10: k 1 */
	/* thread 16's allocation is in thread 0's state */
	assert_int_equal(mt_writer_free_block(w, 0, 0x7000, 16, 1, 1), 0);        /* 11: k 3 */
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);

	decode(f, &d);
	assert_int_equal(d.nchunks, 1);
	struct rec *r = d.chunks[0].recs + 3;
	static const uint64_t want_k[11][2] = {
		{ 0, 0 }, { 0, 0 }, { 1, 0 }, { 0, 0 }, { 0, 0 }, { 1, 0 }, { 0, 0 },
		{ 1, 0 }, { 0, 0 }, { 1, 0 }, { 3, 0 },
	};
	static const uint64_t want_a[11] = {
		0xa000, 0x7000, 0xa000, 0xa000, 0xa000, 0xa000, 0xa000, 0xb000, 0xc000,
		0xc000, 0x7000,
	};
	assert_int_equal(d.chunks[0].nrec, 3 + 11);
	for (int i = 0; i < 11; i++) {
		assert_int_equal(r[i].k[0], want_k[i][0]);
		assert_int_equal(r[i].k[1], want_k[i][1]);
		assert_true(r[i].a == want_a[i]);
	}
	/* the blocks the frees name: the decoder's, from history or streams */
	assert_true(r[2].c == 0 && r[2].b == 8);
	assert_true(r[4].c == 1 && r[4].b == 16);
	assert_true(r[6].os == 0 && r[6].oz == 8 && r[6].e == 0xb000);
	assert_true(r[7].c == 1 && r[7].b == 4);
	assert_true(r[9].c == 0 && r[9].b == 8);
	assert_true(r[10].c == 1 && r[10].b == 16);
	free_decoded(&d);
}

/* Deferred mode: the wait callback writes the sealed chunk. */
static struct mt_writer *deferred_w;
static int waits;

static void wait_sealed(void *ctx)
{
	(void)ctx;
	waits++;
	assert_true(mt_writer_sealed_pending(deferred_w));
	assert_int_equal(mt_writer_write_sealed(deferred_w), 0);
}

/* mem.idle that ruins what it is given: the writer must not read it again
 * before writing it. */
static long idles;

static void poison_idle(void *opaque, void *p, size_t len)
{
	(void)opaque;
	memset(p, 0xa5, len);
	idles++;
}

/*
 * The same stream as test_chunk_size_limit, with chunks sealed and written
 * later: every other sealed chunk is written at once, the rest only when the
 * next chunk fills (through wait). The file must be the same sequence.
 * With idle, the events are 1 ms apart and written buffers that go idle
 * are poisoned: 1, chunks sealed by the clock every 50 ms, part-empty:
 * their buffers go idle once written, at most every 0.1 s; 2, the same
 * events in chunks sealed full (1 s of them would not fit), with
 * mt_writer_keep_full: more are coming, and the buffers never go idle;
 * 3, the same without it: they do.
 */
static void deferred_run(void **state, int idle)
{
	struct fixture *f = *state;
	struct mt_writer_opts o = { .level = 3, .chunk_bytes = 4096, .wait = wait_sealed,
				    .chunk_ns = idle == 1 ? 50000000ull : 0 };
	static const uint64_t ip = 0x1234;
	struct decoded d;
	if (idle)
		f->mem.idle = poison_idle;
	idles = 0;
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, &o);
	assert_non_null(w);
	if (idle == 1 || idle == 2)
		mt_writer_keep_full(w);
	deferred_w = w;
	waits = 0;
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, &ip, 1), 0);
	uint64_t seals = 0, dt = idle ? 1000000 : 1;
	for (unsigned i = 0; i < 5000; i++) {
		assert_int_equal(mt_writer_alloc(w, i * dt, 0x10000 + 32 * (uint64_t)i, i, 0, 0), 0);
		assert_int_equal(mt_writer_free_block(w, i * dt, 0x10000 + 32 * (uint64_t)i, i, 0, 0), 0);
		if (mt_writer_seals(w) != seals) {
			seals = mt_writer_seals(w);
			assert_true(mt_writer_sealed_pending(w));
			if (seals % 2)
				assert_int_equal(mt_writer_write_sealed(w), 0);
		}
	}
	assert_int_equal(mt_writer_flush(w), 0);
	assert_false(mt_writer_sealed_pending(w));
	mt_writer_free(w);
	assert_true(waits > 0);

	decode(f, &d);
	assert_int_equal((uint64_t)d.nchunks, seals + 1);
	uint64_t events = 0;
	for (int c = 0; c < d.nchunks; c++) {
		struct chunk *ch = &d.chunks[c];
		assert_true(ch->u <= 4096);
		assert_int_equal(ch->seq, events);
		for (int i = 0; i < ch->nrec; i++) {
			struct rec *r = &ch->recs[i];
			if (r->type == MT_REC_ALLOC) {
				uint64_t k = events / 2;
				assert_true(r->a == 0x10000 + 32 * k);
				assert_int_equal(r->b, k);
			}
			if (r->type == MT_REC_ALLOC || r->type == MT_REC_FREE)
				events++;
		}
	}
	assert_int_equal(events, 10000);
	free_decoded(&d);
	assert_int_equal(f->live_allocs, 0);
	/* without idle, none; with it, every other chunk (each spans
	 * 50 ms), and none of chunks sealed full unless they may */
	if (idle == 1)
		assert_true(idles > (long)seals / 4);
	else if (idle == 3)
		assert_true(idles > 0);
	else
		assert_int_equal(idles, 0);
	if (idle >= 2)
		assert_true(seals > 4);
}

static void test_deferred(void **state)
{
	deferred_run(state, 0);
}

static void test_deferred_idle(void **state)
{
	deferred_run(state, 1);
}

static void test_deferred_full(void **state)
{
	deferred_run(state, 2);
}

static void test_deferred_full_idle(void **state)
{
	deferred_run(state, 3);
}

/* A chunk holds at most chunk_ns of events; time never goes back. */
static void test_chunk_time_limit(void **state)
{
	struct fixture *f = *state;
	struct mt_writer_opts o = { .chunk_ns = 1000000000ull, .time_quantum_ns = 1 };
	static const uint64_t ip = 0x1234;
	struct decoded d;
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, &o);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, &ip, 1), 0);
	/* One event every 0.3 s for 3 s: chunks at 0-0.9, 1.2-2.1, 2.4-3.0. */
	for (uint64_t i = 0; i <= 10; i++)
		assert_int_equal(mt_writer_alloc(w, i * 300000000ull, 0x1000 * (i + 1), 1, 0, 0), 0);
	/* An earlier time is taken as the current one (no TIME). */
	assert_int_equal(mt_writer_free_block(w, 5, 0x1000, 1, 0, 0), 0);
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);

	decode(f, &d);
	assert_int_equal(d.nchunks, 3);
	assert_int_equal(d.chunks[0].t0, 0);
	assert_int_equal(d.chunks[1].t0, 1200000000ull);
	assert_int_equal(d.chunks[2].t0, 2400000000ull);
	assert_int_equal(d.chunks[1].seq, 4);
	assert_int_equal(d.chunks[2].seq, 8);
	for (int c = 0; c < d.nchunks; c++) {
		struct chunk *ch = &d.chunks[c];
		struct rec *last = &ch->recs[ch->nrec - 1];
		assert_true(last->time - ch->t0 < 1000000000ull);
	}
	struct chunk *ch = &d.chunks[2];
	assert_int_equal(ch->recs[ch->nrec - 1].type, MT_REC_FREE);
	assert_int_equal(ch->recs[ch->nrec - 1].time, 3000000000ull);
	free_decoded(&d);
}

static uint64_t fake_rss(void *ctx)
{
	return ++*(uint64_t *)ctx * 4096;
}

/*
 * With an rss callback, each chunk starts and ends with an RSS record of
 * the callback's value then, the last one just before END, which stays the
 * last record of the log (a reader of the last chunk alone finds END's
 * figures).
 */
static void test_rss(void **state)
{
	struct fixture *f = *state;
	uint64_t calls = 0;
	struct mt_writer_opts o = { .chunk_ns = 1000000000ull, .time_quantum_ns = 1,
				    .rss = fake_rss, .rss_ctx = &calls };
	static const uint64_t ip = 0x1234;
	struct mt_totals tot = { 0 };
	struct decoded d;
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, &o);

	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, &ip, 1), 0);
	/* two chunks: 0-0.6 s, 1.2 s-END */
	for (uint64_t i = 0; i <= 2; i++)
		assert_int_equal(mt_writer_alloc(w, i * 300000000ull, 0x1000 * (i + 1), 1, 0, 0), 0);
	assert_int_equal(mt_writer_alloc(w, 1200000000ull, 0x9000, 1, 0, 0), 0);
	assert_int_equal(mt_writer_end(w, 1300000000ull, MT_END_EXIT, 0, &tot), 0);
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);

	decode(f, &d);
	assert_int_equal(d.nchunks, 2);
	/* chunk 0: RSS 1 (its start) ... RSS 2 (its end); chunk 1: RSS 3, ...,
	 * RSS 4, END */
	assert_int_equal(d.chunks[0].recs[1].type, MT_REC_RSS);
	assert_int_equal(d.chunks[0].recs[1].a, 1 * 4096);
	assert_int_equal(d.chunks[0].recs[d.chunks[0].nrec - 1].type, MT_REC_RSS);
	assert_int_equal(d.chunks[0].recs[d.chunks[0].nrec - 1].a, 2 * 4096);
	assert_int_equal(d.chunks[1].recs[1].type, MT_REC_RSS);
	assert_int_equal(d.chunks[1].recs[1].a, 3 * 4096);
	assert_int_equal(d.chunks[1].recs[d.chunks[1].nrec - 1].type, MT_REC_END);
	assert_int_equal(d.chunks[1].recs[d.chunks[1].nrec - 2].type, MT_REC_RSS);
	assert_int_equal(d.chunks[1].recs[d.chunks[1].nrec - 2].a, 4 * 4096);
	assert_int_equal(calls, 4);
	free_decoded(&d);
}

/* A failing write: an error code, errno kept, and the writer stays broken. */
static void test_write_error(void **state)
{
	struct fixture *f = *state;
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		skip();
	(void)f;
	struct mt_writer *w = mt_writer_new(fd, &f->mem, NULL);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), MT_E_IO);
	assert_int_equal(mt_writer_error(w), MT_E_IO);
	assert_int_equal(mt_writer_errno(w), ENOSPC);
	assert_int_equal(mt_writer_alloc(w, 1, 0x10, 1, 0, 0), MT_E_IO);
	assert_int_equal(mt_writer_flush(w), MT_E_IO);
	assert_int_equal(mt_writer_written(w), 0);
	mt_writer_free(w);
	close(fd);
}

/*
 * mt_writer_seal_old: a chunk younger than the age stays open; an older
 * one is written at once, without waiting for the next record.
 */
static void test_seal_old(void **state)
{
	struct fixture *f = *state;
	static const uint64_t ip = 0x1234;
	struct mt_writer_opts o = { .time_quantum_ns = 1 };
	struct decoded d;
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, &o);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
	uint64_t hdr = mt_writer_written(w);
	assert_int_equal(mt_writer_seal_old(w, 0, 400), 0);    /* nothing open */
	assert_int_equal(mt_writer_stack(w, 1000, 0, 0, 0, &ip, 1), 0);
	for (uint64_t i = 0; i < 10; i++)
		assert_int_equal(mt_writer_alloc(w, 1000 + i, 0x1000 * (i + 1), 8, 0, 0), 0);
	assert_int_equal(mt_writer_seal_old(w, 1399, 400), 0);  /* 399 ns old */
	assert_int_equal(mt_writer_written(w), hdr);
	assert_int_equal(mt_writer_seal_old(w, 1400, 400), 0);  /* 400 ns old */
	assert_true(mt_writer_written(w) > hdr);
	assert_int_equal(mt_writer_pending(w), 0);
	assert_int_equal(mt_writer_free_block(w, 2000, 0x1000, 8, 0, 0), 0);
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);

	decode(f, &d);
	assert_int_equal(d.nchunks, 2);
	assert_int_equal(d.chunks[0].seq, 0);
	assert_int_equal(d.chunks[1].seq, 10);
	assert_int_equal(d.chunks[1].recs[d.chunks[1].nrec - 1].type, MT_REC_FREE);
	free_decoded(&d);
}

/*
 * mt_writer_recover after a failed chunk write: the chunk's records are
 * dropped, the offset where it began is given back, and the log can be
 * ended there with STOP and END, numbered after the last chunk written.
 */
static void test_recover(void **state)
{
	struct fixture *f = *state;
	static const uint64_t ip = 0x1234;
	struct mt_totals tot = { 0 };
	struct decoded d;
	uint64_t off = 0;
	int full = open("/dev/full", O_WRONLY);
	if (full < 0)
		skip();
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, NULL);
	assert_non_null(w);
	assert_int_equal(mt_writer_recover(w, &off), MT_E_ARG);  /* no error */
	assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, &ip, 1), 0);
	for (uint64_t i = 0; i < 5; i++)
		assert_int_equal(mt_writer_alloc(w, i, 0x1000 * (i + 1), 8, 0, 0), 0);
	assert_int_equal(mt_writer_flush(w), 0);
	uint64_t good = mt_writer_written(w);
	/* Three more events into a chunk that cannot be written. */
	for (uint64_t i = 5; i < 8; i++)
		assert_int_equal(mt_writer_alloc(w, i, 0x1000 * (i + 1), 8, 0, 0), 0);
	mt_writer_set_fd(w, full);
	assert_int_equal(mt_writer_flush(w), MT_E_IO);
	assert_int_equal(mt_writer_alloc(w, 9, 0x9000, 8, 0, 0), MT_E_IO);
	assert_int_equal(mt_writer_recover(w, &off), 0);
	assert_int_equal(off, good);
	assert_int_equal(mt_writer_error(w), 0);
	assert_int_equal(mt_writer_events(w), 5);
	mt_writer_set_fd(w, f->fd);
	assert_int_equal(ftruncate(f->fd, (off_t)off), 0);
	assert_int_equal(lseek(f->fd, (off_t)off, SEEK_SET), (off_t)off);
	assert_int_equal(mt_writer_stop(w, 10, "disk full"), 0);
	assert_int_equal(mt_writer_end(w, 10, MT_END_STOPPED, 0, &tot), 0);
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);
	close(full);

	decode(f, &d);
	assert_int_equal(d.nchunks, 2);
	assert_int_equal(d.chunks[1].seq, 5);
	struct chunk *ch = &d.chunks[1];
	assert_int_equal(ch->recs[0].type, MT_REC_CHUNK_BEGIN);
	assert_int_equal(ch->nrec, 3);
	assert_int_equal(ch->recs[1].type, MT_REC_STOP);
	assert_string_equal(ch->recs[1].str, "disk full");
	assert_int_equal(ch->recs[2].type, MT_REC_END);
	assert_int_equal(ch->recs[2].a, MT_END_STOPPED);
	free_decoded(&d);
	assert_int_equal(f->live_allocs, 0);
}

/*
 * A writer whose process is killed anywhere, resumed by another (the
 * recorder's spare drainer, mt_writer_resume, with mt_writer_undo on):
 * its memory shared, a child puts events as fast as it can and is
 * SIGKILLed after 0 to 3 ms, 60 times; each time the parent resumes it,
 * ends the log and decodes every chunk (side streams used up exactly,
 * framing, checksums), and each event decoded is the one the child put
 * at that place (addresses, sizes, the old block of a realloc), as many
 * as the writer counted. Without the undo, most rounds leave side-stream
 * bytes of a half-put event, or histories ahead of the records.
 */
static struct {
	uint8_t *base;
	size_t *used;             /* in the shared pages too: the child's
				     allocations are the parent's */
	size_t cap;
} shm;

static void *shm_alloc(void *opaque, size_t size)
{
	(void)opaque;
	size = (size + 63) & ~(size_t)63;
	if (*shm.used + size > shm.cap)
		return NULL;
	void *p = shm.base + *shm.used;
	*shm.used += size;
	return p;
}

static void shm_free(void *opaque, void *p)
{
	(void)opaque;
	(void)p;
}

/* Event e of the pattern: alloc a, realloc a -> b, free b, by threes. */
static uint64_t pat_a(uint64_t j) { return 0x100000 + (j % 4096) * 48; }
static uint64_t pat_b(uint64_t j) { return 0x900000 + (j % 2048) * 64; }
static uint64_t pat_size(uint64_t j) { return 8 + j % 13; }

static void put_pattern(struct mt_writer *w, uint64_t e)
{
	uint64_t j = e / 3;
	switch (e % 3) {
	case 0:
		(void)mt_writer_alloc(w, e, pat_a(j), pat_size(j), 0, 0);
		break;
	case 1:
		(void)mt_writer_realloc(w, e, pat_a(j), pat_size(j), 0, pat_b(j), pat_size(j) + 5, 0,
					0);
		break;
	default:
		(void)mt_writer_free_block(w, e, pat_b(j), pat_size(j) + 5, 0, 0);
	}
}

static void test_resume_killed(void **state)
{
	struct fixture *f = *state;
	static const uint64_t ip = 0x1234;
	struct mt_writer_mem mem = { shm_alloc, shm_free, NULL, NULL };
	uint64_t seed = 7;

	shm.cap = (size_t)256 << 20;
	shm.base = mmap(NULL, shm.cap, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(shm.base != MAP_FAILED);
	shm.used = (size_t *)shm.base;
	for (int round = 0; round < 60; round++) {
		struct mt_totals tot = { 0 };
		struct decoded d;
		struct stat st;

		*shm.used = 64;
		assert_int_equal(ftruncate(f->fd, 0), 0);
		assert_int_equal(lseek(f->fd, 0, SEEK_SET), 0);
		/* (chunks of some 10,000 events: the decoder's histories
		 * hold 65,536) */
		struct mt_writer_opts o = { .chunk_bytes = 65536 };
		struct mt_writer *w = mt_writer_new(f->fd, &mem, &o);
		assert_non_null(w);
		assert_int_equal(mt_writer_header(w, 1, 2, "", 0), 0);
		assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, &ip, 1), 0);
		mt_writer_undo(w, 1);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			for (uint64_t e = 0;; e++)
				put_pattern(w, e);
		}
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		struct timespec nap = { 0, (long)(seed % 3000000) };
		nanosleep(&nap, NULL);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, NULL, 0), pid);

		assert_int_equal(fstat(f->fd, &st), 0);
		uint64_t keep = mt_writer_resume(w, (uint64_t)st.st_size);
		assert_true(keep <= (uint64_t)st.st_size);
		assert_int_equal(ftruncate(f->fd, (off_t)keep), 0);
		assert_int_equal(lseek(f->fd, (off_t)keep, SEEK_SET), (off_t)keep);
		/* and the writer goes on, as the spare does: its records
		 * name addresses by the histories the undo left */
		uint64_t events = mt_writer_events(w);
		for (uint64_t k = 0; k < 3000; k++)
			put_pattern(w, events + k);
		assert_int_equal(mt_writer_events(w), events + 3000);
		events += 3000;
		assert_int_equal(mt_writer_end(w, events + 1, MT_END_EXIT, 0, &tot), 0);
		assert_int_equal(mt_writer_flush(w), 0);
		mt_writer_free(w);

		decode(f, &d);
		uint64_t e = 0;
		for (int c = 0; c < d.nchunks; c++) {
			for (int i = 0; i < d.chunks[c].nrec; i++) {
				const struct rec *r = &d.chunks[c].recs[i];
				uint64_t j = e / 3;
				if (r->type == MT_REC_ALLOC) {
					assert_int_equal(e % 3, 0);
					assert_int_equal(r->a, pat_a(j));
					assert_int_equal(r->b, pat_size(j));
				} else if (r->type == MT_REC_REALLOC) {
					assert_int_equal(e % 3, 1);
					assert_int_equal(r->a, pat_a(j));
					assert_int_equal(r->e, pat_b(j));
					assert_int_equal(r->b, pat_size(j) + 5);
					assert_int_equal(r->oz, pat_size(j));
				} else if (r->type == MT_REC_FREE) {
					assert_int_equal(e % 3, 2);
					assert_int_equal(r->a, pat_b(j));
					assert_int_equal(r->b, pat_size(j) + 5);
				} else {
					continue;
				}
				e++;
			}
		}
		assert_int_equal(e, events);
		free_decoded(&d);
	}
	munmap(shm.base, shm.cap);
}

/* Limits of the format are refused, not written. */
static void test_range(void **state)
{
	struct fixture *f = *state;
	static uint64_t ips[MT_MAX_DEPTH + 1];
	struct mt_writer *w = mt_writer_new(f->fd, &f->mem, NULL);
	assert_non_null(w);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, ips, MT_MAX_DEPTH + 1), MT_E_RANGE);
	assert_int_equal(mt_writer_stack(w, 0, 0, 0, 0, ips, MT_MAX_DEPTH), 0);
	mt_writer_free(w);
	mt_writer_free(NULL);
	assert_int_equal(f->live_allocs, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunk_size_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_quantum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adaptive_quantum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_addr_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deferred, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deferred_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deferred_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deferred_full_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunk_time_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seal_old, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
