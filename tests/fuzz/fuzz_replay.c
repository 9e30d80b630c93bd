/*
 * fuzz_replay.c - libFuzzer target over the log reader, the replay and the
 * summary (lib/reader.c, lib/replay.c, lib/summary.c), built by
 * tests/fuzz/run.sh with clang -fsanitize=fuzzer,address,undefined.
 *
 * An input is one of two things, told apart by its first byte:
 *   'M'...  a log file as it is on disk (real logs start with "MEMTRAIL"):
 *           mutations exercise the header and the chunk container; most
 *           changes inside a chunk are caught by the zstd checksum.
 *   'R'...  a log with its chunks given decompressed: after the 'R', the
 *           file header (28 + L bytes, as on disk), then chunks as
 *           u32 n (little-endian) and n bytes of records. The target
 *           compresses each into a valid chunk, so mutations reach the
 *           record decoder behind the checksum.
 * Other first bytes are taken as a file too. The bytes go into a memfd that
 * the replay opens by its /proc/self/fd path; the summary consumes the
 * replay, which then runs a second time (runs must be repeatable).
 *
 * Built with -DMT_FUZZ_CONVERT instead, the file is a small program that
 * turns a real log into an 'R' input, for the seed corpus, and with -x an
 * input of either kind into the log file it stands for (to replay the
 * corpus through the memtrail program: see run.sh).
 *
 * Not for: the recorder, symbols, the CLI. Not linked into any product.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zstd.h>

#include "error.h"
#include "format.h"
#include "replay.h"
#include "session.h"
#include "summary.h"

/* Output buffer for building a file image. */
struct buf {
	uint8_t *p;
	size_t n, cap;
};

