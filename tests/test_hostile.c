/*
 * test_hostile.c - the reader, replay and summary (lib/) against hostile
 * logs: a real log recorded at test time, cut at every byte of its first and
 * last 4 KiB and at 100 random offsets, with bytes flipped at random, and
 * hand-made headers and chunks with absurd fields. Each case must give a
 * result or one clear MT_E_* code, never a crash.
 *
 * The truth the results are checked against is derived independently of
 * lib/reader.c and lib/replay.c: this file walks the chunk headers itself
 * (format.h CHUNK), decompresses each chunk with zstd directly and reads its
 * CHUNK_BEGIN seq, the number of events in all earlier chunks. A log cut at
 * offset X must replay exactly the events of the chunks that end at or
 * before X; a log whose chunk k has a changed header or decodes (by zstd,
 * here) to different content, exactly those before k.
 *
 * Not for: well-formed logs record by record (test_replay.c, test_reader.c),
 * the CLI's messages (tests/e2e/hostile_cli.sh), coverage-guided fuzzing
 * (tests/fuzz/). Random choices use a fixed-seed generator of its own, so a
 * failure repeats on every machine.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_frameHeaderSize */
#include <zstd.h>

#include "error.h"
#include "format.h"
#include "replay.h"
#include "session.h"
#include "summary.h"
#include "testlog.c"

#define MAX_CHUNKS 4096

/* One replay's outcome. */
struct outcome {
	int open_rc;
	uint64_t open_off;
	int run_rc;
	struct mt_summary_info info;
	struct mt_end end;
};

/* The real log and what this file derived from it on its own. */
struct fixture {
	char dir[64];
	char log[128];        /* the recording */
	char work[128];       /* scratch file for the variants */
	uint8_t *data;
	size_t size;
	size_t hdr_len;       /* 28 + L */
	size_t nchunks;
	size_t start[MAX_CHUNKS], end[MAX_CHUNKS];
	uint64_t seq[MAX_CHUNKS];
	struct outcome full;  /* the whole log, replayed */
	int have_full;
};

static struct fixture *fx;

/* A fixed sequence on every platform. */
static uint64_t rng_state = 0x6d656d747261696cull;

static uint64_t rng(void)
{
	return tl_rand(&rng_state);
}

/*
 * Records a real program into fx->log: a short python run that sleeps
 * twice for over a second, so the log has three chunks (the writer starts a
 * chunk when an event comes a second after the chunk's start); without
 * python, the phases sample (one chunk); without a recorder, the checked-in
 * log of the phases sample.
 */
