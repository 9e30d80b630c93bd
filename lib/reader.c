/*
 * reader.c - reads the container of an event log: the header, then one
 * zstd-compressed chunk at a time (see reader.h, format.h).
 *
 * For: checking magics, version, sizes and frames, and handing out one
 * chunk's decompressed records. Not for: decoding records (lib/replay.c).
 * Memory: the header, plus one compressed and one decompressed chunk buffer
 * that grow to the largest chunk seen (bounded by the format's limits).
 *
 * A bounded log (lib/ring.h) is read as one: opening FILE when there is
 * no such file opens its oldest segment, and the end of a segment goes on
 * with the next one (MT_E_GAP when it is gone: deleted before it was read,
 * by a recorder a whole ring ahead of a reader following it). Offsets
 * handed out go on across segments (the bytes of the segments before are
 * added), so progress and error offsets grow as in one file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "error.h"
#include "format.h"
#include "reader.h"
#include "ring.h"

struct mt_reader {
	FILE *f;
	uint64_t file_size;       /* at open, rewind or refresh (logs are
				     regular files) */
	uint64_t data_start;      /* offset of the first chunk */
	uint64_t pos;             /* offset of the next byte to read */
	uint64_t good;            /* offset after the last good chunk */
	uint64_t err_off;
	int err;                  /* sticky error, 0 if none */
	struct mt_reader_header hdr;
	uint8_t *cmdline;
	uint8_t *cbuf, *dbuf;
	size_t ccap, dcap;
	ZSTD_DCtx *dctx;
	/* A bounded log: path is FILE, seg the number of the segment open (0:
	 * a single file); opened counts the segments opened since the last
	 * rewind (mt_reader_segment); before, the bytes of the segments read
	 * before this one; ring_size, of all of them at the last listing. */
	char *path;
	uint64_t seg;
	unsigned opened;
	uint64_t before, ring_size;
};

/* Reads exactly n bytes; returns the number read (short at end of file). */
static size_t read_full(struct mt_reader *r, void *buf, size_t n)
{
	size_t got = fread(buf, 1, n, r->f);

	r->pos += got;
	return got;
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *p;

	if (*cap >= need)
		return 0;
	p = realloc(*buf, need);
	if (!p)
		return MT_E_NOMEM;
	*buf = p;
	*cap = need;
	return 0;
}

/*
 * Opens file (the log, or a segment of it) in r, in place of the one open,
 * and reads and checks its header. 0, or the error with *off its offset.
 */
static int open_file(struct mt_reader *r, const char *file, uint64_t *off)
{
	uint8_t fixed[MT_HEADER_FIXED];
	struct stat st;
	uint32_t len;
	size_t got;
	int err, saved, fd, fl;

	*off = 0;
	if (r->f)
		fclose(r->f);
	r->f = NULL;
	free(r->cmdline);
	r->cmdline = NULL;
	r->pos = 0;
	/*
	 * O_NONBLOCK: opening a FIFO (or a symlink to one) must not wait for
	 * a writer; it is refused below, as is anything not a regular file.
	 */
	fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return MT_E_IO;
	if (fstat(fd, &st) < 0) {
		err = MT_E_IO;
		goto fail_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			errno = EISDIR;
		err = S_ISDIR(st.st_mode) ? MT_E_IO : MT_E_NOTREG;
		goto fail_fd;
	}
	r->file_size = (uint64_t)st.st_size;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		err = MT_E_IO;
		goto fail_fd;
	}
	r->f = fdopen(fd, "rb");
	if (!r->f) {
		err = MT_E_IO;
		goto fail_fd;
	}

	got = read_full(r, fixed, sizeof(fixed));
	if (ferror(r->f))
		return MT_E_IO;
	if (got < MT_MAGIC_LEN || memcmp(fixed, MT_MAGIC, MT_MAGIC_LEN)) {
		/* An empty file, or a short one that starts like a log, is truncated. */
		err = got < MT_MAGIC_LEN && !memcmp(fixed, MT_MAGIC, got)
			? MT_E_TRUNCATED : MT_E_MAGIC;
		*off = err == MT_E_TRUNCATED ? got : 0;
		return err;
	}
	if (got < sizeof(fixed)) {
		*off = got;
		return MT_E_TRUNCATED;
	}
	r->hdr.version = mt_get_u16(fixed + 8);
	if (r->hdr.version < MT_FORMAT_VERSION_MIN || r->hdr.version > MT_FORMAT_VERSION) {
		*off = 8;
		return MT_E_VERSION;
	}
	r->hdr.pointer_size = fixed[10];
	if (r->hdr.pointer_size != 4 && r->hdr.pointer_size != 8) {
		*off = 10;
		return MT_E_RANGE;
	}
	r->hdr.flags = fixed[11];
	r->hdr.pid = mt_get_u32(fixed + 12);
	r->hdr.start_realtime_ns = mt_get_u64(fixed + 16);
	len = mt_get_u32(fixed + 24);
	if (len > MT_MAX_CMDLINE) {
		*off = 24;
		return MT_E_RANGE;
	}
	r->cmdline = malloc(len + 1);
	if (!r->cmdline)
		return MT_E_NOMEM;
	got = read_full(r, r->cmdline, len);
	if (got < len) {
		*off = r->pos;
		return ferror(r->f) ? MT_E_IO : MT_E_TRUNCATED;
	}
	if (len > 0 && r->cmdline[len - 1] != 0) {
		*off = MT_HEADER_FIXED + len - 1;
		return MT_E_CORRUPT;
	}
	r->cmdline[len] = 0;
	r->hdr.cmdline = r->cmdline;
	r->hdr.cmdline_len = len;
	r->data_start = r->pos;
	r->good = r->pos;
	return 0;
