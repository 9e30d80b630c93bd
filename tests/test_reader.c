/*
 * test_reader.c - unit tests of lib/reader.c: header checks, chunk checks,
 * a log cut at every byte, and the last chunk read alone. Logs come from
 * tests/testlog.c, an encoder written from format.h independently of
 * lib/writer.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "error.h"
#include "format.h"
#include "reader.h"
#include "testlog.c"

struct fix {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/mt-test-reader.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/log", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* A log of three chunks with n events each. */
static struct testlog *three_chunks(void)
{
	static const char cmd[] = "prog\0arg\0";
	uint64_t ip = 0x401000;
	struct testlog *t = tl_new(4242, cmd, sizeof(cmd) - 1);
	int c, i;

	tl_thread(t, 0, 4242);
	tl_stack(t, 0, MT_FN_MALLOC, 1, &ip);
	for (c = 0; c < 3; c++) {
		for (i = 0; i < 4; i++)
			tl_alloc(t, 10, 0x1000 + 0x100 * (uint64_t)(c * 4 + i), 16, 0, 0);
		tl_flush(t);
	}
	return t;
}

/* Counts chunks until the end; returns the final status. */
static int count_chunks(struct mt_reader *r, int *n)
{
	const uint8_t *d;
	size_t len;
	int rc;

	*n = 0;
	while ((rc = mt_reader_next(r, &d, &len, NULL)) == 1)
		(*n)++;
	return rc;
}

static void test_header_ok(void **state)
{
	struct fix *f = *state;
	struct testlog *t = three_chunks();
	const struct mt_reader_header *h;
	struct mt_reader *r;
	uint64_t off, first;
	const uint8_t *d;
	size_t len;
	int n;

	tl_write(t, f->path);
	assert_int_equal(mt_reader_open(f->path, &r, NULL), 0);
	h = mt_reader_header(r);
	assert_int_equal(h->version, TL_VERSION);
	assert_int_equal(h->pointer_size, 8);
	assert_int_equal(h->pid, 4242);
	assert_int_equal(h->cmdline_len, 9);
	assert_memory_equal(h->cmdline, "prog\0arg\0", 9);
	assert_int_equal(mt_reader_next(r, &d, &len, &first), 1);
	assert_int_equal(first, tl_chunk_offset(t, 0));
	assert_int_equal(d[0], MT_REC_CHUNK_BEGIN);
	assert_int_equal(mt_reader_next(r, &d, &len, &off), 1);
	assert_int_equal(off, tl_chunk_offset(t, 1));
	assert_int_equal(mt_reader_next(r, &d, &len, &off), 1);
	assert_int_equal(off, tl_chunk_offset(t, 2));
	assert_int_equal(mt_reader_next(r, &d, &len, &off), 0);
	/* Rewind gives the same chunks again. */
	assert_int_equal(mt_reader_rewind(r), 0);
	assert_int_equal(count_chunks(r, &n), 0);
	assert_int_equal(n, 3);
	mt_reader_free(r);
	tl_free(t);
}

static void write_patched(struct fix *f, struct testlog *t, size_t at, const void *p, size_t n)
{
	size_t len;
	const uint8_t *img = tl_image(t, &len);
	uint8_t *copy = malloc(len);

	assert_non_null(copy);
	memcpy(copy, img, len);
	memcpy(copy + at, p, n);
	tl_write_file(f->path, copy, len);
	free(copy);
}

static void expect_open_error(struct fix *f, int err, uint64_t at)
{
	struct mt_reader *r = (void *)1;
	uint64_t off = 12345;

	assert_int_equal(mt_reader_open(f->path, &r, &off), err);
	assert_null(r);
	assert_int_equal(off, at);
}

static void test_bad_magic(void **state)
{
	struct fix *f = *state;
	struct testlog *t = three_chunks();

	write_patched(f, t, 0, "NOTALOG!", 8);
	expect_open_error(f, MT_E_MAGIC, 0);
	tl_write_file(f->path, "#!/bin/sh\necho hello\n", 21);
	expect_open_error(f, MT_E_MAGIC, 0);
	tl_free(t);
}

static void test_bad_version(void **state)
{
	struct fix *f = *state;
	struct testlog *t = three_chunks();
	uint8_t v[2];

	mt_put_u16(v, MT_FORMAT_VERSION + 1);
	write_patched(f, t, 8, v, 2);
	expect_open_error(f, MT_E_VERSION, 8);
	mt_put_u16(v, 0);
	write_patched(f, t, 8, v, 2);
	expect_open_error(f, MT_E_VERSION, 8);
	/* Version 1 (per-event times) is not read any more. */
	mt_put_u16(v, 1);
	write_patched(f, t, 8, v, 2);
	expect_open_error(f, MT_E_VERSION, 8);
	/* Version 2 (no THREAD_NAME) still is. */
	{
		struct mt_reader *r;

		mt_put_u16(v, 2);
		write_patched(f, t, 8, v, 2);
		assert_int_equal(mt_reader_open(f->path, &r, NULL), 0);
		assert_int_equal(mt_reader_header(r)->version, 2);
		mt_reader_free(r);
	}
	tl_free(t);
}