static int record(struct fixture *f)
{
	static const char py[] =
		"import time\n"
		"x = [str(i) * 3 for i in range(3000)]\n"
		"time.sleep(1.05)\n"
		"y = {i: [i] for i in range(3000)}\n"
		"time.sleep(1.05)\n"
		"del x\n"
		"print(len(y))\n";
	char *cmd, path[128];
	const char *t = tl_top(), *b = tl_build();
	FILE *p;
	int rc;

	snprintf(path, sizeof(path), "%s/prog.py", f->dir);
	p = fopen(path, "w");
	if (!p || fputs(py, p) < 0 || fclose(p) != 0)
		return -1;
	if (asprintf(&cmd,
		 "cd '%s' && if [ -x /usr/bin/python3 ] && [ -f '%s/libmemtrail.so' ]; then "
		 "MEMTRAIL_OUTPUT='%s' LD_PRELOAD='%s/libmemtrail.so' /usr/bin/python3 prog.py; "
		 "elif [ -x '%s/samples/phases' ] && [ -f '%s/libmemtrail.so' ]; then "
		 "MEMTRAIL_OUTPUT='%s' LD_PRELOAD='%s/libmemtrail.so' '%s/samples/phases'; "
		 "else cp '%s/tests/e2e/cli_phases.data' '%s'; fi >/dev/null 2>&1",
		 f->dir, b, f->log, b, b, b, f->log, b, b, t, f->log) < 0)
		return -1;
	rc = system(cmd);
	free(cmd);
	if (rc != 0)
		return -1;
	return access(f->log, R_OK);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/*
 * The chunk layout, from format.h alone: each chunk's extent, and the seq of
 * its CHUNK_BEGIN, read from a zstd decompression done here.
 */
static int derive_layout(struct fixture *f)
{
	size_t off;

	if (f->size < MT_HEADER_FIXED || memcmp(f->data, MT_MAGIC, MT_MAGIC_LEN) != 0)
		return -1;
	f->hdr_len = MT_HEADER_FIXED + mt_get_u32(f->data + 24);
	off = f->hdr_len;
	while (off < f->size) {
		uint32_t c, u;
		uint8_t *raw;
		const uint8_t *p;
		uint64_t seq;

		if (f->nchunks == MAX_CHUNKS || off + MT_CHUNK_HEADER > f->size ||
		    memcmp(f->data + off, MT_CHUNK_MAGIC, 4) != 0)
			return -1;
		c = mt_get_u32(f->data + off + 4);
		u = mt_get_u32(f->data + off + 8);
		if (off + MT_CHUNK_HEADER + c > f->size)
			return -1;
		raw = malloc(u);
		if (!raw || ZSTD_decompress(raw, u, f->data + off + MT_CHUNK_HEADER, c) != u ||
		    raw[0] != MT_REC_CHUNK_BEGIN) {
			free(raw);
			return -1;
		}
		p = raw + 1;
		if (mt_get_uv(&p, raw + u, &seq) < 0) {
			free(raw);
			return -1;
		}
		free(raw);
		f->start[f->nchunks] = off;
		f->end[f->nchunks] = off + MT_CHUNK_HEADER + c;
		f->seq[f->nchunks] = seq;
		f->nchunks++;
		off += MT_CHUNK_HEADER + c;
	}
	return f->nchunks ? 0 : -1;
}

/*
 * Opens the file at path as a replay (the header's verdict: open_rc and
 * open_off) and, when that works, as a session counting the run's figures
 * (run_rc, info, end).
 */
static void replay_file(const char *path, struct outcome *o)
{
	static const struct mt_session_opts figures = { .figures_only = 1 };
	struct mt_replay *r = NULL;
	struct mt_session *ses = NULL;
	struct mt_summary *s;

	memset(o, 0, sizeof(*o));
	o->open_rc = mt_replay_open(path, &r, &o->open_off);
	if (o->open_rc < 0)
		return;
	assert_non_null(r);
	mt_replay_free(r);
	o->run_rc = mt_session_open(path, &figures, &ses, NULL);
	if (o->run_rc < 0)
		return;
	s = mt_summary_new();
	assert_non_null(s);
	assert_int_equal(mt_summary_of_session(s, ses), 0);
	o->info = *mt_summary_info(s);
	o->info.command = NULL;          /* owned by s: not kept */
	o->info.snapshots = NULL;
	o->end = *mt_session_end(ses);
	o->end.stop_reason = NULL;
	mt_summary_free(s);
	mt_session_free(ses);
}

/* Writes len bytes of buf to the scratch file and replays it. */
static void replay_bytes(const uint8_t *buf, size_t len, struct outcome *o)
{
	tl_write_file(fx->work, buf, len);
	replay_file(fx->work, o);
}

static int group_setup(void **state)
{
	(void)state;
	fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/mt-test-hostile.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->log, sizeof(fx->log), "%s/real.data", fx->dir);
	snprintf(fx->work, sizeof(fx->work), "%s/work.data", fx->dir);
	if (record(fx) < 0)
		return -1;
	fx->data = slurp(fx->log, &fx->size);
	if (!fx->data || derive_layout(fx) < 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd) != 0)
		return -1;
	free(fx->data);
	free(fx);
	return 0;
}