fail_fd:
	saved = errno;
	close(fd);
	errno = saved;
	return err;
}

/* The sizes of the segments listed, for progress (a bounded log). */
static void ring_total(struct mt_reader *r, const uint64_t *v, size_t n)
{
	char name[4096];
	struct stat st;

	r->ring_size = 0;
	for (size_t i = 0; i < n; i++)
		if (mt_ring_name(r->path, v[i], name, sizeof(name)) == 0 && stat(name, &st) == 0)
			r->ring_size += (uint64_t)st.st_size;
}

/*
 * Opens the first segment after number after (0: the oldest) of a bounded
 * log. 1 when one was opened, 0 when there is none, or the error (*off).
 * A segment deleted between the listing and the open (the recorder keeps
 * the newest only) is skipped.
 */
static int open_segment(struct mt_reader *r, uint64_t after, uint64_t *off)
{
	char name[4096];
	uint64_t *v;
	size_t n, i;
	int err;

	for (int tries = 0; tries < 16; tries++) {
		err = mt_ring_list(r->path, &v, &n);
		if (err < 0)
			return err;
		for (i = 0; i < n && v[i] <= after; i++)
			;
		if (i == n) {
			free(v);
			return 0;
		}
		ring_total(r, v, n);
		if (mt_ring_name(r->path, v[i], name, sizeof(name)) < 0) {
			free(v);
			errno = ENAMETOOLONG;
			return MT_E_IO;
		}
		after = v[i];
		free(v);
		err = open_file(r, name, off);
		if (err == MT_E_IO && errno == ENOENT)
			continue;
		if (err < 0)
			return err;
		r->seg = after;
		r->opened++;
		return 1;
	}
	errno = ENOENT;
	return MT_E_IO;
}

int mt_reader_open(const char *path, struct mt_reader **out, uint64_t *err_offset)
{
	struct mt_reader *r;
	uint64_t off = 0;
	int err, saved;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return MT_E_NOMEM;
	r->path = strdup(path);
	if (!r->path) {
		err = MT_E_NOMEM;
		goto fail;
	}
	err = open_file(r, path, &off);
	if (err == MT_E_IO && errno == ENOENT) {
		/* no such file: a bounded log's segments, if any */
		int rc = open_segment(r, 0, &off);

		if (rc == 0)
			errno = ENOENT;
		err = rc == 1 ? 0 : rc == 0 ? MT_E_IO : rc;
	}
	if (err < 0)
		goto fail;
	r->opened = 0;
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		err = MT_E_NOMEM;
		goto fail;
	}
	*out = r;
	return 0;
fail:
	saved = errno;
	if (err_offset)
		*err_offset = off;
	mt_reader_free(r);
	errno = saved;
	return err;
}

/*
 * At the end of a segment: goes on with the next one, which must be of
 * the same run (header). 1 when it did, 0 when there is none (yet), or an
 * error.
 */