static void test_absurd_header_sizes(void **state)
{
	struct fix *f = *state;
	struct testlog *t = three_chunks();
	uint8_t v[4];

	mt_put_u32(v, MT_MAX_CMDLINE + 1);
	write_patched(f, t, 24, v, 4);
	expect_open_error(f, MT_E_RANGE, 24);
	mt_put_u32(v, 0xffffffffu);
	write_patched(f, t, 24, v, 4);
	expect_open_error(f, MT_E_RANGE, 24);
	v[0] = 3;
	write_patched(f, t, 10, v, 1);
	expect_open_error(f, MT_E_RANGE, 10);
	/* A cmdline that does not end in NUL. */
	write_patched(f, t, MT_HEADER_FIXED + 8, "x", 1);
	expect_open_error(f, MT_E_CORRUPT, MT_HEADER_FIXED + 8);
	tl_free(t);
}

static void test_missing_and_directory(void **state)
{
	struct fix *f = *state;
	struct mt_reader *r;

	errno = 0;
	assert_int_equal(mt_reader_open(f->path, &r, NULL), MT_E_IO);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(mt_reader_open(f->dir, &r, NULL), MT_E_IO);
	assert_int_equal(errno, EISDIR);
}

/* Opens f->path and reads to the end: returns the status, chunks in *n. */
static int read_all(struct fix *f, int *n, uint64_t *err_off)
{
	struct mt_reader *r;
	int rc = mt_reader_open(f->path, &r, NULL);

	*n = -1;
	if (rc < 0)
		return rc;
	rc = count_chunks(r, n);
	/* The error is sticky. */
	if (rc < 0) {
		const uint8_t *d;
		size_t len;

		assert_int_equal(mt_reader_next(r, &d, &len, NULL), rc);
	}
	*err_off = mt_reader_error_offset(r);
	mt_reader_free(r);
	return rc;
}

static void test_bad_chunks(void **state)
{
	struct fix *f = *state;
	struct testlog *t = three_chunks();
	size_t c1 = tl_chunk_offset(t, 1), c2 = tl_chunk_offset(t, 2), len;
	const uint8_t *img = tl_image(t, &len);
	uint64_t off;
	uint8_t v[4];
	int n;

	/* Bad magic of chunk 1. */
	write_patched(f, t, c1, "XXXX", 4);
	assert_int_equal(read_all(f, &n, &off), MT_E_CORRUPT);
	assert_int_equal(n, 1);
	assert_int_equal(off, c1);
	/* Absurd compressed size. */
	mt_put_u32(v, MT_MAX_CHUNK_COMPRESSED + 1);
	write_patched(f, t, c1 + 4, v, 4);
	assert_int_equal(read_all(f, &n, &off), MT_E_RANGE);
	assert_int_equal(n, 1);
	assert_int_equal(off, c1);
	mt_put_u32(v, 0);
	write_patched(f, t, c1 + 4, v, 4);
	assert_int_equal(read_all(f, &n, &off), MT_E_RANGE);
	/* Absurd decompressed size. */
	mt_put_u32(v, MT_MAX_CHUNK + 1);
	write_patched(f, t, c1 + 8, v, 4);
	assert_int_equal(read_all(f, &n, &off), MT_E_RANGE);
	assert_int_equal(off, c1);
	/* A decompressed size that disagrees with the frame. */
	mt_put_u32(v, mt_get_u32(img + c1 + 8) + 1);
	write_patched(f, t, c1 + 8, v, 4);
	assert_int_equal(read_all(f, &n, &off), MT_E_CORRUPT);
	assert_int_equal(n, 1);
	/* A compressed size that disagrees with the frame (shorter). */
	mt_put_u32(v, mt_get_u32(img + c1 + 4) - 1);
	write_patched(f, t, c1 + 4, v, 4);
	assert_true(read_all(f, &n, &off) < 0);
	assert_int_equal(n, 1);
	/* A flipped byte in the last frame's checksum. */
	{
		uint8_t b = img[c2 + MT_CHUNK_HEADER + mt_get_u32(img + c2 + 4) - 1] ^ 0x55;

		write_patched(f, t, c2 + MT_CHUNK_HEADER + mt_get_u32(img + c2 + 4) - 1, &b, 1);
		assert_int_equal(read_all(f, &n, &off), MT_E_ZSTD);
		assert_int_equal(n, 2);
		assert_int_equal(off, c2);
	}
	/* A compressed size larger than what is left of the file. */
	mt_put_u32(v, (uint32_t)(len - c2));
	write_patched(f, t, c2 + 4, v, 4);
	assert_int_equal(read_all(f, &n, &off), MT_E_TRUNCATED);
	assert_int_equal(n, 2);
	tl_free(t);
}