/* Each test starts from the same random sequence and the whole log's figures. */
static int setup(void **state)
{
	*state = fx;
	rng_state = 0x6d656d747261696cull;
	if (!fx->have_full) {
		replay_file(fx->log, &fx->full);
		fx->have_full = 1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return 0;
}

/* The complete recording replays cleanly; its chunks agree with the seqs. */
static void test_full_log(void **state)
{
	struct fixture *f = *state;
	struct outcome *o = &f->full;

	replay_file(f->log, o);
	assert_int_equal(o->open_rc, 0);
	assert_int_equal(o->run_rc, 0);
	assert_true(o->end.clean);
	assert_false(o->end.truncated);
	assert_int_equal(o->end.error, 0);
	assert_int_equal(o->end.good_bytes, f->size);
	assert_int_equal(o->info.events, o->end.events);
	assert_true(o->info.allocations > 0);
	/* seq of chunk 0 is 0, later ones grow, none beyond the whole log */
	assert_int_equal(f->seq[0], 0);
	for (size_t k = 1; k < f->nchunks; k++)
		assert_true(f->seq[k] >= f->seq[k - 1]);
	assert_true(f->seq[f->nchunks - 1] <= o->end.events);
	print_message("real log: %zu bytes, header %zu, %zu chunk(s), %llu events\n",
		      f->size, f->hdr_len, f->nchunks, (unsigned long long)o->end.events);
}

/* The events of the chunks wholly inside [0, len), and how many chunks. */
static uint64_t events_before(const struct fixture *f, size_t len, size_t *complete)
{
	size_t k = 0;

	while (k < f->nchunks && f->end[k] <= len)
		k++;
	*complete = k;
	return k == f->nchunks ? f->full.end.events : f->seq[k];
}

/* Figures of a partial replay can never exceed the whole log's. */
static void assert_within_full(const struct outcome *o)
{
	const struct mt_summary_info *a = &o->info, *full = &fx->full.info;

	assert_true(o->end.events <= fx->full.end.events);
	assert_true(a->events <= full->events);
	assert_true(a->allocations <= full->allocations);
	assert_true(a->frees <= full->frees);
	assert_true(a->bytes_allocated <= full->bytes_allocated);
	assert_true(a->peak_bytes <= full->peak_bytes);
	assert_true(a->nsnapshots <= full->nsnapshots);
}

/* The log cut after len bytes. */
static void check_prefix(size_t len)
{
	struct outcome o;
	size_t complete;
	uint64_t expect;

	replay_bytes(fx->data, len, &o);
	if (len < fx->hdr_len) {
		/* no complete header: one error, at the header */
		if (len < MT_MAGIC_LEN && o.open_rc == MT_E_MAGIC)
			return;
		if (o.open_rc != MT_E_TRUNCATED)
			print_message("cut at %zu: open returned %d\n", len, o.open_rc);
		assert_int_equal(o.open_rc, MT_E_TRUNCATED);
		return;
	}
	if (o.open_rc != 0 || o.run_rc != 0)
		print_message("cut at %zu: open %d, run %d\n", len, o.open_rc, o.run_rc);
	assert_int_equal(o.open_rc, 0);
	assert_int_equal(o.run_rc, 0);
	expect = events_before(fx, len, &complete);
	if (o.end.events != expect)
		print_message("cut at %zu: %llu events, expected %llu\n", len,
			      (unsigned long long)o.end.events, (unsigned long long)expect);
	assert_int_equal(o.end.events, expect);
	assert_int_equal(o.info.events, expect);
	assert_int_equal(o.end.good_bytes, complete ? fx->end[complete - 1] : fx->hdr_len);
	assert_within_full(&o);
	if (len == fx->size) {
		assert_true(o.end.clean);
		assert_false(o.end.truncated);
		return;
	}
	/* the END record is in the last chunk: any cut loses it */
	assert_false(o.end.clean);
	assert_false(o.info.clean);
	assert_true(o.end.truncated);
	assert_true(o.info.truncated);
	if (len == (complete ? fx->end[complete - 1] : fx->hdr_len))
		assert_int_equal(o.end.error, 0);   /* only END is missing */
	else
		assert_int_equal(o.end.error, MT_E_TRUNCATED);
}

/* Every cut in the first 4 KiB (the header, the start of chunk 0). */
static void test_truncate_head(void **state)
{
	struct fixture *f = *state;
	size_t n = f->size < 4096 ? f->size : 4096;

	for (size_t len = 0; len <= n; len++)
		check_prefix(len);
}

/* Every cut in the last 4 KiB (the last chunk, with END). */
static void test_truncate_tail(void **state)
{
	struct fixture *f = *state;
	size_t from = f->size > 4096 ? f->size - 4096 : 0;

	for (size_t len = from; len <= f->size; len++)
		check_prefix(len);
}

/* 100 cuts anywhere, and every chunk boundary. */
static void test_truncate_random(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < 100; i++)
		check_prefix((size_t)(rng() % (f->size + 1)));
	for (size_t k = 0; k < f->nchunks; k++) {
		check_prefix(f->start[k]);
		check_prefix(f->start[k] + 1);
		check_prefix(f->start[k] + MT_CHUNK_HEADER);
	}
}

/*
 * Whether chunk k of buf still decodes to what it held in the real log. zstd
 * frames have a few bits that no decoder reads (e.g. in table headers), so a
 * changed byte does not always change the content; the frame's checksum
 * covers the content, not the bytes.
 */