static int buf_put(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *q;

		while (cap < b->n + n)
			cap *= 2;
		q = realloc(b->p, cap);
		if (!q)
			return -1;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

/* Appends raw records as one chunk: zstd frame with content size and checksum. */
static int put_chunk(struct buf *b, ZSTD_CCtx *cctx, const uint8_t *raw, size_t n)
{
	size_t bound = ZSTD_compressBound(n), c;
	uint8_t hdr[MT_CHUNK_HEADER];
	uint8_t *z = malloc(bound ? bound : 1);

	if (!z)
		return -1;
	c = ZSTD_compress2(cctx, z, bound, raw, n);
	if (ZSTD_isError(c)) {
		free(z);
		return -1;
	}
	memcpy(hdr, MT_CHUNK_MAGIC, 4);
	mt_put_u32(hdr + 4, (uint32_t)c);
	mt_put_u32(hdr + 8, (uint32_t)n);
	if (buf_put(b, hdr, sizeof(hdr)) < 0 || buf_put(b, z, c) < 0) {
		free(z);
		return -1;
	}
	free(z);
	return 0;
}

/* Builds the file image of an 'R' input (without its 'R'). */
static int expand(const uint8_t *p, size_t n, struct buf *out)
{
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	size_t hdr = n;
	int rc = -1;

	if (!cctx)
		return -1;
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
	if (n >= MT_HEADER_FIXED) {
		uint64_t want = MT_HEADER_FIXED + (uint64_t)mt_get_u32(p + 24);

		if (want < n)
			hdr = (size_t)want;
	}
	if (buf_put(out, p, hdr) < 0)
		goto done;
	p += hdr;
	n -= hdr;
	while (n > 0) {
		size_t len = n;

		if (n >= 4) {
			len = mt_get_u32(p);
			p += 4;
			n -= 4;
			if (len > n)
				len = n;
		}
		if (len && put_chunk(out, cctx, p, len) < 0)
			goto done;
		p += len;
		n -= len;
	}
	rc = 0;
done:
	ZSTD_freeCCtx(cctx);
	return rc;
}

#ifndef MT_FUZZ_CONVERT

/* A consumer beside the summary that touches every pointer it is given. */
static uint64_t sink;

static void on_stack(void *ctx, const struct mt_stack *s)
{
	(void)ctx;
	for (uint32_t i = 0; i < s->depth; i++)
		sink += s->ips[i];
}

static void on_module(void *ctx, const struct mt_module *m)
{
	(void)ctx;
	sink += strlen(m->path) + m->build_id_len;
	for (size_t i = 0; i < m->build_id_len; i++)
		sink += m->build_id[i];
	for (size_t i = 0; i < m->nseg; i++)
		sink += m->segs[i].start + m->segs[i].size;
}

static int on_snapshot(void *ctx, const struct mt_snapshot *s)
{
	(void)ctx;
	sink += strlen(s->label) + s->index;
	return 0;
}

static void on_header(void *ctx, const struct mt_header *h)
{
	(void)ctx;
	sink += strlen(h->cmdline);
	for (size_t i = 0; i < h->argc; i++)
		sink += strlen(h->argv[i]);
}

static const struct mt_replay_ops touch_ops = {
	.on_header = on_header,
	.on_module = on_module,
	.on_stack = on_stack,
	.on_snapshot = on_snapshot,
};

static void replay_fd(int fd)
{
	char path[64];
	struct mt_replay *r = NULL;
	struct mt_summary *s;
	struct mt_session *ses = NULL;
	uint64_t off = 0;
	uint64_t events;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (mt_replay_open(path, &r, &off) < 0)
		return;
	{
		/* END's figures from the last chunk alone (the tail decode) */
		struct mt_totals tot;
		unsigned how;

		if (mt_replay_end_totals(r, &how, &tot) == 1 && how > MT_END_STOPPED)
			abort();
	}
	/* the figures, as the summary gets them: a session counting them */
	{
		static const struct mt_session_opts figures = { .figures_only = 1 };

		if (mt_session_open(path, &figures, &ses, NULL) < 0)
			ses = NULL;
	}
	s = mt_summary_new();
	if (!s)
		abort();
	if (ses && mt_summary_of_session(s, ses) >= 0) {
		const struct mt_summary_info *i = mt_summary_info(s);
		const struct mt_end *e = mt_session_end(ses);

		/*
		 * Figures that cannot disagree, whatever the input. (clean and
		 * truncated together are allowed: an END record followed by
		 * damaged data.)
		 */
		if (i->events != e->events || i->leaked_blocks > i->allocations ||
		    i->peak_bytes < i->leaked_bytes || i->frees > i->allocations) {
			fprintf(stderr, "fuzz_replay: inconsistent figures: events %llu/%llu "
				"allocations %llu frees %llu peak %llu leaked %llu in %llu "
				"clean %d truncated %d error %d\n",
				(unsigned long long)i->events, (unsigned long long)e->events,
				(unsigned long long)i->allocations, (unsigned long long)i->frees,
				(unsigned long long)i->peak_bytes, (unsigned long long)i->leaked_bytes,
				(unsigned long long)i->leaked_blocks, e->clean, e->truncated, e->error);
			abort();
		}
		mt_summary_write_text(i, stdout);
		mt_summary_write_json(i, stdout);
		events = e->events;
		/* the replay alone reads the same log */
		if (mt_replay_run(r, &touch_ops, NULL) >= 0) {
			if (mt_replay_end(r)->events != events)
				abort();
			for (size_t k = 0; k < mt_replay_nstacks(r); k++)
				on_stack(NULL, mt_replay_stack(r, (uint32_t)k));
			for (size_t k = 0; k < mt_replay_nmodules(r); k++)
				on_module(NULL, mt_replay_module(r, k));
			/* a second run replays the same thing */
			if (mt_replay_run(r, &touch_ops, NULL) >= 0 &&
			    mt_replay_end(r)->events != events)
				abort();
		}
	}
	mt_summary_free(s);
	mt_session_free(ses);
	mt_replay_free(r);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* the summary's text goes nowhere */
	if (!freopen("/dev/null", "w", stdout))
		return 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf img = { 0 };
	const uint8_t *p = data;
	size_t n = size;
	int fd;

	if (size > 0 && data[0] == 'R') {
		if (expand(data + 1, size - 1, &img) < 0 || img.n == 0) {
			free(img.p);
			return 0;
		}
		p = img.p;
		n = img.n;
	}
	fd = memfd_create("fuzz_replay", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	for (size_t done = 0; done < n;) {
		ssize_t w = write(fd, p + done, n - done);

		if (w <= 0)
			abort();
		done += (size_t)w;
	}
	replay_fd(fd);
	close(fd);
	free(img.p);
	return 0;
}

#else /* MT_FUZZ_CONVERT: convert LOG OUT, or convert -x INPUT LOG */

/* An input of the fuzz target (either kind) as the log file it stands for. */
static int to_log(FILE *in, FILE *out)
{
	static uint8_t data[64 << 20];
	size_t n = fread(data, 1, sizeof(data), in);
	struct buf img = { 0 };
	int rc = 0;

	if (n > 0 && data[0] == 'R') {
		if (expand(data + 1, n - 1, &img) < 0)
			return 1;
		rc = fwrite(img.p, 1, img.n, out) == img.n ? 0 : 1;
		free(img.p);
		return rc;
	}
	return fwrite(data, 1, n, out) == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	FILE *in, *out;
	static uint8_t file[64 << 20];
	size_t n, off;

	if (argc == 4 && !strcmp(argv[1], "-x")) {
		if (!(in = fopen(argv[2], "rb")) || !(out = fopen(argv[3], "wb")))
			return 2;
		if (to_log(in, out) != 0)
			return 1;
		fclose(in);
		return fclose(out) == 0 ? 0 : 1;
	}
	if (argc != 3 || !(in = fopen(argv[1], "rb")) || !(out = fopen(argv[2], "wb"))) {
		fprintf(stderr, "usage: convert LOG OUT | convert -x INPUT LOG\n");
		return 2;
	}
	n = fread(file, 1, sizeof(file), in);
	fclose(in);
	if (n < MT_HEADER_FIXED)
		return 1;
	off = MT_HEADER_FIXED + mt_get_u32(file + 24);
	if (off > n)
		return 1;
	fputc('R', out);
	fwrite(file, 1, off, out);
	while (off + MT_CHUNK_HEADER <= n) {
		uint32_t c = mt_get_u32(file + off + 4), u = mt_get_u32(file + off + 8);
		uint8_t len[4];
		uint8_t *raw;

		if (off + MT_CHUNK_HEADER + c > n || !(raw = malloc(u ? u : 1)))
			return 1;
		if (ZSTD_decompress(raw, u, file + off + MT_CHUNK_HEADER, c) != u)
			return 1;
		mt_put_u32(len, u);
		fwrite(len, 1, 4, out);
		fwrite(raw, 1, u, out);
		free(raw);
		off += MT_CHUNK_HEADER + c;
	}
	return fclose(out) == 0 ? 0 : 1;
}

#endif