/*
 * Every cut of the file: the header cut is MT_E_TRUNCATED at open; a cut in
 * the chunks yields exactly the chunks wholly before it, then either a clean
 * end (cut on a chunk boundary) or MT_E_TRUNCATED at the partial chunk.
 */
static void test_cut_everywhere(void **state)
{
	struct fix *f = *state;
	struct testlog *t = three_chunks();
	size_t len, cut, k, whole, hdr = tl_chunk_offset(t, 0);
	const uint8_t *img = tl_image(t, &len);
	uint64_t off;
	int n, rc;

	for (cut = 0; cut <= len; cut++) {
		tl_write_file(f->path, img, cut);
		rc = read_all(f, &n, &off);
		if (cut < hdr) {
			assert_int_equal(rc, MT_E_TRUNCATED);
			continue;
		}
		whole = 0;
		for (k = 0; k < tl_nchunks(t); k++) {
			size_t end = k + 1 < tl_nchunks(t) ? tl_chunk_offset(t, k + 1) : len;

			if (end <= cut)
				whole = k + 1;
		}
		assert_int_equal(n, (int)whole);
		if (cut == len || (whole < tl_nchunks(t) && cut == tl_chunk_offset(t, whole))) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, MT_E_TRUNCATED);
			assert_int_equal(off, tl_chunk_offset(t, whole));
		}
	}
	tl_free(t);
}

/*
 * Opens f->path and returns mt_reader_last_chunk()'s result; on 1, checks
 * that its records and offset are those of the last chunk a walk with
 * mt_reader_next() reads, and in every case that the reader is back at the
 * first chunk afterwards.
 */
static int last_chunk(struct fix *f, uint64_t *offset)
{
	struct mt_reader *r;
	const uint8_t *d, *ld;
	uint8_t *want = NULL;
	size_t len, llen, wlen = 0;
	uint64_t off, woff = 0;
	int rc;

	assert_int_equal(mt_reader_open(f->path, &r, NULL), 0);
	while (mt_reader_next(r, &d, &len, &off) == 1) {
		free(want);
		want = malloc(len);
		assert_non_null(want);
		memcpy(want, d, len);
		wlen = len;
		woff = off;
	}
	rc = mt_reader_last_chunk(r, &ld, &llen, offset);
	if (rc == 1) {
		assert_non_null(want);
		assert_int_equal(*offset, woff);
		assert_int_equal(llen, wlen);
		assert_memory_equal(ld, want, wlen);
	}
	free(want);
	/* The reader is back at the first chunk afterwards. */
	if (mt_reader_next(r, &d, &len, &off) == 1)
		assert_int_equal(off, mt_reader_header(r)->cmdline_len + MT_HEADER_FIXED);
	mt_reader_free(r);
	return rc;
}

/*
 * The last chunk, read alone: 1 when the file ends with a complete chunk,
 * 0 when it ends in a partial one, in bytes that are no chunk, or has none.
 */
static void test_last_chunk(void **state)
{
	struct fix *f = *state;
	struct testlog *t = three_chunks();
	const uint8_t *img;
	uint64_t off;
	size_t len, n;

	tl_end(t, 5, MT_END_EXIT, 0);
	img = tl_image(t, &len);
	n = tl_nchunks(t);
	assert_int_equal(n, 4);
	tl_write_file(f->path, img, len);
	assert_int_equal(last_chunk(f, &off), 1);
	assert_int_equal(off, tl_chunk_offset(t, n - 1));
	/* cut at the last chunk's start: the one before is the last */
	tl_write_file(f->path, img, tl_chunk_offset(t, n - 1));
	assert_int_equal(last_chunk(f, &off), 1);
	assert_int_equal(off, tl_chunk_offset(t, n - 2));
	/* one byte short, or a partial chunk header after the last chunk */
	tl_write_file(f->path, img, len - 1);
	assert_int_equal(last_chunk(f, &off), 0);
	tl_write_file(f->path, img, tl_chunk_offset(t, n - 1) + 3);
	assert_int_equal(last_chunk(f, &off), 0);
	/* the header alone: no chunk */
	tl_write_file(f->path, img, tl_chunk_offset(t, 0));
	assert_int_equal(last_chunk(f, &off), 0);
	tl_free(t);

	/* a chunk that does not decompress */
	t = three_chunks();
	tl_raw_file(t, "MTCK\5\0\0\0\4\0\0\0xxxxx", 17);
	tl_write(t, f->path);
	assert_int_equal(last_chunk(f, &off), 0);
	tl_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_header_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_magic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_absurd_header_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_and_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_chunks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_everywhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_chunk, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