static int chunk_intact(const uint8_t *buf, size_t k)
{
	size_t off = fx->start[k], c = fx->end[k] - off - MT_CHUNK_HEADER;
	uint32_t u = mt_get_u32(fx->data + off + 8);
	uint8_t *a, *b;
	size_t ra, rb;
	int same;

	if (memcmp(buf + off, fx->data + off, MT_CHUNK_HEADER) != 0)
		return 0;
	if (memcmp(buf + off, fx->data + off, fx->end[k] - off) == 0)
		return 1;
	a = malloc(u);
	b = malloc(u);
	assert_true(a && b);
	ra = ZSTD_decompress(a, u, fx->data + off + MT_CHUNK_HEADER, c);
	rb = ZSTD_decompress(b, u, buf + off + MT_CHUNK_HEADER, c);
	same = !ZSTD_isError(rb) && rb == ra && memcmp(a, b, ra) == 0;
	free(a);
	free(b);
	/* the same content from a changed frame header (its window size,
	 * say): a reader may refuse the frame (it bounds its memory) */
	size_t fh = ZSTD_frameHeaderSize(fx->data + off + MT_CHUNK_HEADER, c);
	if (same && !ZSTD_isError(fh) && fh <= c &&
	    memcmp(buf + off + MT_CHUNK_HEADER, fx->data + off + MT_CHUNK_HEADER, fh) != 0)
		return 2;
	return same;
}

/*
 * Flips `nflip` random bytes (each XORed with a non-zero mask). A chunk
 * whose header or decoded content changed must stop the replay exactly
 * before it, with an error; a change in the file header must fail the open
 * or still replay no more events than the first damaged chunk allows.
 */
static void flip_round(int nflip)
{
	uint8_t *buf = malloc(fx->size);
	size_t bad = fx->nchunks;     /* first damaged chunk */
	size_t maybe = fx->nchunks;   /* first with a changed frame header only */
	int in_header;
	struct outcome o;
	uint64_t expect;

	assert_non_null(buf);
	memcpy(buf, fx->data, fx->size);
	for (int i = 0; i < nflip; i++) {
		size_t off = (size_t)(rng() % fx->size);

		buf[off] ^= (uint8_t)(rng() % 255 + 1);
	}
	in_header = memcmp(buf, fx->data, fx->hdr_len) != 0;
	for (size_t k = 0; k < fx->nchunks; k++) {
		int r = chunk_intact(buf, k);
		if (r == 2 && maybe == fx->nchunks)
			maybe = k;
		if (!r) {
			bad = k;
			break;
		}
	}
	replay_bytes(buf, fx->size, &o);
	free(buf);
	expect = bad == fx->nchunks ? fx->full.end.events : fx->seq[bad];
	if (o.open_rc < 0) {
		/* only the header can make the open fail; the code says why */
		assert_true(in_header);
		assert_true(o.open_rc == MT_E_MAGIC || o.open_rc == MT_E_VERSION ||
			    o.open_rc == MT_E_CORRUPT || o.open_rc == MT_E_RANGE ||
			    o.open_rc == MT_E_TRUNCATED);
		return;
	}
	assert_int_equal(o.run_rc, 0);
	assert_within_full(&o);
	if (in_header) {
		/* a changed cmdline length shifts every chunk: anything up to expect */
		assert_true(o.end.events <= expect);
		return;
	}
	/* a frame whose header changed, refused with an error, is damage too */
	if (maybe < bad && !in_header && o.end.events == fx->seq[maybe] && o.end.truncated &&
	    o.end.error < 0) {
		assert_int_equal(o.end.good_bytes, fx->start[maybe]);
		return;
	}
	if (o.end.events != expect)
		print_message("damage in chunk %zu: %llu events, expected %llu\n", bad,
			      (unsigned long long)o.end.events, (unsigned long long)expect);
	assert_int_equal(o.end.events, expect);
	if (bad < fx->nchunks) {
		assert_true(o.end.truncated);
		assert_false(o.end.clean);
		assert_true(o.end.error < 0);
		assert_int_equal(o.end.good_bytes, fx->start[bad]);
	} else {
		assert_true(o.end.clean);
		assert_int_equal(o.end.error, 0);
	}
}

static void test_flip_one_byte(void **state)
{
	(void)state;
	for (int i = 0; i < 3000; i++)
		flip_round(1);
}