static int next_segment(struct mt_reader *r)
{
	uint32_t pid = r->hdr.pid;
	uint64_t start = r->hdr.start_realtime_ns, before = r->before + r->pos, off;
	uint64_t prev = r->seg;
	int rc = open_segment(r, r->seg, &off);

	if (rc <= 0) {
		if (rc < 0)
			r->before = before;
		return rc;
	}
	r->before = before;
	if (r->hdr.pid != pid || r->hdr.start_realtime_ns != start)
		return MT_E_CORRUPT;
	/* the one after this was deleted before it was read (missing, or a
	 * reader that fell a whole ring behind the recorder) */
	if (r->seg != prev + 1)
		return MT_E_GAP;
	return 1;
}

unsigned mt_reader_segment(const struct mt_reader *r)
{
	return r->opened;
}

uint64_t mt_reader_ring_segment(const struct mt_reader *r)
{
	return r->seg;
}

const struct mt_reader_header *mt_reader_header(const struct mt_reader *r)
{
	return &r->hdr;
}

static int set_error(struct mt_reader *r, int err, uint64_t off)
{
	r->err = err;
	r->err_off = off;
	return err;
}

int mt_reader_next(struct mt_reader *r, const uint8_t **data, size_t *len,
		   uint64_t *offset)
{
	uint8_t h[MT_CHUNK_HEADER];
	uint64_t start = r->pos;
	uint32_t c, u;
	unsigned long long content;
	size_t got, n;

	if (r->err)
		return r->err;
	got = read_full(r, h, sizeof(h));
	if (ferror(r->f))
		return set_error(r, MT_E_IO, start);
	if (got == 0 && r->seg) {
		int rc = next_segment(r);

		if (rc < 0)
			return set_error(r, rc, 0);
		if (rc == 1)
			return mt_reader_next(r, data, len, offset);
	}
	if (got == 0)
		return 0;
	if (memcmp(h, MT_CHUNK_MAGIC, got < 4 ? got : 4))
		return set_error(r, MT_E_CORRUPT, start);
	if (got < sizeof(h))
		return set_error(r, MT_E_TRUNCATED, start);
	c = mt_get_u32(h + 4);
	u = mt_get_u32(h + 8);
	if (c < 1 || c > MT_MAX_CHUNK_COMPRESSED || u < 1 || u > MT_MAX_CHUNK)
		return set_error(r, MT_E_RANGE, start);
	/* Do not allocate for a chunk the file cannot hold. */
	if (r->file_size && start + MT_CHUNK_HEADER + c > r->file_size)
		return set_error(r, MT_E_TRUNCATED, start);
	if (grow(&r->cbuf, &r->ccap, c) < 0)
		return set_error(r, MT_E_NOMEM, start);
	got = read_full(r, r->cbuf, c);
	if (got < c)
		return set_error(r, ferror(r->f) ? MT_E_IO : MT_E_TRUNCATED, start);
	/* Exactly one frame filling the chunk, announcing exactly U bytes. */
	if (ZSTD_findFrameCompressedSize(r->cbuf, c) != c)
		return set_error(r, MT_E_CORRUPT, start);
	content = ZSTD_getFrameContentSize(r->cbuf, c);
	if (content != u)
		return set_error(r, MT_E_CORRUPT, start);
	if (grow(&r->dbuf, &r->dcap, u) < 0)
		return set_error(r, MT_E_NOMEM, start);
	n = ZSTD_decompressDCtx(r->dctx, r->dbuf, u, r->cbuf, c);
	if (ZSTD_isError(n))
		return set_error(r, MT_E_ZSTD, start);
	if (n != u)
		return set_error(r, MT_E_CORRUPT, start);
	r->good = r->pos;
	r->err_off = start;
	*data = r->dbuf;
	*len = u;
	if (offset)
		*offset = r->before + start;
	return 1;
}

uint64_t mt_reader_error_offset(const struct mt_reader *r)
{
	return r->before + r->err_off;
}

uint64_t mt_reader_good_bytes(const struct mt_reader *r)
{
	return r->before + r->good;
}

uint64_t mt_reader_file_size(const struct mt_reader *r)
{
	uint64_t n = r->before + r->file_size;

	return r->seg && r->ring_size > n ? r->ring_size : n;
}