static void test_flip_many_bytes(void **state)
{
	(void)state;
	for (int i = 0; i < 1000; i++)
		flip_round((int)(rng() % 16) + 2);
}

/* Every byte of the file header and of each chunk header, through all 8 single-bit flips. */
static void test_flip_headers(void **state)
{
	struct fixture *f = *state;
	uint8_t *buf = malloc(f->size);

	assert_non_null(buf);
	for (size_t k = 0; k <= f->nchunks; k++) {
		size_t from = k == 0 ? 0 : f->start[k - 1];
		size_t to = k == 0 ? MT_HEADER_FIXED : f->start[k - 1] + MT_CHUNK_HEADER;

		for (size_t off = from; off < to; off++)
			for (int bit = 0; bit < 8; bit++) {
				struct outcome o;

				memcpy(buf, f->data, f->size);
				buf[off] ^= (uint8_t)(1u << bit);
				replay_bytes(buf, f->size, &o);
				if (o.open_rc < 0) {
					assert_int_equal(k, 0);
					continue;
				}
				assert_int_equal(o.run_rc, 0);
				assert_within_full(&o);
				if (k > 0) {
					/* chunk k-1's header: replay stops before it */
					assert_int_equal(o.end.events, f->seq[k - 1]);
					assert_true(o.end.error < 0);
					assert_true(o.end.truncated);
				}
			}
	}
	free(buf);
}

/* A header with the given fields, then the real log's chunks. */
static size_t make_header(uint8_t *buf, const char *magic, uint16_t version,
			  uint32_t cmdlen)
{
	memcpy(buf, magic, MT_MAGIC_LEN);
	mt_put_u16(buf + 8, version);
	buf[10] = 8;
	buf[11] = 0;
	mt_put_u32(buf + 12, 4242);
	mt_put_u64(buf + 16, 1);
	mt_put_u32(buf + 24, cmdlen);
	return MT_HEADER_FIXED;
}

/* A file: a copy of the real log with its first `cut` bytes replaced by hdr. */
static void replay_with_header(const uint8_t *hdr, size_t hlen, size_t tail_from,
			       struct outcome *o)
{
	size_t n = hlen + (fx->size - tail_from);
	uint8_t *buf = malloc(n);

	assert_non_null(buf);
	memcpy(buf, hdr, hlen);
	memcpy(buf + hlen, fx->data + tail_from, fx->size - tail_from);
	replay_bytes(buf, n, o);
	free(buf);
}

static void test_bad_magic(void **state)
{
	uint8_t hdr[64];
	struct outcome o;

	(void)state;
	make_header(hdr, "MEMTRAIX", MT_FORMAT_VERSION, 0);
	replay_with_header(hdr, MT_HEADER_FIXED, fx->hdr_len, &o);
	assert_int_equal(o.open_rc, MT_E_MAGIC);
	/* heaptrack's and gzip's first bytes are not ours either */
	replay_bytes((const uint8_t *)"v 10100\nX /usr/bin/ls\n", 22, &o);
	assert_int_equal(o.open_rc, MT_E_MAGIC);
	replay_bytes((const uint8_t *)"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" "0123456789abcdef0123456789", 36, &o);
	assert_int_equal(o.open_rc, MT_E_MAGIC);
	/* a zero-length file: nothing to read, one error */
	replay_bytes(fx->data, 0, &o);
	assert_true(o.open_rc == MT_E_TRUNCATED || o.open_rc == MT_E_MAGIC);
}

static void test_bad_version(void **state)
{
	static const uint16_t versions[] = { 0, MT_FORMAT_VERSION + 1, 0xffff, 0x0100 };
	uint8_t hdr[64];
	struct outcome o;

	(void)state;
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		make_header(hdr, MT_MAGIC, versions[i], 0);
		replay_with_header(hdr, MT_HEADER_FIXED, fx->hdr_len, &o);
		assert_int_equal(o.open_rc, MT_E_VERSION);
		assert_int_equal(o.open_off, 8);
	}
}