int mt_reader_last_chunk(struct mt_reader *r, const uint8_t **data, size_t *len,
			 uint64_t *offset)
{
	uint8_t h[MT_CHUNK_HEADER];
	uint64_t off, last = 0;
	int rc, have = 0;

	/* A bounded log's last chunk is its newest segment's. */
	while (r->seg && (rc = open_segment(r, r->seg, &off)) != 0)
		if (rc < 0) {
			(void)mt_reader_rewind(r);
			return rc == MT_E_NOMEM ? rc : MT_E_IO;
		}
	off = r->data_start;
	/* The chunk headers only, to the end of the file. */
	for (;;) {
		uint32_t c, u;

		if (fseeko(r->f, (off_t)off, SEEK_SET) < 0)
			return MT_E_IO;
		size_t got = fread(h, 1, sizeof(h), r->f);
		if (ferror(r->f))
			return MT_E_IO;
		if (got == 0)
			break;
		if (got < sizeof(h) || memcmp(h, MT_CHUNK_MAGIC, 4))
			goto none;
		c = mt_get_u32(h + 4);
		u = mt_get_u32(h + 8);
		if (c < 1 || c > MT_MAX_CHUNK_COMPRESSED || u < 1 || u > MT_MAX_CHUNK ||
		    (r->file_size && off + MT_CHUNK_HEADER + c > r->file_size))
			goto none;
		last = off;
		have = 1;
		off += MT_CHUNK_HEADER + (uint64_t)c;
	}
	if (!have)
		goto none;
	if (fseeko(r->f, (off_t)last, SEEK_SET) < 0)
		return MT_E_IO;
	clearerr(r->f);
	r->pos = last;
	r->err = 0;
	rc = mt_reader_next(r, data, len, offset);
	if (rc == MT_E_IO || rc == MT_E_NOMEM)
		return rc;
	rc = rc == 1 && fgetc(r->f) == EOF;
	/* The rewind leaves the chunk's buffer alone: *data stays valid. */
	if (mt_reader_rewind(r) < 0)
		return MT_E_IO;
	return rc;
none:
	if (mt_reader_rewind(r) < 0)
		return MT_E_IO;
	return 0;
}

/* The file's size now: a log still being written grows. */
static int stat_size(struct mt_reader *r)
{
	struct stat st;

	if (fstat(fileno(r->f), &st) < 0)
		return MT_E_IO;
	r->file_size = (uint64_t)st.st_size;
	return 0;
}

int mt_reader_refresh(struct mt_reader *r)
{
	if (stat_size(r) < 0)
		return MT_E_IO;
	if (r->seg && !r->err && r->file_size <= r->good) {
		/* the end of a segment: a newer one goes on from here */
		uint64_t *v;
		size_t n, i;

		if (mt_ring_list(r->path, &v, &n) < 0)
			return MT_E_IO;
		for (i = 0; i < n && v[i] <= r->seg; i++)
			;
		ring_total(r, v, n);
		free(v);
		return i < n;
	}
	if ((r->err && r->err != MT_E_TRUNCATED) || r->file_size <= r->good)
		return 0;
	/* the chunk cut short, or the end met, is read again from its start */
	if (fseeko(r->f, (off_t)r->good, SEEK_SET) < 0)
		return MT_E_IO;
	clearerr(r->f);
	r->pos = r->good;
	r->err = 0;
	return 1;
}

int mt_reader_rewind(struct mt_reader *r)
{
	if (r->seg) {
		/* the oldest segment now: older ones may have gone since */
		uint64_t off;
		int rc = open_segment(r, 0, &off);

		if (rc <= 0)
			return rc < 0 ? rc : MT_E_IO;
		r->opened = 0;
		r->before = 0;
	}
	if (stat_size(r) < 0)
		return MT_E_IO;
	if (fseeko(r->f, (off_t)r->data_start, SEEK_SET) < 0)
		return MT_E_IO;
	clearerr(r->f);
	r->pos = r->data_start;
	r->good = r->data_start;
	r->err = 0;
	r->err_off = 0;
	return 0;
}

void mt_reader_free(struct mt_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	ZSTD_freeDCtx(r->dctx);
	free(r->cmdline);
	free(r->cbuf);
	free(r->dbuf);
	free(r->path);
	free(r);
}