/* Command-line lengths past MT_MAX_CMDLINE, up to 4 GiB: rejected, not allocated. */
static void test_absurd_cmdline(void **state)
{
	static const uint32_t lens[] = { MT_MAX_CMDLINE + 1, 0x7fffffffu, 0xfffffff0u, 0xffffffffu };
	uint8_t hdr[64];
	struct outcome o;

	(void)state;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		make_header(hdr, MT_MAGIC, MT_FORMAT_VERSION, lens[i]);
		replay_with_header(hdr, MT_HEADER_FIXED, fx->hdr_len, &o);
		assert_int_equal(o.open_rc, MT_E_RANGE);
		assert_int_equal(o.open_off, 24);
	}
	/* a length within limits but beyond the end of the file */
	make_header(hdr, MT_MAGIC, MT_FORMAT_VERSION, MT_MAX_CMDLINE);
	replay_with_header(hdr, MT_HEADER_FIXED, fx->hdr_len, &o);
	if (fx->size - fx->hdr_len < MT_MAX_CMDLINE)
		assert_int_equal(o.open_rc, MT_E_TRUNCATED);
}

/*
 * The real header, then chunk 0 with one header field replaced: the replay
 * opens, reads nothing, and ends with the expected error at offset hdr_len.
 */
static void chunk_field(size_t field, uint32_t value, const char *magic, int expect_err)
{
	size_t n = fx->size;
	uint8_t *buf = malloc(n);
	struct outcome o;

	assert_non_null(buf);
	memcpy(buf, fx->data, n);
	if (magic)
		memcpy(buf + fx->hdr_len, magic, 4);
	else
		mt_put_u32(buf + fx->hdr_len + field, value);
	replay_bytes(buf, n, &o);
	free(buf);
	assert_int_equal(o.open_rc, 0);
	assert_int_equal(o.run_rc, 0);
	assert_int_equal(o.end.events, 0);
	assert_true(o.end.truncated);
	assert_false(o.end.clean);
	if (o.end.error != expect_err)
		print_message("chunk field %zu = %#x: error %d (%s), expected %d\n", field,
			      value, o.end.error, mt_strerror(o.end.error), expect_err);
	assert_int_equal(o.end.error, expect_err);
	assert_int_equal(o.end.error_offset, fx->hdr_len);
	assert_int_equal(o.end.good_bytes, fx->hdr_len);
}

static void test_absurd_chunks(void **state)
{
	(void)state;
	/* sizes beyond the format's limits: MT_E_RANGE, never allocated */
	chunk_field(4, MT_MAX_CHUNK_COMPRESSED + 1, NULL, MT_E_RANGE);
	chunk_field(4, 0xffffffffu, NULL, MT_E_RANGE);
	chunk_field(8, MT_MAX_CHUNK + 1, NULL, MT_E_RANGE);
	chunk_field(8, 0xffffffffu, NULL, MT_E_RANGE);
	chunk_field(4, 0, NULL, MT_E_RANGE);
	chunk_field(8, 0, NULL, MT_E_RANGE);
	/* not a chunk */
	chunk_field(0, 0, "MTCX", MT_E_CORRUPT);
	chunk_field(0, 0, "\0\0\0\0", MT_E_CORRUPT);
}

/* Logs whose chunks decompress fine but hold absurd records (via testlog). */
static void replay_testlog(struct testlog *t, struct outcome *o)
{
	size_t len;
	const uint8_t *img = tl_image(t, &len);

	replay_bytes(img, len, o);
}

static void test_absurd_records(void **state)
{
	static const uint8_t bad_stack_depth[] = { MT_REC_STACK, 1, 0,
		0x80, 0x80, 0x80, 0x80, 0x10 };                  /* n = 2^32 */
	static const uint8_t bad_fn[] = { MT_REC_STACK, 1, 0xff, 0x7f, 0 };  /* fn 16383 */
	static const uint8_t bad_string[] = { MT_REC_SNAPSHOT, 0,
		0xff, 0xff, 0xff, 0xff, 0x0f };                  /* label length 2^32-1 */
	static const uint8_t bad_varint[] = { MT_REC_ALLOC, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };            /* 11-byte varint */
	static const uint8_t unknown_type[] = { 0x7e, 0, 0 };
	/* ALLOC: stack 99, size 16, ADDR k = 0, address delta +16 */
	static const uint8_t undefined_stack[] = { MT_REC_ALLOC, 99, 16, 0, 0x20 };
	/* FREE: ADDR k = 5, but this chunk has allocated nothing yet */
	static const uint8_t bad_history[] = { MT_REC_FREE, 5 };
	/* FREE: ADDR k = 1025 > MT_ADDR_HISTORY */
	static const uint8_t history_range[] = { MT_REC_FREE, 0x81, 0x08 };
	/* SWITCH to thread 9, never announced by THREAD */
	static const uint8_t unknown_thread[] = { MT_REC_SWITCH, 9 };
	const struct { const char *name; const uint8_t *p; size_t n; } cases[] = {
		{ "stack depth 2^32", bad_stack_depth, sizeof(bad_stack_depth) },
		{ "entry point 16383", bad_fn, sizeof(bad_fn) },
		{ "string length 2^32-1", bad_string, sizeof(bad_string) },
		{ "11-byte varint", bad_varint, sizeof(bad_varint) },
		{ "unknown record type", unknown_type, sizeof(unknown_type) },
		{ "stack never defined", undefined_stack, sizeof(undefined_stack) },
		{ "address history index beyond the history", bad_history, sizeof(bad_history) },
		{ "address history index beyond MT_ADDR_HISTORY", history_range, sizeof(history_range) },
		{ "switch to an unannounced thread", unknown_thread, sizeof(unknown_thread) },
	};
	static const uint64_t ip[1] = { 0x401000 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct testlog *t = tl_new(7, "prog\0", 5);
		struct outcome o;

		/* chunk 0: two good events; chunk 1: one good event, then the bad record */
		tl_thread(t, 0, 7);
		tl_stack(t, 0, MT_FN_MALLOC, 1, ip);
		tl_alloc(t, 10, 0x1000, 100, 0, 0);
		tl_alloc(t, 10, 0x2000, 200, 0, 0);
		tl_flush(t);
		tl_free_block(t, 10, 0x1000, 0);
		tl_raw(t, cases[i].p, cases[i].n);
		tl_end(t, 10, MT_END_EXIT, 0);
		replay_testlog(t, &o);
		tl_free(t);
		if (o.open_rc != 0 || o.run_rc != 0 || o.end.error >= 0 || o.end.events > 3)
			print_message("%s: open %d run %d error %d events %llu\n", cases[i].name,
				      o.open_rc, o.run_rc, o.end.error,
				      (unsigned long long)o.end.events);
		assert_int_equal(o.open_rc, 0);
		assert_int_equal(o.run_rc, 0);
		/* one clear error; the first chunk is kept */
		assert_true(o.end.error == MT_E_CORRUPT || o.end.error == MT_E_RANGE);
		assert_true(o.end.truncated);
		assert_false(o.end.clean);
		assert_true(o.end.events >= 2 && o.end.events <= 3);
		assert_int_equal(o.info.allocations, 2);
		assert_int_equal(o.info.leaked_bytes, o.end.events == 3 ? 200 : 300);
	}
}

/*
 * Sizes whose sum passes INT64_MAX (no real run comes near 8 EiB): the
 * record that would pass it is corrupt, so no total wraps and no peak goes
 * negative; the events before it stay (replay.h).
 */
static void test_huge_sizes(void **state)
{
	static const uint64_t ip[1] = { 0x401000 };
	const uint64_t big = 1ull << 62;
	struct testlog *t = tl_new(7, "prog\0", 5);
	struct outcome o;

	(void)state;
	tl_thread(t, 0, 7);
	tl_stack(t, 0, MT_FN_MALLOC, 1, ip);
	tl_alloc(t, 10, 0x1000, big, 0, 0);
	tl_flush(t);
	tl_alloc(t, 10, 0x2000, big - 1, 0, 0);      /* 2^63 - 1: the limit, allowed */
	tl_free_block(t, 10, 0x2000, 0);
	tl_alloc(t, 10, 0x3000, 1, 0, 0);            /* one byte too many */
	tl_end(t, 10, MT_END_EXIT, 0);
	replay_testlog(t, &o);
	tl_free(t);
	assert_int_equal(o.open_rc, 0);
	assert_int_equal(o.run_rc, 0);
	assert_int_equal(o.end.error, MT_E_CORRUPT);
	assert_true(o.end.truncated);
	/* up to the record at fault: the peak is INT64_MAX, not negative */
	assert_int_equal(o.end.events, 3);
	assert_int_equal(o.info.allocations, 2);
	assert_int_equal(o.info.peak_bytes, (uint64_t)INT64_MAX);
	assert_int_equal(o.info.leaked_bytes, big);
	assert_int_equal(o.info.bytes_allocated, (uint64_t)INT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncate_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncate_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncate_random, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flip_one_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flip_many_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flip_headers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_magic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_absurd_cmdline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_absurd_chunks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_absurd_records, setup, teardown),
		cmocka_unit_test(test_huge_sizes),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
